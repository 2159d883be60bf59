//! Asynchronous jobs (column backfills, materialized-view refreshes): a
//! record per job, written through to the storage root as JSON under
//! `_catalog/jobs/`, so any replica can answer for it and it outlives the
//! process that ran it. A job runs on an executor, as a maintenance task
//! does (`maintenance/executor.rs`): in process by default, on Ray where
//! the operator's rules send it. The process following it refreshes its
//! record's `updated_at` every [`HEARTBEAT`]; a queued or running record
//! not refreshed for [`STALE_AFTER`] belonged to a process that stopped:
//! a job on Ray is then answered from Ray (it outlives the process), any
//! other as `failed`.

pub use crate::api::jobs::{Job, JobState};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use lance::io::ObjectStore;
use object_store::path::Path;
use serde_json::{Map, Value};

use crate::api::maintenance::TaskInfo;
use crate::core::maintenance::executor::{self, Executor, ExecutorKind, Progress};
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

/// A job to start: its kind, the table it writes and what it needs.
pub(in crate::core) struct JobSpec {
    pub kind: TaskKind,
    pub table: Vec<String>,
    /// The column a backfill fills.
    pub column: Option<String>,
    pub params: Map<String, Value>,
}

/// Where a catalog's jobs run: the replica's executors, installed from
/// above with the warehouse the catalog is (a job's credential names it).
#[derive(Debug, Clone)]
struct Placer {
    warehouse: String,
    executors: Arc<Executors>,
}

/// The job registry.
#[derive(Debug, Clone)]
pub(in crate::core) struct Jobs {
    live: Arc<Mutex<HashMap<String, Job>>>,
    store: Arc<ObjectStore>,
    base: Path,
    placer: Arc<OnceLock<Placer>>,
}

