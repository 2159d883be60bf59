//! Maintenance tasks: pending work of a table or namespace, and the task API (`maintenance.rs` holds the rules).

use super::prelude::*;

impl Plane<'_> {
    pub(super) async fn list_table_tasks(
        &self,
        request: ListTasksRequest,
    ) -> CatalogResult<ListTasksResponse> {
        self.table_tasks_governed(self.call, request).await
    }

    pub(super) async fn list_namespace_tasks(
        &self,
        request: ListTasksRequest,
    ) -> CatalogResult<ListTasksResponse> {
        self.namespace_tasks_governed(self.call, request).await
    }

    pub(super) async fn submit_lance_table_compact_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(self.call, &op::SubmitLanceTableCompactTask, request)
            .await
    }

    pub(super) async fn submit_lance_table_scalar_index_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(self.call, &op::SubmitLanceTableScalarIndexTask, request)
            .await
    }

    pub(super) async fn submit_lance_table_vector_index_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(self.call, &op::SubmitLanceTableVectorIndexTask, request)
            .await
    }

    pub(super) async fn submit_lance_table_optimize_indices_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(self.call, &op::SubmitLanceTableOptimizeIndicesTask, request)
            .await
    }

    pub(super) async fn submit_lance_table_cleanup_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(self.call, &op::SubmitLanceTableCleanupTask, request)
            .await
    }

    pub(super) async fn get_lance_task_status(
        &self,
        request: GetLanceTaskStatusRequest,
    ) -> CatalogResult<GetLanceTaskStatusResponse> {
        self.get_task_governed(self.call, request).await
    }

    pub(super) async fn list_lance_tasks(
        &self,
        request: ListLanceTasksRequest,
    ) -> CatalogResult<ListLanceTasksResponse> {
        self.list_tasks_governed(self.call, request).await
    }

    pub(super) async fn delete_lance_task(
        &self,
        request: DeleteLanceTaskRequest,
    ) -> CatalogResult<DeleteLanceTaskResponse> {
        self.delete_task_governed(self.call, request).await
    }

    pub(super) async fn cancel_lance_task(
        &self,
        request: CancelLanceTaskRequest,
    ) -> CatalogResult<GetLanceTaskStatusResponse> {
        self.cancel_task_governed(self.call, request).await
    }
}
