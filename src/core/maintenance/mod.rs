//! Table maintenance tasks (the OSS Tables "Lance table maintenance" API):
//! compaction, cleanup of old versions, scalar and vector index builds and
//! index optimisation, submitted as durable records and run by whichever
//! replica's worker claims them.
//!
//! Where things live, under the table's own root (`<root>/_catalog/control`):
//!
//! - `maintenance/<table_id>/<task_type>/<task_id>/v<N>.json`: the task, a
//!   record chain (`records.rs`), so every change (claim, lease renewal,
//!   outcome) is a conditional write that loses to a concurrent one.
//! - `maintenance_queue/<task_id>`: a marker per task not yet finished, so
//!   a worker lists one small directory instead of every table's tasks.
//!   Written before the task and removed after it ends: a marker without
//!   a task (a submit that died between the two) is removed once old.
//!
//! Tasks are keyed by the table's real id ([`TABLE_ID`], see
//! `core/object_ids.rs`): a table dropped and created again under the same
//! name starts with no tasks. A submit gives a table made before ids
//! existed its id; reads never write, and such a table has no tasks.
//!
//! | what | file |
//! |---|---|
//! | models, submit, get, list, delete | `mod.rs` |
//! | cancelling a task; whether one runs | `cancel.rs` |
//! | parameters: shapes, ranges, defaults | `params.rs` |
//! | claiming, leases, outcomes | `worker.rs` |
//! | the scheduler's round records and what a table needs | `rounds.rs` |
//! | running a task with Lance | `run.rs` |
//! | where a task runs: the executor seam, in process by default | `executor.rs` |
//! | a replica's executors | `executors.rs` |
//! | the operator's rules choosing an executor | `placement.rs` |
//! | the Ray executor (lance-ray through Ray's Jobs API), its client, its runner | `ray.rs`, `ray_jobs.rs`, `ray_runner.py` |
//! | index health, a report | `index_health.rs` |
//! | what manifests reference, through base paths too | `../references.rs` (below `live.rs`, which asks it) |
//! | the orphan scan and reclaim | `orphans.rs` |
//! | records naming what is gone (the reconciler's core half) | `drift.rs` |
//! | the cleanup's shallow-clone pre-pass | `clone_pin.rs` |
//! | the estate's references, installed from above | `estate.rs` |

pub use crate::api::maintenance::*;
mod cancel;
mod clone_pin;
pub(crate) mod drift;
pub(crate) mod estate;
pub mod executor;
pub mod executors;
pub(crate) mod index_health;
pub(crate) mod orphans;
mod params;
pub mod placement;
pub mod ray;
mod ray_jobs;
pub(crate) mod reconcile;
pub(crate) mod rounds;
mod run;
pub(crate) mod worker;

use serde::{Deserialize, Serialize};

use crate::core::checks::{display_id, manifest_key};
use crate::core::manifest_tx::{literal, row_properties, row_type, single_rows};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::{now_ms, Records};

pub use worker::{QueueEntry, WorkerSettings};

pub use crate::core::reserved::TABLE_ID;

/// The five task types, with the path action that submits each.
pub const TASK_TYPES: [(&str, &str); 5] = [
    ("compact", "lance_compact"),
    ("create_scalar_index", "lance_scalar_index"),
    ("create_vector_index", "lance_vector_index"),
    ("optimize_indices", "lance_optimize_indices"),
    ("cleanup", "lance_cleanup"),
];

/// The work an executor runs, typed: the task types, in [`TASK_TYPES`]'
/// order (a task id's type digit is its index), then the jobs (a column
/// backfill, a view refresh), which the job API starts and which reach an
/// executor the same way but are never queued as tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskKind {
    Compact,
    ScalarIndex,
    VectorIndex,
    OptimizeIndices,
    Cleanup,
    Backfill,
    Refresh,
}

impl TaskKind {
    /// The task API's types.
    pub const ALL: [TaskKind; 5] = [
        TaskKind::Compact,
        TaskKind::ScalarIndex,
        TaskKind::VectorIndex,
        TaskKind::OptimizeIndices,
        TaskKind::Cleanup,
    ];

