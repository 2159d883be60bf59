//! Answers of read-only metadata calls, kept for one version of the
//! `__manifest` table: a describe, an existence check or a page of tables
//! is decided by the manifest alone, so while the manifest has no newer
//! version the answer cannot have changed.
//!
//! Each use first probes for the manifest's successor version (one HEAD,
//! the same probe the engine makes before each of its reads); when there
//! is one, the manifest is reloaded and every kept answer dropped. So a
//! write by any replica is seen by the next read on every replica
//! (staleness 0), and a hit costs a probe and a hash lookup instead of a
//! manifest scan. The probe is trusted only for a while after the latest
//! version was last resolved (then it is resolved again): the scheduler
//! removes old versions, a successor among them (`manifest_keeping.rs`).
//!
//! Why it is safe: an answer is computed after the probe, from a manifest
//! at least as new as the probed version, and kept under that version only
//! if the cache still holds it. It is served only after a probe finds no
//! successor of that version, when the manifest is exactly that version.
//! Successes are kept, and an existence check's "not there"; other
//! errors are always computed afresh.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lance::Dataset;

use crate::core::manifest_keeping::recheck_after;
use crate::core::{engine, Catalog};
use crate::error::CatalogResult;

/// Kept answers at most; past it the cache starts over (distinct keys of
/// one manifest version: tables described, pages listed).
const MAX_ENTRIES: usize = 20_000;

type Entry = Arc<dyn Any + Send + Sync>;

/// A kept answer, and the manifest rows (keys) it was read from when it
/// depends on those alone: such an answer outlives a commit of this
/// process's that touched none of them.
struct Kept {
    value: Entry,
    rows: Option<Box<[String]>>,
}

#[derive(Default)]
pub(crate) struct MetaCache {
    state: Mutex<State>,
    /// One reload at a time; the others wait for it and use its result.
    reload: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    manifest: Option<Arc<Dataset>>,
    /// When the manifest held was last known to be the latest.
    latest_at: Option<Instant>,
    entries: HashMap<String, Kept>,
}

impl State {
    /// Hold `ds`, newer than the manifest held. When `change` says that
    /// every version after `from` up to `ds` is this process's and touched
    /// only the rows keyed `touched`, and `from` is the version held, the
    /// answers read from other rows stay; all others go.
    fn advance(&mut self, ds: Arc<Dataset>, change: Option<(u64, &[String])>) {
        let version = ds.version().version;
        let held = self.manifest.as_ref().map(|d| d.version().version);
        if held.is_some_and(|h| h >= version) {
            return;
        }
        self.manifest = Some(ds);
        self.latest_at = Some(Instant::now());
        match change.filter(|(from, _)| held == Some(*from)) {
            Some((_, touched)) => self.entries.retain(|_, kept| {
                kept.rows
                    .as_ref()
                    .is_some_and(|rows| rows.iter().all(|r| !touched.contains(r)))
            }),
            None => self.entries.clear(),
        }
    }

    /// The manifest held, at `version`, was the latest when `asked`.
    fn confirmed(&mut self, version: u64, asked: Instant) {
        let held = self.manifest.as_ref().map(|d| d.version().version);
        if held == Some(version) && self.latest_at.is_none_or(|at| at < asked) {
            self.latest_at = Some(asked);
        }
    }
}

impl std::fmt::Debug for MetaCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetaCache").finish_non_exhaustive()
    }
}

impl MetaCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A kept answer's ticket: the manifest version it belongs to.
#[derive(Clone, Copy)]
pub(crate) struct Ticket(u64);

impl Catalog {
    /// The manifest version now, after a successor probe (reloading when
    /// there is a newer one).
    pub(super) async fn current_manifest(&self) -> CatalogResult<Arc<Dataset>> {
        if let Some(ds) = self.still_latest().await? {
            return Ok(ds);
        }
        let _one = self.meta.reload.lock().await;
        if let Some(ds) = self.still_latest().await? {
            return Ok(ds);
        }
        let fresh = self.load_manifest().await?;
        // As the engine refuses a manifest written with reader features
        // this build does not know, rather than misreading it.
        engine(
            lance_namespace_impls::dir::manifest_feature_flags::ensure_readable(fresh.metadata()),
        )?;
        self.meta.lock().advance(fresh.clone(), None);
        Ok(fresh)
    }

    /// How long the engine's namespace may serve, by the manifest held.
    pub(super) fn engine_max_age(&self) -> std::time::Duration {
        let held = self.meta.lock().manifest.clone();
        crate::core::manifest_keeping::engine_max_age(held.as_deref())
    }

