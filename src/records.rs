//! Control-plane records (projects, warehouses, bindings, protection, trash,
//! tasks) as JSON on an object store, safe under concurrent writers with no
//! database.
//!
//! A record is a chain of versions, `<kind>/<id>/v<N>.json`, each written
//! with a conditional create (`PutMode::Create`), the one conditional write
//! every store offers (a local directory has no conditional update): the
//! writer that creates version N+1 first wins, and any other writer that
//! read version N loses its race and re-reads. So
//!
//! - a create of an id that exists answers 409 (AlreadyExists);
//! - an update is read-modify-write: it retries (bounded) on a lost race,
//!   re-applying its change to the newer version, and never overwrites a
//!   change it did not see;
//! - a delete writes a tombstone version, so it races like an update, and a
//!   later create of the same id continues the chain.
//!
//! Old versions are pruned, but only once they are [`PRUNE_AFTER`] old and
//! two newer versions exist, and a writer re-reads instead of writing when
//! its read is older than half of that: so a pruned version number can
//! never be created again by a writer that read the version before it (the
//! lost update a reused number would allow). The latest version is never
//! pruned, so a reader always finds it.

use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{CatalogError, CatalogResult, Code};

/// Milliseconds since the Unix epoch: the clock every record is stamped by.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// How many times an update re-reads and retries after losing a race.
const MAX_ATTEMPTS: u32 = 32;

/// Versions are pruned only once at least this old (by the store's clock).
/// A writer whose read is older than half of it re-reads before writing:
/// the other half covers clock skew between writer and store.
const PRUNE_AFTER: Duration = Duration::from_secs(600);

/// A record and the version it was read at.
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned<T> {
    pub version: u64,
    pub value: T,
}

/// What one version of a record holds.
#[derive(Debug, Serialize, Deserialize)]
struct Stored<T> {
    /// None: the record was deleted at this version.
    value: Option<T>,
}

/// The records of one store, under one prefix.
#[derive(Debug, Clone)]
pub struct Records {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    prune_after: Duration,
    /// The store is a local file system (its paths absolute): an erased
    /// record's emptied directory is removed too, or every id ever erased
    /// would stay listed.
    local: bool,
}

/// The store's own error names endpoints and keys of the catalog's storage:
/// the caller learns what failed, the log learns why.
pub(crate) fn unavailable(what: &str, e: object_store::Error) -> CatalogError {
    CatalogError::new(
        Code::SERVICE_UNAVAILABLE,
        format!(
            "cannot {what} the catalog's records: its store failed (the server log has the cause)"
        ),
    )
    .with_cause(e)
}

/// A record id must be one path segment the store keeps as it is.
pub fn check_id(kind: &str, id: &str) -> CatalogResult<()> {
    let ok = !id.is_empty()
        && id.len() <= 256
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && id != "."
        && id != "..";
    if ok {
        Ok(())
    } else {
        Err(CatalogError::invalid(format!(
            "{kind} id {id:?} must be 1-256 characters of letters, digits, '-', '_' and '.'"
        )))
    }
}

impl Records {
    pub fn new(store: Arc<dyn ObjectStore>, prefix: Path) -> Self {
        Self {
            store,
            prefix,
            prune_after: PRUNE_AFTER,
            local: false,
        }
    }

    /// Records on a local file system whose paths are absolute (as Lance's
    /// local store names them): erasing also removes emptied directories.
    pub fn on_local_disk(mut self, local: bool) -> Self {
        self.local = local;
        self
    }

    /// A read older than this is re-done before writing (see the module).
    fn stale_read(&self) -> Duration {
        self.prune_after / 2
    }

    fn dir(&self, kind: &str, id: &str) -> Path {
        self.prefix.clone().join(kind).join(id)
    }

    fn version_path(&self, kind: &str, id: &str, version: u64) -> Path {
        // Zero-padded, so names sort in version order.
        self.dir(kind, id).join(format!("v{version:020}.json"))
    }

