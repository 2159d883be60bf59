//! Where a task's work runs: the executor seam. A worker that holds a
//! task's lease starts its job on an executor, waits on it in slices
//! (renewing the lease between them), and stops it when the task is
//! cancelled. The in-process executor (Lance inside this replica) is the
//! default; [`super::ray`] runs the same tasks on a Ray cluster through
//! lance-ray. Which one a task uses is decided once, by the operator's
//! rules ([`super::placement`]), and kept in the task's record, so a
//! replica taking a task over runs it where it was started.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value};

pub use super::placement::{ExecutorKind, Placement};
use super::TaskRecord;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult};

/// One task's work, as an executor is given it.
#[derive(Debug, Clone)]
pub struct Job {
    pub catalog: Catalog,
    /// The warehouse the table lives in.
    pub warehouse: String,
    pub task: TaskRecord,
    /// The table's name now (found by its real id).
    pub table: Vec<String>,
    pub location: String,
}

impl Job {
    pub fn task_id(&self) -> &str {
        &self.task.info.task_id
    }

    /// What it runs (`None`: a type this catalog does not run).
    pub fn kind(&self) -> Option<super::TaskKind> {
        super::TaskKind::parse(&self.task.info.task_type)
    }
}

/// What a job is doing.
#[derive(Debug)]
pub enum Progress {
    Running,
    Done(Map<String, Value>),
    Failed(CatalogError),
}

/// A place to run tasks.
#[async_trait::async_trait]
pub trait Executor: Send + Sync + std::fmt::Debug {
    fn kind(&self) -> ExecutorKind;

    /// Start the job, or attach to it when `attach` (it was started by a
    /// worker that since lost the task). Facts the executor adds to the
    /// task's result (a job id, say) come back.
    async fn start(&self, job: &Job, attach: bool) -> CatalogResult<Map<String, Value>>;

    /// Wait at most `at_most` for the job to end.
    async fn wait(&self, job: &Job, at_most: Duration) -> CatalogResult<Progress>;

    /// Stop the task's job: it was cancelled or deleted. Any replica may
    /// ask (the one answering a cancel), so only the task is needed.
    async fn cancel(&self, task: &TaskRecord) -> CatalogResult<()>;

    /// Let go of the task's job without stopping it: another worker holds
    /// the task now and attaches to it where the executor outlives a
    /// replica (in process, the work is dropped).
    async fn detach(&self, task: &TaskRecord);
}

/// A task's work running in this process, stopped when dropped: a
/// worker that lets go of it (its wait cut short by a lost lease or a
/// cancel) never leaves it running detached.
#[derive(Debug)]
struct Running(tokio::task::JoinHandle<CatalogResult<Map<String, Value>>>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Lance in this replica: today's code, the default.
#[derive(Debug, Default)]
pub struct InProcess {
    running: Mutex<HashMap<String, Running>>,
}

impl InProcess {
    fn take(&self, task_id: &str) -> Option<Running> {
        self.running
            .lock()
            .expect("in-process jobs")
            .remove(task_id)
    }
}

#[async_trait::async_trait]
impl Executor for InProcess {
    fn kind(&self) -> ExecutorKind {
        ExecutorKind::InProcess
    }

    /// Nothing outlives a replica here: attaching starts again.
    async fn start(&self, job: &Job, _attach: bool) -> CatalogResult<Map<String, Value>> {
        let job = job.clone();
        let id = job.task_id().to_string();
        let handle = tokio::spawn(async move {
            // A crash test's window: the task is running, its lease renewed.
            crate::fault::hold("maintenance.run").await;
            crate::fault::point("maintenance.run");
            let kind = job.kind();
            if let Some(kind) = kind.filter(|k| k.is_job()) {
                let params = &job.task.info.params;
                return job
                    .catalog
                    .run_job(&job.table, &job.location, kind, params)
                    .await;
            }
            let ds = job.catalog.open_at(&job.table, &job.location, None).await?;
            super::run::execute(
                &job.catalog,
                &job.table,
                ds,
                &job.task.info.task_type,
                &job.task.info.params,
            )
            .await
        });
        // A run this replica had of the same task is dropped, so stopped.
        self.running
            .lock()
            .expect("in-process jobs")
            .insert(id, Running(handle));
        Ok(Map::new())
    }

    async fn wait(&self, job: &Job, at_most: Duration) -> CatalogResult<Progress> {
        let Some(mut handle) = self.take(job.task_id()) else {
            return Ok(Progress::Failed(CatalogError::internal(
                "this replica is not running the task's work",
            )));
        };
        match tokio::time::timeout(at_most, &mut handle.0).await {
            Err(_) => {
                self.running
                    .lock()
                    .expect("in-process jobs")
                    .insert(job.task_id().to_string(), handle);
                Ok(Progress::Running)
            }
            Ok(Ok(Ok(result))) => Ok(Progress::Done(result)),
            Ok(Ok(Err(e))) => Ok(Progress::Failed(e)),
            Ok(Err(joined)) => Ok(Progress::Failed(CatalogError::internal(format!(
                "the task's work stopped: {joined}"
            )))),
        }
    }

    async fn cancel(&self, task: &TaskRecord) -> CatalogResult<()> {
        drop(self.take(&task.info.task_id));
        Ok(())
    }

    /// Dropped: its commit, if any, is Lance's own and atomic; files it
    /// wrote are what the orphan scan finds.
    async fn detach(&self, task: &TaskRecord) {
        drop(self.take(&task.info.task_id));
    }
}
