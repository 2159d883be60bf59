//! Versions of several tables, all or nothing (`batch_create_table_versions`,
//! and the version entries of `batch_commit_tables`).
//!
//! Each version's only atomic step is the put-if-absent of its manifest's
//! final name, which single commits and plain Lance writers race on too. So
//! the batch takes those names before it decides, under an intent on each
//! table's row (`intent.rs`):
//!
//! 1. claim: one `__manifest` commit records an intent on every versioned
//!    table's row (and guards every other row the batch writes);
//! 2. place: each staged manifest is put at its final name; a name taken
//!    by someone else aborts the batch (what it placed is removed, 14);
//! 3. decide: one `__manifest` commit, on the version the claim made,
//!    removes the intents and applies the batch's other rows. It conflicts
//!    with anything that touched those rows since, an abort included, so
//!    the batch either lands whole or not at all.
//!
//! Before 3 the catalog hides the placed versions; after it all are there.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use lance_namespace::models::{CreateTableVersionEntry, TableVersion};
use object_store::path::Path;
use object_store::ObjectStoreExt;

use crate::core::checks::{display_id, table_id};
use crate::core::manifest_lock::Held;
use crate::core::manifest_tx::{row_properties, with_properties};
use crate::core::reserved::{BATCH_INTENT, PENDING};
use crate::core::version::intent::{in_progress, now_ms, Intent};
use crate::core::version::materialize::{materialize, Placed};
use crate::core::version::single::scheme;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// One planned version: the table, the paths, whether the batch declares
/// the table itself (then no one else can reach its versions).
pub(crate) struct VersionPlan {
    pub id: Vec<String>,
    pub version: i64,
    pub size: Option<i64>,
    pub staging: Path,
    pub final_path: Path,
    /// The table's own path, the only place its versions are undone.
    pub table: Path,
    pub fresh: bool,
}

impl VersionPlan {
    fn what(&self) -> String {
        format!("version {} of table {}", self.version, display_id(&self.id))
    }
}

/// What the batch writes when it decides, beside removing its intents.
pub(crate) struct Decision {
    /// Rows to write, by key (a versioned table's own row is rewritten
    /// without its intent, from the claim's snapshot).
    pub rows: HashMap<String, RecordBatch>,
    pub removed: Vec<String>,
}

impl Catalog {
    /// Check one version entry against the table's row `row` (in the
    /// snapshot the batch reads) and plan it. `fresh`: the table is
    /// declared in the same batch, so it has no versions yet.
    pub(crate) async fn plan_version(
        &self,
        entry: &CreateTableVersionEntry,
        row: &RecordBatch,
        fresh: bool,
    ) -> CatalogResult<VersionPlan> {
        let id = table_id(&Some(entry.id.clone()))?;
        let props = row_properties(row)?;
        // Another batch's claim (one presumed dead was undone before the
        // lock was taken, see `recover_stale`).
        if Intent::of(Some(&props)).is_some() {
            return Err(in_progress(&id));
        }
        let dir = crate::core::manifest_tx::row_location(row).ok_or_else(|| {
            CatalogError::internal(format!("table {} has no location", display_id(&id)))
        })?;
        let location = self.location_uri(&dir);
        let table_path = lance::io::ObjectStore::extract_path_from_uri(
            self.session.store_registry(),
            &location,
        )?;
        let latest = match fresh {
            true => 0,
            false => {
                // An earlier release's recorded version counts as taken.
                let recorded = props
                    .get(PENDING)
                    .and_then(|raw| {
                        serde_json::from_str::<crate::core::version::versions::Pending>(raw).ok()
                    })
                    .map_or(0, |p| p.version);
                self.latest_placed(&table_path).await?.max(recorded)
            }
        };
        if entry.version != latest + 1 {
            return Err(CatalogError::new(
                Code::CONCURRENT_MODIFICATION,
                format!(
                    "table {} is at version {latest}: version {} cannot be created",
                    display_id(&id),
                    entry.version
                ),
            ));
        }
        let (naming, _) = scheme(entry.naming_scheme.as_deref());
        let (staging, final_path) = self
            .check_staged(
                &id,
                &location,
                None,
                entry.version,
                naming,
                &entry.manifest_path,
            )
            .await?;
        Ok(VersionPlan {
            id,
            version: entry.version,
            size: entry.manifest_size,
            staging,
            final_path,
            table: table_path,
            fresh,
        })
    }