    /// The jobs' kinds.
    pub const JOBS: [TaskKind; 2] = [TaskKind::Backfill, TaskKind::Refresh];

    /// Its `task_type` (`lance_compact`, …) or job kind (`backfill`,
    /// `refresh`).
    pub fn name(self) -> &'static str {
        match self {
            TaskKind::Backfill => "backfill",
            TaskKind::Refresh => "refresh",
            task => TASK_TYPES[task as usize].1,
        }
    }

    /// A task type or a job kind.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .chain(Self::JOBS)
            .find(|k| k.name() == name)
    }

    /// Whether it is a job (started by the job API, not queued).
    pub fn is_job(self) -> bool {
        Self::JOBS.contains(&self)
    }

    /// Whether it can run on Ray: compaction and index builds through
    /// lance-ray, and a backfill fragment by fragment. lance-ray's
    /// `optimize_indices` runs on the job's driver and it has no cleanup;
    /// a refresh runs a DataFusion query over other tables, which lance-ray
    /// has no engine for: those stay in process.
    pub fn runs_on_ray(self) -> bool {
        matches!(
            self,
            TaskKind::Compact | TaskKind::ScalarIndex | TaskKind::VectorIndex | TaskKind::Backfill
        )
    }
}

/// Task states; other values read from storage are passed through.
pub const SUBMITTED: &str = "submitted";
pub const RUNNING: &str = "running";
pub const COMPLETED: &str = "completed";
pub const FAILED: &str = "failed";

/// Where markers of unfinished tasks live, under the control prefix.
const QUEUE: &str = "maintenance_queue";
/// Where tasks live, under the control prefix.
pub(crate) const TASKS: &str = "maintenance";

impl TaskError {
    pub(crate) fn of(e: &CatalogError) -> Self {
        Self {
            error: e.code.name().to_string(),
            code: e.code.0,
            detail: e.message.clone(),
        }
    }
}

/// A worker's hold on a running task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lease {
    pub owner: String,
    pub expires_at_ms: u64,
}

/// A task as stored: what the API shows, and the bookkeeping it does not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    #[serde(flatten)]
    pub info: TaskInfo,
    pub table_id: String,
    /// The table's name when the task was submitted.
    pub table: Vec<String>,
    #[serde(default)]
    pub lease: Option<Lease>,
    /// How many workers have started it.
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub submitted_by: Option<String>,
    /// Where it runs, once a worker decided (`executor.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<placement::Placement>,
}

/// A time as the API writes it: RFC 3339, microseconds, `+00:00`.
pub(crate) fn stamp(ms: u64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms as i64)
        .unwrap_or_default()
        .format("%Y-%m-%dT%H:%M:%S%.6f%:z")
        .to_string()
}

/// A new task id: 32 hex digits that sort by submission time (the
/// millisecond, then the type's digit, a per-process sequence and random
/// digits), so a listing sorted by id is sorted by age without reading the
/// tasks, and a lookup by id knows the task's type.
fn new_task_id(task_type: &str) -> String {
    static SEQ: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed) & 0xfff;
    let kind = TASK_TYPES
        .iter()
        .position(|(_, t)| *t == task_type)
        .unwrap_or(0);
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!(
        "{:012x}{kind:x}{seq:03x}{}",
        now_ms() & 0xffff_ffff_ffff,
        &random[..16]
    )
}

/// The type of a task id [`new_task_id`] made.
fn type_of_task_id(task_id: &str) -> Option<&'static str> {
    let ok = task_id.len() == 32 && task_id.bytes().all(|b| b.is_ascii_hexdigit());
    let digit = task_id.get(12..13).filter(|_| ok)?;
    let kind = usize::from_str_radix(digit, 16).ok()?;
    TASK_TYPES.get(kind).map(|(_, t)| *t)
}

fn known_type(task_type: &str) -> bool {
    TASK_TYPES.iter().any(|(_, t)| *t == task_type)
}

