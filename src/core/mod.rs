//! The catalog core: one type, [`Catalog`], that implements
//! `lance_namespace::LanceNamespace` and owns every rule. The REST, gRPC and
//! Flight adapters only parse and render around it.
//!
//! Storage is Lance's own `DirectoryNamespace` (a `__manifest` table plus
//! Lance datasets), so a catalog root stays readable by any plain Lance client.
//! The core checks shape and parents before it writes, normalises every error
//! to a spec code, and fills the operations the engine leaves out.
//!
//! The core is in rooms, one folder per object; the `Catalog` essentials
//! (opening the root, ids and reserved keys, the manifest, object identity,
//! deletion protection, the metadata cache) stay at the top. Where each
//! operation lives (every spec operation enters through `namespace_impl.rs`;
//! an operation not listed is the engine's, with the id checked and the
//! error settled by `settle.rs`):
//!
//! | operations | file |
//! |---|---|
//! | namespaces: create, list, drop (mode, behavior, cascade) | `namespace/namespaces.rs` |
//! | storage options from `lance.storage.*` namespace properties | `namespace/storage_options.rs` |
//! | which storage options a caller may set (never an endpoint) | `caller_options.rs` |
//! | the operator's storage options, and the one place a caller's meet them | `operator_options.rs` |
//! | how the root is reached and what of it a client is handed (secrets, vending) | `reach.rs` |
//! | create, declare, register, insert, merge-insert, drop table | `table/tables.rs` |
//! | describe (the catalog's record; at a branch or tag) | `table/describe.rs` |
//! | writing and recording a new table's bytes; nested locations | `table/placement.rs` |
//! | where tables live; what a drop may delete | `table/locations.rs` |
//! | a location and the one rule comparing two (any case, any Unicode form) | `location.rs` |
//! | rename | `table/rename.rs` |
//! | schema and field metadata; column checks | `table/metadata.rs` |
//! | versions: list, describe, create (managed versioning) | `version/versions.rs` |
//! | batch create versions, batch commit | `version/batch_commit.rs`, `manifest_tx.rs` |
//! | update, delete, merge-insert, drop index on a branch | `branch/writes.rs` |
//! | create index on a branch | `branch/index.rs` |
//! | tags on a branch, branch helpers, opening datasets | `branch/open.rs` |
//! | query, explain/analyze on a branch, Flight scans | `data/scan.rs`, `data/query.rs` |
//! | count rows, explain and analyze plans (the catalog's checks first) | `data/reads.rs` |
//! | Flight writes (create, insert, merge-insert from a stream) | `table/stream_write.rs` |
//! | Arrow bodies; SQL text in requests | `body.rs`, `data/rows.rs`, `data/sql_text.rs` |
//! | add columns (computed, virtual), backfill | `derived/computed.rs`, `derived/jobs.rs` |
//! | materialized views | `derived/views.rs` |
//! | recoverable drops: trash records, purge, pending deadlines | `trash/records.rs` |
//! | drops under a grace period (table, cascade) | `trash/detach.rs` |
//! | undrop of a table or a namespace subtree | `trash/undrop.rs` |
//! | table maintenance tasks: submit, list, workers, running them | `maintenance/` |
//! | the reconciler | `maintenance/reconcile.rs` |
//! | what bytes are live: the one answer every deletion asks | `live.rs` |
//! | what a dataset's manifests reference, through base paths too | `references.rs` |
//! | vended credentials: a table's scope, its session policy, STS, the kept sessions | `vending/` |
//! | deletion protection of tables and namespaces | `protection.rs` |
//! | real object ids of tables and namespaces | `object_ids.rs` |
//! | id and property checks, manifest keys | `checks.rs`, `reserved.rs` |
//! | manifest transactions: conditional commits, the lock they ask for | `manifest_tx.rs`, `manifest_lock.rs` |
//! | opening the storage root | `storage.rs` |

pub(crate) mod body;
pub mod branch;
pub mod caller_options;
mod checks;
pub mod data;
pub mod derived;
mod engine_ns;
pub mod live;
pub mod location;
pub mod maintenance;
mod manifest_commit;
mod manifest_keeping;
mod manifest_lock;
mod manifest_tx;
mod manifest_upkeep;
mod meta_cache;
pub mod namespace;
mod namespace_impl;
pub mod object_ids;
mod operator_options;
pub mod protection;
mod reach;
pub(crate) mod references;
pub mod reserved;
mod settle;
mod storage;
pub mod table;
mod table_index;
pub mod trash;
pub mod vending;
pub mod version;

