//! One `__manifest` commit that costs what it changes, not what the
//! manifest holds: the rows it adds are appended as a fragment of their
//! own, the rows it removes or replaces are marked deleted in their
//! fragments (found through the manifest's `object_id` index), all as ONE
//! Lance `Update` transaction on the snapshot the caller checked.
//!
//! Why it is still serialisable: the transaction carries a key filter of
//! every `object_id` it writes or removes (`inserted_rows_filter`, Lance's
//! primary-key conflict detection). Lance refuses to rebase it over a
//! concurrent commit that touched one of those keys, over any commit that
//! cannot say which keys it touched (a plain append, an update without a
//! filter, the engine's copy-on-write overwrite), and over a concurrent
//! change to the same deletion file it cannot merge. Two replicas creating
//! one name at once therefore leave exactly one winner; commits on
//! different names go through side by side.
//!
//! The appended fragments are small; `manifest_upkeep.rs` folds them
//! together and indexes them in the background.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray};
use futures::TryStreamExt;
use lance::dataset::transaction::{Operation, Transaction, UpdateMode};
use lance::dataset::write::merge_insert::inserted_rows::{KeyExistenceFilterBuilder, KeyValue};
use lance::dataset::{CommitBuilder, DeleteBuilder, InsertBuilder, WriteMode, WriteParams};
use lance::Dataset;

use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

/// The manifest's key column.
const OBJECT_ID: &str = "object_id";

/// What one commit changes.
pub(crate) struct Change {
    /// Rows to add (one batch, the manifest's schema).
    pub rows: Option<RecordBatch>,
    /// Keys whose rows go.
    pub remove: Vec<String>,
    /// Whether a row whose key exists replaces it (else the commit fails).
    pub replace_existing: bool,
    /// Keys the change was checked against but does not write (a new
    /// namespace's parent): a concurrent commit on one of them conflicts.
    pub guard: Vec<String>,
}

