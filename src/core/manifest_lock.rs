//! The manifest lock. The core's own manifest transactions (`manifest_tx.rs`)
//! commit against the snapshot their checks read; within one process they
//! run one at a time, so two of them never race to a conflict. The write
//! API asks for a [`Held`] lock (`manifest_apply`, `check_unclaimed`,
//! `settle_claim`), so a new write path cannot forget to take it.

use tokio::sync::{Mutex, MutexGuard};

use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult};

/// This task holds the manifest lock of one catalog until it is dropped.
pub(crate) struct Held<'a> {
    lock: &'a Mutex<()>,
    _guard: MutexGuard<'a, ()>,
}

impl Catalog {
    /// Wait for and take the manifest lock.
    pub(crate) async fn hold_manifest(&self) -> Held<'_> {
        let lock = &*self.manifest_lock;
        Held {
            lock,
            _guard: lock.lock().await,
        }
    }

    /// Refuse a lock held on another catalog (each warehouse has its own).
    pub(crate) fn check_held(&self, held: &Held<'_>) -> CatalogResult<()> {
        match std::ptr::eq(held.lock, &*self.manifest_lock) {
            true => Ok(()),
            false => Err(CatalogError::internal(
                "a manifest write ran under another catalog's lock",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::open_local as open;

    /// A write under another catalog's lock (another warehouse's) is
    /// refused before it commits anything.
    #[tokio::test]
    async fn a_write_under_another_catalogs_lock_is_refused() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (open(a.path()).await, open(b.path()).await);
        let before = a.manifest_snapshot().await.unwrap().version().version;
        let other = b.hold_manifest().await;
        let ds = a.manifest_snapshot().await.unwrap();
        let refused = a.manifest_apply(&other, ds, Vec::new(), &[], false).await;
        assert!(refused
            .unwrap_err()
            .message
            .contains("another catalog's lock"));
        let after = a.manifest_snapshot().await.unwrap().version().version;
        assert_eq!(before, after);
        let own = a.hold_manifest().await;
        let ds = a.manifest_snapshot().await.unwrap();
        a.manifest_apply(&own, ds, Vec::new(), &[], false)
            .await
            .unwrap();
    }
}