/// A maintenance id is exactly a namespace and a table (one level).
pub fn check_table_id(id: &[String]) -> CatalogResult<()> {
    if id.len() == 2 && id.iter().all(|s| !s.is_empty()) {
        return Ok(());
    }
    Err(CatalogError::invalid(format!(
        "a maintenance task names its table as <namespace><delimiter><table> (one namespace level, both non-empty); {:?} has {} part(s)",
        id.join("$"),
        id.len()
    )))
}

/// Refuse (404, 10000) a task that is not this table's.
fn task_not_found(id: &[String], task_id: &str) -> CatalogError {
    CatalogError::new(
        Code::TASK_NOT_FOUND,
        format!(
            "the specified Lance maintenance task {task_id:?} does not exist for table {}",
            display_id(id)
        ),
    )
}

impl Catalog {
    /// One table's tasks.
    pub(crate) fn task_records(&self, table_id: &str) -> CatalogResult<Records> {
        crate::records::check_id("table id", table_id)?;
        Ok(self.control.under(TASKS).under(table_id))
    }

    /// The real id of table `id` (which must exist), given to it now when
    /// it has none (submits only: a read never writes).
    pub async fn real_table_id(&self, id: &[String]) -> CatalogResult<String> {
        check_table_id(id)?;
        self.table_real_id(id).await
    }

    /// The real id of table `id` at any depth (which must exist), given
    /// to it now when it has none.
    pub(crate) async fn table_real_id(&self, id: &[String]) -> CatalogResult<String> {
        match self.stored_table_id(&manifest_key(id)).await? {
            Some(existing) => Ok(existing),
            None => self.assign_object_id("table", id).await,
        }
    }

    /// The real id recorded for manifest key `key`; 4 (or 1) when no table
    /// is recorded there.
    pub(super) async fn stored_table_id(&self, key: &str) -> CatalogResult<Option<String>> {
        let ds = self.manifest_snapshot().await?;
        let rows = self.manifest_rows(&ds, &[key.to_string()]).await?;
        let Some(row) = single_rows(&rows).find(|r| row_type(r).as_deref() == Some("table")) else {
            let id = crate::core::manifest_id(key);
            if !self.namespace_present(&id[..id.len() - 1]).await? {
                return Err(CatalogError::new(
                    Code::NAMESPACE_NOT_FOUND,
                    format!(
                        "namespace {} does not exist",
                        display_id(&id[..id.len() - 1])
                    ),
                ));
            }
            return Err(crate::core::checks::table_not_found(&id));
        };
        Ok(row_properties(&row)?.get(TABLE_ID).cloned())
    }

    /// The table whose real id is `table_id` now (it may have been renamed
    /// since a task was submitted), if it stands.
    pub(crate) async fn table_by_real_id(
        &self,
        named: &[String],
        table_id: &str,
    ) -> CatalogResult<Option<Vec<String>>> {
        let key = manifest_key(named);
        if let Ok(Some(found)) = self.stored_table_id(&key).await {
            if found == table_id {
                return Ok(Some(named.to_vec()));
            }
        }
        let ds = self.manifest_snapshot().await?;
        let mut scan = ds.scan();
        scan.filter(&format!(
            "object_type = 'table' AND metadata LIKE {}",
            literal(&format!("%{table_id}%"))
        ))?;
        use futures::TryStreamExt;
        let batches: Vec<arrow_array::RecordBatch> =
            scan.try_into_stream().await?.try_collect().await?;
        for row in single_rows(&batches) {
            if row_properties(&row)?.get(TABLE_ID).map(String::as_str) == Some(table_id) {
                if let Some(k) = crate::core::manifest_tx::row_object_id(&row) {
                    return Ok(Some(crate::core::manifest_id(&k)));
                }
            }
        }
        Ok(None)
    }

    /// Submit a task of `task_type` on table `req.id`: durable (marker,
    /// then record) before the answer. `quota`: tasks kept per table and
    /// type, finished ones included until deleted.
    pub async fn submit_task(
        &self,
        task_type: &str,
        req: SubmitLanceTaskRequest,
        quota: usize,
        submitted_by: Option<String>,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        check_table_id(&req.id)?;
        let table_id = self.real_table_id(&req.id).await?;
        self.enqueue_task(task_type, req, &table_id, quota, submitted_by)
            .await
    }

