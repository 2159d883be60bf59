//! The maintenance scheduler, on every replica (`--scheduler-interval`, 0:
//! off). Each pass reads every policy record once, then walks every
//! warehouse's tables: a table whose effective policy makes a round due
//! (its `interval` since the last round began, across every replica: the
//! round record in `core/maintenance/rounds.rs`) gets, through the task
//! API's queue,
//!
//! - a compaction to `target_rows_per_fragment` when `compaction` is on and
//!   two or more fragments are under the target (or a tenth deleted), and
//! - unless `--scheduler-cleanup off`, a cleanup of versions older than
//!   `version_retention`, keeping the newest `versions_to_retain`, when it
//!   has a version that cleanup would remove (older, not kept, not tagged),
//!
//! each unless one of that type is still unfinished. A table seen for the
//! first time has its first round one interval later. Warehouses that take
//! no writes (quarantined, being deleted) are skipped.
//!
//! Each warehouse's `__manifest` has a round of its own, by `--manifest-*`
//! (`core/manifest_keeping.rs`): its old versions are removed, always (no
//! clone reads it); the upkeep pass already folds its fragments.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::duration::parse_duration;
use super::Governance;
use crate::api::policy::{EffectivePolicy, Policy, PolicyLevel, PolicyRecord};
use crate::api::sweep::TableSweep;
use crate::core::maintenance::rounds::{Claim, Shape};
use crate::core::maintenance::SubmitLanceTaskRequest;
use crate::core::{Catalog, ManifestKept};
use crate::error::{CatalogError, CatalogResult};

/// Who the scheduler's tasks say submitted them.
pub const SCHEDULER: &str = "scheduler";

/// The scheduler's own finished tasks kept per table and type (older ones
/// are deleted before it submits another, so its rounds never fill the
/// table's task quota; nobody else's tasks are touched).
const KEEP_FINISHED: usize = 10;

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchedulePass {
    /// Tables looked at.
    pub tables: usize,
    /// Rounds this replica began.
    pub rounds: usize,
    /// Tasks it submitted: the table, the task type, the task id.
    pub submitted: Vec<(Vec<String>, String, String)>,
    /// The warehouses whose `__manifest` round it ran, and what it did.
    pub manifests: Vec<(String, ManifestKept)>,
}

