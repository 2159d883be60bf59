//! The Ray executor: a task becomes a Ray job whose `submission_id` is
//! the task id, running the runner script this binary ships
//! (`ray_runner.py`), which calls lance-ray against the catalog's REST API
//! with a credential good for that one table while the task runs.
//!
//! The id is what makes a takeover safe: a replica that takes over a task
//! whose worker died attaches to the job under the task's id instead of
//! starting a second one, and a submit that races one finds it there.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::executor::{Executor, ExecutorKind, Job, Progress};
use super::ray_jobs::{JobsApi, Submitted};
use super::{TaskKind, TaskRecord};
use crate::error::{CatalogError, CatalogResult, Code};

/// The runner the job executes, shipped in its runtime env.
pub const RUNNER: &str = include_str!("ray_runner.py");

/// The line the runner ends a successful job with, and a failed one.
const RESULT_TAG: &str = "LANCE_CATALOG_RESULT ";
const ERROR_TAG: &str = "LANCE_CATALOG_ERROR ";

/// How a replica reaches its Ray cluster.
#[derive(Clone)]
pub struct RayConfig {
    /// The dashboard's address, `http://head:8265` (the Jobs API).
    pub address: String,
    /// Ray's token (`RAY_AUTH_MODE=token`).
    pub token: Option<String>,
    /// The catalog's REST URL as the cluster reaches it; `None`: this
    /// server's own listening address, set once it is bound.
    pub catalog_url: Option<String>,
    /// The cluster's Python, which must have pylance and lance-ray.
    pub python: String,
    /// lance-ray's `num_workers`.
    pub workers: usize,
    /// A job running longer is stopped and its task fails.
    pub timeout: Duration,
    /// How often a running job's status is read.
    pub poll: Duration,
}

/// Every setting but the token's value.
impl std::fmt::Debug for RayConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RayConfig")
            .field("address", &self.address)
            .field("token", &self.token.as_ref().map(|_| "(set)"))
            .field("catalog_url", &self.catalog_url)
            .field("python", &self.python)
            .field("workers", &self.workers)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Credentials for a job's runner, from above the core: valid for the
/// job's table only, and only while its task runs.
#[async_trait::async_trait]
pub trait TaskCredentials: Send + Sync {
    /// `None` when this server asks for no credentials.
    async fn issue(&self, job: &Job) -> CatalogResult<Option<String>>;
    /// End a task's credential (the task ended).
    async fn revoke(&self, task_id: &str);
}

pub struct RayExecutor {
    config: RayConfig,
    api: JobsApi,
    catalog_url: OnceLock<String>,
    credentials: OnceLock<Arc<dyn TaskCredentials>>,
}

impl std::fmt::Debug for RayExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RayExecutor")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What the runner reported of a failure.
#[derive(Deserialize)]
struct RunnerError {
    code: u32,
    detail: String,
}

/// The codes a runner may report; anything else is internal.
fn runner_code(code: u32) -> Code {
    [
        Code::TABLE_NOT_FOUND,
        Code::TABLE_INDEX_NOT_FOUND,
        Code::TABLE_COLUMN_NOT_FOUND,
        Code::INVALID_INPUT,
        Code::CONCURRENT_MODIFICATION,
    ]
    .into_iter()
    .find(|c| c.0 == code)
    .unwrap_or(Code::INTERNAL)
}

/// The last tagged line of a job's log.
fn tagged<'a>(logs: &'a str, tag: &str) -> Option<&'a str> {
    logs.lines()
        .rev()
        .find_map(|l| l.trim_start().strip_prefix(tag))
}