    /// Queue a task on the table whose real id is `table_id` (standing at
    /// `req.id`, of any depth: the scheduler's own submits are not bound
    /// by the API's one namespace level).
    pub(crate) async fn enqueue_task(
        &self,
        task_type: &str,
        req: SubmitLanceTaskRequest,
        table_id: &str,
        quota: usize,
        submitted_by: Option<String>,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        let params = params::checked(task_type, req.params)?;
        let table_id = table_id.to_string();
        let records = self.task_records(&table_id)?;
        // Best effort, as the API documents: two submits at once may both
        // pass with one slot left.
        let kept = records.listed_ids(task_type).await?.len();
        if kept >= quota {
            return Err(CatalogError::new(
                Code::TASK_QUOTA_EXCEEDED,
                format!(
                    "table {} already keeps {kept} {task_type} tasks (the quota is {quota}); delete completed or failed tasks to submit more",
                    display_id(&req.id)
                ),
            ));
        }
        let task_id = new_task_id(task_type);
        let record = TaskRecord {
            info: TaskInfo {
                task_id: task_id.clone(),
                task_type: task_type.to_string(),
                params,
                status: SUBMITTED.to_string(),
                created_at: stamp(now_ms()),
                ..Default::default()
            },
            table_id: table_id.clone(),
            table: req.id.clone(),
            lease: None,
            attempts: 0,
            submitted_by,
            placement: None,
        };
        self.put_marker(&QueueEntry {
            task_id: task_id.clone(),
            table_id: table_id.clone(),
            task_type: task_type.to_string(),
        })
        .await?;
        records
            .create(task_type, &task_id, &record, Code::TASK_STATE_CONFLICT)
            .await?;
        crate::telemetry::metrics().task_event(task_type, SUBMITTED);
        Ok(SubmitLanceTaskResponse { task_id, table_id })
    }

    /// Find task `task_id` of table `id` (its id names its type).
    async fn find_task(
        &self,
        id: &[String],
        task_id: &str,
    ) -> CatalogResult<(String, Records, TaskRecord)> {
        if task_id.trim().is_empty() {
            return Err(CatalogError::invalid("task_id must not be empty"));
        }
        let Some(table_id) = self.stored_table_id(&manifest_key(id)).await? else {
            return Err(task_not_found(id, task_id));
        };
        let records = self.task_records(&table_id)?;
        // Not an id this API hands out: it cannot exist.
        let Some(task_type) = type_of_task_id(task_id) else {
            return Err(task_not_found(id, task_id));
        };
        match records.get::<TaskRecord>(task_type, task_id).await? {
            Some(found) => Ok((table_id, records, found.value)),
            None => Err(task_not_found(id, task_id)),
        }
    }

    pub async fn get_task(
        &self,
        req: GetLanceTaskStatusRequest,
    ) -> CatalogResult<GetLanceTaskStatusResponse> {
        check_table_id(&req.id)?;
        let (table_id, _, record) = self.find_task(&req.id, &req.task_id).await?;
        Ok(GetLanceTaskStatusResponse {
            task_info: record.info,
            table_id,
        })
    }

    /// Delete a finished task's record (the work is not undone). Running
    /// and submitted tasks (and states this version does not know) stay.
    pub async fn delete_task(
        &self,
        req: DeleteLanceTaskRequest,
    ) -> CatalogResult<DeleteLanceTaskResponse> {
        check_table_id(&req.id)?;
        let (table_id, records, record) = self.find_task(&req.id, &req.task_id).await?;
        let task_type = record.info.task_type.clone();
        let deleted = records
            .delete::<TaskRecord, _>(&task_type, &req.task_id, |t| match t.info.status.as_str() {
                COMPLETED | FAILED => Ok(()),
                other => Err(CatalogError::new(
                    Code::TASK_STATE_CONFLICT,
                    format!(
                        "task {:?} is {other:?}; only completed or failed tasks can be deleted (cancel it first: POST …/tasks/{}/cancel)",
                        req.task_id, req.task_id
                    ),
                )),
            })
            .await?;
        if !deleted {
            return Err(task_not_found(&req.id, &req.task_id));
        }
        if let Err(e) = records.erase::<TaskRecord>(&task_type, &req.task_id).await {
            tracing::warn!(task = %req.task_id, error = %e.message, "a deleted task's versions were not all removed");
        }
        self.remove_marker(&req.task_id).await;
        crate::telemetry::metrics().task_event(&task_type, "deleted");
        Ok(DeleteLanceTaskResponse { table_id })
    }