impl Catalog {
    /// Apply `change` to the manifest in one commit on `ds`; answers the
    /// version it made (`ds` itself when there was nothing to change).
    pub(crate) async fn manifest_commit(
        &self,
        ds: Arc<Dataset>,
        change: Change,
    ) -> CatalogResult<Arc<Dataset>> {
        let written = match &change.rows {
            Some(rows) => keys_of(rows)?,
            None => Vec::new(),
        };
        let touched: BTreeSet<String> = written
            .iter()
            .chain(change.remove.iter())
            .cloned()
            .collect();
        if touched.is_empty() {
            return Ok(ds);
        }
        engine(lance_namespace_impls::dir::manifest_feature_flags::ensure_writable(ds.metadata()))?;
        let present = self.present_of(&ds, &touched).await?;
        if !change.replace_existing {
            if let Some(taken) = written.iter().find(|k| present.contains(*k)) {
                return Err(changed(format!("{taken:?} is already recorded")));
            }
        }
        let removing = change.remove.iter().cloned().collect::<HashSet<_>>();
        let gone: Vec<&String> = present
            .iter()
            .filter(|k| removing.contains(*k) || change.replace_existing && written.contains(k))
            .collect();

        // The rows that go: deletion files of the fragments holding them.
        let (updated_fragments, removed_fragment_ids, affected) = if gone.is_empty() {
            (Vec::new(), Vec::new(), None)
        } else {
            let list: Vec<String> = gone.iter().map(|k| literal(k)).collect();
            let predicate = format!("{OBJECT_ID} IN ({})", list.join(", "));
            let deleted = DeleteBuilder::new(ds.clone(), predicate)
                .execute_uncommitted()
                .await?;
            match deleted.transaction.operation {
                Operation::Delete {
                    updated_fragments,
                    deleted_fragment_ids,
                    ..
                } => (
                    updated_fragments,
                    deleted_fragment_ids,
                    deleted.affected_rows,
                ),
                other => {
                    return Err(CatalogError::internal(format!(
                        "a manifest delete planned {other}, not a delete"
                    )))
                }
            }
        };

        // The rows written, for the answers carried to the next version.
        let written_rows = change.rows.clone();
        // The rows that come: one new fragment.
        let new_fragments = match change.rows {
            Some(rows) if rows.num_rows() > 0 => {
                let params = WriteParams {
                    mode: WriteMode::Append,
                    session: Some(self.session.clone()),
                    skip_auto_cleanup: true,
                    ..Default::default()
                };
                let staged = InsertBuilder::new(ds.clone())
                    .with_params(&params)
                    .execute_uncommitted(vec![rows])
                    .await?;
                match staged.operation {
                    Operation::Append { fragments } => fragments,
                    other => {
                        return Err(CatalogError::internal(format!(
                            "a manifest append staged {other}, not an append"
                        )))
                    }
                }
            }
            _ => Vec::new(),
        };

        let key_field = ds
            .schema()
            .field(OBJECT_ID)
            .ok_or_else(|| CatalogError::internal("the manifest has no object_id column"))?
            .id;
        let mut keys = KeyExistenceFilterBuilder::new(vec![key_field]);
        for k in touched.iter().chain(change.guard.iter()) {
            keys.insert(KeyValue::String(k.clone()))?;
        }
        let staged_files: Vec<String> = new_fragments
            .iter()
            .flat_map(|f| f.files.iter().map(|d| d.path.clone()))
            .collect();
        let operation = Operation::Update {
            removed_fragment_ids,
            updated_fragments,
            new_fragments,
            fields_modified: Vec::new(),
            compacted_sstables: Vec::new(),
            // Whole rows are written: no index may claim the new fragment.
            fields_for_preserving_frag_bitmap: ds
                .schema()
                .fields_pre_order()
                .map(|f| f.id as u32)
                .collect(),
            update_mode: Some(UpdateMode::RewriteRows),
            inserted_rows_filter: Some(keys.build()),
            updated_fragment_offsets: None,
        };
        let transaction = Transaction::new(ds.manifest.version, operation, None);
        // Never removes old versions: a reader's probe of the version after
        // its own must find it (see `meta_cache.rs`).
        let mut commit = CommitBuilder::new(ds.clone()).with_skip_auto_cleanup(true);
        if let Some(rows) = affected {
            commit = commit.with_affected_rows(rows);
        }
        match commit.execute(transaction).await {
            Ok(committed) => {
                let committed = Arc::new(committed);
                let touched: Vec<String> = touched.into_iter().collect();
                let from = committed.version().version - 1;
                self.install_manifest(committed.clone(), from, &touched);
                self.placed_kept
                    .advance(&ds, &committed, &touched, written_rows.as_ref());
                self.after_manifest_commit(&committed);
                Ok(committed)
            }
            Err(e) => {
                // What this attempt staged is no one's: a failed write
                // removes what it wrote (a commit reported failed that
                // landed cannot be told here; cleanup keeps referenced
                // files, so only the refused case deletes).
                let err = CatalogError::from_lance(&e);
                if err.code == Code::CONCURRENT_MODIFICATION {
                    remove_staged(&ds, &staged_files).await;
                    return Err(changed(err.message));
                }
                Err(err)
            }
        }
    }
}

impl Catalog {
    /// Which of `keys` are recorded in `ds`: what this process already
    /// knows of that very version (`kinds_at`), the rest read.
    async fn present_of(
        &self,
        ds: &Dataset,
        keys: &BTreeSet<String>,
    ) -> CatalogResult<HashSet<String>> {
        let asked: Vec<&String> = keys.iter().collect();
        let cache_keys: Vec<String> = asked
            .iter()
            .map(|k| crate::core::meta_cache::kinds_key(k))
            .collect();
        let (kept, _) = self.kept_at::<Vec<String>>(ds, &cache_keys);
        let mut present = HashSet::new();
        let mut unknown = Vec::new();
        for (key, kinds) in asked.into_iter().zip(kept) {
            match kinds {
                Some(kinds) if kinds.is_empty() => {}
                Some(_) => {
                    present.insert(key.clone());
                }
                None => unknown.push(key),
            }
        }
        present.extend(present_keys(ds, &unknown).await?);
        Ok(present)
    }
}