    /// Every stored version of a record and when it was written, ascending.
    async fn versions(
        &self,
        kind: &str,
        id: &str,
    ) -> CatalogResult<Vec<(u64, chrono::DateTime<chrono::Utc>)>> {
        let dir = self.dir(kind, id);
        let listed: Vec<_> = self
            .store
            .list(Some(&dir))
            .try_collect()
            .await
            .map_err(|e| unavailable("list", e))?;
        let mut versions: Vec<_> = listed
            .iter()
            .filter_map(|m| {
                let name = m.location.filename()?;
                let v = name
                    .strip_prefix('v')?
                    .strip_suffix(".json")?
                    .parse()
                    .ok()?;
                Some((v, m.last_modified))
            })
            .collect();
        versions.sort_unstable_by_key(|(v, _)| *v);
        Ok(versions)
    }

    /// The latest version of a record and what it holds (None: deleted).
    async fn latest<T: DeserializeOwned>(
        &self,
        kind: &str,
        id: &str,
    ) -> CatalogResult<Option<(u64, Option<T>)>> {
        // A version pruned between the listing and the read is not the
        // latest any more: list again.
        for _ in 0..MAX_ATTEMPTS {
            let Some(&(version, _)) = self.versions(kind, id).await?.last() else {
                return Ok(None);
            };
            let path = self.version_path(kind, id, version);
            let bytes = match self.store.get(&path).await {
                Ok(got) => got.bytes().await.map_err(|e| unavailable("read", e))?,
                Err(object_store::Error::NotFound { .. }) => continue,
                Err(e) => return Err(unavailable("read", e)),
            };
            let stored: Stored<T> = serde_json::from_slice(&bytes).map_err(|e| {
                CatalogError::internal(format!("record {kind}/{id} v{version} is unreadable: {e}"))
            })?;
            return Ok(Some((version, stored.value)));
        }
        Err(CatalogError::new(
            Code::SERVICE_UNAVAILABLE,
            format!("record {kind}/{id} keeps changing; try again"),
        ))
    }

    /// Write version `version` unless it exists: false when another writer
    /// created it first.
    async fn put_version<T: Serialize>(
        &self,
        kind: &str,
        id: &str,
        version: u64,
        value: Option<&T>,
    ) -> CatalogResult<bool> {
        let body = serde_json::to_vec(&Stored { value })
            .map_err(|e| CatalogError::internal(format!("cannot encode {kind} {id}: {e}")))?;
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        let path = self.version_path(kind, id, version);
        match self
            .store
            .put_opts(&path, PutPayload::from(body), opts)
            .await
        {
            Ok(_) => {
                // Only a third version has one to prune (see `prune`).
                if version > 2 {
                    self.prune(kind, id, version).await;
                }
                Ok(true)
            }
            Err(object_store::Error::AlreadyExists { .. }) => {
                crate::telemetry::metrics().registry_conflict(kind);
                Ok(false)
            }
            Err(e) => Err(unavailable("write", e)),
        }
    }

    /// Best-effort removal of versions older than the one before `latest`
    /// and older than the prune age.
    async fn prune(&self, kind: &str, id: &str, latest: u64) {
        let Ok(versions) = self.versions(kind, id).await else {
            return;
        };
        let cutoff = chrono::Utc::now()
            - chrono::Duration::from_std(self.prune_after).unwrap_or(chrono::Duration::zero());
        for (v, _) in versions
            .into_iter()
            .filter(|(v, written)| *v + 1 < latest && *written < cutoff)
        {
            let _ = self.store.delete(&self.version_path(kind, id, v)).await;
        }
    }

    /// Whether the store answers: the prefix lists (readiness).
    pub async fn probe(&self) -> CatalogResult<()> {
        self.store
            .list_with_delimiter(Some(&self.prefix))
            .await
            .map(|_| ())
            .map_err(|e| unavailable("list", e))
    }

