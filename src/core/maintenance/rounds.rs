//! What the scheduler needs from one root: its tables with their real ids,
//! what a table needs (fragments under the target, versions beyond those
//! kept), and one round record per table, so that a round happens once
//! across every replica sharing the root.
//!
//! A round record (`maintenance_rounds/table/<real id>`, and
//! `maintenance_rounds/manifest/root` for the root's `__manifest`) holds when the
//! table's last round began. A replica claims a round by writing the next
//! version of that record, a conditional create that only one writer wins;
//! a loser re-reads, sees the round begun, and does nothing.

use futures::TryStreamExt;
use serde::{Deserialize, Serialize};

use crate::core::manifest_tx::{row_object_id, row_properties, single_rows};
use crate::core::object_ids::id_property;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::{now_ms, Records};

/// One table's round record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Round {
    /// When its latest round began (or, for a table first seen, when it
    /// was seen: its first round is one interval later).
    pub started_at_ms: u64,
    /// The replica that began it.
    pub by: String,
}

/// What a table looks like to the scheduler.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    pub fragments: usize,
    /// Fragments under the target rows, or with a tenth of their rows
    /// deleted.
    pub untidy_fragments: usize,
    /// The fragments Lance's own compaction plan would rewrite now (small
    /// fragments it cannot merge, such as indexed ones beside unindexed
    /// ones, are not among them): a round compacts only when there are.
    pub compactable_fragments: usize,
    pub versions: usize,
    /// Versions a cleanup by the policy would remove: older than the
    /// retention, not the newest kept, not tagged, not a branch's parent,
    /// and not kept for a shallow clone (the cleanup's pre-pass).
    pub versions_past_retention: usize,
}

/// Whether a round claim found the round due and took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// This replica begins the round.
    Begun,
    /// First seen: recorded, its first round is one interval away.
    Seen,
    /// Not due, or another replica began it.
    NotDue,
}

impl Catalog {
    fn rounds(&self) -> Records {
        self.control.under("maintenance_rounds")
    }

    /// Every recorded table with its real id (none: from before real ids
    /// and never given one).
    pub(crate) async fn tables_with_ids(
        &self,
    ) -> CatalogResult<Vec<(Vec<String>, Option<String>)>> {
        let ds = self.current_manifest().await?;
        let mut scan = ds.scan();
        scan.filter("object_type = 'table'")?;
        let batches: Vec<arrow_array::RecordBatch> =
            scan.try_into_stream().await?.try_collect().await?;
        let mut out = Vec::new();
        for row in single_rows(&batches) {
            let Some(key) = row_object_id(&row) else {
                continue;
            };
            let real = row_properties(&row)?.get(id_property("table")).cloned();
            out.push((crate::core::manifest_id(&key), real));
        }
        out.sort();
        Ok(out)
    }

    /// The recorded tables in namespace `ns` or below (every one for the
    /// root), with their real ids as [`tables_with_ids`](Self::tables_with_ids).
    pub(crate) async fn tables_under(
        &self,
        ns: &[String],
    ) -> CatalogResult<Vec<(Vec<String>, Option<String>)>> {
        let mut tables = self.tables_with_ids().await?;
        tables.retain(|(id, _)| id.len() > ns.len() && id.starts_with(ns));
        Ok(tables)
    }

    /// Table `id`'s shape for a compaction target of `target_rows` and a
    /// cleanup of versions older than `retention_s` keeping the newest
    /// `keep`; none for a table with no data (declared, never written).
    pub(crate) async fn table_shape(
        &self,
        id: &[String],
        target_rows: u64,
        retention_s: u64,
        keep: u64,
    ) -> CatalogResult<Option<Shape>> {
        let location = self.table_location(id).await?;
        let ds = match self.open_at(id, &location, None).await {
            Ok(ds) => ds,
            // Declared, never written: nothing to keep.
            Err(e) if e.code == Code::TABLE_NOT_FOUND => return Ok(None),
            Err(e) => return Err(e),
        };
        let target = usize::try_from(target_rows).unwrap_or(usize::MAX);
        let fragments = &ds.manifest.fragments;
        let untidy = fragments
            .iter()
            .filter(|f| crate::core::manifest_upkeep::untidy(f, target))
            .count();
        let versions = crate::core::engine(ds.versions().await)?;
        // Versions a tag pins, or a branch was made from: cleanup keeps them.
        let mut pinned: std::collections::HashSet<u64> =
            crate::core::engine(ds.tags().list().await)?
                .values()
                .filter(|t| t.branch.is_none())
                .map(|t| t.version)
                .collect();
        pinned.extend(
            crate::core::engine(ds.branches().list().await)?
                .values()
                .filter(|b| b.parent_branch.is_none())
                .map(|b| b.parent_version),
        );
        let cutoff = chrono::Utc::now()
            - chrono::Duration::try_seconds(i64::try_from(retention_s).unwrap_or(i64::MAX))
                .unwrap_or(chrono::TimeDelta::MAX);
        let keep = usize::try_from(keep).unwrap_or(usize::MAX).max(1);
        // Newest first: the newest `keep` (the latest among them) stay.
        let mut newest_first: Vec<_> = versions.iter().collect();
        newest_first.sort_by_key(|v| std::cmp::Reverse(v.version));
        let past: Vec<u64> = newest_first
            .iter()
            .skip(keep)
            .filter(|v| v.timestamp < cutoff && !pinned.contains(&v.version))
            .map(|v| v.version)
            .collect();
        // What the cleanup's pre-pass keeps for shallow clones is not
        // removable either; a refusal there means the task would fail.
        let past = match past.is_empty() {
            true => 0,
            false => match self.cleanup_prepass(id).await {
                Ok(None) => past.len(),
                Ok(Some(pin)) => past.iter().filter(|v| **v < pin).count(),
                Err(e) => {
                    tracing::warn!(table = ?id, error = %e.message, "a cleanup would be refused; the scheduler leaves it");
                    0
                }
            },
        };
        Ok(Some(Shape {
            fragments: fragments.len(),
            untidy_fragments: untidy,
            compactable_fragments: self.compactable(id, &ds, target_rows).await,
            versions: versions.len(),
            versions_past_retention: past,
        }))
    }

