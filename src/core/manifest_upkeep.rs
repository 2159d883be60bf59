//! Keeping `__manifest` cheap as it grows. Every commit appends a small
//! fragment (`manifest_commit.rs`) that no index covers yet, and removals
//! leave deletion files; left alone, each read would open more fragments
//! and scan more rows without an index, one per write ever made.
//!
//! So after a commit that leaves too many small or deletion-heavy
//! fragments, one background pass per catalog, under the manifest lock
//! (the catalog's own writes wait for it rather than conflict with it):
//! folds the small fragments together up to [`TARGET_ROWS`] rows (a full
//! fragment is never rewritten unless a tenth of it is deleted), indexes
//! what is new as a delta segment, and merges an index's trailing segments
//! once it has more than [`MAX_SEGMENTS`]. Each step costs what was
//! written since the last pass, not what the manifest holds.
//!
//! Old manifest versions are not removed here: the engine's handle on
//! `__manifest` (and another replica's) tells that it is stale by probing
//! the next version, which a cleanup could remove.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use lance::dataset::optimize::{compact_files, CompactionOptions};
use lance::dataset::transaction::Operation;
use lance::index::DatasetIndexExt;
use lance::Dataset;
use lance_index::optimize::OptimizeOptions;
use lance_index::scalar::{BuiltinIndexType, ScalarIndexParams};
use lance_index::IndexType;

use crate::core::{engine, Catalog};
use crate::error::CatalogResult;

/// Rows a folded fragment holds at most; a fragment this full is left as is.
pub(crate) const TARGET_ROWS: usize = 8192;
/// Small or deletion-heavy fragments tolerated before a pass runs.
const SLACK_FRAGMENTS: usize = 8;
/// Rows an unindexed manifest may hold before a pass indexes it (a scan
/// of fewer costs about what an index lookup does).
const INDEX_FROM_ROWS: usize = 1024;
/// Index segments (one base and its deltas) tolerated before a merge.
const MAX_SEGMENTS: usize = 8;
/// The deleted share of a fragment above which it is rewritten.
const DELETED_SHARE: f32 = 0.1;

/// Whether a pass is running for one catalog (a second is not started).
#[derive(Default)]
pub(crate) struct Upkeep {
    running: AtomicBool,
}

/// What one pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Pass {
    pub fragments_before: usize,
    pub fragments_after: usize,
    pub indices_built: usize,
    pub segments_merged: usize,
}

/// The manifest's indices, named as the engine names them: the key, the
/// kind, and the objects a view is built on; and one of the catalog's own
/// on `location`, which the overlap checks look up (`table/locations.rs`).
const INDICES: &[(&str, &str, BuiltinIndexType, IndexType)] = &[
    (
        "object_id_btree",
        "object_id",
        BuiltinIndexType::BTree,
        IndexType::BTree,
    ),
    (
        "object_type_bitmap",
        "object_type",
        BuiltinIndexType::Bitmap,
        IndexType::Bitmap,
    ),
    (
        "base_objects_label_list",
        "base_objects",
        BuiltinIndexType::LabelList,
        IndexType::LabelList,
    ),
    (
        "location_btree",
        "location",
        BuiltinIndexType::BTree,
        IndexType::BTree,
    ),
];

/// Whether every version of `ds` after `from` changed no row: each is a
/// compaction (its fragment reservation and its rewrite) or an index
/// change, whoever committed it. A version it cannot read counts as a
/// change.
async fn rows_unchanged(ds: &Dataset, from: u64) -> bool {
    for version in from + 1..=ds.version().version {
        let unchanged = matches!(
            ds.read_transaction_by_version(version)
                .await
                .ok()
                .flatten()
                .map(|t| t.operation),
            Some(
                Operation::ReserveFragments { .. }
                    | Operation::Rewrite { .. }
                    | Operation::CreateIndex { .. }
            )
        );
        if !unchanged {
            return false;
        }
    }
    true
}

