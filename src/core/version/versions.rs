//! Managed versioning: the catalog, not the dataset directory, decides which
//! version of a table is current.
//!
//! Every table answers `managed_versioning: true`, so Lance clients write a
//! new manifest to a staging path and ask the catalog to make it version N
//! (`create_table_version`, `single.rs`): put-if-absent of version N's
//! final name, as Lance itself commits. A batch over several tables claims
//! its versions first and decides in one `__manifest` commit
//! (`batch_versions.rs`, `intent.rs`); until it decides, its versions are
//! hidden from the listings and descriptions here, and from the catalog's
//! own reads (`branch/open.rs`).

use std::collections::HashMap;

use arrow_array::RecordBatch;
use lance_namespace::models::{
    DescribeTableVersionRequest, DescribeTableVersionResponse, ListTableVersionsRequest,
    ListTableVersionsResponse,
};
use lance_namespace::LanceNamespace;
use object_store::path::Path;
use serde::{Deserialize, Serialize};

use crate::core::checks::{display_id, table_id, table_not_found};
use crate::core::version::materialize::{is_staged_name, materialize};
use crate::core::version::single::scheme;
use crate::core::{engine, missing_table, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

use crate::core::reserved::PENDING;

/// A version an earlier release's batch recorded in the table's row
/// ([`PENDING`]) before placing it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Pending {
    pub version: i64,
    pub manifest_path: String,
    pub manifest_size: Option<i64>,
    pub e_tag: Option<String>,
    pub naming_scheme: String,
}

/// Version ranges to delete: at least one; each from a version >= 0 to an
/// end past it, or to -1 (through the latest), as the spec defines them.
pub(crate) fn check_ranges(
    id: &[String],
    ranges: &[lance_namespace::models::VersionRange],
) -> CatalogResult<()> {
    let bad = ranges.iter().find(|r| {
        r.start_version < 0
            || r.end_version < -1
            || (r.end_version >= 0 && r.end_version <= r.start_version)
    });
    match (ranges.is_empty(), bad) {
        (true, _) => Err(CatalogError::invalid(format!(
            "deleting versions of table {} needs at least one range",
            display_id(id)
        ))),
        (false, Some(r)) => Err(CatalogError::invalid(format!(
            "version range [{}, {}) of table {} is invalid: start must be >= 0 and end past start, or -1 for the latest",
            r.start_version,
            r.end_version,
            display_id(id)
        ))),
        (false, None) => Ok(()),
    }
}

impl Catalog {
    /// A version an earlier release's batch recorded in the row but did
    /// not place before it stopped: placed now, so that no one else can
    /// take its number (a no-op on a row without one).
    pub(crate) async fn publish_recorded(&self, id: &[String]) -> CatalogResult<()> {
        let described = self.describe(id, Default::default()).await?;
        let Some(p) = described
            .properties
            .as_ref()
            .and_then(|p| p.get(PENDING))
            .and_then(|raw| serde_json::from_str::<Pending>(raw).ok())
        else {
            return Ok(());
        };
        let location = described.location.ok_or_else(|| {
            CatalogError::internal(format!("table {} has no location", display_id(id)))
        })?;
        let table_path = lance::io::ObjectStore::extract_path_from_uri(
            self.session.store_registry(),
            &location,
        )?;
        if p.version <= self.latest_placed(&table_path).await? {
            // Placed already (by a single commit that came first).
            return self.forget_recorded(id).await;
        }
        let (naming, _) = scheme(Some(&p.naming_scheme));
        let final_path = naming.manifest_path(&table_path, p.version as u64);
        let staging = Path::parse(&p.manifest_path)
            .map_err(|e| CatalogError::internal(format!("bad recorded staging path: {e}")))?;
        // Recorded before staged paths were checked on the way in: still
        // never copy anything but this version's own.
        if !is_staged_name(&staging, &final_path) {
            return Err(CatalogError::internal(format!(
                "recorded staging manifest {staging} of table {} is not version {}'s; not published",
                display_id(id),
                p.version
            )));
        }
        let what = format!("version {} of table {}", p.version, display_id(id));
        match materialize(&self.store, &staging, &final_path, p.manifest_size, &what).await {
            Ok(_) => {}
            // Its staged manifest is gone, or another writer took its
            // number: that version was lost before this release; say so
            // once, and stop looking for it.
            Err(e) if matches!(e.code, Code::INVALID_INPUT | Code::CONCURRENT_MODIFICATION) => {
                tracing::warn!(table = %display_id(id), version = p.version, error = %e.message,
                    "a version an earlier release recorded cannot be placed");
            }
            Err(e) => return Err(e),
        }
        self.forget_recorded(id).await
    }

