//! Claiming and running tasks. A worker claims a task by a conditional
//! update of its record that sets `running` and a lease (owner, expiry);
//! it renews the lease while the work runs and writes the outcome only if
//! it still holds it. Two workers never both hold a lease: the record
//! chain lets one of two concurrent updates win, and the loser re-reads.
//! A worker that dies stops renewing; once its lease has expired another
//! worker takes the task over (up to `max_attempts` starts, after which
//! the task fails as abandoned rather than crash worker after worker).

use std::time::Duration;

use futures::TryStreamExt;
use object_store::ObjectStoreExt;
use serde_json::{json, Value};

use super::{
    stamp, type_of_task_id, Lease, TaskError, TaskRecord, COMPLETED, FAILED, QUEUE, RUNNING,
    SUBMITTED,
};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::now_ms;

/// A marker older than this with no task beside it is a submit that died
/// between writing the two, and is removed.
const ORPHAN_MARKER: Duration = Duration::from_secs(60);

/// How a replica's workers hold tasks.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Who holds a lease: unique per process (a restarted replica is a
    /// new owner, so it never mistakes an old lease for its own).
    pub owner: String,
    /// How long a lease lasts without renewal.
    pub lease: Duration,
    /// Starts after which a task whose worker keeps dying fails.
    pub max_attempts: u32,
}

/// A task not yet finished, as its queue marker names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueEntry {
    pub task_id: String,
    pub table_id: String,
    pub task_type: String,
}

/// What a worker may do with a task it read.
enum Decision {
    Claim,
    /// Its workers kept dying: fail it.
    Abandon,
    /// Finished: only its marker is left to remove.
    Done,
    /// Another worker holds it, or its state is not one this version runs.
    Skip,
}

fn decide(t: &TaskRecord, now: u64, s: &WorkerSettings) -> Decision {
    match t.info.status.as_str() {
        COMPLETED | FAILED => Decision::Done,
        SUBMITTED => Decision::Claim,
        RUNNING => match &t.lease {
            Some(l) if l.expires_at_ms > now => Decision::Skip,
            _ if t.attempts >= s.max_attempts => Decision::Abandon,
            _ => Decision::Claim,
        },
        _ => Decision::Skip,
    }
}

/// The refusal inside a conditional update that found the task taken.
fn taken() -> CatalogError {
    CatalogError::new(
        Code::TASK_STATE_CONFLICT,
        "the task is held by another worker",
    )
}

fn holds(t: &TaskRecord, owner: &str) -> bool {
    t.info.status == RUNNING && t.lease.as_ref().is_some_and(|l| l.owner == owner)
}

impl Catalog {
    fn marker_path(&self, e: &QueueEntry) -> object_store::path::Path {
        let (_, prefix) = self.control.raw();
        prefix
            .join(QUEUE)
            .join(format!("{}.{}", e.task_id, e.table_id))
    }

    pub(super) async fn put_marker(&self, e: &QueueEntry) -> CatalogResult<()> {
        let (store, _) = self.control.raw();
        store
            .put(&self.marker_path(e), Vec::<u8>::new().into())
            .await
            .map_err(|err| {
                CatalogError::new(
                    Code::SERVICE_UNAVAILABLE,
                    "cannot record the task in the queue: its store failed",
                )
                .with_cause(err)
            })?;
        Ok(())
    }

    /// Remove a task's marker (best effort: a leftover one is found
    /// finished and removed by the next worker that lists it).
    pub(super) async fn remove_marker(&self, task_id: &str) {
        for (e, _) in self.queued_tasks().await.unwrap_or_default() {
            if e.task_id == task_id {
                self.drop_marker(&e).await;
            }
        }
    }

    async fn drop_marker(&self, e: &QueueEntry) {
        let (store, _) = self.control.raw();
        match store.delete(&self.marker_path(e)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(err) => {
                tracing::warn!(task = %e.task_id, error = %err, "could not remove a task's queue marker")
            }
        }
    }

    /// Every unfinished task of this root, oldest first, with its
    /// marker's age.
    pub async fn queued_tasks(&self) -> CatalogResult<Vec<(QueueEntry, Duration)>> {
        let (store, prefix) = self.control.raw();
        let listed: Vec<_> = store
            .list(Some(&prefix.join(QUEUE)))
            .try_collect()
            .await
            .map_err(|e| {
                CatalogError::new(
                    Code::SERVICE_UNAVAILABLE,
                    "cannot list the task queue: its store failed",
                )
                .with_cause(e)
            })?;
        let now = chrono::Utc::now();
        let mut out: Vec<(QueueEntry, Duration)> = listed
            .iter()
            .filter_map(|m| {
                let (task_id, table_id) = m.location.filename()?.split_once('.')?;
                let entry = QueueEntry {
                    task_id: task_id.to_string(),
                    table_id: table_id.to_string(),
                    task_type: type_of_task_id(task_id)?.to_string(),
                };
                let age = (now - m.last_modified).to_std().unwrap_or_default();
                Some((entry, age))
            })
            .collect();
        out.sort_by(|a, b| a.0.task_id.cmp(&b.0.task_id));
        Ok(out)
    }

