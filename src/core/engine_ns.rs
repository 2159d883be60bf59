//! The engine's namespace (Lance's `DirectoryNamespace`), which holds its
//! own handle on `__manifest` and learns of newer versions by probing the
//! successor of the version it holds. Once the scheduler removes old
//! manifest versions (`manifest_keeping.rs`), a handle left unused while
//! its successor was removed would never learn of a newer version again:
//! its reads would be stale and its writes would land below the latest
//! version, lost. (Lance's marker that makes it resolve the latest instead
//! does not last: its own rewrites of the manifest drop it.)
//!
//! So an instance serves for at most [`recheck_after`] of the manifest
//! held (a minute) after it loaded the latest version, and the first use
//! after that builds a new one: one manifest load, at most once a minute.
//! A removed version is older than the retention (at least ten minutes),
//! so none made during an instance's life is ever removed under it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lance::session::Session;
use lance_namespace_impls::DirectoryNamespace;

use crate::core::Catalog;
use crate::error::CatalogResult;

pub(crate) struct EngineNs {
    /// The instance, and when it began (it loaded the latest manifest then).
    current: Mutex<(Arc<DirectoryNamespace>, Instant)>,
    /// One rebuild at a time; the others wait and use its result.
    rebuilding: tokio::sync::Mutex<()>,
    root: String,
    options: super::OperatorOptions,
    session: Arc<Session>,
}

impl EngineNs {
    pub(super) fn new(
        dir: DirectoryNamespace,
        began: Instant,
        root: String,
        options: super::OperatorOptions,
        session: Arc<Session>,
    ) -> Self {
        Self {
            current: Mutex::new((Arc::new(dir), began)),
            rebuilding: Default::default(),
            root,
            options,
            session,
        }
    }

    fn fresh(&self, max_age: Duration) -> Option<Arc<DirectoryNamespace>> {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        (current.1.elapsed() < max_age).then(|| current.0.clone())
    }

    /// The instance, built again when it is `max_age` old.
    async fn get(&self, max_age: Duration) -> CatalogResult<Arc<DirectoryNamespace>> {
        if let Some(dir) = self.fresh(max_age) {
            return Ok(dir);
        }
        let _one = self.rebuilding.lock().await;
        if let Some(dir) = self.fresh(max_age) {
            return Ok(dir);
        }
        let began = Instant::now();
        let dir =
            Arc::new(super::storage::build_engine(&self.root, &self.options, &self.session).await?);
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = (dir.clone(), began);
        Ok(dir)
    }
}

impl Catalog {
    /// The engine's namespace, never older than the manifest's recheck
    /// bound (see the module's doc).
    pub(crate) async fn inner(&self) -> CatalogResult<Arc<DirectoryNamespace>> {
        self.engine.get(self.engine_max_age()).await
    }
}
