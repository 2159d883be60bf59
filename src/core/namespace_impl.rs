//! The `LanceNamespace` implementation: one method per spec operation.
//!
//! Each method validates the id, applies the core's rules (in the op-group
//! files beside this one) or forwards to the storage engine, and settles the
//! error code. Nothing here is transport-specific.

use crate::api::op;
use async_trait::async_trait;
use bytes::Bytes;
use lance::Result;
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

use crate::core::checks::{namespace_id, table_id};
use crate::core::settle::{checked, out, transaction_id, Names};
use crate::core::Catalog;
use crate::error::{CatalogError, Code};

#[async_trait]
impl LanceNamespace for Catalog {
    fn namespace_id(&self) -> String {
        format!("lance-catalog {{ root: {:?} }}", self.root)
    }

    async fn list_namespaces(
        &self,
        request: ListNamespacesRequest,
    ) -> Result<ListNamespacesResponse> {
        out(self.list_namespaces_op(request).await)
    }

    async fn create_namespace(
        &self,
        request: CreateNamespaceRequest,
    ) -> Result<CreateNamespaceResponse> {
        out(self.create_namespace_op(request).await)
    }

    async fn drop_namespace(&self, request: DropNamespaceRequest) -> Result<DropNamespaceResponse> {
        out(self.drop_namespace_op(request).await)
    }

    async fn list_tables(&self, request: ListTablesRequest) -> Result<ListTablesResponse> {
        out(self.list_tables_op(request).await)
    }

    async fn list_all_tables(&self, request: ListTablesRequest) -> Result<ListTablesResponse> {
        out(self.list_all_tables_op(request).await)
    }

    async fn register_table(&self, request: RegisterTableRequest) -> Result<RegisterTableResponse> {
        out(self.register_table_op(request).await)
    }

    async fn declare_table(&self, request: DeclareTableRequest) -> Result<DeclareTableResponse> {
        out(self.declare_table_op(request).await)
    }

    async fn create_table(
        &self,
        request: CreateTableRequest,
        data: Bytes,
    ) -> Result<CreateTableResponse> {
        let rows =
            out(crate::core::data::rows::Rows::from_bytes(data, op::CreateTable.action).await)?;
        out(self.create_table_op(request, rows).await)
    }

    async fn insert_into_table(
        &self,
        request: InsertIntoTableRequest,
        data: Bytes,
    ) -> Result<InsertIntoTableResponse> {
        let rows =
            out(crate::core::data::rows::Rows::from_bytes(data, op::InsertIntoTable.action).await)?;
        out(self.insert_op(request, rows).await)
    }

    async fn merge_insert_into_table(
        &self,
        request: MergeInsertIntoTableRequest,
        data: Bytes,
    ) -> Result<MergeInsertIntoTableResponse> {
        out(crate::core::data::sql_text::check_request(&request))?;
        out(self.merge_insert_op(request, data).await)
    }

    async fn describe_namespace(
        &self,
        request: DescribeNamespaceRequest,
    ) -> Result<DescribeNamespaceResponse> {
        let mut described = checked(
            namespace_id(&request.id),
            Names::Namespace,
            self.inner.describe_namespace(request),
        )
        .await?;
        crate::core::namespace::storage_options::redact_namespace_properties(
            &mut described.properties,
        );
        Ok(described)
    }

    async fn namespace_exists(&self, request: NamespaceExistsRequest) -> Result<()> {
        // The catalog's own check: one kept answer for both.
        let id = out(namespace_id(&request.id))?;
        out(self.require_namespace(&id).await)
    }

    async fn describe_table(&self, request: DescribeTableRequest) -> Result<DescribeTableResponse> {
        out(self.describe_table_op(request).await)
    }

    async fn table_exists(&self, request: TableExistsRequest) -> Result<()> {
        let key = crate::core::meta_cache::key_of(op::TableExists.action, &request);
        let check = checked(
            table_id(&request.id),
            Names::Table,
            self.inner.table_exists(request),
        );
        self.cached_exists(key, check).await
    }