impl Governance {
    /// Start this replica's scheduler: a pass every `every` (none: off).
    pub fn start_scheduler(self: &Arc<Self>, every: Duration) {
        if every.is_zero() {
            return;
        }
        tracing::info!(
            every_s = every.as_secs_f64(),
            "maintenance scheduler started"
        );
        let gov = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(gov) = gov.upgrade() else { return };
                match gov.schedule_pass().await {
                    Ok(p) if !p.submitted.is_empty() => {
                        tracing::info!(
                            tables = p.tables,
                            rounds = p.rounds,
                            submitted = p.submitted.len(),
                            "maintenance scheduler pass"
                        )
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e.message, "a maintenance scheduler pass failed; the next one tries again")
                    }
                }
            }
        });
    }

    /// One pass over every warehouse's tables.
    pub async fn schedule_pass(&self) -> CatalogResult<SchedulePass> {
        let records = self.registry.every_policy_record().await?;
        let mut pass = SchedulePass::default();
        let owner = format!(
            "{}-{}",
            std::env::var("HOSTNAME").unwrap_or_else(|_| "replica".into()),
            std::process::id()
        );
        for (warehouse, _) in self.every_catalog(None, None).await? {
            // One warehouse's trouble (quarantined, being deleted, storage
            // not answering) does not stop the others'.
            let ready = async {
                let catalog = self.writable(&warehouse).await?;
                let project = self.warehouse_project(&warehouse).await?;
                let queued = catalog.queued_tasks().await?;
                let tables = catalog.tables_with_ids().await?;
                CatalogResult::Ok((catalog, project, queued, tables))
            };
            let (catalog, project, queued, tables) = match ready.await {
                Ok(ready) => ready,
                Err(e) => {
                    tracing::info!(warehouse = %warehouse, reason = %e.message, "the scheduler skipped a warehouse this pass");
                    continue;
                }
            };
            let unfinished: HashSet<(String, String)> = queued
                .into_iter()
                .map(|(e, _)| (e.table_id, e.task_type))
                .collect();
            let route = super::Route {
                warehouse: warehouse.clone(),
                catalog: catalog.clone(),
            };
            for (id, real) in tables {
                pass.tables += 1;
                let Some(real) = real else { continue };
                let done = self
                    .schedule_table(&route, &project, &id, &real, &records, &unfinished, &owner)
                    .await;
                match done {
                    Ok(Some(submitted)) => {
                        pass.rounds += 1;
                        pass.submitted.extend(submitted);
                    }
                    Ok(None) => {}
                    // One table's trouble (dropped meanwhile, unreadable)
                    // does not stop the pass.
                    Err(e) => {
                        tracing::warn!(table = ?id, warehouse = %warehouse, error = %e.message, "the scheduler skipped a table this pass")
                    }
                }
            }
            match self.keep_manifest_round(&catalog, &owner).await {
                Ok(Some(kept)) => pass.manifests.push((warehouse.clone(), kept)),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(warehouse = %warehouse, error = %e.message, "the scheduler could not keep a manifest this pass")
                }
            }
        }
        Ok(pass)
    }

    /// A warehouse's `__manifest`: its round, when due (the first at
    /// once), and what its keeping did.
    async fn keep_manifest_round(
        &self,
        catalog: &Catalog,
        owner: &str,
    ) -> CatalogResult<Option<ManifestKept>> {
        let keeping = self.maintenance.manifest;
        let interval_ms = u64::try_from(keeping.interval().as_millis()).unwrap_or(u64::MAX);
        match catalog.claim_manifest_round(interval_ms, owner).await? {
            Claim::Begun | Claim::Seen => Ok(Some(catalog.keep_manifest(keeping).await?)),
            Claim::NotDue => Ok(None),
        }
    }

    /// Table `id`'s effective policy, from the records read once a pass.
    async fn policy_from(
        &self,
        route: &super::Route,
        project: &str,
        id: &[String],
        records: &HashMap<(PolicyLevel, String), PolicyRecord>,
    ) -> CatalogResult<EffectivePolicy> {
        let chain = self
            .object_chain_in(route, PolicyLevel::Table, id, project)
            .await?;
        let won = chain.iter().find_map(|c| {
            let key = c.key.clone()?;
            records.get(&(c.level, key)).map(|r| (c, r.clone()))
        });
        Ok(self.compose_policy((PolicyLevel::Table, id.to_vec()), &chain, won))
    }

    /// Table `id`'s shape as policy `p` sees it (none: no data).
    async fn shape_for(
        &self,
        route: &super::Route,
        id: &[String],
        p: &Policy,
    ) -> CatalogResult<Option<Shape>> {
        let retention_s = parse_duration(&p.version_retention).map_err(CatalogError::internal)?;
        route
            .catalog
            .table_shape(
                id,
                p.target_rows_per_fragment,
                retention_s,
                p.versions_to_retain,
            )
            .await
    }

    /// What a round submits for a table of `shape` under policy `p`: the
    /// one rule the scheduler acts on and the sweep report shows.
    fn plan(&self, p: &Policy, shape: &Shape) -> Vec<(&'static str, Map<String, Value>)> {
        let mut wanted = Vec::new();
        // By what Lance will do, not by a count of our own: a round that
        // would remove nothing is not submitted.
        if p.compaction && shape.compactable_fragments > 0 {
            wanted.push((
                "lance_compact",
                object(json!({"target_rows_per_fragment": p.target_rows_per_fragment})),
            ));
        }
        if self.maintenance.scheduled_cleanup && shape.versions_past_retention > 0 {
            let older_than = match p.version_retention.as_str() {
                "0" => "0s".to_string(),
                other => other.to_string(),
            };
            wanted.push((
                "lance_cleanup",
                object(json!({"older_than": older_than, "retain_versions": p.versions_to_retain})),
            ));
        }
        wanted
    }

    /// One table: its round, if due, and what it submitted then.
    #[allow(clippy::too_many_arguments)]
    async fn schedule_table(
        &self,
        route: &super::Route,
        project: &str,
        id: &[String],
        real: &str,
        records: &HashMap<(PolicyLevel, String), PolicyRecord>,
        unfinished: &HashSet<(String, String)>,
        owner: &str,
    ) -> CatalogResult<Option<Vec<(Vec<String>, String, String)>>> {
        let policy = self.policy_from(route, project, id, records).await?;
        let p = &policy.policy;
        let interval_ms = parse_duration(&p.interval)
            .map_err(CatalogError::internal)?
            .saturating_mul(1000);
        match route.catalog.claim_round(real, interval_ms, owner).await? {
            Claim::Begun => {}
            Claim::Seen | Claim::NotDue => return Ok(None),
        }
        let Some(shape) = self.shape_for(route, id, p).await? else {
            return Ok(Some(Vec::new()));
        };
        let mut submitted = Vec::new();
        for (task_type, params) in self.plan(p, &shape) {
            if unfinished.contains(&(real.to_string(), task_type.to_string())) {
                continue;
            }
            route
                .catalog
                .prune_tasks_of(real, task_type, SCHEDULER, KEEP_FINISHED)
                .await?;
            let request = SubmitLanceTaskRequest {
                id: id.to_vec(),
                params,
            };
            let done = route
                .catalog
                .enqueue_task(
                    task_type,
                    request,
                    real,
                    self.maintenance.quota,
                    Some(SCHEDULER.to_string()),
                )
                .await?;
            tracing::info!(table = ?id, task_type, task_id = %done.task_id, winner = policy.winner.level.as_str(), "the scheduler submitted a maintenance task");
            submitted.push((id.to_vec(), task_type.to_string(), done.task_id));
        }
        Ok(Some(submitted))
    }

    /// The sweep report of `tables` of `route` (ids and real ids): each
    /// one's shape, its round, and what the scheduler's next round would
    /// submit. Reads only.
    pub(super) async fn sweep_tables(
        &self,
        route: &super::Route,
        tables: Vec<(Vec<String>, Option<String>)>,
    ) -> CatalogResult<Vec<TableSweep>> {
        let records = self.registry.every_policy_record().await?;
        let project = self.warehouse_project(&route.warehouse).await?;
        let unfinished: HashSet<(String, String)> = route
            .catalog
            .queued_tasks()
            .await?
            .into_iter()
            .map(|(e, _)| (e.table_id, e.task_type))
            .collect();
        let mut out = Vec::new();
        for (id, real) in tables {
            let policy = self.policy_from(route, &project, &id, &records).await?;
            let p = &policy.policy;
            let interval_ms = parse_duration(&p.interval)
                .map_err(CatalogError::internal)?
                .saturating_mul(1000);
            let last = match &real {
                Some(real) => route.catalog.round_of(real).await?,
                None => None,
            };
            let shape = self.shape_for(route, &id, p).await?;
            // A table with no real id (from before them) gets no round.
            let planned: Vec<String> = match (&shape, &real) {
                (Some(shape), Some(_)) => self
                    .plan(p, shape)
                    .into_iter()
                    .map(|(t, _)| t.to_string())
                    .collect(),
                _ => Vec::new(),
            };
            let (skipped, would_submit): (Vec<String>, Vec<String>) =
                planned.into_iter().partition(|t| {
                    real.as_ref()
                        .is_some_and(|r| unfinished.contains(&(r.clone(), t.clone())))
                });
            let shape = shape.unwrap_or_default();
            out.push(TableSweep {
                id,
                winner: policy.winner.clone(),
                has_data: shape.fragments > 0 || shape.versions > 0,
                fragments: shape.fragments as u64,
                untidy_fragments: shape.untidy_fragments as u64,
                compactable_fragments: shape.compactable_fragments as u64,
                target_rows_per_fragment: p.target_rows_per_fragment,
                versions: shape.versions as u64,
                versions_past_retention: shape.versions_past_retention as u64,
                last_round_at_ms: last.as_ref().map(|r| r.started_at_ms),
                next_round_at_ms: last.map(|r| r.started_at_ms.saturating_add(interval_ms)),
                would_submit,
                unfinished: skipped,
            });
        }
        Ok(out)
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