/// Whether a compaction to `target_rows` would rewrite fragment `f`: it is
/// small, or more than a tenth of it is deleted.
pub(crate) fn untidy(f: &lance_table::format::Fragment, target_rows: usize) -> bool {
    let rows = f.physical_rows.unwrap_or(0);
    let deleted = f
        .deletion_file
        .as_ref()
        .and_then(|d| d.num_deleted_rows)
        .unwrap_or(0);
    rows < target_rows || deleted as f32 > DELETED_SHARE * rows as f32
}

/// The fragments a pass would rewrite: small ones and deletion-heavy ones.
fn untidy_fragments(ds: &Dataset) -> usize {
    ds.manifest
        .fragments
        .iter()
        .filter(|f| untidy(f, TARGET_ROWS))
        .count()
}

/// Whether `ds` has more small fragments than tolerated, or enough rows
/// without an index that reads would notice (the engine's copy-on-write
/// rewrite leaves none).
fn needs_pass(ds: &Dataset) -> bool {
    let unindexed = ds.manifest.index_section.is_none()
        && ds
            .manifest
            .fragments
            .iter()
            .map(|f| f.physical_rows.unwrap_or(0))
            .sum::<usize>()
            >= INDEX_FROM_ROWS;
    unindexed || untidy_fragments(ds) > SLACK_FRAGMENTS
}

/// Fold small and deletion-heavy fragments together, when there are any
/// two to fold.
async fn fold(ds: &mut Dataset) -> CatalogResult<()> {
    if untidy_fragments(ds) < 2 {
        return Ok(());
    }
    let options = CompactionOptions {
        target_rows_per_fragment: TARGET_ROWS,
        materialize_deletions: true,
        materialize_deletions_threshold: DELETED_SHARE,
        ..Default::default()
    };
    engine(compact_files(ds, options, None).await)?;
    Ok(())
}

/// How many segments each of the manifest's indices has.
async fn segments_of(ds: &Dataset) -> CatalogResult<HashMap<String, usize>> {
    let mut segments: HashMap<String, usize> = HashMap::new();
    for index in engine(ds.load_indices().await)?.iter() {
        if !index.name.starts_with("__") {
            *segments.entry(index.name.clone()).or_default() += 1;
        }
    }
    Ok(segments)
}