pub use data::scan::{Scan, ScanSpec};
pub use derived::jobs::{Job, JobState};
pub use live::Freshness;
pub use maintenance::estate::EstateRefs;
pub use maintenance::reconcile::{Orphan, Reconciliation, TableWithoutData};
pub use manifest_keeping::{ManifestKeeping, ManifestKept, MIN_RETENTION};
pub use namespace::storage_options::{is_secret, REDACTED};
pub use operator_options::OperatorOptions;
pub use references::ForeignRefs;
pub use reserved::UNSET_KEYS;
pub use storage::{
    open_records, probe_root, resolve_root, set_cache_limits, CacheLimits, StorageConfig,
};
pub use table::intents::set_intent_expiry;
pub use table::stream_write::{insert_mode_is_overwrite, MergeCounts, WriteOp, WriteOutcome};
pub use table::tables::{LOCATION_KEY, PROPERTIES_KEY};
pub use version::intent::set_batch_intent_expiry;

use std::collections::HashMap;
use std::sync::Arc;

use lance::io::{ObjectStore, ObjectStoreParams};
use lance::session::Session;

use crate::core::location::Location;
use crate::error::{CatalogError, CatalogResult};
pub(crate) use checks::table_id as checked_table_id;
pub use checks::{manifest_id, manifest_key};
pub(crate) use checks::{missing_namespace, missing_table, table_not_found};

/// The catalog: the single implementation of every spec operation.
#[derive(Clone)]
pub struct Catalog {
    /// The engine's namespace, rebuilt once its manifest handle is too old
    /// to trust (`engine_ns.rs`).
    engine: Arc<engine_ns::EngineNs>,
    root: String,
    session: Arc<Session>,
    /// The operator's storage options, what a client is handed of them,
    /// and the vendor (`reach.rs`).
    reach: Arc<reach::Reach>,
    jobs: derived::jobs::Jobs,
    /// The storage root's object store (version manifests, job records).
    store: Arc<ObjectStore>,
    /// Serialises the core's own manifest transactions within this process
    /// (taken only through `manifest_lock.rs`).
    manifest_lock: Arc<tokio::sync::Mutex<()>>,
    /// Background folding and indexing of `__manifest` (`manifest_upkeep.rs`).
    upkeep: Arc<manifest_upkeep::Upkeep>,
    /// Records in the root's own control directory (the default control
    /// root of the hierarchy's registries).
    control: crate::records::Records,
    /// Metadata answers kept per manifest version (see `meta_cache.rs`).
    meta: Arc<meta_cache::MetaCache>,
    /// Locations near a new table's, kept per manifest snapshot
    /// (`table/placed_kept.rs`).
    placed_kept: Arc<table::placed_kept::PlacedKept>,
    /// Whether every trash entry of this root has its claim
    /// (`trash/claims.rs`).
    claims: Arc<trash::claims::ClaimsState>,
    /// The estate's references for the cleanup pre-pass, once the
    /// governance layer installs them (`maintenance/estate.rs`).
    estate: Arc<std::sync::OnceLock<Arc<dyn maintenance::estate::EstateRefs>>>,
    /// This root's tables' references as last read (`live.rs`).
    refs_cache: Arc<live::RefsCache>,
    /// Committed versions' staged manifests, kept for resends
    /// (`version/staged.rs`).
    staged: Arc<version::staged::Staged>,
}

