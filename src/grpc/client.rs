//! A `LanceNamespace` over the catalog's gRPC service, so Rust code (and the
//! conformance suite) can use the catalog through gRPC exactly as through
//! REST or in process. Same conversion as the server: model JSON <-> message.

use std::future::Future;

use base64::Engine;
use bytes::Bytes;
use lance_namespace::models;
use lance_namespace::LanceNamespace;
use prost::Message;
use serde::Serialize;
use serde_json::Value;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

use super::convert::{from_json, model_from_value, to_json};
use super::pb::lance_namespace_service_client::LanceNamespaceServiceClient;
use super::status::from_status;
use crate::error::CatalogError;

type Client = LanceNamespaceServiceClient<Channel>;

/// Lance's namespace API over gRPC.
#[derive(Debug, Clone)]
pub struct GrpcNamespace {
    client: Client,
    endpoint: String,
}

impl GrpcNamespace {
    /// Connect to `endpoint`, e.g. `http://127.0.0.1:2333`.
    pub async fn connect(endpoint: &str) -> Result<Self, tonic::transport::Error> {
        let client = LanceNamespaceServiceClient::connect(endpoint.to_string())
            .await?
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX);
        Ok(Self {
            client,
            endpoint: endpoint.to_string(),
        })
    }

    /// Send one request; answer the response message as model JSON.
    async fn unary<M, P, Q, F, Fut>(
        &self,
        model: &M,
        data: Option<Bytes>,
        names: (&str, &str),
        f: F,
    ) -> lance::Result<Value>
    where
        M: Serialize,
        P: Message + Default,
        Q: Message,
        F: FnOnce(Client, Request<P>) -> Fut,
        Fut: Future<Output = Result<Response<Q>, Status>>,
    {
        let fail = |e: CatalogError| e.into_lance();
        let mut value = serde_json::to_value(model)
            .map_err(|e| fail(CatalogError::invalid(format!("cannot encode request: {e}"))))?;
        if let (Some(data), Value::Object(obj)) = (data, &mut value) {
            let b64 = base64::engine::general_purpose::STANDARD.encode(&data);
            obj.insert("data".into(), Value::from(b64));
        }
        let mut request = Request::new(from_json::<P>(value.clone(), names.0).map_err(fail)?);
        // Identity travels in metadata, as it does in REST headers.
        let meta = request.metadata_mut();
        if let Some(key) = value.pointer("/identity/api_key").and_then(Value::as_str) {
            if let Ok(v) = MetadataValue::try_from(key) {
                meta.insert("x-api-key", v);
            }
        }
        if let Some(token) = value
            .pointer("/identity/auth_token")
            .and_then(Value::as_str)
        {
            if let Ok(v) = MetadataValue::try_from(format!("Bearer {token}")) {
                meta.insert("authorization", v);
            }
        }
        let response = f(self.client.clone(), request)
            .await
            .map_err(|s| fail(from_status(&s)))?;
        to_json(&response.into_inner(), names.1).map_err(fail)
    }
}

fn model<T: serde::de::DeserializeOwned>(value: Value, name: &str) -> lance::Result<T> {
    model_from_value(value, name).map_err(CatalogError::into_lance)
}

fn field(value: &Value, field: &str) -> Value {
    value.get(field).cloned().unwrap_or(Value::Null)
}

/// The trait impl: one line per operation (see the server's macro).
macro_rules! grpc_namespace {
    ($( $method:ident ($Model:ident $(, $data:ident)?) -> $Out:ty : $Req:ident -> $Resp:ident = $kind:ident $($field:literal)? ; )*) => {
        #[async_trait::async_trait]
        impl LanceNamespace for GrpcNamespace {
            fn namespace_id(&self) -> String {
                format!("GrpcNamespace {{ endpoint: {:?} }}", self.endpoint)
            }
            $(
                async fn $method(&self, request: models::$Model $(, $data: Bytes)?) -> lance::Result<$Out> {
                    let data: Option<Bytes> = None $(.or(Some($data)))?;
                    let value = self
                        .unary(&request, data, (stringify!($Req), stringify!($Resp)), |mut c, r| async move {
                            c.$method(r).await
                        })
                        .await?;
                    grpc_namespace!(@out $kind value, stringify!($Resp) $(, $field)?)
                }
            )*
        }
    };
    (@out json $value:ident, $name:expr) => { model($value, $name) };
    (@out unit $value:ident, $name:expr) => { { let _ = ($value, $name); Ok(()) } };
    (@out wrap $value:ident, $name:expr, $field:literal) => { model(field(&$value, $field), $name) };
    (@out bytes $value:ident, $name:expr, $field:literal) => {
        field(&$value, $field)
            .as_str()
            .map(|s| base64::engine::general_purpose::STANDARD.decode(s))
            .transpose()
            .map_err(|e| CatalogError::internal(format!("query answer: {e}")).into_lance())
            .map(|b| Bytes::from(b.unwrap_or_default()))
    };
}