impl Catalog {
    /// After a commit that left `ds`: start a pass when it needs one and
    /// none is running.
    pub(crate) fn after_manifest_commit(&self, ds: &Dataset) {
        if !needs_pass(ds) {
            return;
        }
        if self.upkeep.running.swap(true, Ordering::AcqRel) {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            match this.manifest_upkeep().await {
                Ok(pass) => tracing::debug!(?pass, root = %this.root, "manifest upkeep"),
                // The next commit starts another pass; nothing is lost.
                Err(e) => {
                    tracing::warn!(error = %e.message, root = %this.root, "manifest upkeep failed")
                }
            }
            this.upkeep.running.store(false, Ordering::Release);
        });
    }

    /// After the engine wrote the manifest (its copy-on-write rewrite):
    /// the same, on the latest version.
    pub(crate) async fn after_engine_write(&self) {
        if let Ok(ds) = self.manifest_snapshot().await {
            self.after_manifest_commit(&ds);
        }
    }

    /// One pass over the manifest's latest version.
    pub(crate) async fn manifest_upkeep(&self) -> CatalogResult<Pass> {
        let _held = self.hold_manifest().await;
        let mut ds = (*self.manifest_snapshot().await?).clone();
        let began = ds.version().version;
        let mut pass = Pass {
            fragments_before: ds.count_fragments(),
            ..Pass::default()
        };
        // Unindexed fragments fold among themselves (Lance never bins an
        // indexed fragment with an unindexed one, nor two under different
        // index segments).
        fold(&mut ds).await?;
        let segments = segments_of(&ds).await?;
        // An index the manifest lacks (a fresh root, or one the engine's
        // copy-on-write rewrite replaced) is built whole, once.
        for (name, column, builtin, kind) in INDICES {
            if !segments.contains_key(*name) {
                let params = ScalarIndexParams::for_builtin(builtin.clone());
                let name = Some(name.to_string());
                engine(
                    ds.create_index(&[*column], *kind, name, &params, true)
                        .await,
                )?;
                pass.indices_built += 1;
            }
        }
        // New rows as a delta segment of each index: a write of its own size.
        engine(ds.optimize_indices(&OptimizeOptions::append()).await)?;
        for (name, count) in segments_of(&ds).await? {
            if count > MAX_SEGMENTS {
                // The trailing segments only: the base one stays as written.
                let merge = OptimizeOptions::merge(MAX_SEGMENTS).index_names(vec![name]);
                engine(ds.optimize_indices(&merge).await)?;
                pass.segments_merged += MAX_SEGMENTS;
            }
        }
        // The fragments the merged segments covered now fold together.
        if pass.segments_merged > 0 {
            fold(&mut ds).await?;
        }
        pass.fragments_after = ds.count_fragments();
        // Folding and indexing change no row: what the catalog kept from
        // the version the pass began on still holds, unless a commit of
        // another writer's came between the pass's own.
        if ds.version().version > began && rows_unchanged(&ds, began).await {
            self.install_manifest(std::sync::Arc::new(ds), began, &[]);
        }
        Ok(pass)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use lance::index::DatasetIndexExt;
    use lance::Dataset;
    use lance_namespace::models::{CreateNamespaceRequest, DeclareTableRequest, ListTablesRequest};

    use crate::api::spec::Spec;
    use crate::core::Catalog;

    fn data_files(ds: &Dataset) -> BTreeSet<String> {
        ds.manifest
            .fragments
            .iter()
            .flat_map(|f| f.files.iter().map(|d| d.path.clone()))
            .collect()
    }

    async fn declare(c: &Catalog, name: &str) {
        let req = DeclareTableRequest {
            id: Some(vec!["a".into(), name.into()]),
            ..Default::default()
        };
        c.declare_table(req).await.unwrap();
    }

    /// A declare appends one fragment and leaves every earlier data file as
    /// it was; a pass then folds what the writes appended into one fragment
    /// that the `object_id` index covers, and every table is still there.
    #[tokio::test]
    async fn writes_append_and_a_pass_folds_and_indexes_them() {
        let dir = tempfile::tempdir().unwrap();
        let c = crate::core::open_local(dir.path()).await;
        let ns = CreateNamespaceRequest {
            id: Some(vec!["a".into()]),
            ..Default::default()
        };
        c.create_namespace(ns).await.unwrap();
        declare(&c, "t0").await;
        let before = c.manifest_snapshot().await.unwrap();
        declare(&c, "t1").await;
        let after = c.manifest_snapshot().await.unwrap();
        assert_eq!(after.count_fragments(), before.count_fragments() + 1);
        assert!(data_files(&before).is_subset(&data_files(&after)));

        for i in 2..30 {
            declare(&c, &format!("t{i}")).await;
        }
        // Whatever a background pass did meanwhile, one more leaves it tidy.
        c.manifest_upkeep().await.unwrap();
        let ds = c.manifest_snapshot().await.unwrap();
        // 30 writes, one fragment each: a few folded ones remain.
        assert!(
            ds.count_fragments() <= 10,
            "{} fragments",
            ds.count_fragments()
        );
        let covered: BTreeSet<u32> = ds
            .load_indices()
            .await
            .unwrap()
            .iter()
            .filter(|i| i.name == "object_id_btree")
            .flat_map(|i| i.fragment_bitmap.clone().unwrap_or_default().into_iter())
            .collect();
        for f in ds.manifest.fragments.iter() {
            assert!(
                covered.contains(&(f.id as u32)),
                "fragment {} unindexed",
                f.id
            );
        }
        let listed = c
            .list_tables(ListTablesRequest {
                id: Some(vec!["a".into()]),
                limit: Some(100),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(listed.tables.len(), 30);
    }
}
