//! Cancelling a task, and whether one still runs (a task key is good only
//! while its task runs).

use super::{
    check_table_id, stamp, worker, CancelLanceTaskRequest, GetLanceTaskStatusResponse, TaskError,
    TaskRecord, FAILED, RUNNING, SUBMITTED,
};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::now_ms;

impl Catalog {
    /// Whether task (or job) `task_id` of table `table_id` is running (a
    /// task key is good only while it is).
    pub async fn task_running(
        &self,
        table_id: &str,
        task_type: &str,
        task_id: &str,
    ) -> CatalogResult<bool> {
        if super::TaskKind::parse(task_type).is_some_and(super::TaskKind::is_job) {
            return Ok(self.jobs.running(self, task_id, table_id).await);
        }
        let records = self.task_records(table_id)?;
        Ok(records
            .get::<TaskRecord>(task_type, task_id)
            .await?
            .is_some_and(|t| t.value.info.status == RUNNING))
    }

    /// Cancel a submitted or running task: it ends `failed` with error
    /// `TaskCancelled` at once; the worker holding it stops its work at
    /// its next lease renewal. Answers the task as it is now, and its
    /// record (for the caller to stop a job on another executor at once).
    pub async fn cancel_task(
        &self,
        req: CancelLanceTaskRequest,
        by: Option<&str>,
    ) -> CatalogResult<(GetLanceTaskStatusResponse, TaskRecord)> {
        check_table_id(&req.id)?;
        let (table_id, records, record) = self.find_task(&req.id, &req.task_id).await?;
        let task_type = record.info.task_type.clone();
        let detail = match by {
            Some(p) => format!("cancelled by {p}"),
            None => "cancelled".to_string(),
        };
        let changed = records
            .update::<TaskRecord, _>(&task_type, &req.task_id, Code::TASK_NOT_FOUND, |mut t| {
                match t.info.status.as_str() {
                    SUBMITTED | RUNNING => {
                        t.info.status = FAILED.to_string();
                        t.info.completed_at = stamp(now_ms());
                        t.info.error = Some(TaskError {
                            error: "TaskCancelled".into(),
                            code: Code::TASK_STATE_CONFLICT.0,
                            detail: detail.clone(),
                        });
                        t.lease = None;
                        Ok(t)
                    }
                    other => Err(CatalogError::new(
                        Code::TASK_STATE_CONFLICT,
                        format!(
                            "task {:?} is {other:?}; only submitted or running tasks can be cancelled",
                            req.task_id
                        ),
                    )),
                }
            })
            .await?;
        let record = changed.value;
        // A job outside the replica keeps its marker until a worker that
        // can reach its executor has stopped it (the caller may, at once).
        if !worker::outlives_replica(&record) {
            self.remove_marker(&req.task_id).await;
        }
        crate::telemetry::metrics().task_event(&task_type, "cancelled");
        Ok((
            GetLanceTaskStatusResponse {
                task_info: record.info.clone(),
                table_id,
            },
            record,
        ))
    }
}
