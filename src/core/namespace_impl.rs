//! The spec operations ([`Spec`]): one method per operation, each
//! answering the catalog's error; `lance_edge!` below is the one place it
//! becomes a `lance::Error`, for the catalog used as a `LanceNamespace`.
//!
//! Each method validates the id, applies the core's rules (in the op-group
//! files beside this one) or forwards to the storage engine, and settles the
//! error code. Nothing here is transport-specific.

use crate::api::op;
use async_trait::async_trait;
use bytes::Bytes;
use lance_namespace::models::{
    AlterTableAddColumnsRequest, AlterTableAddColumnsResponse, AlterTableAlterColumnsRequest,
    AlterTableAlterColumnsResponse, AlterTableBackfillColumnsRequest,
    AlterTableBackfillColumnsResponse, AlterTableDropColumnsRequest, AlterTableDropColumnsResponse,
    AlterTransactionRequest, AlterTransactionResponse, AnalyzeTableQueryPlanRequest,
    BatchCommitTablesRequest, BatchCommitTablesResponse, BatchCreateTableVersionsRequest,
    BatchCreateTableVersionsResponse, BatchDeleteTableVersionsRequest,
    BatchDeleteTableVersionsResponse, CountTableRowsRequest, CreateMaterializedViewRequest,
    CreateMaterializedViewResponse, CreateNamespaceRequest, CreateNamespaceResponse,
    CreateTableBranchRequest, CreateTableBranchResponse, CreateTableIndexRequest,
    CreateTableIndexResponse, CreateTableRequest, CreateTableResponse,
    CreateTableScalarIndexResponse, CreateTableTagRequest, CreateTableTagResponse,
    CreateTableVersionRequest, CreateTableVersionResponse, DeclareTableRequest,
    DeclareTableResponse, DeleteFromTableRequest, DeleteFromTableResponse,
    DeleteTableBranchRequest, DeleteTableBranchResponse, DeleteTableTagRequest,
    DeleteTableTagResponse, DeregisterTableRequest, DeregisterTableResponse,
    DescribeNamespaceRequest, DescribeNamespaceResponse, DescribeTableIndexStatsRequest,
    DescribeTableIndexStatsResponse, DescribeTableRequest, DescribeTableResponse,
    DescribeTableVersionRequest, DescribeTableVersionResponse, DescribeTransactionRequest,
    DescribeTransactionResponse, DropNamespaceRequest, DropNamespaceResponse,
    DropTableIndexRequest, DropTableIndexResponse, DropTableRequest, DropTableResponse,
    ExplainTableQueryPlanRequest, GetTableStatsRequest, GetTableStatsResponse,
    GetTableTagVersionRequest, GetTableTagVersionResponse, InsertIntoTableRequest,
    InsertIntoTableResponse, ListNamespacesRequest, ListNamespacesResponse,
    ListTableBranchesRequest, ListTableBranchesResponse, ListTableIndicesRequest,
    ListTableIndicesResponse, ListTableTagsRequest, ListTableTagsResponse,
    ListTableVersionsRequest, ListTableVersionsResponse, ListTablesRequest, ListTablesResponse,
    MergeInsertIntoTableRequest, MergeInsertIntoTableResponse, NamespaceExistsRequest,
    QueryTableRequest, RefreshMaterializedViewRequest, RefreshMaterializedViewResponse,
    RegisterTableRequest, RegisterTableResponse, RenameTableRequest, RenameTableResponse,
    RestoreTableRequest, RestoreTableResponse, TableExistsRequest, UpdateFieldMetadataRequest,
    UpdateFieldMetadataResponse, UpdateTableRequest, UpdateTableResponse,
    UpdateTableSchemaMetadataRequest, UpdateTableSchemaMetadataResponse, UpdateTableTagRequest,
    UpdateTableTagResponse,
};
use lance_namespace::LanceNamespace;

use crate::api::spec::{lance_edge, lance_edge_rows, Spec};

use crate::core::checks::{namespace_id, table_id};
use crate::core::settle::{checked, transaction_id, Names};
use crate::core::Catalog;
use crate::error::CatalogResult;

lance_edge!(Catalog);

#[async_trait]
impl Spec for Catalog {
    fn namespace_id(&self) -> String {
        format!("lance-catalog {{ root: {:?} }}", self.root)
    }