    /// Create a record; 409 (`exists`) when the id is taken.
    pub async fn create<T: Serialize + DeserializeOwned + Clone>(
        &self,
        kind: &str,
        id: &str,
        value: &T,
        exists: Code,
    ) -> CatalogResult<Versioned<T>> {
        check_id(kind, id)?;
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                crate::telemetry::metrics().registry_retry(kind);
            }
            let read_at = std::time::Instant::now();
            let next = match self.latest::<T>(kind, id).await? {
                None => 1,
                Some((v, None)) => v + 1,
                Some((_, Some(_))) => {
                    return Err(CatalogError::new(
                        exists,
                        format!("{kind} {id:?} already exists"),
                    ))
                }
            };
            if read_at.elapsed() > self.stale_read() {
                continue;
            }
            if self.put_version(kind, id, next, Some(value)).await? {
                return Ok(Versioned {
                    version: next,
                    value: value.clone(),
                });
            }
        }
        Err(lost_too_often(kind, id))
    }

    /// A record, if it exists.
    pub async fn get<T: DeserializeOwned>(
        &self,
        kind: &str,
        id: &str,
    ) -> CatalogResult<Option<Versioned<T>>> {
        check_id(kind, id)?;
        Ok(match self.latest::<T>(kind, id).await? {
            Some((version, Some(value))) => Some(Versioned { version, value }),
            _ => None,
        })
    }

    /// Change a record with `change`, which sees the latest value and may
    /// refuse (its error is the answer). Re-read and re-applied when
    /// another writer won the race; `missing` when there is no record.
    pub async fn update<T, F>(
        &self,
        kind: &str,
        id: &str,
        missing: Code,
        mut change: F,
    ) -> CatalogResult<Versioned<T>>
    where
        T: Serialize + DeserializeOwned,
        F: FnMut(T) -> CatalogResult<T>,
    {
        check_id(kind, id)?;
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                crate::telemetry::metrics().registry_retry(kind);
            }
            let read_at = std::time::Instant::now();
            let (version, current) = match self.latest::<T>(kind, id).await? {
                Some((v, Some(value))) => (v, value),
                _ => {
                    return Err(CatalogError::new(
                        missing,
                        format!("{kind} {id:?} does not exist"),
                    ))
                }
            };
            let next = change(current)?;
            if read_at.elapsed() > self.stale_read() {
                continue;
            }
            if self.put_version(kind, id, version + 1, Some(&next)).await? {
                return Ok(Versioned {
                    version: version + 1,
                    value: next,
                });
            }
            backoff(attempt).await;
        }
        Err(lost_too_often(kind, id))
    }

    /// Create or change a record with `change`, which sees the latest value
    /// (none: there is no record) and answers the new one (none: leave it
    /// as it is). Re-read and re-applied when another writer won the race.
    /// Answers what was written, or none when `change` left it.
    pub async fn upsert<T, F>(
        &self,
        kind: &str,
        id: &str,
        mut change: F,
    ) -> CatalogResult<Option<Versioned<T>>>
    where
        T: Serialize + DeserializeOwned,
        F: FnMut(Option<T>) -> Option<T>,
    {
        check_id(kind, id)?;
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                crate::telemetry::metrics().registry_retry(kind);
            }
            let read_at = std::time::Instant::now();
            let (version, current) = self.latest::<T>(kind, id).await?.unwrap_or((0, None));
            let Some(next) = change(current) else {
                return Ok(None);
            };
            if read_at.elapsed() > self.stale_read() {
                continue;
            }
            if self.put_version(kind, id, version + 1, Some(&next)).await? {
                return Ok(Some(Versioned {
                    version: version + 1,
                    value: next,
                }));
            }
            backoff(attempt).await;
        }
        Err(lost_too_often(kind, id))
    }

    /// Delete a record after `check` accepts its latest value (a container
    /// that still holds something refuses here). False when there was none.
    pub async fn delete<T, F>(&self, kind: &str, id: &str, mut check: F) -> CatalogResult<bool>
    where
        T: Serialize + DeserializeOwned,
        F: FnMut(&T) -> CatalogResult<()>,
    {
        check_id(kind, id)?;
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                crate::telemetry::metrics().registry_retry(kind);
            }
            let read_at = std::time::Instant::now();
            let (version, current) = match self.latest::<T>(kind, id).await? {
                Some((v, Some(value))) => (v, value),
                _ => return Ok(false),
            };
            check(&current)?;
            if read_at.elapsed() > self.stale_read() {
                continue;
            }
            if self.put_version::<T>(kind, id, version + 1, None).await? {
                return Ok(true);
            }
            backoff(attempt).await;
        }
        Err(lost_too_often(kind, id))
    }

    /// Every live record of `kind` with its id, sorted by id.
    pub async fn all<T: DeserializeOwned>(&self, kind: &str) -> CatalogResult<Vec<(String, T)>> {
        let dir = self.prefix.clone().join(kind);
        let listed = self
            .store
            .list_with_delimiter(Some(&dir))
            .await
            .map_err(|e| unavailable("list", e))?;
        let mut out = Vec::new();
        for p in listed.common_prefixes {
            let Some(id) = p.filename() else { continue };
            if let Some((_, Some(value))) = self.latest::<T>(kind, id).await? {
                out.push((id.to_string(), value));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// The records below `sub` (one path segment) of this prefix: a family
    /// of records kept apart from the rest (one table's tasks).
    pub fn under(&self, sub: &str) -> Records {
        Records {
            store: self.store.clone(),
            prefix: self.prefix.clone().join(sub),
            prune_after: self.prune_after,
            local: self.local,
        }
    }

    /// The store and prefix, for plain objects kept beside the records
    /// (markers that need no version chain).
    pub fn raw(&self) -> (Arc<dyn ObjectStore>, Path) {
        (self.store.clone(), self.prefix.clone())
    }

    /// The ids of every record of `kind` from one listing, without reading
    /// them: deleted ones not yet [`erase`](Self::erase)d are included.
    pub async fn listed_ids(&self, kind: &str) -> CatalogResult<Vec<String>> {
        let dir = self.prefix.clone().join(kind);
        let listed = self
            .store
            .list_with_delimiter(Some(&dir))
            .await
            .map_err(|e| unavailable("list", e))?;
        let mut ids: Vec<String> = listed
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Remove every version of a deleted record, for ids that are never
    /// created again (random ones): its chain cannot be continued, so the
    /// tombstone is not needed. A live record is left alone.
    pub async fn erase<T: DeserializeOwned>(&self, kind: &str, id: &str) -> CatalogResult<()> {
        check_id(kind, id)?;
        if matches!(self.latest::<T>(kind, id).await?, Some((_, Some(_)))) {
            return Ok(());
        }
        for (v, _) in self.versions(kind, id).await? {
            match self.store.delete(&self.version_path(kind, id, v)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(unavailable("delete", e)),
            }
        }
        if self.local {
            // Only an empty directory goes: a version written meanwhile
            // (a create of the same id) keeps it.
            let dir = self.prefix.clone().join(kind).join(id);
            let _ = std::fs::remove_dir(format!("/{dir}"));
        }
        Ok(())
    }

    /// The ids of every live record of `kind`, sorted.
    pub async fn ids<T: DeserializeOwned>(&self, kind: &str) -> CatalogResult<Vec<String>> {
        let mut ids = Vec::new();
        for id in self.listed_ids(kind).await? {
            if matches!(self.latest::<T>(kind, &id).await?, Some((_, Some(_)))) {
                ids.push(id);
            }
        }
        Ok(ids)
    }
}

fn lost_too_often(kind: &str, id: &str) -> CatalogError {
    CatalogError::new(
        Code::CONCURRENT_MODIFICATION,
        format!("{kind} {id:?} is being changed by many writers at once; nothing was changed, try again"),
    )
}

/// A short, growing, jittered pause before retrying a lost race.
async fn backoff(attempt: u32) {
    let base = 2u64.saturating_pow(attempt.min(6));
    let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0]) % (base + 1);
    tokio::time::sleep(Duration::from_millis(base + jitter)).await;
}

#[cfg(test)]
#[path = "records_tests.rs"]
mod tests;
