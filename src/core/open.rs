//! Opening a table's Lance dataset directly, for the operations the core
//! performs itself (branch-aware writes, metadata updates).

use lance::Dataset;
use lance_namespace::models::DescribeTableRequest;
use lance_namespace::LanceNamespace;

use super::checks::{display_id, table_not_found};
use super::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

/// The default branch's name; asking for it is the same as asking for none.
pub(crate) const MAIN: &str = "main";

/// `Some(name)` for a real branch, `None` for the main line.
pub(crate) fn branch_of(branch: &Option<String>) -> Option<&str> {
    branch
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty() && *b != MAIN)
}

impl Catalog {
    /// The table's location, as the catalog records it.
    pub(crate) async fn table_location(&self, id: &[String]) -> CatalogResult<String> {
        let req = DescribeTableRequest {
            id: Some(id.to_vec()),
            ..Default::default()
        };
        let described = engine(self.inner.describe_table(req).await).map_err(|e| {
            if e.code == Code::NAMESPACE_NOT_FOUND || e.code == Code::TABLE_NOT_FOUND {
                table_not_found(id)
            } else {
                e
            }
        })?;
        described.location.ok_or_else(|| {
            CatalogError::internal(format!("table {} has no location", display_id(id)))
        })
    }

    /// Open the table at the head of `branch` (the main line when `None`).
    pub(crate) async fn open_table(
        &self,
        id: &[String],
        branch: Option<&str>,
    ) -> CatalogResult<Dataset> {
        let location = self.table_location(id).await?;
        self.open_at(id, &location, branch).await
    }

    /// Open table `id`, recorded at `location`, at the head of `branch`.
    pub(crate) async fn open_at(
        &self,
        id: &[String],
        location: &str,
        branch: Option<&str>,
    ) -> CatalogResult<Dataset> {
        let mut builder = self.dataset_builder(location);
        if let Some(b) = branch {
            builder = builder.with_branch(b, None);
        }
        builder.load().await.map_err(|e| {
            let err = CatalogError::from_lance(&e);
            match branch {
                Some(b)
                    if matches!(err.code.0, 4 | 8 | 11)
                        || err.message.to_ascii_lowercase().contains("not found") =>
                {
                    CatalogError::new(
                        Code(22),
                        format!("table {} has no branch {b:?}", display_id(id)),
                    )
                }
                _ => err,
            }
        })
    }
}