/// Its root only: the engine's own `Debug` prints the storage options, and
/// a secret must not reach a log line by accident.
impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// Open (creating when needed) the catalog at `config.root`.
    pub async fn open(config: &StorageConfig) -> CatalogResult<Self> {
        let opened = storage::open_directory_namespace(config).await?;
        crate::error::hide_root(&opened.root);
        Ok(Self {
            control: opened.control.clone(),
            engine: Arc::new(engine_ns::EngineNs::new(
                opened.dir,
                opened.began,
                opened.root.clone(),
                config.storage_options.clone(),
                opened.session.clone(),
            )),
            jobs: opened.jobs,
            store: opened.store,
            root: opened.root,
            session: opened.session,
            reach: reach::Reach::new(config),
            manifest_lock: Arc::new(tokio::sync::Mutex::new(())),
            upkeep: Default::default(),
            meta: Default::default(),
            placed_kept: Default::default(),
            claims: Default::default(),
            estate: Default::default(),
            refs_cache: Default::default(),
            staged: Default::default(),
        })
    }

    /// The storage root as the engine sees it (a path or URI).
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The root's own control directory (`<root>/_catalog/control`).
    pub fn control_records(&self) -> crate::records::Records {
        self.control.clone()
    }

    /// A job's record (backfills, view refreshes).
    pub async fn job(&self, job_id: &str) -> CatalogResult<Job> {
        self.jobs.get(self, job_id).await
    }

    /// Where this catalog's jobs run: the replica's executors, and the
    /// warehouse this catalog is (the first call wins).
    pub fn set_job_executors(
        &self,
        warehouse: &str,
        executors: Arc<maintenance::executors::Executors>,
    ) {
        self.jobs.set_placer(warehouse, executors);
    }

    /// The full URI of a directory under the root, built as the engine
    /// builds it: each segment percent-encoded, so a name holding `%`, `?`
    /// or `#` names that very directory (never the root, a parent or
    /// another table's).
    pub(crate) fn location_uri(&self, relative: &str) -> String {
        uri_under(&self.root, relative)
    }

    /// A dataset builder for `uri` sharing the catalog's session and storage
    /// options. Options are only set when there are some: an empty map would
    /// key a different object store than the one the engine uses, which for
    /// `memory://` means a different (empty) store.
    pub(crate) fn dataset_builder(&self, uri: &str) -> lance::dataset::builder::DatasetBuilder {
        dataset_builder(uri, &self.session, self.reach.options())
    }

    /// Object-store parameters for a direct Lance write: the root's storage
    /// options, overlaid with the request's own.
    pub(crate) fn store_params(
        &self,
        caller: Option<&caller_options::CallerOptions>,
    ) -> Option<ObjectStoreParams> {
        Some(self.reach.options().params(caller))
    }

    /// The object store and path of a directory under the root.
    pub(crate) async fn location_store(
        &self,
        relative: &str,
    ) -> CatalogResult<(Arc<ObjectStore>, object_store::path::Path)> {
        let uri = self.location_uri(relative);
        let params = self.store_params(None).unwrap_or_default();
        engine(ObjectStore::from_uri_and_params(self.session.store_registry(), &uri, &params).await)
    }

    /// The store and path of `relative`, if it lies strictly below the
    /// root, outside the catalog's own directories, and reaches no
    /// symbolic link on the way: the last line of defence of every
    /// removal, whatever its caller checked.
    pub(crate) async fn removable(
        &self,
        relative: &str,
    ) -> CatalogResult<Option<(Arc<ObjectStore>, object_store::path::Path)>> {
        let (store, path) = self.location_store(relative).await?;
        let (_, root) = self.location_store("").await?;
        let below_root = path
            .prefix_match(&root)
            .and_then(|mut rest| rest.next())
            .is_some_and(|first| !table::locations::is_reserved(first.as_ref()));
        if !below_root {
            tracing::error!(location = %relative, path = %path, "refused to remove what is not a table's own");
            return Ok(None);
        }
        // A link on the way (or the path itself one) leads out of the
        // root: nothing is deleted through it.
        if let Some(link) = self.links().first_link(relative) {
            tracing::error!(location = %relative, link = %link, "refused to remove a path through a symbolic link");
            return Ok(None);
        }
        Ok(Some((store, path)))
    }

    /// Best-effort removal of a directory under the root (true: removed):
    /// a dropped table's, or what a failed or lost write wrote. Callers
    /// have checked that the directory is theirs to remove.
    pub(crate) async fn remove_location(&self, relative: &str) -> bool {
        let (store, path) = match self.removable(relative).await {
            Ok(Some(found)) => found,
            Ok(None) => return false,
            Err(e) => {
                tracing::warn!(location = %relative, error = %e.message, "could not reach a table directory to remove it");
                return false;
            }
        };
        match store.remove_dir_all(path).await {
            // Nothing there (a local directory never made): nothing left.
            Ok(()) | Err(lance::Error::NotFound { .. }) => true,
            Err(e) => {
                tracing::warn!(location = %relative, error = %e, "could not remove a table directory; the reconciler will report it");
                false
            }
        }
    }

    /// Refuse (13) a caller-chosen location that already holds objects: a
    /// new table there could not later tell its bytes from what was there.
    pub(crate) async fn require_empty_location(&self, relative: &Location) -> CatalogResult<()> {
        use futures::TryStreamExt;
        let holds = || {
            CatalogError::invalid(format!(
                "table location {relative:?} already holds data (in some case); register an existing dataset with register_table instead"
            ))
        };
        let (store, path) = self.location_store(relative.as_str()).await?;
        if engine(store.list(Some(path)).try_next().await)?.is_some() {
            return Err(holds());
        }
        // Where the catalog vends, a session policy is matched in any case
        // by stores that fold it (SeaweedFS and others): the location must
        // be empty in every case, or a writer would reach bytes no table
        // owns (a deregistered table a clone still reads, a multi-base
        // table's data) through another spelling.
        if self.vends() && self.holds_in_any_case(relative).await? {
            return Err(holds());
        }
        Ok(())
    }

    /// Whether anything lies at `relative` spelled in any case: each
    /// level's listing compared by folded names.
    async fn holds_in_any_case(&self, relative: &Location) -> CatalogResult<bool> {
        use futures::TryStreamExt;
        use location::fold;
        let (store, root) = self.location_store("").await?;
        let name = |p: &object_store::path::Path| {
            p.filename()
                .map(|f| fold(&percent_encoding::percent_decode_str(f).decode_utf8_lossy()))
        };
        let mut frontier = vec![root];
        for segment in relative.segments() {
            let want = fold(segment);
            let mut next = Vec::new();
            for dir in &frontier {
                let listed = engine(store.list_with_delimiter(Some(dir)).await)?;
                if listed
                    .objects
                    .iter()
                    .any(|o| name(&o.location).as_deref() == Some(&want))
                {
                    return Ok(true);
                }
                next.extend(
                    listed
                        .common_prefixes
                        .into_iter()
                        .filter(|p| name(p).as_deref() == Some(&want)),
                );
            }
            if next.is_empty() {
                return Ok(false);
            }
            frontier = next;
        }
        for dir in frontier {
            if engine(store.list(Some(dir)).try_next().await)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The storage options a client gets to reach the root's tables
    /// (secret-like ones only where the operator opted in).
    pub(crate) fn vended_storage_options(&self) -> Option<HashMap<String, String>> {
        self.reach.handed(self.reach.options().with(None))
    }

    /// Whether secret-like storage options are handed to clients.
    pub fn forwards_secrets(&self) -> bool {
        self.reach.forwards_secrets()
    }

    /// Whether this catalog vends table-scoped credentials.
    pub fn vends(&self) -> bool {
        self.reach.vendor().is_some()
    }

    /// The operator's cap on a vended answer's life, in seconds.
    pub fn vend_max_seconds(&self) -> Option<u64> {
        self.reach.vend_max_seconds()
    }
}

/// Turn an engine result into the catalog's, with the spec code settled.
pub(crate) fn engine<T>(r: lance::Result<T>) -> CatalogResult<T> {
    r.map_err(|e| CatalogError::from_lance(&e))
}

/// A catalog on a local directory, for the core's unit tests.
#[cfg(test)]
pub(crate) async fn open_local(dir: &std::path::Path) -> Catalog {
    Catalog::open(&StorageConfig {
        root: dir.to_string_lossy().into_owned(),
        ..Default::default()
    })
    .await
    .unwrap()
}

/// A dataset builder for `uri` sharing `session`, with `options` only when
/// there are some (see [`Catalog::dataset_builder`]).
pub(crate) fn dataset_builder(
    uri: &str,
    session: &Arc<Session>,
    options: &OperatorOptions,
) -> lance::dataset::builder::DatasetBuilder {
    let builder =
        lance::dataset::builder::DatasetBuilder::from_uri(uri).with_session(session.clone());
    match options.for_lance() {
        None => builder,
        Some(options) => builder.with_storage_options(options),
    }
}

/// The full URI of `relative` under `root`, as
/// [`Catalog::location_uri`] builds it.
pub(crate) fn uri_under(root: &str, relative: &str) -> String {
    let base = if root.contains("://") {
        root.to_string()
    } else {
        format!("file://{root}")
    };
    let Ok(mut url) = url::Url::parse(&format!("{base}/")) else {
        return format!("{base}/{relative}");
    };
    if let Ok(mut segments) = url.path_segments_mut() {
        segments
            .pop_if_empty()
            .extend(relative.split('/').filter(|s| !s.is_empty()));
    }
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever a caller checked, `remove_location` never removes the root,
    /// the manifest, the catalog's records or anything outside the root.
    #[tokio::test]
    async fn removal_stays_below_the_root_and_outside_the_catalog() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("root");
        let catalog = Catalog::open(&StorageConfig {
            root: root.to_string_lossy().into_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
        std::fs::create_dir_all(root.join("_catalog/keep")).unwrap();
        std::fs::write(root.join("_catalog/keep/x"), b"x").unwrap();
        std::fs::create_dir_all(outer.path().join("sibling")).unwrap();
        std::fs::write(outer.path().join("sibling/y"), b"y").unwrap();
        std::fs::create_dir_all(root.join("t")).unwrap();
        std::fs::write(root.join("t/z"), b"z").unwrap();
        for bad in [
            "",
            "/",
            "_catalog",
            "__manifest",
            "__Manifest",
            "_CATALOG/keep",
            "../sibling",
        ] {
            catalog.remove_location(bad).await;
            // The reconciler's explicit repair stops at the same line.
            catalog.remove_unowned(bad).await.unwrap();
        }
        assert!(root.join("__manifest").is_dir());
        assert!(root.join("_catalog/keep/x").is_file());
        assert!(outer.path().join("sibling/y").is_file());
        assert!(root.join("t/z").is_file());
        // A table's own directory is removed.
        catalog.remove_location("t").await;
        assert!(!root.join("t").exists());
    }
}