    async fn list_namespaces(
        &self,
        request: ListNamespacesRequest,
    ) -> CatalogResult<ListNamespacesResponse> {
        self.list_namespaces_op(request).await
    }

    async fn create_namespace(
        &self,
        request: CreateNamespaceRequest,
    ) -> CatalogResult<CreateNamespaceResponse> {
        self.create_namespace_op(request).await
    }

    async fn drop_namespace(
        &self,
        request: DropNamespaceRequest,
    ) -> CatalogResult<DropNamespaceResponse> {
        self.drop_namespace_op(request).await
    }

    async fn list_tables(&self, request: ListTablesRequest) -> CatalogResult<ListTablesResponse> {
        self.list_tables_op(request).await
    }

    async fn list_all_tables(
        &self,
        request: ListTablesRequest,
    ) -> CatalogResult<ListTablesResponse> {
        self.list_all_tables_op(request).await
    }

    async fn register_table(
        &self,
        request: RegisterTableRequest,
    ) -> CatalogResult<RegisterTableResponse> {
        self.register_table_op(request).await
    }

    async fn declare_table(
        &self,
        request: DeclareTableRequest,
    ) -> CatalogResult<DeclareTableResponse> {
        self.declare_table_op(request).await
    }

    async fn create_table(
        &self,
        request: CreateTableRequest,
        data: Bytes,
    ) -> CatalogResult<CreateTableResponse> {
        let rows = crate::core::data::rows::Rows::from_bytes(data, op::CreateTable.action).await?;
        self.create_table_op(request, rows).await
    }

    async fn insert_into_table(
        &self,
        request: InsertIntoTableRequest,
        data: Bytes,
    ) -> CatalogResult<InsertIntoTableResponse> {
        let rows =
            crate::core::data::rows::Rows::from_bytes(data, op::InsertIntoTable.action).await?;
        self.insert_op(request, rows).await
    }

    async fn merge_insert_into_table(
        &self,
        request: MergeInsertIntoTableRequest,
        data: Bytes,
    ) -> CatalogResult<MergeInsertIntoTableResponse> {
        crate::core::data::sql_text::check_request(&request)?;
        self.merge_insert_op(request, data).await
    }

    async fn describe_namespace(
        &self,
        request: DescribeNamespaceRequest,
    ) -> CatalogResult<DescribeNamespaceResponse> {
        let mut described = checked(
            namespace_id(&request.id),
            Names::Namespace,
            self.inner().await?.describe_namespace(request),
        )
        .await?;
        crate::core::namespace::storage_options::redact_namespace_properties(
            &mut described.properties,
        );
        Ok(described)
    }

    async fn namespace_exists(&self, request: NamespaceExistsRequest) -> CatalogResult<()> {
        // The catalog's own check: one kept answer for both.
        let id = namespace_id(&request.id)?;
        self.require_namespace(&id).await
    }

    async fn describe_table(
        &self,
        request: DescribeTableRequest,
    ) -> CatalogResult<DescribeTableResponse> {
        self.describe_table_op(request).await
    }

    async fn table_exists(&self, request: TableExistsRequest) -> CatalogResult<()> {
        let id = table_id(&request.id)?;
        match self.recorded(&id, "table").await? {
            true => Ok(()),
            false => Err(crate::core::checks::table_not_found(&id)),
        }
    }

    async fn drop_table(&self, request: DropTableRequest) -> CatalogResult<DropTableResponse> {
        self.drop_table_op(request).await
    }

    async fn deregister_table(
        &self,
        request: DeregisterTableRequest,
    ) -> CatalogResult<DeregisterTableResponse> {
        let id = table_id(&request.id)?;
        let force = crate::core::protection::forced(request.context.as_ref());
        self.deregister_by_id(&id, force).await
    }

    async fn count_table_rows(&self, request: CountTableRowsRequest) -> CatalogResult<i64> {
        self.count_rows_op(request).await
    }

    async fn update_table(
        &self,
        request: UpdateTableRequest,
    ) -> CatalogResult<UpdateTableResponse> {
        crate::core::data::sql_text::check_request(&request)?;
        self.update_table_op(request).await
    }