    async fn drop_table(&self, request: DropTableRequest) -> Result<DropTableResponse> {
        out(self.drop_table_op(request).await)
    }

    async fn deregister_table(
        &self,
        request: DeregisterTableRequest,
    ) -> Result<DeregisterTableResponse> {
        let id = out(table_id(&request.id))?;
        let force = crate::core::protection::forced(request.context.as_ref());
        let ds = out(self.manifest_snapshot().await)?;
        out(self.guard_table(&ds, &id, force).await)?;
        let mut r = checked(
            table_id(&request.id),
            Names::Table,
            self.inner.deregister_table(request),
        )
        .await?;
        crate::core::checks::public_properties(&mut r.properties);
        Ok(r)
    }

    async fn count_table_rows(&self, request: CountTableRowsRequest) -> Result<i64> {
        out(crate::core::data::sql_text::check_request(&request))?;
        let id = out(table_id(&request.id))?;
        let predicate = request.predicate.clone();
        match checked(
            Ok(id.clone()),
            Names::Table,
            self.inner.count_table_rows(request),
        )
        .await
        {
            Err(e) if CatalogError::from_lance(&e).code == Code::INTERNAL => {
                // The engine reports a predicate that does not parse as
                // Internal; say what is wrong with it instead.
                if let Some(p) = predicate.as_deref().filter(|p| !p.trim().is_empty()) {
                    out(self.check_predicate(&id, p).await)?;
                }
                Err(e)
            }
            other => other,
        }
    }

    async fn update_table(&self, request: UpdateTableRequest) -> Result<UpdateTableResponse> {
        out(crate::core::data::sql_text::check_request(&request))?;
        out(self.update_table_op(request).await)
    }

    async fn delete_from_table(
        &self,
        request: DeleteFromTableRequest,
    ) -> Result<DeleteFromTableResponse> {
        out(crate::core::data::sql_text::check_request(&request))?;
        out(self.delete_op(request).await)
    }

    async fn query_table(&self, request: QueryTableRequest) -> Result<Bytes> {
        let answer = out(self.query_answer(request).await)?;
        out(crate::core::data::rows::gather(answer).await)
    }

    async fn create_table_index(
        &self,
        request: CreateTableIndexRequest,
    ) -> Result<CreateTableIndexResponse> {
        out(self.create_index_op(request, false).await)
    }