    /// The manifest held, unless a newer version exists.
    async fn still_latest(&self) -> CatalogResult<Option<Arc<Dataset>>> {
        let (held, latest_at) = {
            let state = self.meta.lock();
            (state.manifest.clone(), state.latest_at)
        };
        let Some(ds) = held else { return Ok(None) };
        let asked = Instant::now();
        let trusted = latest_at.is_some_and(|at| at.elapsed() < recheck_after(&ds));
        if trusted {
            return Ok((!engine(ds.has_successor_version().await)?).then_some(ds));
        }
        if engine(ds.is_stale().await)? {
            return Ok(None);
        }
        self.meta.lock().confirmed(ds.version().version, asked);
        Ok(Some(ds))
    }

    /// Hold `ds` as the manifest now (when it is newer than the one held):
    /// this process committed every version after `from` up to it, and
    /// they wrote or removed only the rows keyed `touched`. The next use
    /// probes its successor instead of loading the manifest again, and the
    /// answers read from other rows stay (see [`State::advance`]).
    pub(crate) fn install_manifest(&self, ds: Arc<Dataset>, from: u64, touched: &[String]) {
        self.meta.lock().advance(ds, Some((from, touched)));
    }

    /// The answer kept under `key` for the manifest as it is now, or a
    /// ticket to keep the one about to be computed.
    pub(crate) async fn cache_get<T: Clone + Send + Sync + 'static>(
        &self,
        key: &str,
    ) -> CatalogResult<Result<T, Ticket>> {
        let version = self.current_manifest().await?.version().version;
        let state = self.meta.lock();
        let held = state.manifest.as_ref().map(|d| d.version().version);
        if held == Some(version) {
            if let Some(hit) = state
                .entries
                .get(key)
                .and_then(|e| e.value.downcast_ref::<T>())
            {
                return Ok(Ok(hit.clone()));
            }
        }
        Ok(Err(Ticket(version)))
    }

    /// The answers kept under each of `keys` for manifest `ds` (the
    /// caller's [`current_manifest`](Self::current_manifest): one probe
    /// for them all), and a ticket to keep the others.
    pub(crate) fn kept_at<T: Clone + Send + Sync + 'static>(
        &self,
        ds: &Dataset,
        keys: &[String],
    ) -> (Vec<Option<T>>, Ticket) {
        let version = ds.version().version;
        let state = self.meta.lock();
        let current = state.manifest.as_ref().map(|d| d.version().version) == Some(version);
        let hits = keys
            .iter()
            .map(|k| {
                current
                    .then(|| state.entries.get(k))
                    .flatten()
                    .and_then(|e| e.value.downcast_ref::<T>())
                    .cloned()
            })
            .collect();
        (hits, Ticket(version))
    }

    /// Keep `value` under `key`, if the manifest is still the ticket's.
    fn cache_put<T: Send + Sync + 'static>(&self, key: String, ticket: Ticket, value: T) {
        self.keep(key, ticket, value, None);
    }

    /// Keep `value` under `key` as [`cache_put`](Self::cache_put) does, as
    /// an answer read from the manifest rows keyed `rows` alone.
    pub(crate) fn cache_put_from<T: Send + Sync + 'static>(
        &self,
        key: String,
        ticket: Ticket,
        value: T,
        rows: &[String],
    ) {
        self.keep(key, ticket, value, Some(rows.into()));
    }

    fn keep<T: Send + Sync + 'static>(
        &self,
        key: String,
        ticket: Ticket,
        value: T,
        rows: Option<Box<[String]>>,
    ) {
        let mut state = self.meta.lock();
        if state.manifest.as_ref().map(|d| d.version().version) != Some(ticket.0) {
            return;
        }
        if state.entries.len() >= MAX_ENTRIES {
            state.entries.clear();
        }
        let value = Arc::new(value);
        state.entries.insert(key, Kept { value, rows });
    }

    /// `compute`'s answer for `key` on manifest `ds` (the caller's
    /// [`current_manifest`](Self::current_manifest)), which it reads from
    /// the rows keyed `rows` alone; kept for that version and the ones
    /// this process commits after it without touching those rows.
    pub(crate) async fn cached_at<T, F>(
        &self,
        ds: &Dataset,
        key: String,
        rows: &[String],
        compute: F,
    ) -> CatalogResult<T>
    where
        T: Clone + Send + Sync + 'static,
        F: std::future::Future<Output = CatalogResult<T>>,
    {
        let (mut kept, ticket) = self.kept_at::<T>(ds, std::slice::from_ref(&key));
        if let Some(hit) = kept.pop().flatten() {
            return Ok(hit);
        }
        let value = compute.await?;
        self.cache_put_from(key, ticket, value.clone(), rows);
        Ok(value)
    }

    /// `compute`'s answer for `key`, kept for this manifest version.
    pub(crate) async fn cached<T, F>(&self, key: String, compute: F) -> CatalogResult<T>
    where
        T: Clone + Send + Sync + 'static,
        F: std::future::Future<Output = CatalogResult<T>>,
    {
        match self.cache_get::<T>(&key).await? {
            Ok(hit) => Ok(hit),
            Err(ticket) => {
                let value = compute.await?;
                self.cache_put(key, ticket, value.clone());
                Ok(value)
            }
        }
    }
}

