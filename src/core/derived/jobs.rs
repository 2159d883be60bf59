//! Asynchronous jobs (column backfills, materialized-view refreshes): a
//! record per job, written through to the storage root as JSON under
//! `_catalog/jobs/`, so any replica can answer for it and it outlives the
//! process that ran it. A running job refreshes its record's `updated_at`
//! every [`HEARTBEAT`]; a queued or running record that has not been
//! refreshed for [`STALE_AFTER`] belonged to a process that stopped, and is
//! answered as `failed` (the record itself is left as it was written).

pub use crate::api::jobs::{Job, JobState};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lance::io::ObjectStore;
use object_store::path::Path;

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

/// What a finished job reports.
#[derive(Debug, Default)]
pub(in crate::core) struct JobOutcome {
    pub rows_written: u64,
    pub version: i64,
    pub details: HashMap<String, String>,
}

/// The job registry.
#[derive(Debug, Clone)]
pub(in crate::core) struct Jobs {
    live: Arc<Mutex<HashMap<String, Job>>>,
    store: Arc<ObjectStore>,
    base: Path,
}

impl Jobs {
    pub(crate) fn new(store: Arc<ObjectStore>, base: Path) -> Self {
        Self {
            live: Arc::default(),
            store,
            base,
        }
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

    /// Queue `work` as a job and run it in the background; returns the id.
    pub(crate) async fn spawn<F>(
        &self,
        kind: &str,
        table: Vec<String>,
        column: Option<String>,
        work: F,
    ) -> String
    where
        F: Future<Output = CatalogResult<JobOutcome>> + Send + 'static,
    {
        let job_id = uuid::Uuid::new_v4().to_string();
        let t = now_ms();
        let mut job = Job {
            job_id: job_id.clone(),
            kind: kind.to_string(),
            table,
            column,
            state: JobState::Queued,
            error: None,
            error_code: None,
            rows_written: None,
            version: None,
            details: HashMap::new(),
            created_at_ms: t,
            updated_at_ms: t,
        };
        self.save(&job).await;
        let jobs = self.clone();
        tokio::spawn(async move {
            job.state = JobState::Running;
            job.updated_at_ms = now_ms();
            jobs.save(&job).await;
            let mut work = Box::pin(work);
            let mut beat = tokio::time::interval(HEARTBEAT);
            beat.tick().await;
            let result = loop {
                tokio::select! {
                    result = &mut work => break result,
                    _ = beat.tick() => {
                        job.updated_at_ms = now_ms();
                        jobs.save(&job).await;
                    }
                }
            };
            match result {
                Ok(outcome) => {
                    job.state = JobState::Succeeded;
                    job.rows_written = Some(outcome.rows_written);
                    job.version = Some(outcome.version);
                    job.details = outcome.details;
                }
                Err(e) => {
                    job.state = JobState::Failed;
                    job.error = Some(e.message);
                    job.error_code = Some(e.code.0);
                }
            }
            job.updated_at_ms = now_ms();
            jobs.save(&job).await;
        });
        job_id
    }

    /// A job's record, from this process or from storage.
    pub(in crate::core) async fn get(&self, job_id: &str) -> CatalogResult<Job> {
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
        Ok(abandoned(job, now_ms()))
    }
}

/// A stored record as of `now`: unfinished and not refreshed for
/// [`STALE_AFTER`] means the process running it stopped.
fn abandoned(mut job: Job, now: u64) -> Job {
    let unfinished = matches!(job.state, JobState::Queued | JobState::Running);
    let silent_ms = now.saturating_sub(job.updated_at_ms);
    if unfinished && silent_ms > STALE_AFTER.as_millis() as u64 {
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
