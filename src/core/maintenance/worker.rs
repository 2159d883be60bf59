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

use super::executor::{ExecutorKind, Job, Placement, Progress};
use super::executors::Executors;
use super::placement::TableSize;
use super::{
    stamp, type_of_task_id, Lease, TaskError, TaskRecord, COMPLETED, FAILED, QUEUE, RUNNING,
    SUBMITTED,
};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::now_ms;

/// How long a worker waits on its job at a time (the lease is renewed
/// beside it).
const WAIT_SLICE: Duration = Duration::from_secs(5);

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
    /// Where tasks run, and the rules that choose.
    pub executors: std::sync::Arc<Executors>,
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
    // Placed on an executor this replica lacks: a replica that has it runs it.
    if let Some(p) = &t.placement {
        if s.executors.get(p.executor).is_err()
            && t.info.status != COMPLETED
            && t.info.status != FAILED
        {
            return Decision::Skip;
        }
    }
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

/// Whether a task's job may run on after its worker is gone (it was
/// started on an executor outside the replica).
pub(crate) fn outlives_replica(t: &TaskRecord) -> bool {
    t.placement
        .as_ref()
        .is_some_and(|p| p.started && p.executor != ExecutorKind::InProcess)
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
    pub(crate) async fn remove_marker(&self, task_id: &str) {
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
                // A task ended where no worker stopped its job (cancelled
                // by a replica without its executor): stopped here first.
                if outlives_replica(&current.value) {
                    s.executors.stop(&current.value).await;
                }
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
            Ok(v) => {
                m.task_event(&e.task_type, "abandoned");
                if outlives_replica(&v.value) {
                    s.executors.stop(&v.value).await;
                }
                self.drop_marker(e).await;
                Ok(None)
            }
            Err(err) if matches!(err.code, Code::TASK_STATE_CONFLICT | Code::TASK_NOT_FOUND) => {
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    /// Extend this worker's lease, and say whether it still holds the task.
    async fn renew(&self, t: &TaskRecord, s: &WorkerSettings) -> CatalogResult<Hold> {
        let records = self.task_records(&t.table_id)?;
        let mut ended = false;
        let renewed = records
            .update::<TaskRecord, _>(
                &t.info.task_type,
                &t.info.task_id,
                Code::TASK_NOT_FOUND,
                |mut cur| {
                    if !holds(&cur, &s.owner) {
                        // Cancelled or finished: not another worker's to run.
                        ended = cur.info.status != RUNNING;
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
            Ok(_) => Ok(Hold::Held),
            Err(e) if e.code == Code::TASK_NOT_FOUND => Ok(Hold::Ended),
            Err(e) if e.code == Code::TASK_STATE_CONFLICT && ended => Ok(Hold::Ended),
            Err(e) if e.code == Code::TASK_STATE_CONFLICT => Ok(Hold::Taken),
            Err(e) => Err(e),
        }
    }

    /// Run a claimed task to its end on its executor, renewing the lease
    /// all along (beside the work, as a slow store or cluster must not
    /// cost the lease). A lost lease (this worker stalled past it and
    /// another took the task over) lets go of the work and writes nothing;
    /// a task cancelled or deleted meanwhile has its work stopped.
    pub(crate) async fn run_task(&self, warehouse: &str, task: TaskRecord, s: &WorkerSettings) {
        let renew_every = (s.lease / 3).max(Duration::from_millis(100));
        let running = &crate::telemetry::metrics().tasks_running;
        running.inc();
        let renewing = async {
            loop {
                tokio::time::sleep(renew_every).await;
                match self.renew(&task, s).await {
                    Ok(Hold::Held) => {}
                    Ok(Hold::Taken) => return Hold::Taken,
                    Ok(Hold::Ended) => return Hold::Ended,
                    Err(e) => {
                        tracing::warn!(task = %task.info.task_id, error = %e.message, "could not renew a task's lease; retrying")
                    }
                }
            }
        };
        let driven = tokio::select! {
            driven = self.drive(warehouse, task.clone(), s) => Some(driven),
            hold = renewing => {
                match hold {
                    Hold::Ended => {
                        s.executors.stop(&task).await;
                        tracing::info!(task = %task.info.task_id, "the task was cancelled or deleted while it ran; its work was stopped");
                    }
                    _ => {
                        s.executors.let_go(&task).await;
                        tracing::warn!(task = %task.info.task_id, "lost the lease of a running task; its new holder runs it");
                    }
                }
                None
            }
        };
        running.dec();
        let Some((task, outcome)) = driven else {
            return;
        };
        // Counted before the outcome is written, so that whoever sees the
        // task ended sees it counted (a rare outcome that then loses the
        // lease is counted too).
        let event = if outcome.is_ok() { COMPLETED } else { FAILED };
        crate::telemetry::metrics().task_event(&task.info.task_type, event);
        if let Err(e) = self.finish(&task, s, outcome).await {
            tracing::warn!(task = %task.info.task_id, error = %e.message, "could not record a task's outcome; its lease expires and it runs again")
        }
    }

    /// Prepare, start and wait for a task's job: the task as it ended and
    /// its outcome.
    async fn drive(
        &self,
        warehouse: &str,
        task: TaskRecord,
        s: &WorkerSettings,
    ) -> (TaskRecord, CatalogResult<serde_json::Map<String, Value>>) {
        let job = match self.prepare(warehouse, task.clone(), s).await {
            Ok(job) => job,
            Err(e) => return (task, Err(e)),
        };
        let placement = job.task.placement.clone().unwrap_or_default();
        let executor = match s.executors.get(placement.executor) {
            Ok(x) => x,
            Err(e) => return (job.task, Err(e)),
        };
        let mut facts = match executor.start(&job, placement.started).await {
            Ok(facts) => facts,
            Err(e) => return (job.task, Err(e)),
        };
        if executor.kind() != ExecutorKind::InProcess && !placement.started {
            // A worker taking the task over attaches from now on.
            if let Err(e) = self.mark_started(&job.task, s).await {
                tracing::warn!(task = %job.task_id(), error = %e.message, "could not record that the task's job started");
            }
        }
        placement.describe(&mut facts);
        let outcome = loop {
            match executor.wait(&job, WAIT_SLICE).await {
                Ok(Progress::Running) => continue,
                Ok(Progress::Done(result)) => break Ok(result),
                Ok(Progress::Failed(e)) | Err(e) => break Err(e),
            }
        };
        let mut task = job.task;
        match outcome {
            Ok(mut result) => {
                result.extend(facts);
                (task, Ok(result))
            }
            Err(e) => {
                // Where it ran shows on a failure too.
                task.info.result = facts;
                (task, Err(e))
            }
        }
    }

    /// The task's table as it stands now (found by its real id, so a
    /// rename since the submit does not lose it), and where the task runs:
    /// decided now by the rules if no worker decided before, and recorded.
    async fn prepare(
        &self,
        warehouse: &str,
        mut task: TaskRecord,
        s: &WorkerSettings,
    ) -> CatalogResult<Job> {
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
        if task.placement.is_none() {
            let kind = super::TaskKind::parse(&task.info.task_type)
                .filter(|k| !k.is_job())
                .ok_or_else(|| {
                    CatalogError::invalid(format!(
                        "task type {:?} is not one this catalog runs",
                        task.info.task_type
                    ))
                })?;
            let rules = &s.executors.rules;
            let size = match rules.iter().any(|r| r.weighs_size()) {
                true => Some(self.table_size(&name, &location).await?),
                false => None,
            };
            let placement = super::placement::place(rules, kind, &task.info.params, size);
            task = self.set_placement(&task, s, placement).await?;
        }
        Ok(Job {
            catalog: self.clone(),
            warehouse: warehouse.to_string(),
            task,
            table: name,
            location,
        })
    }

    /// A table's rows and data bytes, from its manifest alone.
    pub(in crate::core) async fn table_size(
        &self,
        name: &[String],
        location: &str,
    ) -> CatalogResult<TableSize> {
        let ds = self.open_at(name, location, None).await?;
        let rows = crate::core::engine(ds.count_rows(None).await)? as u64;
        let bytes = ds
            .fragments()
            .iter()
            .flat_map(|f| f.files.iter())
            .filter_map(|d| d.file_size_bytes.get())
            .map(u64::from)
            .sum();
        Ok(TableSize { rows, bytes })
    }

    async fn set_placement(
        &self,
        task: &TaskRecord,
        s: &WorkerSettings,
        placement: Placement,
    ) -> CatalogResult<TaskRecord> {
        self.update_held(task, s, |cur| cur.placement = Some(placement.clone()))
            .await
    }

    async fn mark_started(
        &self,
        task: &TaskRecord,
        s: &WorkerSettings,
    ) -> CatalogResult<TaskRecord> {
        self.update_held(task, s, |cur| {
            if let Some(p) = cur.placement.as_mut() {
                p.started = true;
            }
        })
        .await
    }

    /// Change a task this worker holds (409 when it no longer does).
    async fn update_held(
        &self,
        task: &TaskRecord,
        s: &WorkerSettings,
        change: impl Fn(&mut TaskRecord),
    ) -> CatalogResult<TaskRecord> {
        let records = self.task_records(&task.table_id)?;
        let v = records
            .update::<TaskRecord, _>(
                &task.info.task_type,
                &task.info.task_id,
                Code::TASK_NOT_FOUND,
                |mut cur| {
                    if !holds(&cur, &s.owner) {
                        return Err(taken());
                    }
                    change(&mut cur);
                    Ok(cur)
                },
            )
            .await?;
        Ok(v.value)
    }

    /// Write a task's outcome, if this worker still holds it.
    async fn finish(
        &self,
        task: &TaskRecord,
        s: &WorkerSettings,
        outcome: CatalogResult<serde_json::Map<String, Value>>,
    ) -> CatalogResult<()> {
        let written = self
            .update_held(task, s, |cur| {
                let (status, mut result, error) = match &outcome {
                    Ok(r) => (COMPLETED, r.clone(), None),
                    Err(e) => (FAILED, task.info.result.clone(), Some(TaskError::of(e))),
                };
                result.insert("runner".into(), json!(s.owner));
                result.insert("attempt".into(), json!(cur.attempts));
                cur.info.status = status.to_string();
                cur.info.completed_at = stamp(now_ms());
                cur.info.result = result;
                cur.info.error = error;
                cur.lease = None;
            })
            .await;
        match written {
            Ok(_) => {}
            Err(e) if matches!(e.code, Code::TASK_STATE_CONFLICT | Code::TASK_NOT_FOUND) => {
                tracing::warn!(task = %task.info.task_id, "the task was taken over, cancelled or deleted before its outcome was written");
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        tracing::info!(task = %task.info.task_id, task_type = %task.info.task_type, table = ?task.table, "maintenance task ended");
        self.drop_marker(&QueueEntry {
            task_id: task.info.task_id.clone(),
            table_id: task.table_id.clone(),
            task_type: task.info.task_type.clone(),
        })
        .await;
        Ok(())
    }
}

/// Whether a worker still holds the task it runs.
enum Hold {
    Held,
    /// Another worker took it over (this one stalled past its lease).
    Taken,
    /// Cancelled, finished or deleted: its work is to stop.
    Ended,
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
