//! A replica's executors: in process always, Ray when configured, and
//! the rules that choose between them.

use std::sync::Arc;

use super::executor::{Executor, ExecutorKind, InProcess};
use super::placement::Rule;
use super::ray::RayExecutor;
use super::TaskRecord;
use crate::error::{CatalogError, CatalogResult, Code};

/// A replica's executors and the rules that choose between them.
#[derive(Debug, Default)]
pub struct Executors {
    pub rules: Vec<Rule>,
    in_process: InProcess,
    ray: Option<Arc<RayExecutor>>,
}

impl Executors {
    pub fn new(rules: Vec<Rule>, ray: Option<Arc<RayExecutor>>) -> Self {
        Self {
            rules,
            in_process: InProcess::default(),
            ray,
        }
    }

    /// The executor of `kind`; 17 when this replica has none of that kind
    /// (a task placed on Ray by a replica configured for it, taken over
    /// by one that is not).
    pub fn get(&self, kind: ExecutorKind) -> CatalogResult<&dyn Executor> {
        match kind {
            ExecutorKind::InProcess => Ok(&self.in_process),
            ExecutorKind::Ray => self.ray().ok_or_else(|| {
                CatalogError::new(
                    Code::SERVICE_UNAVAILABLE,
                    "the task runs on Ray, and this replica has no Ray cluster configured (--ray-address)",
                )
            }),
        }
    }

    /// The Ray executor, when configured (a cancel stops its job at once).
    pub fn ray(&self) -> Option<&dyn Executor> {
        self.ray.as_deref().map(|r| r as &dyn Executor)
    }

    /// Stop a task's work wherever it may run (it was cancelled, deleted
    /// or abandoned): in this process, and on Ray unless it was placed in
    /// process (a job unknown to the cluster is fine).
    pub async fn stop(&self, task: &TaskRecord) {
        let _ = self.in_process.cancel(task).await;
        let placed = task.placement.as_ref().map(|p| p.executor);
        if let (Some(ray), false) = (self.ray(), placed == Some(ExecutorKind::InProcess)) {
            if let Err(e) = ray.cancel(task).await {
                tracing::warn!(task = %task.info.task_id, error = %e.message, "could not stop a task's Ray job");
            }
        }
    }

    /// Let go of a task another worker took over: work in this process is
    /// dropped, a Ray job runs on for its new holder.
    pub async fn let_go(&self, task: &TaskRecord) {
        self.in_process.detach(task).await;
    }

    /// The Ray executor itself (for installing what it needs from above).
    pub fn ray_executor(&self) -> Option<&RayExecutor> {
        self.ray.as_deref()
    }
}
