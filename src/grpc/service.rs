//! The gRPC services over any `LanceNamespace` (normally the catalog core).
//! Every rpc converts its message to the spec model (`convert.rs`), adds
//! identity and context from the metadata, calls the core, and converts the
//! answer back: one mechanism for all 54 operations.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use lance_namespace::LanceNamespace;
use prost::Message;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tonic::{Request, Response, Status};

use super::convert::{from_json, model_from_value, request_json};
use super::pb;
use super::status::to_status;
use crate::error::CatalogError;

/// The spec operations over gRPC.
#[derive(Clone)]
pub struct NamespaceService {
    ns: Arc<dyn LanceNamespace>,
}

impl NamespaceService {
    pub fn new(ns: Arc<dyn LanceNamespace>) -> Self {
        Self { ns }
    }

    /// The request as its spec model's JSON, with identity and context from
    /// the metadata, and the Arrow payload (`data`) taken out.
    fn request_json<P: Message>(request: Request<P>, name: &str) -> Result<(Value, Bytes), Status> {
        let (meta, _, msg) = request.into_parts();
        let mut value = request_json(&msg, name).map_err(to_status)?;
        let mut data = Bytes::new();
        if let Value::Object(obj) = &mut value {
            if let Some(Value::String(b64)) = obj.remove("data") {
                use base64::Engine;
                data = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map(Bytes::from)
                    .map_err(|e| to_status(CatalogError::internal(format!("data field: {e}"))))?;
            }
            crate::identity::apply_headers(&meta.into_headers(), obj);
        }
        Ok((value, data))
    }

    /// Run one operation: request message -> model -> core -> model -> message.
    async fn call<P, Q, M, R, F>(
        &self,
        request: Request<P>,
        names: (&str, &str),
        f: F,
    ) -> Result<Response<Q>, Status>
    where
        P: Message,
        Q: Message + Default,
        M: DeserializeOwned,
        R: Serialize,
        F: FnOnce(Arc<dyn LanceNamespace>, M, Bytes) -> BoxFuture<'static, lance::Result<R>>,
    {
        let (value, data) = Self::request_json(request, names.0)?;
        let model: M = model_from_value(value, names.0).map_err(to_status)?;
        let answer = f(self.ns.clone(), model, data)
            .await
            .map_err(|e| to_status(CatalogError::from_lance(&e)))?;
        let value = serde_json::to_value(answer)
            .map_err(|e| to_status(CatalogError::internal(format!("cannot render answer: {e}"))))?;
        from_json(value, names.1)
            .map(Response::new)
            .map_err(to_status)
    }
}

/// The service impl: one line per operation. `json` answers convert the
/// model as is; `wrap` answers put a bare value under the named field
/// (count, plan, analysis, data); `unit` answers are empty messages.
macro_rules! namespace_service {
    ($( $method:ident ($Req:ident -> $Resp:ident) $kind:ident $($field:literal)? ; )*) => {
        #[tonic::async_trait]
        impl pb::lance_namespace_service_server::LanceNamespaceService for NamespaceService {
            $(
                async fn $method(
                    &self,
                    request: Request<pb::$Req>,
                ) -> Result<Response<pb::$Resp>, Status> {
                    self.call(request, (stringify!($Req), stringify!($Resp)), |ns, model, _data| {
                        Box::pin(async move {
                            namespace_service!(@call $kind ns $method model _data $($field)?)
                        })
                    })
                    .await
                }
            )*

            type QueryTableStreamStream = futures::stream::BoxStream<'static, Result<pb::ArrowChunk, Status>>;

            async fn query_table_stream(
                &self,
                request: Request<pb::QueryTableRequest>,
            ) -> Result<Response<Self::QueryTableStreamStream>, Status> {
                let (value, _) = Self::request_json(request, "QueryTableRequest")?;
                let model = model_from_value(value, "QueryTableRequest").map_err(to_status)?;
                let file = self
                    .ns
                    .query_table(model)
                    .await
                    .map_err(|e| to_status(CatalogError::from_lance(&e)))?;
                let chunks = super::stream::file_to_stream_chunks(&file).map_err(to_status)?;
                let stream = futures::stream::iter(
                    chunks.into_iter().map(|data| Ok(pb::ArrowChunk { data: data.to_vec() })),
                );
                Ok(Response::new(Box::pin(stream)))
            }
        }
    };
    (@call json $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model).await
    };
    (@call data $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model, $data).await
    };
    (@call unit $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model).await.map(|()| json!({}))
    };
    (@call bytes $ns:ident $method:ident $model:ident $data:ident $field:literal) => {
        $ns.$method($model).await.map(|v| {
            use base64::Engine;
            json!({ $field: base64::engine::general_purpose::STANDARD.encode(&v) })
        })
    };
    (@call wrap $ns:ident $method:ident $model:ident $data:ident $field:literal) => {
        $ns.$method($model).await.map(|v| json!({ $field: v }))
    };
}

