//! DescribeTable: the catalog's record of a table (never the engine's
//! answer as it is: its storage options are the catalog's, its reserved
//! properties hidden), and at a branch head, a tag or a version the
//! version and schema there.

use lance_namespace::models::{DescribeTableRequest, DescribeTableResponse};

use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn describe_table_op(
        &self,
        mut req: DescribeTableRequest,
    ) -> CatalogResult<DescribeTableResponse> {
        let id = crate::core::checks::table_id(&req.id)?;
        req.id = Some(id.clone());
        // A branch, a tag or a version: read there (a version that does
        // not exist is 11, not the latest passed off as it).
        let on_ref = crate::core::branch::open::branch_of(&req.branch).is_some()
            || req.tag.as_deref().is_some_and(|t| !t.is_empty())
            || req.version.is_some();
        let mut plain = req.clone();
        if on_ref {
            // The engine ignores branch and tag: describe the record, then
            // read version and schema at the reference.
            plain.branch = None;
            plain.tag = None;
            plain.version = None;
            plain.load_detailed_metadata = Some(false);
        }
        let mut base = self.describe(&id, plain).await?;
        crate::core::checks::public_properties(&mut base.properties);
        // Always the catalog's own answer, never the engine's (which
        // would hand out the root's options as they are).
        base.storage_options = match req.vend_credentials {
            Some(false) => None,
            _ => self.table_storage_options(&id).await?,
        };
        // A written table at a nested location looks declared to the
        // engine (see `Catalog::engine_misreads`): read its details here.
        let nested_written = base.is_only_declared == Some(true)
            && self.misread_with_data(base.location.as_deref()).await?;
        if nested_written {
            base.is_only_declared = Some(false);
        }
        // The engine reads the latest version; one a batch has not decided
        // is not the table's yet.
        let undecided = match base.version.filter(|_| !on_ref) {
            Some(v) => self.intent_on(&id).await?.is_some_and(|i| i.hides(v)),
            None => false,
        };
        if on_ref || undecided || (nested_written && req.load_detailed_metadata.unwrap_or(false)) {
            self.describe_ref(&id, &req, base).await
        } else {
            Ok(base)
        }
    }

    /// Describe the table as of a branch head, a tag or a version: its
    /// version and schema there, the catalog's record for the rest.
    pub(crate) async fn describe_ref(
        &self,
        id: &[String],
        req: &DescribeTableRequest,
        mut base: DescribeTableResponse,
    ) -> CatalogResult<DescribeTableResponse> {
        let branch = crate::core::branch::open::branch_of(&req.branch);
        let mut ds = self.open_table(id, branch).await?;
        if let Some(tag) = req.tag.as_deref().filter(|t| !t.is_empty()) {
            ds = ds.checkout_version(tag).await.map_err(|_| {
                CatalogError::new(
                    Code::TABLE_TAG_NOT_FOUND,
                    format!("table has no tag {tag:?}"),
                )
            })?;
        } else if let Some(v) = req.version {
            ds = self.checkout(ds, v as u64, id).await?;
        }
        base.version = Some(ds.version().version as i64);
        if req.load_detailed_metadata.unwrap_or(false) {
            let arrow = arrow_schema::Schema::from(ds.schema());
            let json = lance_namespace::schema::arrow_schema_to_json(&arrow)?;
            base.schema = Some(Box::new(json));
        }
        Ok(base)
    }
}
