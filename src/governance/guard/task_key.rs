//! What a maintenance job's runner may do with its task key: what a
//! runner calls ([`RUNNER_OPS`]) on its task's table (found by real id in
//! its warehouse, so a table renamed meanwhile is still its own and one
//! created under the old name is not), while the task runs. Nothing else:
//! no other table, no namespace, no listing, no delete, no drop, no grants.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use crate::api::kind::Kind;
use crate::api::{op, OpDef};
use crate::auth::{unauthenticated, TaskScope};
use crate::core::maintenance::executor::Job;
use crate::core::maintenance::ray::TaskCredentials;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::governance::grants::object_key;
use crate::governance::guard::Access;
use crate::governance::{Governance, DEFAULT_WAREHOUSE};

/// What a job's runner calls: lance-ray resolves the table and its
/// storage options by describing it, and pylance reads versions and
/// indices and, where the catalog manages versions, commits through it.
/// Nothing that deletes rows, columns, versions or indices, and no task
/// of its own.
static RUNNER_OPS: [&OpDef; 7] = [
    &op::DescribeTable,
    &op::TableExists,
    &op::ListTableVersions,
    &op::DescribeTableVersion,
    &op::CreateTableVersion,
    &op::ListTableIndices,
    &op::DescribeTableIndexStats,
];

impl Governance {
    /// The relations a task key holds on `access`'s chain (`keys`): a
    /// writer's on its own table for what a runner calls, while its task
    /// runs; anything else is refused here, whatever Cedar policies an
    /// operator added.
    pub(in crate::governance) async fn task_relations(
        &self,
        scope: &TaskScope,
        access: &Access,
        keys: &[String],
    ) -> CatalogResult<HashSet<String>> {
        let denied = |why: &str| {
            Err(CatalogError::new(
                Code::PERMISSION_DENIED,
                format!("a task key {why}; {} is refused", access.action),
            ))
        };
        if !RUNNER_OPS.contains(&access.action) {
            return denied("may only describe its task's table, read its versions and indices, and commit to it");
        }
        let own = object_key("table", Some(&scope.warehouse), &scope.table_id);
        if access.kind != Kind::Table || !keys.contains(&own) {
            return denied("reaches its task's table only");
        }
        let catalog = self.catalog(&scope.warehouse).await?;
        if !catalog
            .task_running(&scope.table_id, &scope.task_type, &scope.task_id)
            .await?
        {
            return Err(unauthenticated(
                "the task this key was issued for has ended",
            ));
        }
        Ok(HashSet::from(["writer".to_string()]))
    }
}

/// Task keys for the Ray executor's jobs, from the governance layer.
pub(in crate::governance) struct TaskKeyIssuer {
    pub gov: Weak<Governance>,
    /// A key outlives no job: `--ray-job-timeout`.
    pub ttl: std::time::Duration,
}

#[async_trait::async_trait]
impl TaskCredentials for TaskKeyIssuer {
    async fn issue(&self, job: &Job) -> CatalogResult<Option<String>> {
        let Some(gov) = self.gov.upgrade() else {
            return Err(CatalogError::new(
                Code::SERVICE_UNAVAILABLE,
                "the server is stopping",
            ));
        };
        if !gov.auth.required() {
            return Ok(None);
        }
        let scope = TaskScope {
            warehouse: job.warehouse.clone(),
            table_id: job.task.table_id.clone(),
            task_type: job.task.info.task_type.clone(),
            task_id: job.task.info.task_id.clone(),
        };
        gov.auth
            .keys()
            .tasks()
            .mint(scope, self.ttl)
            .await
            .map(Some)
    }

    async fn revoke(&self, task_id: &str) {
        let Some(gov) = self.gov.upgrade() else {
            return;
        };
        if let Err(e) = gov.auth.keys().tasks().revoke(task_id).await {
            tracing::warn!(task = %task_id, error = %e.message, "could not end a task's key; it expires on its own");
        }
    }
}

impl Governance {
    /// Hand the Ray executor its credentials and this server's URL, and
    /// the home catalog its executors.
    pub(in crate::governance) fn attach_executors(self: &Arc<Self>) {
        // The home catalog's jobs (backfills, refreshes) run where the
        // rules send them; warehouses' catalogs get theirs when opened.
        self.home
            .set_job_executors(DEFAULT_WAREHOUSE, self.maintenance.executors.clone());
        if let Some(ray) = self.maintenance.executors.ray_executor() {
            ray.set_credentials(Arc::new(TaskKeyIssuer {
                gov: Arc::downgrade(self),
                ttl: ray.timeout(),
            }));
        }
    }

    /// This server's REST URL, for jobs to call back when
    /// `--ray-catalog-url` is not set.
    pub fn set_callback_url(&self, url: String) {
        if let Some(ray) = self.maintenance.executors.ray_executor() {
            ray.set_catalog_url(url);
        }
    }
}