/// A SQL string literal.
pub(crate) fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The keys of a batch of manifest rows.
fn keys_of(rows: &RecordBatch) -> CatalogResult<Vec<String>> {
    let ids = rows
        .column_by_name(OBJECT_ID)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| CatalogError::internal("manifest rows without object_id"))?;
    Ok((0..ids.len())
        .filter(|i| !ids.is_null(*i))
        .map(|i| ids.value(i).to_string())
        .collect())
}

/// Which of `keys` `ds` holds (an index lookup where the manifest is
/// indexed, a scan of only its unindexed fragments otherwise).
async fn present_keys(ds: &Dataset, keys: &[&String]) -> CatalogResult<HashSet<String>> {
    if keys.is_empty() {
        return Ok(HashSet::new());
    }
    let list: Vec<String> = keys.iter().map(|k| literal(k)).collect();
    let mut scan = ds.scan();
    scan.filter(&format!("{OBJECT_ID} IN ({})", list.join(", ")))?;
    scan.project(&[OBJECT_ID])?;
    let batches: Vec<RecordBatch> = scan.try_into_stream().await?.try_collect().await?;
    let mut out = HashSet::new();
    for b in &batches {
        out.extend(keys_of(b)?);
    }
    Ok(out)
}

fn changed(detail: String) -> CatalogError {
    CatalogError::new(
        Code::CONCURRENT_MODIFICATION,
        format!("the catalog changed while this change was applied; nothing was changed: {detail}"),
    )
}

/// Remove data files a refused commit staged under the manifest.
async fn remove_staged(ds: &Dataset, files: &[String]) {
    let Ok(store) = ds.object_store(None).await else {
        return;
    };
    for f in files {
        let path = ds.data_dir().join(f.as_str());
        if let Err(e) = store.delete(&path).await {
            tracing::debug!(file = %f, error = %e, "left a refused manifest commit's file for cleanup");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};
    use std::sync::Arc;

    use crate::core::manifest_tx::table_row;
    use crate::error::Code;

    /// The files under `__manifest/data`.
    fn data_files(root: &std::path::Path) -> BTreeSet<String> {
        std::fs::read_dir(root.join("__manifest/data"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Two commits of one key on the same snapshot: the second is refused
    /// (14) and removes the fragment it staged, and only that: every file
    /// the manifest's latest version references is still there.
    #[tokio::test]
    async fn a_refused_commit_removes_only_what_it_staged() {
        let dir = tempfile::tempdir().unwrap();
        let c = crate::core::open_local(dir.path()).await;
        let held = c.hold_manifest().await;
        let snapshot = c.manifest_snapshot().await.unwrap();
        let schema = Arc::new(arrow_schema::Schema::from(snapshot.schema()));
        let row = |loc: &str| table_row(schema.clone(), "t", loc, &HashMap::new()).unwrap();
        c.manifest_apply(&held, snapshot.clone(), vec![row("a")], &[], false)
            .await
            .unwrap();
        let before = data_files(dir.path());
        let refused = c
            .manifest_apply(&held, snapshot, vec![row("b")], &[], false)
            .await
            .unwrap_err();
        assert_eq!(refused.code, Code::CONCURRENT_MODIFICATION, "{refused:?}");
        assert_eq!(data_files(dir.path()), before);
        let latest = c.manifest_snapshot().await.unwrap();
        let referenced: BTreeSet<String> = latest
            .manifest
            .fragments
            .iter()
            .flat_map(|f| f.files.iter().map(|d| d.path.clone()))
            .collect();
        assert!(referenced.is_subset(&before));
        let rows = c.manifest_rows(&latest, &["t".into()]).await.unwrap();
        assert_eq!(
            rows.first()
                .and_then(crate::core::manifest_tx::row_location)
                .as_deref(),
            Some("a")
        );
    }
}