    async fn delete_from_table(
        &self,
        request: DeleteFromTableRequest,
    ) -> CatalogResult<DeleteFromTableResponse> {
        crate::core::data::sql_text::check_request(&request)?;
        self.delete_op(request).await
    }

    async fn query_table(&self, request: QueryTableRequest) -> CatalogResult<Bytes> {
        let framing = crate::core::data::ipc_out::Framing::File;
        let answer = self.query_answer(request, framing).await?;
        crate::core::data::rows::gather(answer).await
    }

    async fn create_table_index(
        &self,
        request: CreateTableIndexRequest,
    ) -> CatalogResult<CreateTableIndexResponse> {
        self.create_index_op(request, false).await
    }

    async fn list_table_indices(
        &self,
        request: ListTableIndicesRequest,
    ) -> CatalogResult<ListTableIndicesResponse> {
        self.no_branch_yet(&request.id, &request.branch, "listing indices")
            .await?;
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.list_table_indices(request),
        )
        .await
    }

    async fn describe_table_index_stats(
        &self,
        request: DescribeTableIndexStatsRequest,
    ) -> CatalogResult<DescribeTableIndexStatsResponse> {
        self.no_branch_yet(&request.id, &request.branch, "index statistics")
            .await?;
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.describe_table_index_stats(request),
        )
        .await
    }

    async fn create_table_scalar_index(
        &self,
        request: CreateTableIndexRequest,
    ) -> CatalogResult<CreateTableScalarIndexResponse> {
        self.create_index_op(request, true)
            .await
            .map(|r| CreateTableScalarIndexResponse {
                transaction_id: r.transaction_id,
                ..Default::default()
            })
    }

    async fn drop_table_index(
        &self,
        request: DropTableIndexRequest,
    ) -> CatalogResult<DropTableIndexResponse> {
        self.drop_table_index_op(request).await
    }

    async fn restore_table(
        &self,
        request: RestoreTableRequest,
    ) -> CatalogResult<RestoreTableResponse> {
        self.restore_op(request).await
    }

    async fn list_table_versions(
        &self,
        request: ListTableVersionsRequest,
    ) -> CatalogResult<ListTableVersionsResponse> {
        self.list_versions_op(request).await
    }

    async fn create_table_version(
        &self,
        request: CreateTableVersionRequest,
    ) -> CatalogResult<CreateTableVersionResponse> {
        self.create_version_op(request).await
    }

    async fn describe_table_version(
        &self,
        request: DescribeTableVersionRequest,
    ) -> CatalogResult<DescribeTableVersionResponse> {
        self.describe_version_op(request).await
    }

    async fn batch_delete_table_versions(
        &self,
        request: BatchDeleteTableVersionsRequest,
    ) -> CatalogResult<BatchDeleteTableVersionsResponse> {
        let id = table_id(&request.id)?;
        crate::core::version::versions::check_ranges(&id, &request.ranges)?;
        checked(
            Ok(id),
            Names::Table,
            self.inner().await?.batch_delete_table_versions(request),
        )
        .await
    }

    async fn update_table_schema_metadata(
        &self,
        request: UpdateTableSchemaMetadataRequest,
    ) -> CatalogResult<UpdateTableSchemaMetadataResponse> {
        self.update_schema_metadata_op(request).await
    }

    async fn get_table_stats(
        &self,
        request: GetTableStatsRequest,
    ) -> CatalogResult<GetTableStatsResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.get_table_stats(request),
        )
        .await
    }

    async fn explain_table_query_plan(
        &self,
        request: ExplainTableQueryPlanRequest,
    ) -> CatalogResult<String> {
        self.explain_plan_op(request).await
    }

    async fn analyze_table_query_plan(
        &self,
        request: AnalyzeTableQueryPlanRequest,
    ) -> CatalogResult<String> {
        self.analyze_plan_op(request).await
    }

    async fn alter_table_add_columns(
        &self,
        request: AlterTableAddColumnsRequest,
    ) -> CatalogResult<AlterTableAddColumnsResponse> {
        crate::core::data::sql_text::check_request(&request)?;
        self.add_columns_op(request).await
    }

    async fn alter_table_alter_columns(
        &self,
        request: AlterTableAlterColumnsRequest,
    ) -> CatalogResult<AlterTableAlterColumnsResponse> {
        self.alter_columns_op(request).await
    }

    async fn alter_table_drop_columns(
        &self,
        request: AlterTableDropColumnsRequest,
    ) -> CatalogResult<AlterTableDropColumnsResponse> {
        self.drop_columns_op(request).await
    }

    async fn list_table_tags(
        &self,
        request: ListTableTagsRequest,
    ) -> CatalogResult<ListTableTagsResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.list_table_tags(request),
        )
        .await
    }

    async fn get_table_tag_version(
        &self,
        request: GetTableTagVersionRequest,
    ) -> CatalogResult<GetTableTagVersionResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.get_table_tag_version(request),
        )
        .await
    }

    async fn create_table_tag(
        &self,
        request: CreateTableTagRequest,
    ) -> CatalogResult<CreateTableTagResponse> {
        crate::core::checks::check_ref_name("tag", &request.tag)?;
        if crate::core::branch::open::branch_of(&request.branch).is_some() {
            return self.create_tag_on_branch(request).await;
        }
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.create_table_tag(request),
        )
        .await
    }

    async fn delete_table_tag(
        &self,
        request: DeleteTableTagRequest,
    ) -> CatalogResult<DeleteTableTagResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.delete_table_tag(request),
        )
        .await
    }

    async fn update_table_tag(
        &self,
        request: UpdateTableTagRequest,
    ) -> CatalogResult<UpdateTableTagResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.update_table_tag(request),
        )
        .await
    }

    async fn create_table_branch(
        &self,
        request: CreateTableBranchRequest,
    ) -> CatalogResult<CreateTableBranchResponse> {
        crate::core::checks::check_ref_name("branch", &request.name)?;
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.create_table_branch(request),
        )
        .await
    }

    async fn list_table_branches(
        &self,
        request: ListTableBranchesRequest,
    ) -> CatalogResult<ListTableBranchesResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.list_table_branches(request),
        )
        .await
    }

    async fn delete_table_branch(
        &self,
        request: DeleteTableBranchRequest,
    ) -> CatalogResult<DeleteTableBranchResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.delete_table_branch(request),
        )
        .await
    }

    async fn describe_transaction(
        &self,
        request: DescribeTransactionRequest,
    ) -> CatalogResult<DescribeTransactionResponse> {
        checked(
            transaction_id(&request.id),
            Names::Transaction,
            self.inner().await?.describe_transaction(request),
        )
        .await
    }

    async fn alter_transaction(
        &self,
        request: AlterTransactionRequest,
    ) -> CatalogResult<AlterTransactionResponse> {
        checked(
            transaction_id(&request.id),
            Names::Transaction,
            self.inner().await?.alter_transaction(request),
        )
        .await
    }

    async fn rename_table(
        &self,
        request: RenameTableRequest,
    ) -> CatalogResult<RenameTableResponse> {
        self.rename_table_op(request).await
    }

    async fn batch_create_table_versions(
        &self,
        request: BatchCreateTableVersionsRequest,
    ) -> CatalogResult<BatchCreateTableVersionsResponse> {
        self.create_versions(&request.entries)
            .await
            .map(|versions| BatchCreateTableVersionsResponse {
                versions,
                ..Default::default()
            })
    }

    async fn batch_commit_tables(
        &self,
        request: BatchCommitTablesRequest,
    ) -> CatalogResult<BatchCommitTablesResponse> {
        self.batch_commit_op(request).await
    }

    async fn update_field_metadata(
        &self,
        request: UpdateFieldMetadataRequest,
    ) -> CatalogResult<UpdateFieldMetadataResponse> {
        self.update_field_metadata_op(request).await
    }

    async fn alter_table_backfill_columns(
        &self,
        request: AlterTableBackfillColumnsRequest,
    ) -> CatalogResult<AlterTableBackfillColumnsResponse> {
        crate::core::data::sql_text::check_request(&request)?;
        self.backfill_op(request).await
    }

    async fn refresh_materialized_view(
        &self,
        request: RefreshMaterializedViewRequest,
    ) -> CatalogResult<RefreshMaterializedViewResponse> {
        self.refresh_view_op(request).await
    }

    async fn create_materialized_view(
        &self,
        request: CreateMaterializedViewRequest,
    ) -> CatalogResult<CreateMaterializedViewResponse> {
        self.create_view_op(request).await
    }
}