/// The cache key of the object types recorded under manifest key `key`
/// (`Catalog::kinds_at`).
pub(crate) fn kinds_key(key: &str) -> String {
    format!("kinds\u{0}{key}")
}

/// A cache key: the operation and its request, less who is asking (the
/// answers do not depend on it).
pub(crate) fn key_of<R: serde::Serialize>(op: &str, request: &R) -> String {
    let mut value = serde_json::to_value(request).unwrap_or_default();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("identity");
        obj.remove("context");
    }
    format!("{op}\u{0}{value}")
}

#[cfg(test)]
mod tests {
    use lance_namespace::models::{CreateNamespaceRequest, DeclareTableRequest};
    use lance_namespace::LanceNamespace;

    use crate::core::Catalog;

    fn ids(id: &[&str]) -> Vec<String> {
        id.iter().map(|s| s.to_string()).collect()
    }

    async fn create_namespace(c: &Catalog, name: &str) {
        let req = CreateNamespaceRequest {
            id: Some(ids(&[name])),
            ..Default::default()
        };
        c.create_namespace(req).await.unwrap();
    }

    async fn declare(c: &Catalog, id: &[&str]) {
        let req = DeclareTableRequest {
            id: Some(ids(id)),
            ..Default::default()
        };
        c.declare_table(req).await.unwrap();
    }

    /// Whether the cache keeps an answer of namespace `name`'s existence
    /// for the manifest as it is now.
    async fn kept(c: &Catalog, name: &str) -> Option<bool> {
        let key = super::kinds_key(&crate::core::checks::manifest_key(&ids(&[name])));
        let ds = c.current_manifest().await.unwrap();
        let kinds = c.kept_at::<Vec<String>>(&ds, &[key]).0.pop().flatten()?;
        Some(kinds.iter().any(|k| k == "namespace"))
    }

    /// An answer read from one manifest row outlives this process's commits
    /// on other rows, and goes with a commit on its row (a "no" included);
    /// another replica's commit drops every answer, and the next answer
    /// sees what that replica wrote.
    #[tokio::test]
    async fn answers_outlive_commits_on_other_rows_only() {
        let dir = tempfile::tempdir().unwrap();
        let c = crate::core::open_local(dir.path()).await;
        create_namespace(&c, "a").await;
        assert!(c.namespace_present(&ids(&["a"])).await.unwrap());
        assert!(!c.namespace_present(&ids(&["q"])).await.unwrap());

        declare(&c, &["a", "t"]).await;
        assert_eq!(kept(&c, "a").await, Some(true), "a commit on a$t keeps a");
        assert_eq!(kept(&c, "q").await, Some(false));

        create_namespace(&c, "q").await;
        assert_eq!(kept(&c, "q").await, None, "creating q drops its 'no'");
        assert!(c.namespace_present(&ids(&["q"])).await.unwrap());
        assert_eq!(kept(&c, "a").await, Some(true));

        // A pass of the manifest's upkeep folds the fragments the commits
        // appended: no row changes, so what was kept stays.
        declare(&c, &["a", "u"]).await;
        let before = c.current_manifest().await.unwrap().version().version;
        let pass = c.manifest_upkeep().await.unwrap();
        assert!(pass.fragments_after < pass.fragments_before, "{pass:?}");
        assert!(c.current_manifest().await.unwrap().version().version > before);
        assert_eq!(kept(&c, "a").await, Some(true), "a fold keeps answers");

        // Another replica on the same root.
        let other = crate::core::open_local(dir.path()).await;
        assert!(!c.namespace_present(&ids(&["z"])).await.unwrap());
        create_namespace(&other, "z").await;
        assert_eq!(kept(&c, "a").await, None, "a foreign commit drops all");
        assert!(c.namespace_present(&ids(&["z"])).await.unwrap());
        let exists = lance_namespace::models::TableExistsRequest {
            id: Some(ids(&["z", "t"])),
            ..Default::default()
        };
        assert!(c.table_exists(exists.clone()).await.is_err());
        declare(&other, &["z", "t"]).await;
        c.table_exists(exists).await.unwrap();
    }
}