    /// Remove a recorded version from the row, once it is placed (or
    /// cannot be): nothing asks after it again.
    async fn forget_recorded(&self, id: &[String]) -> CatalogResult<()> {
        self.update_properties(
            &crate::core::checks::manifest_key(id),
            "table",
            || table_not_found(id),
            |props| {
                props.remove(PENDING);
            },
        )
        .await
    }

    /// The manifest row of each table, in order; 4 for a missing one.
    pub(crate) async fn table_rows(
        &self,
        ds: &lance::Dataset,
        ids: impl Iterator<Item = Vec<String>>,
    ) -> CatalogResult<Vec<RecordBatch>> {
        let ids: Vec<Vec<String>> = ids.collect();
        let keys: Vec<String> = ids
            .iter()
            .map(|i| crate::core::checks::manifest_key(i))
            .collect();
        let batches = self.manifest_rows(ds, &keys).await?;
        let mut by_key: HashMap<String, RecordBatch> = HashMap::new();
        for row in crate::core::manifest_tx::single_rows(&batches) {
            if crate::core::manifest_tx::row_type(&row).as_deref() == Some("table") {
                if let Some(k) = crate::core::manifest_tx::row_object_id(&row) {
                    by_key.insert(k, row);
                }
            }
        }
        ids.iter()
            .zip(keys.iter())
            .map(|(id, k)| by_key.remove(k).ok_or_else(|| table_not_found(id)))
            .collect()
    }

    pub(crate) async fn list_versions_op(
        &self,
        req: ListTableVersionsRequest,
    ) -> CatalogResult<ListTableVersionsResponse> {
        let id = table_id(&req.id)?;
        if let Some(newest) = self.newest_listed(&id, &req).await? {
            return Ok(newest);
        }
        let on_branch = crate::core::branch::open::branch_of(&req.branch).is_some();
        if !on_branch {
            self.publish_recorded(&id).await?;
        }
        let listed = engine(self.inner().await?.list_table_versions(req.clone()).await)
            .map_err(|e| missing_table(e, &id))?;
        if on_branch {
            return Ok(listed);
        }
        // Read after the listing: an intent recorded before it is seen.
        let Some(intent) = self.intent_on(&id).await? else {
            return Ok(listed);
        };
        if !listed.versions.iter().any(|v| intent.hides(v.version)) {
            return Ok(listed);
        }
        // A page cut at a hidden version is listed again without the
        // limit (from the same page token), then cut.
        let whole = ListTableVersionsRequest {
            limit: None,
            ..req.clone()
        };
        let mut listed = engine(self.inner().await?.list_table_versions(whole).await)
            .map_err(|e| missing_table(e, &id))?;
        listed.versions.retain(|v| !intent.hides(v.version));
        if let Some(l) = req.limit.filter(|l| *l >= 0) {
            listed.versions.truncate(l as usize);
        }
        Ok(listed)
    }

    pub(crate) async fn describe_version_op(
        &self,
        req: DescribeTableVersionRequest,
    ) -> CatalogResult<DescribeTableVersionResponse> {
        let id = table_id(&req.id)?;
        if crate::core::branch::open::branch_of(&req.branch).is_some() {
            return engine(self.inner().await?.describe_table_version(req).await)
                .map_err(|e| missing_table(e, &id));
        }
        self.publish_recorded(&id).await?;
        let described = engine(
            self.inner()
                .await?
                .describe_table_version(req.clone())
                .await,
        )
        .map_err(|e| missing_table(e, &id))?;
        let Some(intent) = self.intent_on(&id).await? else {
            return Ok(described);
        };
        if !intent.hides(described.version.version) {
            return Ok(described);
        }
        // The latest is the one before the batch's; a named version the
        // batch has not decided does not exist yet.
        match req.version {
            None if intent.version > 1 => {
                let before = DescribeTableVersionRequest {
                    version: Some(intent.version - 1),
                    ..req
                };
                engine(self.inner().await?.describe_table_version(before).await)
                    .map_err(|e| missing_table(e, &id))
            }
            _ => Err(CatalogError::new(
                Code::TABLE_VERSION_NOT_FOUND,
                format!(
                    "version {} of table {} does not exist",
                    described.version.version,
                    display_id(&id)
                ),
            )),
        }
    }
}