/// A result's facts as a job record keeps them: text as is, the rest as
/// JSON.
fn facts(into: &mut HashMap<String, String>, from: Map<String, Value>) {
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

    fn placer(&self) -> Placer {
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

    async fn save(&self, job: &Job) {
        {
            let mut live = self.live.lock().expect("jobs lock");
            live.insert(job.job_id.clone(), job.clone());
            // Finished jobs are on storage; keep the in-memory view bounded.
            if live.len() > MAX_LIVE {
                live.retain(|_, j| matches!(j.state, JobState::Queued | JobState::Running));
            }
        }
        let Ok(bytes) = serde_json::to_vec(job) else {
            return;
        };
        if let Err(e) = self.store.put(&self.path(&job.job_id), &bytes).await {
            tracing::warn!(job = %job.job_id, error = %e, "could not persist job record to {JOBS_DIR}");
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
        let table_id = catalog.table_real_id(&spec.table).await?;
        let location = catalog.table_location(&spec.table).await?;
        let placer = self.placer();
        let rules = &placer.executors.rules;
        let size = match rules.iter().any(|r| r.weighs_size()) {
            true => Some(catalog.table_size(&spec.table, &location).await?),
            false => None,
        };
        let mut placement = place(rules, spec.kind, &spec.params, size);
        placement.started = true;
        let job_id = uuid::Uuid::new_v4().simple().to_string();
        let t = now_ms();
        let mut described = Map::new();
        placement.describe(&mut described);
        let mut details = HashMap::from([(TABLE_ID_FACT.to_string(), table_id.clone())]);
        facts(&mut details, described);
        let mut job = Job {
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
        };
        let work = executor::Job {
            catalog: catalog.clone(),
            warehouse: placer.warehouse.clone(),
            task: TaskRecord {
                info: TaskInfo {
                    task_id: job_id.clone(),
                    task_type: spec.kind.name().to_string(),
                    params: spec.params,
                    status: RUNNING.to_string(),
                    created_at: stamp(t),
                    started_at: stamp(t),
                    ..Default::default()
                },
                table_id,
                table: spec.table.clone(),
                lease: None,
                attempts: 1,
                submitted_by: None,
                placement: Some(placement.clone()),
            },
            table: spec.table,
            location,
        };
        self.save(&job).await;
        let jobs = self.clone();
        tokio::spawn(async move {
            job.state = JobState::Running;
            job.updated_at_ms = now_ms();
            jobs.save(&job).await;
            let result = match placer.executors.get(placement.executor) {
                Ok(executor) => jobs.drive(executor, &work, &mut job).await,
                Err(e) => Err(e),
            };
            finish(&mut job, result);
            jobs.save(&job).await;
        });
        Ok(job_id)
    }

    /// Start the job on its executor and wait for it, refreshing the
    /// record every [`HEARTBEAT`].
    async fn drive(
        &self,
        executor: &dyn Executor,
        work: &executor::Job,
        job: &mut Job,
    ) -> CatalogResult<Map<String, Value>> {
        let started = executor.start(work, false).await?;
        if !started.is_empty() {
            facts(&mut job.details, started);
            self.save(job).await;
        }
        loop {
            match executor.wait(work, HEARTBEAT).await? {
                Progress::Running => {
                    job.updated_at_ms = now_ms();
                    self.save(job).await;
                }
                Progress::Done(result) => return Ok(result),
                Progress::Failed(e) => return Err(e),
            }
        }
    }

    /// A job's record, from this process or from storage. A record whose
    /// process stopped answers `failed`, unless its work runs on Ray,
    /// which outlives the process: then Ray's status answers, and the
    /// record is finished from it.
    pub(in crate::core) async fn get(&self, catalog: &Catalog, job_id: &str) -> CatalogResult<Job> {
        if let Some(job) = self.live.lock().expect("jobs lock").get(job_id) {
            return Ok(job.clone());
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
        let job: Job = serde_json::from_slice(&bytes).map_err(|e| {
            CatalogError::internal(format!("job record {job_id} is unreadable: {e}"))
        })?;
        let now = now_ms();
        if !silent(&job, now) {
            return Ok(job);
        }
        match self.placer().executors.ray() {
            Some(ray) if placed_on(&job) == Some(ExecutorKind::Ray) => {
                Ok(self.followed(catalog, ray, job).await)
            }
            _ => Ok(abandoned(job, now)),
        }
    }

    /// A Ray job whose follower stopped, as Ray tells it now.
    async fn followed(&self, catalog: &Catalog, ray: &dyn Executor, mut job: Job) -> Job {
        let work = ray_view(catalog, &job);
        match ray.wait(&work, Duration::ZERO).await {
            Ok(Progress::Running) => job,
            Ok(Progress::Done(result)) => {
                finish(&mut job, Ok(result));
                self.save(&job).await;
                job
            }
            Ok(Progress::Failed(e)) => {
                finish(&mut job, Err(e));
                self.save(&job).await;
                job
            }
            Err(_) => abandoned(job, now_ms()),
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
        self.get(catalog, job_id).await.is_ok_and(|j| {
            j.state == JobState::Running
                && j.details.get(TABLE_ID_FACT).map(String::as_str) == Some(table_id)
        })
    }
}

/// The detail naming the real id of the table a job writes.
const TABLE_ID_FACT: &str = "table_id";

/// Where a record says its job runs.
fn placed_on(job: &Job) -> Option<ExecutorKind> {
    job.details
        .get("executor")
        .and_then(|e| ExecutorKind::parse(e))
}

/// What the Ray executor needs of a job to read its status: its id, and
/// when it started (for the job timeout).
fn ray_view(catalog: &Catalog, job: &Job) -> executor::Job {
    let task = TaskRecord {
        info: TaskInfo {
            task_id: job.job_id.clone(),
            task_type: job.kind.clone(),
            status: RUNNING.to_string(),
            started_at: stamp(job.created_at_ms),
            ..Default::default()
        },
        table_id: job.details.get(TABLE_ID_FACT).cloned().unwrap_or_default(),
        table: job.table.clone(),
        lease: None,
        attempts: 1,
        submitted_by: None,
        placement: None,
    };
    executor::Job {
        catalog: catalog.clone(),
        warehouse: String::new(),
        table: job.table.clone(),
        location: String::new(),
        task,
    }
}

/// A job's end, from its executor's answer.
fn finish(job: &mut Job, result: CatalogResult<Map<String, Value>>) {
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
fn abandoned(mut job: Job, now: u64) -> Job {
    let silent_ms = now.saturating_sub(job.updated_at_ms);
    if silent(&job, now) {
        job.state = JobState::Failed;
        job.error_code = Some(Code::INTERNAL.0);
        job.error = Some(format!(
            "the process running this job stopped: its record was last refreshed {} s ago; \
             run the job again",
            silent_ms / 1000
        ));
    }
    job
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

    #[test]
    fn an_executor_answer_becomes_the_record() {
        let mut job = record(JobState::Running, 0);
        job.details.insert("executor".into(), "ray".into());
        assert_eq!(placed_on(&job), Some(ExecutorKind::Ray));
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
        assert_eq!(placed_on(&record(JobState::Queued, 0)), None);
    }

    #[test]
    fn only_silent_unfinished_records_are_abandoned() {
        let now = 1_000_000;
        let stale = now - STALE_AFTER.as_millis() as u64 - 1;
        let fresh = now - HEARTBEAT.as_millis() as u64;
        assert_eq!(
            abandoned(record(JobState::Running, stale), now).state,
            JobState::Failed
        );
        assert_eq!(
            abandoned(record(JobState::Queued, stale), now).state,
            JobState::Failed
        );
        assert_eq!(
            abandoned(record(JobState::Running, fresh), now).state,
            JobState::Running
        );
        let done = abandoned(record(JobState::Succeeded, stale), now);
        assert_eq!(done.state, JobState::Succeeded);
        assert!(done.error.is_none());
    }
}