    /// Commit versions of several tables at once: all or nothing.
    pub(crate) async fn create_versions(
        &self,
        entries: &[CreateTableVersionEntry],
    ) -> CatalogResult<Vec<TableVersion>> {
        if entries.is_empty() {
            return Err(CatalogError::invalid("a batch needs at least one entry"));
        }
        let mut seen = std::collections::HashSet::new();
        for e in entries {
            table_id(&Some(e.id.clone()))?;
            if crate::core::branch::open::branch_of(&e.branch).is_some() {
                return Err(CatalogError::invalid(
                    "versions on branches are committed one at a time, not in a batch",
                ));
            }
            if !seen.insert(crate::core::checks::manifest_key(&e.id)) {
                return Err(CatalogError::invalid(format!(
                    "table {} appears twice in one batch",
                    display_id(&e.id)
                )));
            }
        }
        for e in entries {
            self.recover_stale(&e.id).await?;
        }
        let held = self.hold_manifest().await;
        let ds = self.manifest_snapshot().await?;
        let rows = self
            .table_rows(&ds, entries.iter().map(|e| e.id.clone()))
            .await?;
        let mut plans = Vec::with_capacity(entries.len());
        for (entry, row) in entries.iter().zip(rows.iter()) {
            plans.push(self.plan_version(entry, row, false).await?);
        }
        let decision = Decision {
            rows: HashMap::new(),
            removed: Vec::new(),
        };
        self.decide_batch(&held, ds, &plans, decision).await
    }

    /// Claim, place, decide (see the file's head): the versions, in the
    /// plans' order, once the batch has landed.
    pub(crate) async fn decide_batch(
        &self,
        held: &Held<'_>,
        ds: Arc<lance::Dataset>,
        plans: &[VersionPlan],
        mut decision: Decision,
    ) -> CatalogResult<Vec<TableVersion>> {
        let batch = uuid::Uuid::new_v4().to_string();
        let claims: Vec<&VersionPlan> = plans.iter().filter(|p| !p.fresh).collect();
        let mut intents: Vec<(String, Intent)> = Vec::with_capacity(claims.len());
        let base = if claims.is_empty() {
            ds
        } else {
            let keys: Vec<String> = claims
                .iter()
                .map(|p| crate::core::checks::manifest_key(&p.id))
                .collect();
            let rows = self
                .table_rows(&ds, claims.iter().map(|p| p.id.clone()))
                .await?;
            let mut claimed = Vec::with_capacity(rows.len());
            for (plan, row) in claims.iter().zip(rows) {
                let intent = Intent {
                    batch: batch.clone(),
                    version: plan.version,
                    staging: plan.staging.to_string(),
                    placed: plan.final_path.to_string(),
                    at_ms: now_ms(),
                    aborted: false,
                };
                let encoded = intent.encoded()?;
                claimed.push(with_properties(&row, |p| {
                    p.insert(BATCH_INTENT.to_string(), encoded.clone());
                })?);
                // Decided: the row as it was (a row the batch also
                // rewrites keeps the batch's own form).
                let key = crate::core::checks::manifest_key(&plan.id);
                if !decision.removed.contains(&key) {
                    decision.rows.entry(key.clone()).or_insert(row);
                }
                intents.push((key, intent));
            }
            let guard: Vec<String> = decision
                .rows
                .keys()
                .chain(decision.removed.iter())
                .filter(|k| !keys.contains(k))
                .cloned()
                .collect();
            self.manifest_claim(held, ds, claimed, guard).await?
        };
        crate::fault::point("batch.claimed");

        let mut placed: Vec<&VersionPlan> = Vec::new();
        for plan in plans {
            if intents.iter().any(|(_, i)| i.overdue()) {
                self.abandon(held, &placed, &intents).await;
                return Err(overdue());
            }
            let what = plan.what();
            match materialize(
                &self.store,
                &plan.staging,
                &plan.final_path,
                plan.size,
                &what,
            )
            .await
            {
                Ok(Placed::New { .. }) => placed.push(plan),
                // Placed before this batch placed it: another commit of the
                // same staged manifest took the name, not this batch.
                Ok(Placed::Same) => {
                    self.abandon(held, &placed, &intents).await;
                    return Err(CatalogError::new(
                        Code::CONCURRENT_MODIFICATION,
                        format!("{what} was committed apart from this batch"),
                    ));
                }
                Err(e) => {
                    self.abandon(held, &placed, &intents).await;
                    return Err(e);
                }
            }
            crate::fault::point("batch.placed");
        }
        if intents.iter().any(|(_, i)| i.overdue()) {
            self.abandon(held, &placed, &intents).await;
            return Err(overdue());
        }

        let removed = decision.removed.clone();
        let rows: Vec<RecordBatch> = decision.rows.into_values().collect();
        if let Err(e) = self.manifest_apply(held, base, rows, &removed, true).await {
            // Refused (someone touched a row since the claim, an abort
            // among them): nothing landed, so what was placed goes. Any
            // other failure may have landed: the intents stay for the
            // recovery, which knows.
            if e.code == Code::CONCURRENT_MODIFICATION {
                self.abandon(held, &placed, &intents).await;
            }
            return Err(e);
        }
        let mut out = Vec::with_capacity(plans.len());
        for plan in plans {
            self.staged.keep(&self.store, plan.staging.clone());
            let answered = self
                .committed(&plan.id, plan.version, &plan.final_path, None)
                .await?;
            out.push(answered.version.map(|v| *v).unwrap_or_default());
        }
        Ok(out)
    }