    /// How many fragments Lance's compaction would rewrite now, planned
    /// with the very options a scheduled compaction runs with (nothing is
    /// written); 0 when it cannot plan.
    async fn compactable(&self, id: &[String], ds: &lance::Dataset, target_rows: u64) -> usize {
        let given = serde_json::json!({"target_rows_per_fragment": target_rows});
        let params = match super::params::checked(
            "lance_compact",
            given.as_object().cloned().unwrap_or_default(),
        ) {
            Ok(p) => p,
            Err(_) => return 0,
        };
        let options = super::run::compaction_options(&params);
        match lance::dataset::optimize::plan_compaction(ds, &options).await {
            Ok(plan) => plan.tasks.iter().map(|t| t.fragments.len()).sum(),
            Err(e) => {
                tracing::warn!(table = ?id, error = %e, "Lance could not plan a compaction; the scheduler leaves it");
                0
            }
        }
    }

    /// Delete the finished tasks of `task_type` that `by` submitted on the
    /// table whose real id is `table_id`, but the newest `keep`: a
    /// scheduler's rounds would otherwise fill the table's task quota.
    /// Others' tasks, and unfinished ones, are never touched. Answers how
    /// many went.
    pub(crate) async fn prune_tasks_of(
        &self,
        table_id: &str,
        task_type: &str,
        by: &str,
        keep: usize,
    ) -> CatalogResult<usize> {
        use super::{TaskRecord, COMPLETED, FAILED};
        let records = self.task_records(table_id)?;
        // Task ids sort by age: the newest are last.
        let ids = records.listed_ids(task_type).await?;
        let mut theirs = 0;
        let mut gone = 0;
        for task_id in ids.iter().rev() {
            let Some(t) = records.get::<TaskRecord>(task_type, task_id).await? else {
                continue;
            };
            if t.value.submitted_by.as_deref() != Some(by) {
                continue;
            }
            theirs += 1;
            let finished = matches!(t.value.info.status.as_str(), COMPLETED | FAILED);
            if theirs <= keep || !finished {
                continue;
            }
            let deleted = records
                .delete::<TaskRecord, _>(task_type, task_id, |t| {
                    match matches!(t.info.status.as_str(), COMPLETED | FAILED) {
                        true => Ok(()),
                        false => Err(CatalogError::new(Code::TASK_STATE_CONFLICT, "")),
                    }
                })
                .await;
            if matches!(deleted, Ok(true)) {
                let _ = records.erase::<TaskRecord>(task_type, task_id).await;
                gone += 1;
            }
        }
        Ok(gone)
    }

    /// The round record of the table whose real id is `table_id`: when its
    /// last round began (none: never seen).
    pub(crate) async fn round_of(&self, table_id: &str) -> CatalogResult<Option<Round>> {
        Ok(self
            .rounds()
            .get::<Round>("table", table_id)
            .await?
            .map(|r| r.value))
    }

    /// The real ids that have a round record.
    pub(crate) async fn round_table_ids(&self) -> CatalogResult<Vec<String>> {
        self.rounds().listed_ids("table").await
    }

    /// Forget the round record of the table whose real id is `table_id`.
    pub(crate) async fn forget_round(&self, table_id: &str) -> CatalogResult<()> {
        let rounds = self.rounds();
        rounds
            .delete::<Round, _>("table", table_id, |_| Ok(()))
            .await?;
        rounds.erase::<Round>("table", table_id).await
    }

    /// Claim the round of the table whose real id is `table_id` when
    /// `interval_ms` has passed since its last one began (a table never
    /// seen is recorded, and its first round is one interval later).
    pub(crate) async fn claim_round(
        &self,
        table_id: &str,
        interval_ms: u64,
        by: &str,
    ) -> CatalogResult<Claim> {
        self.claim("table", table_id, interval_ms, by).await
    }

    /// Claim the round of this root's `__manifest` (its keeping, see
    /// `core/manifest_keeping.rs`), as [`claim_round`](Self::claim_round).
    pub(crate) async fn claim_manifest_round(
        &self,
        interval_ms: u64,
        by: &str,
    ) -> CatalogResult<Claim> {
        self.claim("manifest", "root", interval_ms, by).await
    }

    async fn claim(
        &self,
        kind: &str,
        id: &str,
        interval_ms: u64,
        by: &str,
    ) -> CatalogResult<Claim> {
        let now = now_ms();
        let mut claim = Claim::NotDue;
        // A lost race re-reads and sees the round begun by the winner.
        self.rounds()
            .upsert(kind, id, |last: Option<Round>| {
                claim = match last {
                    None => Claim::Seen,
                    Some(r) if now.saturating_sub(r.started_at_ms) >= interval_ms => Claim::Begun,
                    Some(_) => Claim::NotDue,
                };
                (claim != Claim::NotDue).then(|| Round {
                    started_at_ms: now,
                    by: by.to_string(),
                })
            })
            .await?;
        Ok(claim)
    }
}