namespace_service! {
    create_namespace(CreateNamespaceRequest -> CreateNamespaceResponse) json;
    list_namespaces(ListNamespacesRequest -> ListNamespacesResponse) json;
    describe_namespace(DescribeNamespaceRequest -> DescribeNamespaceResponse) json;
    drop_namespace(DropNamespaceRequest -> DropNamespaceResponse) json;
    namespace_exists(NamespaceExistsRequest -> NamespaceExistsResponse) unit;
    list_tables(ListTablesRequest -> ListTablesResponse) json;
    list_all_tables(ListTablesRequest -> ListTablesResponse) json;
    register_table(RegisterTableRequest -> RegisterTableResponse) json;
    describe_table(DescribeTableRequest -> DescribeTableResponse) json;
    table_exists(TableExistsRequest -> TableExistsResponse) unit;
    drop_table(DropTableRequest -> DropTableResponse) json;
    deregister_table(DeregisterTableRequest -> DeregisterTableResponse) json;
    restore_table(RestoreTableRequest -> RestoreTableResponse) json;
    rename_table(RenameTableRequest -> RenameTableResponse) json;
    update_table_schema_metadata(UpdateTableSchemaMetadataRequest -> UpdateTableSchemaMetadataResponse) json;
    list_table_versions(ListTableVersionsRequest -> ListTableVersionsResponse) json;
    create_table_version(CreateTableVersionRequest -> CreateTableVersionResponse) json;
    describe_table_version(DescribeTableVersionRequest -> DescribeTableVersionResponse) json;
    batch_delete_table_versions(BatchDeleteTableVersionsRequest -> BatchDeleteTableVersionsResponse) json;
    batch_create_table_versions(BatchCreateTableVersionsRequest -> BatchCreateTableVersionsResponse) json;
    batch_commit_tables(BatchCommitTablesRequest -> BatchCommitTablesResponse) json;
    alter_table_alter_columns(AlterTableAlterColumnsRequest -> AlterTableAlterColumnsResponse) json;
    update_field_metadata(UpdateFieldMetadataRequest -> UpdateFieldMetadataResponse) json;
    alter_table_drop_columns(AlterTableDropColumnsRequest -> AlterTableDropColumnsResponse) json;
    get_table_stats(GetTableStatsRequest -> GetTableStatsResponse) json;
    insert_into_table(InsertIntoTableRequest -> InsertIntoTableResponse) data;
    merge_insert_into_table(MergeInsertIntoTableRequest -> MergeInsertIntoTableResponse) data;
    update_table(UpdateTableRequest -> UpdateTableResponse) json;
    delete_from_table(DeleteFromTableRequest -> DeleteFromTableResponse) json;
    query_table(QueryTableRequest -> QueryTableResponse) bytes "data";
    count_table_rows(CountTableRowsRequest -> CountTableRowsResponse) wrap "count";
    create_table(CreateTableRequest -> CreateTableResponse) data;
    explain_table_query_plan(ExplainTableQueryPlanRequest -> ExplainTableQueryPlanResponse) wrap "plan";
    analyze_table_query_plan(AnalyzeTableQueryPlanRequest -> AnalyzeTableQueryPlanResponse) wrap "analysis";
    alter_table_add_columns(AlterTableAddColumnsRequest -> AlterTableAddColumnsResponse) json;
    alter_table_backfill_columns(AlterTableBackfillColumnsRequest -> AlterTableBackfillColumnsResponse) json;
    refresh_materialized_view(RefreshMaterializedViewRequest -> RefreshMaterializedViewResponse) json;
    create_materialized_view(CreateMaterializedViewRequest -> CreateMaterializedViewResponse) json;
    create_table_index(CreateTableIndexRequest -> CreateTableIndexResponse) json;
    create_table_scalar_index(CreateTableIndexRequest -> CreateTableScalarIndexResponse) json;
    list_table_indices(ListTableIndicesRequest -> ListTableIndicesResponse) json;
    describe_table_index_stats(DescribeTableIndexStatsRequest -> DescribeTableIndexStatsResponse) json;
    drop_table_index(DropTableIndexRequest -> DropTableIndexResponse) json;
    list_table_tags(ListTableTagsRequest -> ListTableTagsResponse) json;
    get_table_tag_version(GetTableTagVersionRequest -> GetTableTagVersionResponse) json;
    declare_table(DeclareTableRequest -> DeclareTableResponse) json;
    create_table_tag(CreateTableTagRequest -> CreateTableTagResponse) json;
    delete_table_tag(DeleteTableTagRequest -> DeleteTableTagResponse) json;
    update_table_tag(UpdateTableTagRequest -> UpdateTableTagResponse) json;
    list_table_branches(ListTableBranchesRequest -> ListTableBranchesResponse) json;
    create_table_branch(CreateTableBranchRequest -> CreateTableBranchResponse) json;
    delete_table_branch(DeleteTableBranchRequest -> DeleteTableBranchResponse) json;
    describe_transaction(DescribeTransactionRequest -> DescribeTransactionResponse) json;
    alter_transaction(AlterTransactionRequest -> AlterTransactionResponse) json;
}