    /// A batch that will not decide. What it placed for tables it declares
    /// no one else can reach: removed. For the tables it claimed, it
    /// aborts its own intents first (as a committer that found it dead
    /// would, in one commit), so it removes only what is still its own:
    /// a claim someone else already undid, and the version another writer
    /// committed since, stay. Whatever is left (a refused commit, a store
    /// error) the next committer past the expiry finishes.
    async fn abandon(
        &self,
        held: &Held<'_>,
        placed: &[&VersionPlan],
        claimed: &[(String, Intent)],
    ) {
        for plan in placed.iter().filter(|p| p.fresh) {
            if let Err(e) = self.store.inner.delete(&plan.final_path).await {
                tracing::warn!(error = %e, version = plan.version,
                    "an abandoned batch's version was not removed");
            }
        }
        if claimed.is_empty() {
            return;
        }
        let aborted: Vec<(String, Intent)> = claimed
            .iter()
            .map(|(k, i)| {
                let marked = Intent {
                    aborted: true,
                    ..i.clone()
                };
                (k.clone(), marked)
            })
            .collect();
        let marked = match self.swap_intents(held, claimed, Some(&aborted)).await {
            Ok(marked) => marked,
            Err(e) => {
                tracing::warn!(error = %e.message, "an abandoned batch's claims were not aborted");
                return;
            }
        };
        let mut settled = Vec::new();
        for (key, intent) in aborted.iter().filter(|(k, _)| marked.contains(k)) {
            let ours = placed
                .iter()
                .find(|p| !p.fresh && crate::core::checks::manifest_key(&p.id) == *key);
            let settled_now = match ours {
                Some(plan) => self.unplace(&plan.table, intent).await,
                None => true,
            };
            if settled_now {
                settled.push((key.clone(), intent.clone()));
            }
        }
        if let Err(e) = self.swap_intents(held, &settled, None).await {
            tracing::warn!(error = %e.message, "an abandoned batch's claims were not cleared");
        }
    }

    /// In one commit, replace each intent in `from` that its row still
    /// holds with its counterpart in `to` (none: remove it); answers the
    /// keys replaced.
    async fn swap_intents(
        &self,
        held: &Held<'_>,
        from: &[(String, Intent)],
        to: Option<&[(String, Intent)]>,
    ) -> CatalogResult<Vec<String>> {
        if from.is_empty() {
            return Ok(Vec::new());
        }
        let ds = self.manifest_snapshot().await?;
        let keys: Vec<String> = from.iter().map(|(k, _)| k.clone()).collect();
        let found = self.manifest_rows(&ds, &keys).await?;
        let mut rows = Vec::new();
        let mut swapped = Vec::new();
        for row in crate::core::manifest_tx::single_rows(&found) {
            if crate::core::manifest_tx::row_type(&row).as_deref() != Some("table") {
                continue;
            }
            let Some(key) = crate::core::manifest_tx::row_object_id(&row) else {
                continue;
            };
            let Some((_, was)) = from.iter().find(|(k, _)| *k == key) else {
                continue;
            };
            if Intent::of(Some(&row_properties(&row)?)).as_ref() != Some(was) {
                continue;
            }
            let next = match to {
                Some(to) => match to.iter().find(|(k, _)| *k == key) {
                    Some((_, i)) => Some(i.encoded()?),
                    None => continue,
                },
                None => None,
            };
            rows.push(with_properties(&row, |p| match &next {
                Some(e) => {
                    p.insert(BATCH_INTENT.to_string(), e.clone());
                }
                None => {
                    p.remove(BATCH_INTENT);
                }
            })?);
            swapped.push(key);
        }
        self.manifest_apply(held, ds, rows, &[], true).await?;
        Ok(swapped)
    }
}

/// A batch that took too long to decide gives up before a committer takes
/// it for dead.
fn overdue() -> CatalogError {
    CatalogError::new(
        Code::CONCURRENT_MODIFICATION,
        "the batch took too long to place its versions and was given up: retry",
    )
}