    async fn list_table_indices(
        &self,
        request: ListTableIndicesRequest,
    ) -> Result<ListTableIndicesResponse> {
        out(self
            .no_branch_yet(&request.id, &request.branch, "listing indices")
            .await)?;
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.list_table_indices(request),
        )
        .await
    }

    async fn describe_table_index_stats(
        &self,
        request: DescribeTableIndexStatsRequest,
    ) -> Result<DescribeTableIndexStatsResponse> {
        out(self
            .no_branch_yet(&request.id, &request.branch, "index statistics")
            .await)?;
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.describe_table_index_stats(request),
        )
        .await
    }

    async fn create_table_scalar_index(
        &self,
        request: CreateTableIndexRequest,
    ) -> Result<CreateTableScalarIndexResponse> {
        out(self
            .create_index_op(request, true)
            .await
            .map(|r| CreateTableScalarIndexResponse {
                transaction_id: r.transaction_id,
                ..Default::default()
            }))
    }

    async fn drop_table_index(
        &self,
        request: DropTableIndexRequest,
    ) -> Result<DropTableIndexResponse> {
        out(self.drop_table_index_op(request).await)
    }

    async fn restore_table(&self, request: RestoreTableRequest) -> Result<RestoreTableResponse> {
        if request.version < 0 {
            return Err(CatalogError::invalid(format!(
                "cannot restore version {}: versions start at 1",
                request.version
            ))
            .into_lance());
        }
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.restore_table(request),
        )
        .await
    }

    async fn list_table_versions(
        &self,
        request: ListTableVersionsRequest,
    ) -> Result<ListTableVersionsResponse> {
        out(self.list_versions_op(request).await)
    }

    async fn create_table_version(
        &self,
        request: CreateTableVersionRequest,
    ) -> Result<CreateTableVersionResponse> {
        out(self.create_version_op(request).await)
    }

    async fn describe_table_version(
        &self,
        request: DescribeTableVersionRequest,
    ) -> Result<DescribeTableVersionResponse> {
        out(self.describe_version_op(request).await)
    }

    async fn batch_delete_table_versions(
        &self,
        request: BatchDeleteTableVersionsRequest,
    ) -> Result<BatchDeleteTableVersionsResponse> {
        let id = out(table_id(&request.id))?;
        out(crate::core::version::versions::check_ranges(
            &id,
            &request.ranges,
        ))?;
        checked(
            Ok(id),
            Names::Table,
            self.inner.batch_delete_table_versions(request),
        )
        .await
    }

    async fn update_table_schema_metadata(
        &self,
        request: UpdateTableSchemaMetadataRequest,
    ) -> Result<UpdateTableSchemaMetadataResponse> {
        out(self.update_schema_metadata_op(request).await)
    }

    async fn get_table_stats(
        &self,
        request: GetTableStatsRequest,
    ) -> Result<GetTableStatsResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.get_table_stats(request),
        )
        .await
    }

    async fn explain_table_query_plan(
        &self,
        request: ExplainTableQueryPlanRequest,
    ) -> Result<String> {
        out(crate::core::data::sql_text::check_request(&request))?;
        if crate::core::branch::open::branch_of(&request.branch).is_some() {
            let mut query = (*request.query).clone();
            query.id = request.id.clone();
            query.branch = request.branch.clone();
            return out(self
                .query_plan(&query, false, request.verbose.unwrap_or(false))
                .await);
        }
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.explain_table_query_plan(request),
        )
        .await
    }

    async fn analyze_table_query_plan(
        &self,
        request: AnalyzeTableQueryPlanRequest,
    ) -> Result<String> {
        out(crate::core::data::sql_text::check_request(&request))?;
        if crate::core::branch::open::branch_of(&request.branch).is_some() {
            // The analyse request carries the query's fields inline.
            let query: QueryTableRequest = serde_json::to_value(&request)
                .and_then(serde_json::from_value)
                .map_err(|e| {
                    CatalogError::invalid(format!("the query to analyse: {e}")).into_lance()
                })?;
            return out(self.query_plan(&query, true, false).await);
        }
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.analyze_table_query_plan(request),
        )
        .await
    }

    async fn alter_table_add_columns(
        &self,
        request: AlterTableAddColumnsRequest,
    ) -> Result<AlterTableAddColumnsResponse> {
        out(crate::core::data::sql_text::check_request(&request))?;
        out(self.add_columns_op(request).await)
    }

    async fn alter_table_alter_columns(
        &self,
        request: AlterTableAlterColumnsRequest,
    ) -> Result<AlterTableAlterColumnsResponse> {
        let id = out(table_id(&request.id))?;
        let branch = crate::core::branch::open::branch_of(&request.branch).map(str::to_string);
        let paths: Vec<String> = request.alterations.iter().map(|a| a.path.clone()).collect();
        out(self
            .require_columns(&id, branch.as_deref(), paths.iter().map(String::as_str))
            .await)?;
        out(crate::core::table::metadata::check_renames(
            &request.alterations,
        ))?;
        checked(
            Ok(id),
            Names::Table,
            self.inner.alter_table_alter_columns(request),
        )
        .await
    }

    async fn alter_table_drop_columns(
        &self,
        request: AlterTableDropColumnsRequest,
    ) -> Result<AlterTableDropColumnsResponse> {
        let id = out(table_id(&request.id))?;
        let branch = crate::core::branch::open::branch_of(&request.branch).map(str::to_string);
        let columns: Vec<String> = request.columns.clone();
        out(self
            .require_columns(&id, branch.as_deref(), columns.iter().map(String::as_str))
            .await)?;
        checked(
            Ok(id),
            Names::Table,
            self.inner.alter_table_drop_columns(request),
        )
        .await
    }

    async fn list_table_tags(
        &self,
        request: ListTableTagsRequest,
    ) -> Result<ListTableTagsResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.list_table_tags(request),
        )
        .await
    }

    async fn get_table_tag_version(
        &self,
        request: GetTableTagVersionRequest,
    ) -> Result<GetTableTagVersionResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.get_table_tag_version(request),
        )
        .await
    }

    async fn create_table_tag(
        &self,
        request: CreateTableTagRequest,
    ) -> Result<CreateTableTagResponse> {
        out(crate::core::checks::check_ref_name("tag", &request.tag))?;
        if crate::core::branch::open::branch_of(&request.branch).is_some() {
            return out(self.create_tag_on_branch(request).await);
        }
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.create_table_tag(request),
        )
        .await
    }

    async fn delete_table_tag(
        &self,
        request: DeleteTableTagRequest,
    ) -> Result<DeleteTableTagResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.delete_table_tag(request),
        )
        .await
    }

    async fn update_table_tag(
        &self,
        request: UpdateTableTagRequest,
    ) -> Result<UpdateTableTagResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.update_table_tag(request),
        )
        .await
    }

    async fn create_table_branch(
        &self,
        request: CreateTableBranchRequest,
    ) -> Result<CreateTableBranchResponse> {
        out(crate::core::checks::check_ref_name("branch", &request.name))?;
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.create_table_branch(request),
        )
        .await
    }

    async fn list_table_branches(
        &self,
        request: ListTableBranchesRequest,
    ) -> Result<ListTableBranchesResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.list_table_branches(request),
        )
        .await
    }

    async fn delete_table_branch(
        &self,
        request: DeleteTableBranchRequest,
    ) -> Result<DeleteTableBranchResponse> {
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner.delete_table_branch(request),
        )
        .await
    }

    async fn describe_transaction(
        &self,
        request: DescribeTransactionRequest,
    ) -> Result<DescribeTransactionResponse> {
        checked(
            transaction_id(&request.id),
            Names::Transaction,
            self.inner.describe_transaction(request),
        )
        .await
    }

    async fn alter_transaction(
        &self,
        request: AlterTransactionRequest,
    ) -> Result<AlterTransactionResponse> {
        checked(
            transaction_id(&request.id),
            Names::Transaction,
            self.inner.alter_transaction(request),
        )
        .await
    }

    async fn rename_table(&self, request: RenameTableRequest) -> Result<RenameTableResponse> {
        out(self.rename_table_op(request).await)
    }

    async fn batch_create_table_versions(
        &self,
        request: BatchCreateTableVersionsRequest,
    ) -> Result<BatchCreateTableVersionsResponse> {
        out(self
            .create_versions(&request.entries)
            .await
            .map(|versions| BatchCreateTableVersionsResponse {
                versions,
                ..Default::default()
            }))
    }

    async fn batch_commit_tables(
        &self,
        request: BatchCommitTablesRequest,
    ) -> Result<BatchCommitTablesResponse> {
        out(self.batch_commit_op(request).await)
    }

    async fn update_field_metadata(
        &self,
        request: UpdateFieldMetadataRequest,
    ) -> Result<UpdateFieldMetadataResponse> {
        out(self.update_field_metadata_op(request).await)
    }

    async fn alter_table_backfill_columns(
        &self,
        request: AlterTableBackfillColumnsRequest,
    ) -> Result<AlterTableBackfillColumnsResponse> {
        out(crate::core::data::sql_text::check_request(&request))?;
        out(self.backfill_op(request).await)
    }

    async fn refresh_materialized_view(
        &self,
        request: RefreshMaterializedViewRequest,
    ) -> Result<RefreshMaterializedViewResponse> {
        out(self.refresh_view_op(request).await)
    }

    async fn create_materialized_view(
        &self,
        request: CreateMaterializedViewRequest,
    ) -> Result<CreateMaterializedViewResponse> {
        out(self.create_view_op(request).await)
    }
}
