//! Opening a table's Lance dataset directly, for the operations the core
//! performs itself (branch-aware writes, metadata updates).

use crate::api::op;
use lance::Dataset;
use lance_namespace::models::{DescribeTableRequest, DescribeTableResponse};
use lance_namespace::LanceNamespace;

use crate::core::checks::{display_id, missing_table, table_not_found};
use crate::core::{engine, Catalog};
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
    /// The engine's description of table `id` (`req` says which details),
    /// a missing table or namespace answered as TableNotFound (4).
    pub(crate) async fn describe(
        &self,
        id: &[String],
        req: DescribeTableRequest,
    ) -> CatalogResult<DescribeTableResponse> {
        let req = DescribeTableRequest {
            id: Some(id.to_vec()),
            ..req
        };
        // Without detailed metadata, a declared check or a version, the
        // answer is the manifest row's alone: kept per manifest version.
        let from_manifest = !req.load_detailed_metadata.unwrap_or(false)
            && !req.check_declared.unwrap_or(false)
            && req.version.is_none();
        let describe = async {
            engine(self.inner().await?.describe_table(req.clone()).await).map_err(|e| {
                match e.code {
                    Code::NAMESPACE_NOT_FOUND => missing_table(e, id),
                    Code::TABLE_NOT_FOUND => table_not_found(id),
                    _ => e,
                }
            })
        };
        if from_manifest {
            self.cached(
                crate::core::meta_cache::key_of(op::DescribeTable.action, &req),
                describe,
            )
            .await
        } else {
            describe.await
        }
    }

    /// The table's location, as the catalog records it.
    pub(crate) async fn table_location(&self, id: &[String]) -> CatalogResult<String> {
        let described = self.describe(id, Default::default()).await?;
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
        // Lance's handler for the table, fenced by batch claims: whatever
        // the server commits on what it opens here waits for no batch
        // and builds on no undecided version (`fenced.rs`).
        let params = self.store_params(None);
        let handler = lance_table::io::commit::commit_handler_from_url(location, &params)
            .await
            .map_err(|e| CatalogError::from_lance(&e))?;
        let fenced = crate::core::branch::fenced::Fenced::new(handler, self.clone(), id);
        let mut builder = self
            .dataset_builder(location)
            .with_commit_handler(std::sync::Arc::new(fenced));
        if let Some(b) = branch {
            builder = builder.with_branch(b, None);
        }
        let loaded = builder.load().await.map_err(|e| {
            let err = CatalogError::from_lance(&e);
            match branch {
                Some(b)
                    if matches!(
                        err.code,
                        Code::TABLE_NOT_FOUND
                            | Code::TABLE_TAG_NOT_FOUND
                            | Code::TABLE_VERSION_NOT_FOUND
                    ) || err.message.to_ascii_lowercase().contains("not found") =>
                {
                    CatalogError::new(
                        Code::TABLE_BRANCH_NOT_FOUND,
                        format!("table {} has no branch {b:?}", display_id(id)),
                    )
                }
                _ => err,
            }
        })?;
        if branch.is_some() {
            return Ok(loaded);
        }
        // Read after loading: a version a batch has not decided is not
        // the table's yet (`version/intent.rs`).
        let loaded_version = loaded.version().version as i64;
        match self.readable_version(id, loaded_version).await? {
            v if v == loaded_version => Ok(loaded),
            v => self.checkout(loaded, v as u64, id).await,
        }
    }

    /// For operations that do not yet read a branch: the branch must exist
    /// (22 otherwise), and then the answer is Unsupported (0) rather than
    /// the main line's answer passed off as the branch's.
    pub(crate) async fn no_branch_yet(
        &self,
        id: &Option<Vec<String>>,
        branch: &Option<String>,
        what: &str,
    ) -> CatalogResult<()> {
        let Some(b) = branch_of(branch) else {
            return Ok(());
        };
        let id = crate::core::checks::table_id(id)?;
        self.open_table(&id, Some(b)).await?;
        Err(CatalogError::unsupported(format!(
            "{what} on a branch is not supported; ask without a branch for the main line of table {}",
            display_id(&id)
        )))
    }

    /// Tag a version of a branch (the engine would tag the main line's).
    pub(crate) async fn create_tag_on_branch(
        &self,
        req: lance_namespace::models::CreateTableTagRequest,
    ) -> CatalogResult<lance_namespace::models::CreateTableTagResponse> {
        let id = crate::core::checks::table_id(&req.id)?;
        let branch = branch_of(&req.branch).unwrap_or(MAIN);
        if req.tag.trim().is_empty() {
            return Err(CatalogError::invalid("a tag needs a name"));
        }
        if req.version < 1 {
            return Err(CatalogError::invalid(format!(
                "version {} cannot be tagged: versions start at 1",
                req.version
            )));
        }
        let ds = self.open_table(&id, Some(branch)).await?;
        ds.tags()
            .create(&req.tag, (branch, req.version as u64))
            .await
            .map_err(|e| match e {
                lance::Error::RefConflict { .. } => CatalogError::new(
                    Code::TABLE_TAG_ALREADY_EXISTS,
                    format!("table {} already has a tag {:?}", display_id(&id), req.tag),
                ),
                e => CatalogError::from_lance(&e),
            })?;
        Ok(Default::default())
    }
}
