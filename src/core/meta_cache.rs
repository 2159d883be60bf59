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
//! manifest scan.
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

use lance::Dataset;

use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

/// Kept answers at most; past it the cache starts over (distinct keys of
/// one manifest version: tables described, pages listed).
const MAX_ENTRIES: usize = 20_000;

type Entry = Arc<dyn Any + Send + Sync>;

#[derive(Default)]
pub(crate) struct MetaCache {
    state: Mutex<State>,
    /// One reload at a time; the others wait for it and use its result.
    reload: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    manifest: Option<Arc<Dataset>>,
    entries: HashMap<String, Entry>,
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
        let held = self.meta.lock().manifest.clone();
        if let Some(ds) = &held {
            if !engine(ds.has_successor_version().await)? {
                return Ok(ds.clone());
            }
        }
        let _one = self.meta.reload.lock().await;
        let held = self.meta.lock().manifest.clone();
        if let Some(ds) = &held {
            if !engine(ds.has_successor_version().await)? {
                return Ok(ds.clone());
            }
        }
        let fresh = self.manifest_snapshot().await?;
        let mut state = self.meta.lock();
        state.manifest = Some(fresh.clone());
        state.entries.clear();
        Ok(fresh)
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
            if let Some(hit) = state.entries.get(key).and_then(|e| e.downcast_ref::<T>()) {
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
                    .and_then(|e| e.downcast_ref::<T>())
                    .cloned()
            })
            .collect();
        (hits, Ticket(version))
    }

    /// Keep `value` under `key`, if the manifest is still the ticket's.
    pub(crate) fn cache_put<T: Send + Sync + 'static>(
        &self,
        key: String,
        ticket: Ticket,
        value: T,
    ) {
        let mut state = self.meta.lock();
        if state.manifest.as_ref().map(|d| d.version().version) != Some(ticket.0) {
            return;
        }
        if state.entries.len() >= MAX_ENTRIES {
            state.entries.clear();
        }
        state.entries.insert(key, Arc::new(value));
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

impl Catalog {
    /// An existence check, its answer kept per manifest version (under
    /// `key`): a yes, and a no that says the object is not there (the
    /// manifest alone decides both). Other failures are asked every time.
    /// (A namespace's check is `namespace_present`, kept as a bool.)
    pub(crate) async fn cached_exists(
        &self,
        key: String,
        check: impl std::future::Future<Output = CatalogResult<()>>,
    ) -> CatalogResult<()> {
        let ticket = match self.cache_get::<Result<(), CatalogError>>(&key).await? {
            Ok(kept) => return kept,
            Err(ticket) => ticket,
        };
        match check.await {
            Ok(()) => {
                self.cache_put(key, ticket, Ok::<(), CatalogError>(()));
                Ok(())
            }
            Err(no) if matches!(no.code, Code::TABLE_NOT_FOUND | Code::NAMESPACE_NOT_FOUND) => {
                self.cache_put(key, ticket, Err::<(), CatalogError>(no.clone()));
                Err(no)
            }
            Err(e) => Err(e),
        }
    }
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