/// A job's outcome, from its status and log.
pub(crate) fn outcome(status: &str, message: Option<&str>, logs: &str) -> Progress {
    // Ray's message may carry the log's tail: its first line says enough,
    // and the rest is not for every reader of the task.
    let said: String = message
        .and_then(|m| m.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("(no message)")
        .chars()
        .take(300)
        .collect();
    match status {
        "SUCCEEDED" => match tagged(logs, RESULT_TAG).map(serde_json::from_str::<Map<String, Value>>) {
            Some(Ok(result)) => Progress::Done(result),
            _ => Progress::Failed(CatalogError::internal(
                "the Ray job succeeded without reporting a result (is lance-catalog's runner what it ran?)",
            )),
        },
        "FAILED" => match tagged(logs, ERROR_TAG).map(serde_json::from_str::<RunnerError>) {
            Some(Ok(e)) => Progress::Failed(CatalogError::new(runner_code(e.code), e.detail)),
            _ => Progress::Failed(CatalogError::new(
                Code::SERVICE_UNAVAILABLE,
                format!("the Ray job failed: {said}"),
            )),
        },
        "STOPPED" => Progress::Failed(CatalogError::new(
            Code::SERVICE_UNAVAILABLE,
            format!("the Ray job was stopped: {said}"),
        )),
        _ => Progress::Running,
    }
}

impl RayExecutor {
    pub fn new(config: RayConfig) -> Result<Self, String> {
        let api = JobsApi::new(&config.address, config.token.clone())?;
        Ok(Self {
            config,
            api,
            catalog_url: OnceLock::new(),
            credentials: OnceLock::new(),
        })
    }

    /// This server's REST URL, used when `--ray-catalog-url` is not set
    /// (the first call wins).
    pub fn set_catalog_url(&self, url: String) {
        let _ = self.catalog_url.set(url);
    }

    /// How long a job may run.
    pub fn timeout(&self) -> Duration {
        self.config.timeout
    }

    /// Install the credentials source (the first call wins).
    pub fn set_credentials(&self, source: Arc<dyn TaskCredentials>) {
        let _ = self.credentials.set(source);
    }

    fn catalog_url(&self) -> CatalogResult<String> {
        self.config
            .catalog_url
            .clone()
            .or_else(|| self.catalog_url.get().cloned())
            .ok_or_else(|| {
                CatalogError::new(
                    Code::SERVICE_UNAVAILABLE,
                    "the catalog's URL for Ray jobs is not known yet (--ray-catalog-url)",
                )
            })
    }

    fn entrypoint(&self) -> String {
        format!(
            "{} -c \"import os;exec(compile(os.environ['LANCE_CATALOG_RUNNER'],'lance_catalog_runner.py','exec'))\"",
            self.config.python
        )
    }

    /// An index build on a column the table lacks fails here, with the
    /// code the in-process build answers, before a job is started.
    async fn check_column(&self, job: &Job) -> CatalogResult<()> {
        let kind = job.kind();
        if !matches!(kind, Some(TaskKind::ScalarIndex | TaskKind::VectorIndex)) {
            return Ok(());
        }
        let column = job
            .task
            .info
            .params
            .get("column")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ds = job.catalog.open_at(&job.table, &job.location, None).await?;
        if ds.schema().field(column).is_none() {
            return Err(CatalogError::new(
                Code::TABLE_COLUMN_NOT_FOUND,
                format!("the table has no column {column:?}"),
            ));
        }
        Ok(())
    }

    async fn submit(&self, job: &Job) -> CatalogResult<Submitted> {
        let task = &job.task.info;
        if !job.kind().is_some_and(TaskKind::runs_on_ray) {
            return Err(CatalogError::invalid(format!(
                "{} does not run on Ray",
                task.task_type
            )));
        }
        self.check_column(job).await?;
        let spec = json!({
            "task_id": task.task_id,
            "task_type": task.task_type,
            "params": task.params,
            "table": job.table,
            "location": job.location,
            "catalog_url": self.catalog_url()?,
            "num_workers": self.config.workers,
        });
        let mut env = Map::new();
        env.insert("LANCE_CATALOG_RUNNER".into(), RUNNER.into());
        env.insert("LANCE_CATALOG_TASK".into(), spec.to_string().into());
        let token = match self.credentials.get() {
            Some(c) => c.issue(job).await?,
            None => None,
        };
        if let Some(token) = token {
            env.insert("LANCE_CATALOG_TOKEN".into(), token.into());
        }
        let body = json!({
            "entrypoint": self.entrypoint(),
            "submission_id": task.task_id,
            "runtime_env": {"env_vars": env},
            "metadata": {
                "lance_catalog_task": task.task_id,
                "task_type": task.task_type,
                "table_id": job.task.table_id,
                "warehouse": job.warehouse,
            },
        });
        match self.api.submit(&task.task_id, &body).await {
            Ok(s) => Ok(s),
            Err(e) => {
                // The answer may have been lost after Ray took the job.
                if let Ok(Some(_)) = self.api.get(&task.task_id).await {
                    return Ok(Submitted::New);
                }
                self.revoke(&task.task_id).await;
                Err(e)
            }
        }
    }

    async fn revoke(&self, task_id: &str) {
        if let Some(c) = self.credentials.get() {
            c.revoke(task_id).await;
        }
    }

    /// One look at the job: its progress, an error when the cluster does
    /// not answer. A job past `--ray-job-timeout` is stopped, and a job's
    /// key ends with it.
    pub async fn look(&self, job: &Job) -> CatalogResult<Progress> {
        let id = job.task_id();
        let progress = match self.api.get(id).await? {
            None => Progress::Failed(CatalogError::new(
                Code::SERVICE_UNAVAILABLE,
                format!(
                    "the Ray cluster at {} lost job {id} (was it restarted?)",
                    self.api.base()
                ),
            )),
            Some(d) if matches!(d.status.as_str(), "SUCCEEDED" | "FAILED" | "STOPPED") => {
                match self.api.logs(id).await {
                    Ok(logs) => outcome(&d.status, d.message.as_deref(), &logs),
                    // The outcome is in the log: read it at the next look.
                    Err(e) => {
                        tracing::warn!(task = %id, error = %e.message, "could not read the Ray job's log; trying again");
                        Progress::Running
                    }
                }
            }
            Some(_) if self.overdue(job) => {
                self.api.stop(id).await.ok();
                Progress::Failed(CatalogError::new(
                    Code::SERVICE_UNAVAILABLE,
                    format!(
                        "the Ray job ran longer than --ray-job-timeout ({}s) and was stopped",
                        self.config.timeout.as_secs()
                    ),
                ))
            }
            Some(_) => Progress::Running,
        };
        if !matches!(progress, Progress::Running) {
            self.revoke(id).await;
        }
        Ok(progress)
    }

    fn overdue(&self, job: &Job) -> bool {
        chrono::DateTime::parse_from_rfc3339(&job.task.info.started_at)
            .ok()
            .and_then(|t| {
                (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
                    .to_std()
                    .ok()
            })
            .is_some_and(|ran| ran > self.config.timeout)
    }
}

#[async_trait::async_trait]
impl Executor for RayExecutor {
    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Ray
    }

    async fn start(&self, job: &Job, attach: bool) -> CatalogResult<Map<String, Value>> {
        let id = job.task_id();
        let mut facts = Map::new();
        facts.insert("ray_submission_id".into(), id.into());
        facts.insert("ray_address".into(), self.api.base().into());
        if attach {
            if self.api.get(id).await?.is_none() {
                return Err(CatalogError::new(
                    Code::SERVICE_UNAVAILABLE,
                    format!(
                        "the Ray cluster at {} has no job {id} any more (was it restarted?)",
                        self.api.base()
                    ),
                ));
            }
            facts.insert("ray_attached".into(), true.into());
            tracing::info!(task = %id, "attached to the task's running Ray job");
            return Ok(facts);
        }
        // A job under the id already (its worker died before recording it
        // started): follow it, with the key it was given.
        if self.api.get(id).await?.is_some() {
            facts.insert("ray_attached".into(), true.into());
            tracing::info!(task = %id, "the task's Ray job was already there; following it");
            return Ok(facts);
        }
        if self.submit(job).await? == Submitted::Exists {
            facts.insert("ray_attached".into(), true.into());
            tracing::info!(task = %id, "the task's Ray job was already there; following it");
        }
        Ok(facts)
    }

    async fn wait(&self, job: &Job, at_most: Duration) -> CatalogResult<Progress> {
        let id = job.task_id();
        let until = tokio::time::Instant::now() + at_most;
        loop {
            let progress = match self.look(job).await {
                Ok(progress) => progress,
                // The cluster may be back at the next look; the job
                // timeout bounds the wait.
                Err(e) if !self.overdue(job) => {
                    tracing::warn!(task = %id, error = %e.message, "could not read the Ray job's status; trying again");
                    Progress::Running
                }
                Err(e) => {
                    self.revoke(id).await;
                    Progress::Failed(CatalogError::new(
                        Code::SERVICE_UNAVAILABLE,
                        format!(
                            "the Ray cluster did not answer for job {id} until --ray-job-timeout ({}s) passed: {}",
                            self.config.timeout.as_secs(),
                            e.message
                        ),
                    ))
                }
            };
            if !matches!(progress, Progress::Running) {
                return Ok(progress);
            }
            let now = tokio::time::Instant::now();
            if now >= until {
                return Ok(Progress::Running);
            }
            tokio::time::sleep(self.config.poll.min(until - now)).await;
        }
    }

    async fn cancel(&self, task: &TaskRecord) -> CatalogResult<()> {
        self.revoke(&task.info.task_id).await;
        self.api.stop(&task.info.task_id).await
    }

    /// The job runs on; the task's new holder attaches to it.
    async fn detach(&self, _task: &TaskRecord) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_read_from_the_status_and_the_last_tagged_line() {
        let logs = "starting\nLANCE_CATALOG_RESULT {\"fragments_after\": 1}\n";
        assert!(
            matches!(outcome("SUCCEEDED", None, logs), Progress::Done(r) if r["fragments_after"] == 1)
        );
        assert!(matches!(outcome("RUNNING", None, ""), Progress::Running));
        assert!(matches!(outcome("PENDING", None, ""), Progress::Running));
        let failed =
            "Traceback\nLANCE_CATALOG_ERROR {\"code\": 13, \"detail\": \"ValueError: bad\"}\n";
        match outcome("FAILED", Some("exit 1"), failed) {
            Progress::Failed(e) => {
                assert_eq!((e.code.0, e.message.as_str()), (13, "ValueError: bad"))
            }
            other => panic!("{other:?}"),
        }
        match outcome("FAILED", Some("node died, last logs:\nsecret tail"), "") {
            Progress::Failed(e) => {
                assert!(e.message.contains("node died"), "{}", e.message);
                assert!(!e.message.contains("secret tail"), "{}", e.message);
            }
            other => panic!("{other:?}"),
        }
        match outcome("STOPPED", None, "") {
            Progress::Failed(e) => assert!(e.message.contains("stopped")),
            other => panic!("{other:?}"),
        }
        // A job that succeeded without the runner's line is not a success.
        assert!(matches!(
            outcome("SUCCEEDED", None, "hello"),
            Progress::Failed(_)
        ));
    }

    #[test]
    fn the_runner_is_shipped_and_ends_with_its_tags() {
        assert!(RUNNER.contains("LANCE_CATALOG_RESULT"));
        assert!(RUNNER.contains("lance_ray.compact_files"));
    }
}
