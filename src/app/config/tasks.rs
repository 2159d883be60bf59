//! Maintenance tasks on this replica (`--workers`, `--task-*`): how many
//! run at once, how long a claim lasts, how often an idle worker looks, and
//! how many a table may keep. Where they run is `ray.rs`.

use clap::Args;

use crate::app::config::serving::seconds;

/// The "Maintenance tasks" flags.
#[derive(Debug, Clone, Args)]
pub struct TaskArgs {
    /// Maintenance tasks this replica runs at once (0: it serves the task
    /// API only and other replicas run the tasks).
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_WORKERS",
        default_value_t = 1
    )]
    pub workers: usize,

    /// Seconds a worker's claim on a task lasts without renewal: after a
    /// replica dies its running tasks wait this long for another replica.
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_TASK_LEASE",
        default_value_t = 30.0
    )]
    pub task_lease: f64,

    /// Seconds between an idle worker's looks at the task queue.
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_TASK_POLL",
        default_value_t = 1.0
    )]
    pub task_poll: f64,

    /// Maintenance tasks kept per table and task type, finished ones
    /// included until deleted; a submit beyond it answers 429 (10002).
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_TASK_QUOTA",
        default_value_t = 1000
    )]
    pub task_quota: usize,
}

impl TaskArgs {
    /// A worker's claim on a task without renewal.
    pub fn lease(&self) -> std::time::Duration {
        seconds(self.task_lease)
    }

    /// An idle worker's pause between looks at the queue.
    pub fn poll(&self) -> std::time::Duration {
        seconds(self.task_poll)
    }
}
