//! Asynchronous jobs (column backfills, materialized-view refreshes): a
//! record per job, written through to the storage root as JSON under
//! `_catalog/jobs/`, so any replica can answer for it and it outlives the
//! process that ran it. A job runs on an executor, as a maintenance task
//! does (`maintenance/executor.rs`): in process by default, on Ray where
//! the operator's rules send it (`job_follow.rs` follows it). The process
//! following it refreshes its record's `updated_at` every [`HEARTBEAT`]; a
//! queued or running record not refreshed for [`STALE_AFTER`] belonged to
//! a process that stopped: a job on Ray outlives it, so the replica that
//! notices asks Ray and follows the job from then on; any other is
//! answered `failed`.

pub use crate::api::jobs::{Job, JobState};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use lance::io::ObjectStore;
use object_store::path::Path;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::api::maintenance::TaskInfo;
use crate::core::maintenance::executor::{self, ExecutorKind, Placement};
use crate::core::maintenance::executors::Executors;
use crate::core::maintenance::placement::place;
use crate::core::maintenance::{stamp, TaskKind, TaskRecord, RUNNING};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::now_ms;

/// How many job records to keep in memory before dropping finished ones.
const MAX_LIVE: usize = 1024;

/// How often a running job refreshes its record.
pub(in crate::core) const HEARTBEAT: Duration = Duration::from_secs(10);

/// How long a queued or running record may go unrefreshed before it is
/// taken as abandoned: several missed heartbeats, so a slow store is not
/// mistaken for a dead process.
pub(in crate::core) const STALE_AFTER: Duration = Duration::from_secs(60);

/// Where job records live, under the storage root.
const JOBS_DIR: &str = "_catalog/jobs";

/// A job to start: its kind, the table it writes (its name, real id and
/// location, resolved once by the request that checked it) and what it
/// needs.
pub(in crate::core) struct JobSpec {
    pub kind: TaskKind,
    pub table: Vec<String>,
    pub table_id: String,
    pub location: String,
    /// The column a backfill fills.
    pub column: Option<String>,
    pub params: Map<String, Value>,
}

/// A job as stored: what the API shows, and what only the catalog reads
/// (never taken from the user-visible `details`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Stored {
    #[serde(flatten)]
    pub job: Job,
    /// The real id of the table it writes: its key is good for that one.
    #[serde(default)]
    pub table_id: String,
    #[serde(default)]
    pub placement: Option<Placement>,
}

impl Stored {
    /// The job as an executor is given it: a running task under the job's
    /// id (its Ray `submission_id` and its key's id), started when the job
    /// was created.
    pub(super) fn as_task(&self, params: Map<String, Value>) -> TaskRecord {
        let job = &self.job;
        TaskRecord {
            info: TaskInfo {
                task_id: job.job_id.clone(),
                task_type: job.kind.clone(),
                params,
                status: RUNNING.to_string(),
                created_at: stamp(job.created_at_ms),
                started_at: stamp(job.created_at_ms),
                ..Default::default()
            },
            table_id: self.table_id.clone(),
            table: job.table.clone(),
            lease: None,
            attempts: 1,
            submitted_by: None,
            placement: self.placement.clone(),
        }
    }

    /// Where it runs.
    pub(super) fn executor(&self) -> ExecutorKind {
        self.placement
            .as_ref()
            .map(|p| p.executor)
            .unwrap_or_default()
    }
}

/// Where a catalog's jobs run: the replica's executors, installed from
/// above with the warehouse the catalog is (a job's credential names it).
#[derive(Debug, Clone)]
pub(super) struct Placer {
    pub warehouse: String,
    pub executors: Arc<Executors>,
}

/// The job registry.
#[derive(Debug, Clone)]
pub(in crate::core) struct Jobs {
    live: Arc<Mutex<HashMap<String, Stored>>>,
    store: Arc<ObjectStore>,
    base: Path,
    placer: Arc<OnceLock<Placer>>,
}

/// A result's facts as a job record shows them: text as is, the rest as
/// JSON.
pub(super) fn facts(into: &mut HashMap<String, String>, from: Map<String, Value>) {
    for (k, v) in from {
        let text = match v {
            Value::String(s) => s,
            other => other.to_string(),
        };
        into.insert(k, text);
    }
}

impl Jobs {
    pub(crate) fn new(store: Arc<ObjectStore>, base: Path) -> Self {
        Self {
            live: Arc::default(),
            store,
            base,
            placer: Arc::default(),
        }
    }

