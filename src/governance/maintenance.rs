//! Maintenance tasks over the hierarchy: each operation is routed to its
//! table's warehouse and authorized like the table's own operations
//! (submit and delete are writes, get and list reads), and a pool of
//! workers in every replica runs what any replica queued.

use super::guard::entry::Admitted;
use super::guard::request::Named;
use crate::api::call::Call;
use crate::api::op;
use crate::api::OpDef;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Governance;
use crate::core::maintenance::executors::Executors;
use crate::core::maintenance::worker::outlives_replica;
use crate::core::maintenance::{
    check_table_id, CancelLanceTaskRequest, DeleteLanceTaskRequest, DeleteLanceTaskResponse,
    GetLanceTaskStatusRequest, GetLanceTaskStatusResponse, ListLanceTasksRequest,
    ListLanceTasksResponse, SubmitLanceTaskRequest, SubmitLanceTaskResponse, WorkerSettings,
};
use crate::core::ManifestKeeping;
use crate::error::CatalogResult;

/// How tasks are kept and run.
#[derive(Debug, Clone)]
pub struct MaintenanceConfig {
    /// Tasks this replica runs at once (`--workers`; 0: it only serves the
    /// API, other replicas run the tasks).
    pub workers: usize,
    /// How long a claim lasts without renewal (`--task-lease`): after a
    /// worker dies, its task waits this long before another takes it over.
    pub lease: Duration,
    /// How often idle workers look for queued tasks (`--task-poll`).
    pub poll: Duration,
    /// Tasks kept per table and type, finished ones included until deleted
    /// (`--task-quota`).
    pub quota: usize,
    /// Starts after which a task whose workers keep dying fails.
    pub max_attempts: u32,
    /// Whether the scheduler submits cleanups (`--scheduler-cleanup`).
    /// Each runs the shallow-clone pre-pass over every warehouse first
    /// (`core/maintenance/clone_pin.rs`), which Lance's cleanup lacks.
    pub scheduled_cleanup: bool,
    /// How the scheduler keeps each warehouse's `__manifest`.
    pub manifest: ManifestKeeping,
    /// Where tasks run (`--ray-*`, `--executor-rule`).
    pub executors: Arc<Executors>,
}

impl Default for MaintenanceConfig {
    fn default() -> Self {
        Self {
            workers: 1,
            lease: Duration::from_secs(30),
            poll: Duration::from_secs(1),
            quota: 1000,
            max_attempts: 3,
            scheduled_cleanup: true,
            manifest: ManifestKeeping::default(),
            executors: Arc::default(),
        }
    }
}

/// Each submit operation's task type.
const SUBMITS: [(&OpDef, &str); 5] = [
    (&op::SubmitLanceTableCompactTask, "lance_compact"),
    (&op::SubmitLanceTableScalarIndexTask, "lance_scalar_index"),
    (&op::SubmitLanceTableVectorIndexTask, "lance_vector_index"),
    (
        &op::SubmitLanceTableOptimizeIndicesTask,
        "lance_optimize_indices",
    ),
    (&op::SubmitLanceTableCleanupTask, "lance_cleanup"),
];

