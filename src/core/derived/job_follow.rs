//! Following a job on its executor: start it, wait in heartbeats, write
//! its end; and adopting a Ray job whose follower stopped (the replica
//! died): Ray's job outlives the replica, so the replica that finds the
//! silent record asks Ray and, while the job runs, follows it from then on.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::jobs::{abandoned, facts, finish, Jobs, Stored, HEARTBEAT};
use crate::api::jobs::JobState;
use crate::core::maintenance::executor::{self, Executor, ExecutorKind, Progress};
use crate::core::maintenance::executors::Executors;
use crate::core::Catalog;
use crate::error::CatalogResult;
use crate::records::now_ms;

impl Jobs {
    /// Run `work` on the executor its placement names, in the background.
    pub(super) fn run(&self, executors: Arc<Executors>, work: executor::Job, mut stored: Stored) {
        let jobs = self.clone();
        tokio::spawn(async move {
            stored.job.state = JobState::Running;
            stored.job.updated_at_ms = now_ms();
            jobs.save(&stored).await;
            let result = match executors.get(stored.executor()) {
                Ok(executor) => jobs.drive(executor, &work, &mut stored).await,
                Err(e) => Err(e),
            };
            finish(&mut stored.job, result);
            jobs.save(&stored).await;
        });
    }

    /// Start the job on its executor and follow it.
    async fn drive(
        &self,
        executor: &dyn Executor,
        work: &executor::Job,
        stored: &mut Stored,
    ) -> CatalogResult<Map<String, Value>> {
        let started = executor.start(work, false).await?;
        if !started.is_empty() {
            facts(&mut stored.job.details, started);
            self.save(stored).await;
        }
        self.follow(executor, work, stored).await
    }

    /// Wait for the job, refreshing its record every [`HEARTBEAT`].
    async fn follow(
        &self,
        executor: &dyn Executor,
        work: &executor::Job,
        stored: &mut Stored,
    ) -> CatalogResult<Map<String, Value>> {
        loop {
            match executor.wait(work, HEARTBEAT).await? {
                Progress::Running => {
                    stored.job.updated_at_ms = now_ms();
                    self.save(stored).await;
                }
                Progress::Done(result) => return Ok(result),
                Progress::Failed(e) => return Err(e),
            }
        }
    }

    /// A silent record of a job on Ray, as Ray tells it now: ended, it is
    /// finished from Ray's outcome; running, this replica follows it from
    /// now on. Unanswered (no cluster here, or it does not answer), it is
    /// answered `failed` and left as it is, for a later look.
    pub(super) async fn adopt(&self, catalog: &Catalog, mut stored: Stored) -> Stored {
        let executors = self.placer().executors;
        let Some(ray) = executors.ray_executor() else {
            return abandoned(stored, now_ms());
        };
        let work = ray_view(catalog, &stored);
        match ray.look(&work).await {
            Ok(Progress::Running) => {
                tracing::info!(job = %stored.job.job_id, "following a Ray job whose replica stopped following it");
                stored.job.updated_at_ms = now_ms();
                self.save(&stored).await;
                let (jobs, mut followed) = (self.clone(), stored.clone());
                tokio::spawn(async move {
                    let Ok(ray) = executors.get(ExecutorKind::Ray) else {
                        return;
                    };
                    let result = jobs.follow(ray, &work, &mut followed).await;
                    finish(&mut followed.job, result);
                    jobs.save(&followed).await;
                });
                stored
            }
            Ok(Progress::Done(result)) => {
                finish(&mut stored.job, Ok(result));
                self.save(&stored).await;
                stored
            }
            Ok(Progress::Failed(e)) => {
                finish(&mut stored.job, Err(e));
                self.save(&stored).await;
                stored
            }
            Err(_) => abandoned(stored, now_ms()),
        }
    }
}

/// What the Ray executor needs of a stored job to follow it: its id, and
/// when it started (for the job timeout).
fn ray_view(catalog: &Catalog, stored: &Stored) -> executor::Job {
    executor::Job {
        catalog: catalog.clone(),
        warehouse: String::new(),
        task: stored.as_task(Map::new()),
        table: stored.job.table.clone(),
        location: String::new(),
    }
}