    /// Install where jobs run (the first call wins); until then, and in a
    /// catalog on its own, they run in process.
    pub(in crate::core) fn set_placer(&self, warehouse: &str, executors: Arc<Executors>) {
        let _ = self.placer.set(Placer {
            warehouse: warehouse.to_string(),
            executors,
        });
    }

    pub(super) fn placer(&self) -> Placer {
        self.placer.get().cloned().unwrap_or_else(|| Placer {
            warehouse: String::new(),
            executors: Arc::default(),
        })
    }

    fn path(&self, job_id: &str) -> Path {
        JOBS_DIR
            .split('/')
            .fold(self.base.clone(), |p, part| p.join(part))
            .join(format!("{job_id}.json").as_str())
    }

    pub(super) async fn save(&self, stored: &Stored) {
        {
            let mut live = self.live.lock().expect("jobs lock");
            live.insert(stored.job.job_id.clone(), stored.clone());
            // Finished jobs are on storage; keep the in-memory view bounded.
            if live.len() > MAX_LIVE {
                live.retain(|_, s| matches!(s.job.state, JobState::Queued | JobState::Running));
            }
        }
        let Ok(bytes) = serde_json::to_vec(stored) else {
            return;
        };
        if let Err(e) = self.store.put(&self.path(&stored.job.job_id), &bytes).await {
            tracing::warn!(job = %stored.job.job_id, error = %e, "could not persist job record to {JOBS_DIR}");
        }
    }

    /// Start a job on the executor the operator's rules choose for it and
    /// follow it in the background; returns its id (32 hex digits, which
    /// is also its Ray `submission_id`).
    pub(in crate::core) async fn start(
        &self,
        catalog: &Catalog,
        spec: JobSpec,
    ) -> CatalogResult<String> {
        let placer = self.placer();
        let rules = &placer.executors.rules;
        let size = match rules.iter().any(|r| r.weighs_size()) {
            true => Some(catalog.table_size(&spec.table, &spec.location).await?),
            false => None,
        };
        let mut placement = place(rules, spec.kind, &spec.params, size);
        placement.started = true;
        let job_id = uuid::Uuid::new_v4().simple().to_string();
        let t = now_ms();
        let mut described = Map::new();
        placement.describe(&mut described);
        let mut details = HashMap::new();
        facts(&mut details, described);
        let stored = Stored {
            job: Job {
                job_id: job_id.clone(),
                kind: spec.kind.name().to_string(),
                table: spec.table.clone(),
                column: spec.column,
                state: JobState::Queued,
                error: None,
                error_code: None,
                rows_written: None,
                version: None,
                details,
                created_at_ms: t,
                updated_at_ms: t,
            },
            table_id: spec.table_id.clone(),
            placement: Some(placement),
        };
        let work = executor::Job {
            catalog: catalog.clone(),
            warehouse: placer.warehouse.clone(),
            task: stored.as_task(spec.params),
            table: spec.table,
            location: spec.location,
        };
        self.save(&stored).await;
        self.run(placer.executors, work, stored);
        Ok(job_id)
    }

    /// A job's record, from this process or from storage. A record whose
    /// process stopped answers `failed`, unless its work runs on Ray,
    /// which outlives the process: then Ray's status answers, and this
    /// replica follows the job from now on.
    pub(in crate::core) async fn get(&self, catalog: &Catalog, job_id: &str) -> CatalogResult<Job> {
        Ok(self.stored(catalog, job_id).await?.job)
    }

    async fn stored(&self, catalog: &Catalog, job_id: &str) -> CatalogResult<Stored> {
        if let Some(stored) = self.live.lock().expect("jobs lock").get(job_id) {
            return Ok(stored.clone());
        }
        let not_found =
            || CatalogError::new(Code::TASK_NOT_FOUND, format!("no job with id {job_id:?}"));
        if job_id.is_empty() || !job_id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Err(not_found());
        }
        let bytes = self
            .store
            .read_one_all(&self.path(job_id))
            .await
            .map_err(|_| not_found())?;
        let stored: Stored = serde_json::from_slice(&bytes).map_err(|e| {
            CatalogError::internal(format!("job record {job_id} is unreadable: {e}"))
        })?;
        let now = now_ms();
        if !silent(&stored.job, now) {
            return Ok(stored);
        }
        match stored.executor() {
            ExecutorKind::Ray => Ok(self.adopt(catalog, stored).await),
            ExecutorKind::InProcess => Ok(abandoned(stored, now)),
        }
    }

    /// Whether job `job_id` runs on table `table_id` (its credential is
    /// good only while it does).
    pub(in crate::core) async fn running(
        &self,
        catalog: &Catalog,
        job_id: &str,
        table_id: &str,
    ) -> bool {
        self.stored(catalog, job_id)
            .await
            .is_ok_and(|s| s.job.state == JobState::Running && s.table_id == table_id)
    }
}