    /// A page of one table's tasks of one type, newest first.
    pub async fn list_tasks(
        &self,
        req: ListLanceTasksRequest,
    ) -> CatalogResult<ListLanceTasksResponse> {
        check_table_id(&req.id)?;
        for (name, present) in [("mode", &req.mode), ("status", &req.status)] {
            if present.is_some() {
                return Err(CatalogError::invalid(format!(
                    "the {name} query parameter is not supported; list by task_type and filter by status on the client"
                )));
            }
        }
        let task_type = match req.task_type.as_deref() {
            Some(t) if known_type(t) => t,
            other => {
                let names: Vec<&str> = TASK_TYPES.iter().map(|(_, t)| *t).collect();
                return Err(CatalogError::invalid(format!(
                    "task_type {} is required and must be one of {}",
                    other.map(|t| format!("{t:?}")).unwrap_or("(absent)".into()),
                    names.join(", ")
                )));
            }
        };
        let max = req.max_results.unwrap_or(100);
        if !(1..=1000).contains(&max) {
            return Err(CatalogError::invalid(format!(
                "max_results must be between 1 and 1000, not {max}"
            )));
        }
        let marker = req.marker.filter(|m| !m.is_empty());
        if let Some(m) = &marker {
            if crate::records::check_id("marker", m).is_err() {
                return Err(CatalogError::invalid(format!(
                    "marker {m:?} is not a next_marker this API returned"
                )));
            }
        }
        // A table without a real id has never had a task.
        let Some(table_id) = self.stored_table_id(&manifest_key(&req.id)).await? else {
            return Ok(ListLanceTasksResponse::default());
        };
        let records = self.task_records(&table_id)?;
        let mut ids = records.listed_ids(task_type).await?;
        ids.reverse();
        let mut rest = ids
            .into_iter()
            .filter(|i| marker.as_ref().is_none_or(|m| i < m))
            .peekable();
        let mut tasks = Vec::new();
        let mut last = None;
        while tasks.len() < max as usize {
            let Some(task_id) = rest.next() else { break };
            if let Some(t) = records.get::<TaskRecord>(task_type, &task_id).await? {
                tasks.push(t.value.info);
                last = Some(task_id);
            }
        }
        let next_marker = match (rest.peek(), last) {
            (Some(_), Some(last)) => last,
            _ => String::new(),
        };
        Ok(ListLanceTasksResponse {
            tasks,
            next_marker,
            table_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_sort_by_time_and_are_record_ids() {
        let a = new_task_id("lance_cleanup");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_task_id("lance_compact");
        assert_eq!(a.len(), 32);
        assert!(a < b);
        assert!(crate::records::check_id("task", &a).is_ok());
        assert_eq!(type_of_task_id(&a), Some("lance_cleanup"));
        assert_eq!(type_of_task_id(&b), Some("lance_compact"));
        assert_eq!(type_of_task_id("../x"), None);
        assert_eq!(type_of_task_id(&"f".repeat(32)), None);
    }

    #[test]
    fn stamps_have_microseconds_and_an_offset() {
        assert_eq!(stamp(0), "1970-01-01T00:00:00.000000+00:00");
    }

    #[test]
    fn ids_need_exactly_two_parts() {
        let id = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_table_id(&id(&["prod", "docs"])).is_ok());
        for bad in [&["prod"][..], &["a", "b", "c"], &["", "t"], &["n", ""]] {
            assert_eq!(
                check_table_id(&id(bad)).unwrap_err().code,
                Code::INVALID_INPUT
            );
        }
    }
}
