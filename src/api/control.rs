//! The catalog's own operations beside the spec's: the control plane. Its
//! requests and answers are plain models (named as their proto messages),
//! its operations rows of the inventory (`inventory.rs`), served over REST
//! and gRPC like the spec's.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use super::access::*;
pub use super::audit::*;
pub use super::hierarchy::*;
pub use super::jobs::{Job, JobState};
pub use super::maintenance::*;
pub use super::protection::*;
pub use super::trash::*;
use crate::error::CatalogResult;

/// What this build serves.
pub const FEATURES: &[&str] = &[
    "rest",
    "grpc",
    "flight",
    "managed-versioning",
    "materialized-views",
    "jobs",
    "trash",
    "maintenance-tasks",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetServerInfoRequest {}

/// Facts about the server: its version, storage roots and features.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub version: String,
    pub storage_roots: Vec<String>,
    pub features: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DescribeJobRequest {
    pub job_id: String,
}

/// A job's record, as the control plane answers it.
pub type JobRecord = Job;

/// The control plane's operations, one per control row of the inventory.
#[async_trait]
pub trait ControlPlane: Send + Sync {
    async fn get_server_info(&self, request: GetServerInfoRequest) -> CatalogResult<ServerInfo>;
    async fn describe_job(&self, request: DescribeJobRequest) -> CatalogResult<JobRecord>;
    async fn create_project(&self, request: CreateProjectRequest) -> CatalogResult<Project>;
    async fn list_projects(
        &self,
        request: ListProjectsRequest,
    ) -> CatalogResult<ListProjectsResponse>;
    async fn describe_project(&self, request: DescribeProjectRequest) -> CatalogResult<Project>;
    async fn update_project(&self, request: UpdateProjectRequest) -> CatalogResult<Project>;
    async fn delete_project(
        &self,
        request: DeleteProjectRequest,
    ) -> CatalogResult<DeleteProjectResponse>;
    async fn set_project_protection(
        &self,
        request: SetProjectProtectionRequest,
    ) -> CatalogResult<Project>;
    async fn create_warehouse(&self, request: CreateWarehouseRequest) -> CatalogResult<Warehouse>;
    async fn list_warehouses(
        &self,
        request: ListWarehousesRequest,
    ) -> CatalogResult<ListWarehousesResponse>;
    async fn describe_warehouse(
        &self,
        request: DescribeWarehouseRequest,
    ) -> CatalogResult<Warehouse>;
    async fn update_warehouse(&self, request: UpdateWarehouseRequest) -> CatalogResult<Warehouse>;
    async fn delete_warehouse(
        &self,
        request: DeleteWarehouseRequest,
    ) -> CatalogResult<DeleteWarehouseResponse>;
    async fn set_warehouse_protection(
        &self,
        request: SetWarehouseProtectionRequest,
    ) -> CatalogResult<Warehouse>;
    async fn create_warehouse_namespace(
        &self,
        request: CreateWarehouseNamespaceRequest,
    ) -> CatalogResult<WarehouseNamespace>;
    async fn list_warehouse_namespaces(
        &self,
        request: ListWarehouseNamespacesRequest,
    ) -> CatalogResult<ListWarehouseNamespacesResponse>;
    async fn create_api_key(
        &self,
        request: CreateApiKeyRequest,
    ) -> CatalogResult<CreateApiKeyResponse>;
    async fn list_api_keys(
        &self,
        request: ListApiKeysRequest,
    ) -> CatalogResult<ListApiKeysResponse>;
    async fn revoke_api_key(
        &self,
        request: RevokeApiKeyRequest,
    ) -> CatalogResult<RevokeApiKeyResponse>;
    async fn create_grant(&self, request: CreateGrantRequest) -> CatalogResult<Grant>;
    async fn list_grants(&self, request: ListGrantsRequest) -> CatalogResult<ListGrantsResponse>;
    async fn revoke_grant(&self, request: RevokeGrantRequest)
        -> CatalogResult<RevokeGrantResponse>;
    async fn list_events(&self, request: ListEventsRequest) -> CatalogResult<ListEventsResponse>;
    async fn set_table_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse>;
    async fn set_namespace_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse>;
    async fn undrop_table(&self, request: UndropTableRequest)
        -> CatalogResult<UndropTableResponse>;
    async fn undrop_namespace(
        &self,
        request: UndropNamespaceRequest,
    ) -> CatalogResult<UndropNamespaceResponse>;
    async fn list_table_tasks(&self, request: ListTasksRequest)
        -> CatalogResult<ListTasksResponse>;
    async fn list_namespace_tasks(
        &self,
        request: ListTasksRequest,
    ) -> CatalogResult<ListTasksResponse>;
    async fn list_trash(&self, request: ListTrashRequest) -> CatalogResult<ListTrashResponse>;
    async fn purge_trash(&self, request: PurgeTrashRequest) -> CatalogResult<PurgeTrashResponse>;
    async fn sweep_trash(&self, request: SweepTrashRequest) -> CatalogResult<SweepTrashResponse>;
    async fn submit_lance_table_compact_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse>;
    async fn submit_lance_table_scalar_index_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse>;
    async fn submit_lance_table_vector_index_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse>;
    async fn submit_lance_table_optimize_indices_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse>;
    async fn submit_lance_table_cleanup_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse>;
    async fn get_lance_task_status(
        &self,
        request: GetLanceTaskStatusRequest,
    ) -> CatalogResult<GetLanceTaskStatusResponse>;
    async fn list_lance_tasks(
        &self,
        request: ListLanceTasksRequest,
    ) -> CatalogResult<ListLanceTasksResponse>;
    async fn delete_lance_task(
        &self,
        request: DeleteLanceTaskRequest,
    ) -> CatalogResult<DeleteLanceTaskResponse>;
}