/// A job's end, from its executor's answer.
pub(super) fn finish(job: &mut Job, result: CatalogResult<Map<String, Value>>) {
    match result {
        Ok(mut result) => {
            job.state = JobState::Succeeded;
            job.rows_written = result.remove("rows_written").and_then(|v| v.as_u64());
            job.version = result.remove("version").and_then(|v| v.as_i64());
            facts(&mut job.details, result);
        }
        Err(e) => {
            job.state = JobState::Failed;
            job.error = Some(e.message);
            job.error_code = Some(e.code.0);
        }
    }
    job.updated_at_ms = now_ms();
}

/// Whether an unfinished record has gone unrefreshed for [`STALE_AFTER`]:
/// the process following its job stopped.
fn silent(job: &Job, now: u64) -> bool {
    matches!(job.state, JobState::Queued | JobState::Running)
        && now.saturating_sub(job.updated_at_ms) > STALE_AFTER.as_millis() as u64
}

/// A stored record as of `now`: unfinished and not refreshed for
/// [`STALE_AFTER`] means the process running it stopped.
pub(super) fn abandoned(mut stored: Stored, now: u64) -> Stored {
    let job = &mut stored.job;
    let silent_ms = now.saturating_sub(job.updated_at_ms);
    if silent(job, now) {
        job.state = JobState::Failed;
        job.error_code = Some(Code::INTERNAL.0);
        job.error = Some(format!(
            "the process running this job stopped: its record was last refreshed {} s ago; \
             run the job again",
            silent_ms / 1000
        ));
    }
    stored
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(state: JobState, updated_at_ms: u64) -> Job {
        Job {
            job_id: "j".into(),
            kind: "backfill".into(),
            table: vec!["t".into()],
            column: None,
            state,
            error: None,
            error_code: None,
            rows_written: None,
            version: None,
            details: HashMap::new(),
            created_at_ms: 0,
            updated_at_ms,
        }
    }

    fn stored(job: Job) -> Stored {
        Stored {
            job,
            table_id: String::new(),
            placement: None,
        }
    }

    #[test]
    fn an_executor_answer_becomes_the_record() {
        let mut job = record(JobState::Running, 0);
        let result = serde_json::from_str(
            r#"{"rows_written": 5, "version": 7, "fragments": 2, "source": "a"}"#,
        )
        .unwrap();
        finish(&mut job, Ok(result));
        assert_eq!(
            (job.state, job.rows_written, job.version),
            (JobState::Succeeded, Some(5), Some(7))
        );
        assert_eq!(
            (
                job.details["fragments"].as_str(),
                job.details["source"].as_str()
            ),
            ("2", "a")
        );
        assert!(!job.details.contains_key("rows_written"));
        let mut failed = record(JobState::Running, 0);
        finish(
            &mut failed,
            Err(CatalogError::new(Code::TABLE_COLUMN_NOT_FOUND, "no column")),
        );
        assert_eq!(failed.state, JobState::Failed);
        assert_eq!(failed.error_code, Some(Code::TABLE_COLUMN_NOT_FOUND.0));
        let mut placed = stored(record(JobState::Queued, 0));
        assert_eq!(placed.executor(), ExecutorKind::InProcess);
        placed.placement = Some(Placement {
            executor: ExecutorKind::Ray,
            ..Default::default()
        });
        assert_eq!(placed.executor(), ExecutorKind::Ray);
        // What the API shows has none of what only the catalog reads.
        let shown = serde_json::to_value(&placed.job).unwrap();
        assert!(shown.get("table_id").is_none() && shown.get("placement").is_none());
    }

    #[test]
    fn only_silent_unfinished_records_are_abandoned() {
        let now = 1_000_000;
        let stale = now - STALE_AFTER.as_millis() as u64 - 1;
        let fresh = now - HEARTBEAT.as_millis() as u64;
        assert_eq!(
            abandoned(stored(record(JobState::Running, stale)), now)
                .job
                .state,
            JobState::Failed
        );
        assert_eq!(
            abandoned(stored(record(JobState::Queued, stale)), now)
                .job
                .state,
            JobState::Failed
        );
        assert_eq!(
            abandoned(stored(record(JobState::Running, fresh)), now)
                .job
                .state,
            JobState::Running
        );
        let done = abandoned(stored(record(JobState::Succeeded, stale)), now).job;
        assert_eq!(done.state, JobState::Succeeded);
        assert!(done.error.is_none());
    }
}