grpc_namespace! {
    create_namespace(CreateNamespaceRequest) -> models::CreateNamespaceResponse : CreateNamespaceRequest -> CreateNamespaceResponse = json;
    list_namespaces(ListNamespacesRequest) -> models::ListNamespacesResponse : ListNamespacesRequest -> ListNamespacesResponse = json;
    describe_namespace(DescribeNamespaceRequest) -> models::DescribeNamespaceResponse : DescribeNamespaceRequest -> DescribeNamespaceResponse = json;
    drop_namespace(DropNamespaceRequest) -> models::DropNamespaceResponse : DropNamespaceRequest -> DropNamespaceResponse = json;
    namespace_exists(NamespaceExistsRequest) -> () : NamespaceExistsRequest -> NamespaceExistsResponse = unit;
    list_tables(ListTablesRequest) -> models::ListTablesResponse : ListTablesRequest -> ListTablesResponse = json;
    list_all_tables(ListTablesRequest) -> models::ListTablesResponse : ListTablesRequest -> ListTablesResponse = json;
    register_table(RegisterTableRequest) -> models::RegisterTableResponse : RegisterTableRequest -> RegisterTableResponse = json;
    describe_table(DescribeTableRequest) -> models::DescribeTableResponse : DescribeTableRequest -> DescribeTableResponse = json;
    table_exists(TableExistsRequest) -> () : TableExistsRequest -> TableExistsResponse = unit;
    drop_table(DropTableRequest) -> models::DropTableResponse : DropTableRequest -> DropTableResponse = json;
    deregister_table(DeregisterTableRequest) -> models::DeregisterTableResponse : DeregisterTableRequest -> DeregisterTableResponse = json;
    restore_table(RestoreTableRequest) -> models::RestoreTableResponse : RestoreTableRequest -> RestoreTableResponse = json;
    rename_table(RenameTableRequest) -> models::RenameTableResponse : RenameTableRequest -> RenameTableResponse = json;
    update_table_schema_metadata(UpdateTableSchemaMetadataRequest) -> models::UpdateTableSchemaMetadataResponse : UpdateTableSchemaMetadataRequest -> UpdateTableSchemaMetadataResponse = json;
    list_table_versions(ListTableVersionsRequest) -> models::ListTableVersionsResponse : ListTableVersionsRequest -> ListTableVersionsResponse = json;
    create_table_version(CreateTableVersionRequest) -> models::CreateTableVersionResponse : CreateTableVersionRequest -> CreateTableVersionResponse = json;
    describe_table_version(DescribeTableVersionRequest) -> models::DescribeTableVersionResponse : DescribeTableVersionRequest -> DescribeTableVersionResponse = json;
    batch_delete_table_versions(BatchDeleteTableVersionsRequest) -> models::BatchDeleteTableVersionsResponse : BatchDeleteTableVersionsRequest -> BatchDeleteTableVersionsResponse = json;
    batch_create_table_versions(BatchCreateTableVersionsRequest) -> models::BatchCreateTableVersionsResponse : BatchCreateTableVersionsRequest -> BatchCreateTableVersionsResponse = json;
    batch_commit_tables(BatchCommitTablesRequest) -> models::BatchCommitTablesResponse : BatchCommitTablesRequest -> BatchCommitTablesResponse = json;
    alter_table_alter_columns(AlterTableAlterColumnsRequest) -> models::AlterTableAlterColumnsResponse : AlterTableAlterColumnsRequest -> AlterTableAlterColumnsResponse = json;
    update_field_metadata(UpdateFieldMetadataRequest) -> models::UpdateFieldMetadataResponse : UpdateFieldMetadataRequest -> UpdateFieldMetadataResponse = json;
    alter_table_drop_columns(AlterTableDropColumnsRequest) -> models::AlterTableDropColumnsResponse : AlterTableDropColumnsRequest -> AlterTableDropColumnsResponse = json;
    get_table_stats(GetTableStatsRequest) -> models::GetTableStatsResponse : GetTableStatsRequest -> GetTableStatsResponse = json;
    insert_into_table(InsertIntoTableRequest, data) -> models::InsertIntoTableResponse : InsertIntoTableRequest -> InsertIntoTableResponse = json;
    merge_insert_into_table(MergeInsertIntoTableRequest, data) -> models::MergeInsertIntoTableResponse : MergeInsertIntoTableRequest -> MergeInsertIntoTableResponse = json;
    update_table(UpdateTableRequest) -> models::UpdateTableResponse : UpdateTableRequest -> UpdateTableResponse = json;
    delete_from_table(DeleteFromTableRequest) -> models::DeleteFromTableResponse : DeleteFromTableRequest -> DeleteFromTableResponse = json;
    query_table(QueryTableRequest) -> Bytes : QueryTableRequest -> QueryTableResponse = bytes "data";
    count_table_rows(CountTableRowsRequest) -> i64 : CountTableRowsRequest -> CountTableRowsResponse = wrap "count";
    create_table(CreateTableRequest, data) -> models::CreateTableResponse : CreateTableRequest -> CreateTableResponse = json;
    explain_table_query_plan(ExplainTableQueryPlanRequest) -> String : ExplainTableQueryPlanRequest -> ExplainTableQueryPlanResponse = wrap "plan";
    analyze_table_query_plan(AnalyzeTableQueryPlanRequest) -> String : AnalyzeTableQueryPlanRequest -> AnalyzeTableQueryPlanResponse = wrap "analysis";
    alter_table_add_columns(AlterTableAddColumnsRequest) -> models::AlterTableAddColumnsResponse : AlterTableAddColumnsRequest -> AlterTableAddColumnsResponse = json;
    alter_table_backfill_columns(AlterTableBackfillColumnsRequest) -> models::AlterTableBackfillColumnsResponse : AlterTableBackfillColumnsRequest -> AlterTableBackfillColumnsResponse = json;
    refresh_materialized_view(RefreshMaterializedViewRequest) -> models::RefreshMaterializedViewResponse : RefreshMaterializedViewRequest -> RefreshMaterializedViewResponse = json;
    create_materialized_view(CreateMaterializedViewRequest) -> models::CreateMaterializedViewResponse : CreateMaterializedViewRequest -> CreateMaterializedViewResponse = json;
    create_table_index(CreateTableIndexRequest) -> models::CreateTableIndexResponse : CreateTableIndexRequest -> CreateTableIndexResponse = json;
    create_table_scalar_index(CreateTableIndexRequest) -> models::CreateTableScalarIndexResponse : CreateTableIndexRequest -> CreateTableScalarIndexResponse = json;
    list_table_indices(ListTableIndicesRequest) -> models::ListTableIndicesResponse : ListTableIndicesRequest -> ListTableIndicesResponse = json;
    describe_table_index_stats(DescribeTableIndexStatsRequest) -> models::DescribeTableIndexStatsResponse : DescribeTableIndexStatsRequest -> DescribeTableIndexStatsResponse = json;
    drop_table_index(DropTableIndexRequest) -> models::DropTableIndexResponse : DropTableIndexRequest -> DropTableIndexResponse = json;
    list_table_tags(ListTableTagsRequest) -> models::ListTableTagsResponse : ListTableTagsRequest -> ListTableTagsResponse = json;
    get_table_tag_version(GetTableTagVersionRequest) -> models::GetTableTagVersionResponse : GetTableTagVersionRequest -> GetTableTagVersionResponse = json;
    declare_table(DeclareTableRequest) -> models::DeclareTableResponse : DeclareTableRequest -> DeclareTableResponse = json;
    create_table_tag(CreateTableTagRequest) -> models::CreateTableTagResponse : CreateTableTagRequest -> CreateTableTagResponse = json;
    delete_table_tag(DeleteTableTagRequest) -> models::DeleteTableTagResponse : DeleteTableTagRequest -> DeleteTableTagResponse = json;
    update_table_tag(UpdateTableTagRequest) -> models::UpdateTableTagResponse : UpdateTableTagRequest -> UpdateTableTagResponse = json;
    list_table_branches(ListTableBranchesRequest) -> models::ListTableBranchesResponse : ListTableBranchesRequest -> ListTableBranchesResponse = json;
    create_table_branch(CreateTableBranchRequest) -> models::CreateTableBranchResponse : CreateTableBranchRequest -> CreateTableBranchResponse = json;
    delete_table_branch(DeleteTableBranchRequest) -> models::DeleteTableBranchResponse : DeleteTableBranchRequest -> DeleteTableBranchResponse = json;
    describe_transaction(DescribeTransactionRequest) -> models::DescribeTransactionResponse : DescribeTransactionRequest -> DescribeTransactionResponse = json;
    alter_transaction(AlterTransactionRequest) -> models::AlterTransactionResponse : AlterTransactionRequest -> AlterTransactionResponse = json;
}