    /// Try to claim a queued task; `Some` when this worker now holds it.
    pub(crate) async fn claim_task(
        &self,
        e: &QueueEntry,
        marker_age: Duration,
        s: &WorkerSettings,
    ) -> CatalogResult<Option<TaskRecord>> {
        let records = self.task_records(&e.table_id)?;
        let Some(current) = records.get::<TaskRecord>(&e.task_type, &e.task_id).await? else {
            if marker_age > ORPHAN_MARKER {
                self.drop_marker(e).await;
            }
            return Ok(None);
        };
        match decide(&current.value, now_ms(), s) {
            Decision::Skip => return Ok(None),
            Decision::Done => {
                self.drop_marker(e).await;
                return Ok(None);
            }
            Decision::Claim | Decision::Abandon => {}
        }
        let changed = records
            .update::<TaskRecord, _>(&e.task_type, &e.task_id, Code::TASK_NOT_FOUND, |mut t| {
                let now = now_ms();
                match decide(&t, now, s) {
                    Decision::Claim => {
                        t.info.status = RUNNING.to_string();
                        if t.info.started_at.is_empty() {
                            t.info.started_at = stamp(now);
                        }
                        t.attempts += 1;
                        t.lease = Some(Lease {
                            owner: s.owner.clone(),
                            expires_at_ms: now + s.lease.as_millis() as u64,
                        });
                        Ok(t)
                    }
                    Decision::Abandon => {
                        let err = CatalogError::internal(format!(
                            "the task was started {} times and its worker stopped each time; it is not started again",
                            t.attempts
                        ));
                        t.info.status = FAILED.to_string();
                        t.info.completed_at = stamp(now);
                        t.info.error = Some(TaskError::of(&err));
                        t.lease = None;
                        Ok(t)
                    }
                    Decision::Done | Decision::Skip => Err(taken()),
                }
            })
            .await;
        let m = crate::telemetry::metrics();
        match changed {
            Ok(v) if holds(&v.value, &s.owner) => {
                m.task_event(&e.task_type, "started");
                Ok(Some(v.value))
            }
            Ok(_) => {
                m.task_event(&e.task_type, "abandoned");
                self.drop_marker(e).await;
                Ok(None)
            }
            Err(err) if matches!(err.code, Code::TASK_STATE_CONFLICT | Code::TASK_NOT_FOUND) => {
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    /// Extend this worker's lease; false when it no longer holds the task.
    async fn renew(&self, t: &TaskRecord, s: &WorkerSettings) -> CatalogResult<bool> {
        let records = self.task_records(&t.table_id)?;
        let renewed = records
            .update::<TaskRecord, _>(
                &t.info.task_type,
                &t.info.task_id,
                Code::TASK_NOT_FOUND,
                |mut cur| {
                    if !holds(&cur, &s.owner) {
                        return Err(taken());
                    }
                    if let Some(l) = cur.lease.as_mut() {
                        l.expires_at_ms = now_ms() + s.lease.as_millis() as u64;
                    }
                    Ok(cur)
                },
            )
            .await;
        match renewed {
            Ok(_) => Ok(true),
            Err(e) if matches!(e.code, Code::TASK_STATE_CONFLICT | Code::TASK_NOT_FOUND) => {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Run a claimed task to its end, renewing the lease meanwhile. If the
    /// lease is lost (this worker stalled past it and another took the
    /// task over), the work is dropped and nothing is written.
    pub(crate) async fn run_task(&self, task: TaskRecord, s: &WorkerSettings) {
        let renew_every = (s.lease / 3).max(Duration::from_millis(100));
        let work = async {
            crate::fault::hold("maintenance.run").await;
            crate::fault::point("maintenance.run");
            self.execute_task(&task).await
        };
        let lost = async {
            loop {
                tokio::time::sleep(renew_every).await;
                match self.renew(&task, s).await {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(e) => {
                        tracing::warn!(task = %task.info.task_id, error = %e.message, "could not renew a task's lease; retrying")
                    }
                }
            }
        };
        let running = &crate::telemetry::metrics().tasks_running;
        running.inc();
        let outcome = tokio::select! {
            r = work => r,
            () = lost => {
                running.dec();
                tracing::warn!(task = %task.info.task_id, "lost the lease of a running task; its new holder runs it");
                return;
            }
        };
        running.dec();
        let event = if outcome.is_ok() { COMPLETED } else { FAILED };
        crate::telemetry::metrics().task_event(&task.info.task_type, event);
        if let Err(e) = self.finish(&task, s, outcome).await {
            tracing::warn!(task = %task.info.task_id, error = %e.message, "could not record a task's outcome; its lease expires and it runs again");
        }
    }

    /// Write a task's outcome, if this worker still holds it.
    async fn finish(
        &self,
        task: &TaskRecord,
        s: &WorkerSettings,
        outcome: CatalogResult<serde_json::Map<String, Value>>,
    ) -> CatalogResult<()> {
        let records = self.task_records(&task.table_id)?;
        let written = records
            .update::<TaskRecord, _>(
                &task.info.task_type,
                &task.info.task_id,
                Code::TASK_NOT_FOUND,
                |mut cur| {
                    if !holds(&cur, &s.owner) {
                        return Err(taken());
                    }
                    let (status, mut result, error) = match &outcome {
                        Ok(r) => (COMPLETED, r.clone(), None),
                        Err(e) => (FAILED, Default::default(), Some(TaskError::of(e))),
                    };
                    result.insert("runner".into(), json!(s.owner));
                    result.insert("attempt".into(), json!(cur.attempts));
                    cur.info.status = status.to_string();
                    cur.info.completed_at = stamp(now_ms());
                    cur.info.result = result;
                    cur.info.error = error;
                    cur.lease = None;
                    Ok(cur)
                },
            )
            .await;
        match written {
            Ok(_) => {}
            Err(e) if matches!(e.code, Code::TASK_STATE_CONFLICT | Code::TASK_NOT_FOUND) => {
                tracing::warn!(task = %task.info.task_id, "a task's lease passed to another worker before its outcome was written");
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        self.drop_marker(&QueueEntry {
            task_id: task.info.task_id.clone(),
            table_id: task.table_id.clone(),
            task_type: task.info.task_type.clone(),
        })
        .await;
        Ok(())
    }

    /// The task's work on its table as it stands now (found by its real
    /// id, so a rename since the submit does not lose it).
    async fn execute_task(
        &self,
        task: &TaskRecord,
    ) -> CatalogResult<serde_json::Map<String, Value>> {
        let Some(name) = self.table_by_real_id(&task.table, &task.table_id).await? else {
            return Err(CatalogError::new(
                Code::TABLE_NOT_FOUND,
                format!(
                    "table {} (id {}) was dropped after the task was submitted",
                    crate::core::checks::display_id(&task.table),
                    task.table_id
                ),
            ));
        };
        let location = self.table_location(&name).await?;
        let ds = self.open_at(&name, &location, None).await?;
        let result =
            super::run::execute(self, &name, ds, &task.info.task_type, &task.info.params).await?;
        tracing::info!(task = %task.info.task_id, task_type = %task.info.task_type, table = ?name, "maintenance task completed");
        Ok(result)
    }
}

impl Catalog {
    /// Table `id`'s unfinished maintenance tasks, as pending tasks (for
    /// `GET /v1/table/{id}/tasks`). None for a table no task named yet.
    pub(crate) async fn pending_maintenance(
        &self,
        id: &[String],
    ) -> CatalogResult<Vec<crate::core::trash::records::PendingTask>> {
        if id.len() != 2 {
            return Ok(Vec::new());
        }
        let key = crate::core::checks::manifest_key(id);
        let Ok(Some(table_id)) = self.stored_table_id(&key).await else {
            return Ok(Vec::new());
        };
        let records = self.task_records(&table_id)?;
        let mut out = Vec::new();
        for (e, _) in self.queued_tasks().await? {
            if e.table_id != table_id {
                continue;
            }
            let Some(t) = records.get::<TaskRecord>(&e.task_type, &e.task_id).await? else {
                continue;
            };
            let created = u64::from_str_radix(e.task_id.get(..12).unwrap_or("0"), 16).unwrap_or(0);
            out.push(crate::core::trash::records::PendingTask {
                task_id: e.task_id.clone(),
                task_type: e.task_type.clone(),
                status: t.value.info.status,
                id: id.to_vec(),
                kind: "table".into(),
                created_at_ms: created,
                deadline_ms: 0,
                detail: Some(format!(
                    "maintenance task; its state: GET /lance/oss/v1/table/{}/tasks/{}",
                    id.join("$"),
                    e.task_id
                )),
            });
        }
        Ok(out)
    }
}