impl Governance {
    /// A submit, by its action (`submit_lance_table_<what>_task`).
    pub(super) async fn submit_task_governed(
        &self,
        call: &Call,
        action: &'static OpDef,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        let task_type = SUBMITS
            .iter()
            .find(|(a, _)| *a == action)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                crate::error::CatalogError::internal(format!("no task type for {action}"))
            })?;
        check_table_id(&request.id)?;
        let named = Named::called(call, &request.id);
        self.call(action, named, async |a: &mut Admitted, _| {
            let by = a.access.principal.as_ref().map(|p| p.id.clone());
            a.route
                .catalog
                .submit_task(task_type, request, self.maintenance.quota, by)
                .await
        })
        .await
    }

    pub(super) async fn get_task_governed(
        &self,
        call: &Call,
        request: GetLanceTaskStatusRequest,
    ) -> CatalogResult<GetLanceTaskStatusResponse> {
        check_table_id(&request.id)?;
        let named = Named::called(call, &request.id);
        self.call(
            &op::GetLanceTaskStatus,
            named,
            async |a: &mut Admitted, _| a.route.catalog.get_task(request).await,
        )
        .await
    }

    pub(super) async fn list_tasks_governed(
        &self,
        call: &Call,
        request: ListLanceTasksRequest,
    ) -> CatalogResult<ListLanceTasksResponse> {
        check_table_id(&request.id)?;
        let named = Named::called(call, &request.id);
        self.call(&op::ListLanceTasks, named, async |a: &mut Admitted, _| {
            a.route.catalog.list_tasks(request).await
        })
        .await
    }

    pub(super) async fn delete_task_governed(
        &self,
        call: &Call,
        request: DeleteLanceTaskRequest,
    ) -> CatalogResult<DeleteLanceTaskResponse> {
        check_table_id(&request.id)?;
        let named = Named::called(call, &request.id);
        self.call(&op::DeleteLanceTask, named, async |a: &mut Admitted, _| {
            a.route.catalog.delete_task(request).await
        })
        .await
    }

    /// Cancel a task, and stop the job running it on an executor that
    /// outlives a replica at once (a worker holding it stops it too, at its
    /// next renewal; if none does, nothing else would).
    pub(super) async fn cancel_task_governed(
        &self,
        call: &Call,
        request: CancelLanceTaskRequest,
    ) -> CatalogResult<GetLanceTaskStatusResponse> {
        check_table_id(&request.id)?;
        let named = Named::called(call, &request.id);
        self.call(&op::CancelLanceTask, named, async |a: &mut Admitted, _| {
            let by = a.access.principal.as_ref().map(|p| p.id.as_str());
            let (answer, record) = a.route.catalog.cancel_task(request, by).await?;
            if outlives_replica(&record) {
                self.stop_job(&a.route, &record).await;
            }
            Ok(answer)
        })
        .await
    }

    /// Stop the job of a cancelled task on its executor, which outlives
    /// this replica.
    async fn stop_job(&self, route: &super::Route, record: &crate::core::maintenance::TaskRecord) {
        let kind = record
            .placement
            .as_ref()
            .map(|p| p.executor)
            .unwrap_or_default();
        match self.maintenance.executors.get(kind) {
            Ok(x) => match x.cancel(record).await {
                Ok(()) => route.catalog.remove_marker(&record.info.task_id).await,
                Err(e) => {
                    tracing::warn!(task = %record.info.task_id, error = %e.message, "could not stop a cancelled task's job; a worker stops it")
                }
            },
            Err(_) => {
                tracing::info!(task = %record.info.task_id, "a cancelled task's job runs where this replica cannot reach; a worker that can stops it")
            }
        }
    }

    /// Start this replica's workers (none when `workers` is 0): a loop that
    /// lists every warehouse's queue, oldest task first, and claims what it
    /// has room for. One task per table at a time in a replica: Lance's
    /// maintenance commits on one table conflict with each other.
    pub fn start_workers(self: &Arc<Self>) {
        // A worker's cleanup pre-pass reads every warehouse's clones.
        self.estate.attach(self);
        self.attach_executors();
        let config = self.maintenance.clone();
        if config.workers == 0 {
            return;
        }
        let settings = WorkerSettings {
            owner: crate::core::object_ids::fresh_replica_name(),
            lease: config.lease,
            max_attempts: config.max_attempts,
            executors: config.executors.clone(),
        };
        tracing::info!(workers = config.workers, owner = %settings.owner, lease_s = config.lease.as_secs_f64(), "maintenance workers started");
        let gov = self.clone();
        tokio::spawn(async move {
            let slots = Arc::new(tokio::sync::Semaphore::new(config.workers));
            let busy: Arc<Mutex<HashSet<String>>> = Arc::default();
            loop {
                if let Err(e) = gov.claim_round(&settings, &slots, &busy).await {
                    tracing::warn!(error = %e.message, "the maintenance queue could not be read; trying again");
                }
                tokio::time::sleep(config.poll).await;
            }
        });
    }

    async fn claim_round(
        &self,
        settings: &WorkerSettings,
        slots: &Arc<tokio::sync::Semaphore>,
        busy: &Arc<Mutex<HashSet<String>>>,
    ) -> CatalogResult<()> {
        for (warehouse, catalog) in self.every_catalog(None, None).await? {
            for (entry, age) in catalog.queued_tasks().await? {
                let Ok(permit) = slots.clone().try_acquire_owned() else {
                    return Ok(());
                };
                if busy.lock().expect("busy tables").contains(&entry.table_id) {
                    continue;
                }
                let Some(task) = catalog.claim_task(&entry, age, settings).await? else {
                    continue;
                };
                busy.lock()
                    .expect("busy tables")
                    .insert(entry.table_id.clone());
                let (catalog, settings, busy) = (catalog.clone(), settings.clone(), busy.clone());
                let warehouse = warehouse.clone();
                tokio::spawn(async move {
                    catalog.run_task(&warehouse, task, &settings).await;
                    busy.lock().expect("busy tables").remove(&entry.table_id);
                    drop(permit);
                });
            }
        }
        Ok(())
    }
}
