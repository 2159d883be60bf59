//! The commit handler of every table the catalog opens itself: Lance's
//! own (by the table's URL, as Lance chooses it), fenced so that no write
//! the server makes through the engine (column changes, updates, deletes,
//! restore, maintenance, its streamed writes) is committed on a version a
//! batch has placed but not decided (`version/intent.rs`).
//!
//! A batch claims its tables before it places a version, so a commit that
//! finds no claim here either lands before the placement (which then
//! fails, and the batch aborts) or fails on the taken name and is retried
//! by Lance, meeting the claim on the retry. Before putting version N it
//! also checks that N-1, the version it was built on, is still there: an
//! aborted batch's version removed meanwhile is not built on.

use std::sync::Arc;

use futures::stream::BoxStream;
use lance::io::ObjectStore;
use lance_table::format::{IndexMetadata, Manifest, Transaction};
use lance_table::io::commit::{
    CommitError, CommitHandler, ManifestLocation, ManifestNamingScheme, ManifestWriter,
    PredecessorIdentity,
};
use object_store::path::Path;
use object_store::{ObjectStore as OSObjectStore, ObjectStoreExt};

use crate::core::Catalog;

/// Lance's handler for a table, fenced by the catalog's batch claims.
pub(crate) struct Fenced {
    inner: Arc<dyn CommitHandler>,
    catalog: Catalog,
    id: Vec<String>,
}

impl std::fmt::Debug for Fenced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fenced")
            .field("inner", &self.inner)
            .field("id", &self.id)
            .finish()
    }
}

impl Fenced {
    pub(crate) fn new(inner: Arc<dyn CommitHandler>, catalog: Catalog, id: &[String]) -> Self {
        Fenced {
            inner,
            catalog,
            id: id.to_vec(),
        }
    }

    /// Refuse to commit `version` while a batch holds the table, or when
    /// the version it builds on is gone.
    async fn fence(
        &self,
        version: u64,
        base_path: &Path,
        naming_scheme: ManifestNamingScheme,
        object_store: &ObjectStore,
    ) -> Result<(), CommitError> {
        let refuse = |why: String| {
            CommitError::OtherError(lance::Error::commit_conflict_source(
                version,
                Box::new(std::io::Error::other(why)),
            ))
        };
        if let Err(e) = self.catalog.fence_batch(&self.id).await {
            return Err(refuse(e.message));
        }
        if version > 1 {
            let built_on = naming_scheme.manifest_path(base_path, version - 1);
            if let Err(object_store::Error::NotFound { .. }) =
                object_store.inner.head(&built_on).await
            {
                return Err(refuse(format!(
                    "version {} that this commit builds on was removed (an aborted batch's); reload the table and retry",
                    version - 1
                )));
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl CommitHandler for Fenced {
    fn is_version_not_found_definitive(&self) -> bool {
        self.inner.is_version_not_found_definitive()
    }

    fn propagate_commit_error_after_success(&self) -> bool {
        self.inner.propagate_commit_error_after_success()
    }

    async fn resolve_latest_location(
        &self,
        base_path: &Path,
        object_store: &ObjectStore,
    ) -> lance::Result<ManifestLocation> {
        self.inner
            .resolve_latest_location(base_path, object_store)
            .await
    }

    async fn resolve_version_location(
        &self,
        base_path: &Path,
        version: u64,
        object_store: &dyn OSObjectStore,
    ) -> lance::Result<ManifestLocation> {
        self.inner
            .resolve_version_location(base_path, version, object_store)
            .await
    }

    async fn version_exists(
        &self,
        base_path: &Path,
        version: u64,
        object_store: &dyn OSObjectStore,
        naming_scheme: ManifestNamingScheme,
    ) -> lance::Result<bool> {
        self.inner
            .version_exists(base_path, version, object_store, naming_scheme)
            .await
    }

    fn list_detached_manifest_locations<'a>(
        &self,
        base_path: &Path,
        object_store: &'a ObjectStore,
    ) -> BoxStream<'a, lance::Result<ManifestLocation>> {
        self.inner
            .list_detached_manifest_locations(base_path, object_store)
    }

    fn list_manifest_locations<'a>(
        &self,
        base_path: &Path,
        object_store: &'a ObjectStore,
        sorted_descending: bool,
    ) -> BoxStream<'a, lance::Result<ManifestLocation>> {
        self.inner
            .list_manifest_locations(base_path, object_store, sorted_descending)
    }

    fn list_manifest_locations_since<'a>(
        &self,
        base_path: &Path,
        object_store: &'a ObjectStore,
        since_version: u64,
    ) -> BoxStream<'a, lance::Result<ManifestLocation>> {
        self.inner
            .list_manifest_locations_since(base_path, object_store, since_version)
    }

    async fn commit(
        &self,
        manifest: &mut Manifest,
        indices: Option<Vec<IndexMetadata>>,
        base_path: &Path,
        object_store: &ObjectStore,
        manifest_writer: ManifestWriter,
        naming_scheme: ManifestNamingScheme,
        transaction: Option<Transaction>,
    ) -> Result<ManifestLocation, CommitError> {
        self.fence(manifest.version, base_path, naming_scheme, object_store)
            .await?;
        self.inner
            .commit(
                manifest,
                indices,
                base_path,
                object_store,
                manifest_writer,
                naming_scheme,
                transaction,
            )
            .await
    }

    fn supports_predecessor_condition(&self) -> bool {
        self.inner.supports_predecessor_condition()
    }

    async fn resolve_latest_identity(
        &self,
        base_path: &Path,
        object_store: &ObjectStore,
    ) -> lance::Result<Option<PredecessorIdentity>> {
        self.inner
            .resolve_latest_identity(base_path, object_store)
            .await
    }

    async fn resolve_identity(
        &self,
        base_path: &Path,
        object_store: &ObjectStore,
        version: u64,
    ) -> lance::Result<Option<PredecessorIdentity>> {
        self.inner
            .resolve_identity(base_path, object_store, version)
            .await
    }

    async fn commit_after(
        &self,
        manifest: &mut Manifest,
        indices: Option<Vec<IndexMetadata>>,
        base_path: &Path,
        object_store: &ObjectStore,
        manifest_writer: ManifestWriter,
        naming_scheme: ManifestNamingScheme,
        transaction: Option<Transaction>,
        predecessor: &PredecessorIdentity,
    ) -> Result<ManifestLocation, CommitError> {
        self.fence(manifest.version, base_path, naming_scheme, object_store)
            .await?;
        self.inner
            .commit_after(
                manifest,
                indices,
                base_path,
                object_store,
                manifest_writer,
                naming_scheme,
                transaction,
                predecessor,
            )
            .await
    }

    async fn forget_version(
        &self,
        base_path: &Path,
        version: u64,
        identity: &str,
    ) -> lance::Result<()> {
        self.inner
            .forget_version(base_path, version, identity)
            .await
    }

    async fn delete(&self, base_path: &Path) -> lance::Result<()> {
        self.inner.delete(base_path).await
    }
}
