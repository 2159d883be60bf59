//! Arrow Flight as a mode of the conformance cases: a `LanceNamespace`
//! whose data operations travel over the server's Flight service with the
//! Rust arrow-flight client (create, insert and merge-insert as DoPut,
//! plain and vector queries as DoGet, row counts as DoAction), and whose
//! other operations go over REST with Lance's own client, as a Flight user's
//! application would split them. What a Flight descriptor or ticket cannot
//! say (a create at a chosen location or with its own storage options, a
//! structured full-text query, tuned vector search, Arrow bytes that are not
//! a stream) goes over REST too: no case is skipped, and every other data
//! call runs through Flight's governed path.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::{Action, FlightClient, FlightDescriptor, Ticket};
use arrow_schema::SchemaRef;
use async_trait::async_trait;
use bytes::Bytes;
use futures::TryStreamExt;
use lance_catalog::core::WriteOutcome;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use serde_json::{Map, Value};

/// REST for the metadata, Flight for the data.
#[derive(Debug)]
pub struct FlightNamespace {
    rest: Arc<dyn LanceNamespace>,
    channel: tonic::transport::Channel,
}

impl FlightNamespace {
    pub async fn connect(base: &str, rest: Arc<dyn LanceNamespace>) -> Self {
        let channel = tonic::transport::Channel::from_shared(base.to_string())
            .expect("a URL")
            .connect()
            .await
            .expect("connect over Flight");
        Self { rest, channel }
    }

    fn client(&self) -> FlightClient {
        FlightClient::new(self.channel.clone())
    }

    /// One DoPut of `data` (Arrow IPC stream bytes) under `command`; `None`
    /// when the bytes are not an Arrow stream, which no Flight client can send.
    async fn put(&self, command: Value, data: &Bytes) -> Option<lance::Result<WriteOutcome>> {
        let (schema, batches) = decode(data)?;
        let descriptor = FlightDescriptor::new_cmd(command.to_string());
        let input = futures::stream::iter(batches.into_iter().map(Ok));
        let encoded = FlightDataEncoderBuilder::new()
            .with_schema(schema)
            .with_flight_descriptor(Some(descriptor))
            .build(input);
        let answer = async {
            let results: Vec<_> = self.client().do_put(encoded).await?.try_collect().await?;
            let first = results
                .first()
                .ok_or_else(|| FlightError::protocol("DoPut answered no PutResult"))?;
            serde_json::from_slice::<WriteOutcome>(&first.app_metadata)
                .map_err(|e| FlightError::protocol(format!("app_metadata: {e}")))
        };
        Some(answer.await.map_err(lance_error))
    }
}

/// The schema and batches of Arrow IPC stream bytes.
fn decode(data: &Bytes) -> Option<(SchemaRef, Vec<RecordBatch>)> {
    let reader =
        arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(data.to_vec()), None)
            .ok()?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>().ok()?;
    Some((schema, batches))
}

/// A Flight failure as the error a Lance client sees, spec code and all.
fn lance_error(err: FlightError) -> lance::Error {
    let status = match err {
        FlightError::Tonic(status) => *status,
        other => tonic::Status::internal(other.to_string()),
    };
    lance_catalog::transport::status::from_status(&status).into_lance()
}

fn version(v: u64) -> Option<i64> {
    Some(v as i64)
}

/// Put `key: value` into `cmd` when there is a value.
fn set(cmd: &mut Map<String, Value>, key: &str, value: impl serde::Serialize) {
    let value = serde_json::to_value(value).expect("JSON");
    if !value.is_null() {
        cmd.insert(key.to_string(), value);
    }
}

/// The DoGet ticket for a query, when a ticket can say all of it.
fn ticket(req: &QueryTableRequest) -> Option<Value> {
    let fts_terms = match req.full_text_query.as_deref() {
        None => None,
        Some(QueryTableRequestFullTextQuery {
            string_query: Some(q),
            structured_query: None,
        }) => Some(q),
        Some(_) => return None,
    };
    let multi = req
        .vector
        .multi_vector
        .as_ref()
        .is_some_and(|m| !m.is_empty());
    let tuned = req.ef.is_some()
        || req.lower_bound.is_some()
        || req.upper_bound.is_some()
        || req.bypass_vector_index.is_some()
        || req.fast_search.is_some()
        || req.minimum_nprobes.is_some()
        || req.maximum_nprobes.is_some();
    if multi || tuned {
        return None;
    }
    let vector = req.vector.single_vector.clone().filter(|v| !v.is_empty());
    let mut t = Map::new();
    set(&mut t, "id", &req.id);
    set(&mut t, "branch", &req.branch);
    set(&mut t, "version", req.version);
    set(
        &mut t,
        "filter",
        req.filter.as_deref().filter(|f| !f.is_empty()),
    );
    if let Some(columns) = req.columns.as_deref() {
        set(&mut t, "columns", &columns.column_names);
        set(&mut t, "column_aliases", &columns.column_aliases);
    }
    set(&mut t, "offset", req.offset);
    set(&mut t, "with_row_id", req.with_row_id);
    set(&mut t, "prefilter", req.prefilter);
    if let Some(q) = fts_terms {
        set(&mut t, "full_text_query", &q.query);
        set(&mut t, "full_text_columns", &q.columns);
    }
    match vector {
        Some(v) => {
            set(&mut t, "vector", v);
            set(&mut t, "vector_column", &req.vector_column);
            set(&mut t, "k", (req.k > 0).then_some(req.k));
            set(&mut t, "distance_type", &req.distance_type);
            set(&mut t, "nprobes", req.nprobes);
            set(&mut t, "refine_factor", req.refine_factor);
        }
        None => set(&mut t, "limit", (req.k > 0).then_some(req.k)),
    }
    Some(Value::Object(t))
}

/// Batches as the Arrow IPC file a REST query answers.
fn ipc_file(schema: &SchemaRef, batches: &[RecordBatch]) -> Bytes {
    let mut out = Vec::new();
    let mut w = arrow::ipc::writer::FileWriter::try_new(&mut out, schema).expect("IPC file");
    for b in batches {
        w.write(b).expect("IPC batch");
    }
    w.finish().expect("IPC footer");
    drop(w);
    Bytes::from(out)
}

/// The impl: the methods written out, then REST's answer for everything
/// Flight does not carry (expanded before `async_trait` reads the impl).
macro_rules! flight_then_rest {
    ({$($own:tt)*} $($method:ident($request:ty) -> $answer:ty;)*) => {
        #[async_trait]
        impl LanceNamespace for FlightNamespace {
            $($own)*
            $(
                async fn $method(&self, request: $request) -> lance::Result<$answer> {
                    self.rest.$method(request).await
                }
            )*
        }
    };
}

flight_then_rest! {
{
    fn namespace_id(&self) -> String {
        format!("flight+{}", self.rest.namespace_id())
    }

    async fn create_table(
        &self,
        request: CreateTableRequest,
        data: Bytes,
    ) -> lance::Result<CreateTableResponse> {
        // A chosen location (the context's location header) and per-table
        // storage options have no DoPut field: those creates go over REST.
        let chosen = request.context.as_ref().is_some_and(|c| !c.is_empty());
        if request.storage_options.is_none() && !chosen {
            let mut cmd = Map::new();
            set(&mut cmd, "op", "create");
            set(&mut cmd, "id", &request.id);
            set(&mut cmd, "mode", &request.mode);
            set(&mut cmd, "properties", &request.properties);
            if let Some(answer) = self.put(Value::Object(cmd), &data).await {
                let outcome = answer?;
                // A DoPut answers the version; where the table lives and
                // how to reach it, a Flight user asks describe for.
                let described = self
                    .rest
                    .describe_table(DescribeTableRequest {
                        id: request.id.clone(),
                        ..Default::default()
                    })
                    .await?;
                return Ok(CreateTableResponse {
                    version: version(outcome.version),
                    location: described.location,
                    storage_options: described.storage_options,
                    properties: described.properties,
                    ..Default::default()
                });
            }
        }
        self.rest.create_table(request, data).await
    }

    async fn insert_into_table(
        &self,
        request: InsertIntoTableRequest,
        data: Bytes,
    ) -> lance::Result<InsertIntoTableResponse> {
        let mut cmd = Map::new();
        set(&mut cmd, "op", "insert");
        set(&mut cmd, "id", &request.id);
        set(&mut cmd, "branch", &request.branch);
        set(&mut cmd, "mode", &request.mode);
        match self.put(Value::Object(cmd), &data).await {
            Some(answer) => {
                let outcome = answer?;
                Ok(InsertIntoTableResponse {
                    version: version(outcome.version),
                    num_inserted_rows: Some(outcome.num_rows as i64),
                    ..Default::default()
                })
            }
            None => self.rest.insert_into_table(request, data).await,
        }
    }

    async fn merge_insert_into_table(
        &self,
        request: MergeInsertIntoTableRequest,
        data: Bytes,
    ) -> lance::Result<MergeInsertIntoTableResponse> {
        let mut cmd = match serde_json::to_value(&request).expect("JSON") {
            Value::Object(m) => m,
            _ => unreachable!("a request is an object"),
        };
        cmd.remove("identity");
        cmd.remove("context");
        set(&mut cmd, "op", "merge_insert");
        match self.put(Value::Object(cmd), &data).await {
            Some(answer) => {
                let outcome = answer?;
                let merged = outcome.merged.expect("a merge-insert answers its counts");
                Ok(MergeInsertIntoTableResponse {
                    version: version(outcome.version),
                    num_updated_rows: Some(merged.num_updated_rows as i64),
                    num_inserted_rows: Some(merged.num_inserted_rows as i64),
                    num_deleted_rows: Some(merged.num_deleted_rows as i64),
                    ..Default::default()
                })
            }
            None => self.rest.merge_insert_into_table(request, data).await,
        }
    }

    async fn query_table(&self, request: QueryTableRequest) -> lance::Result<Bytes> {
        let Some(ticket) = ticket(&request) else {
            return self.rest.query_table(request).await;
        };
        let ticket = Ticket::new(Bytes::from(ticket.to_string()));
        let answer = async {
            let mut stream = self.client().do_get(ticket).await?;
            let mut batches = Vec::new();
            while let Some(batch) = stream.try_next().await? {
                batches.push(batch);
            }
            let schema = stream
                .schema()
                .cloned()
                .ok_or_else(|| FlightError::protocol("DoGet answered no schema"))?;
            Ok(ipc_file(&schema, &batches))
        };
        answer.await.map_err(lance_error)
    }

    async fn count_table_rows(&self, request: CountTableRowsRequest) -> lance::Result<i64> {
        let mut body = serde_json::to_value(&request).expect("JSON");
        if let Some(m) = body.as_object_mut() {
            m.remove("identity");
            m.remove("context");
        }
        let action = Action::new("count_rows", body.to_string());
        let answer = async {
            let results: Vec<Bytes> = self.client().do_action(action).await?.try_collect().await?;
            let first = results
                .first()
                .ok_or_else(|| FlightError::protocol("DoAction answered nothing"))?;
            std::str::from_utf8(first)
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| FlightError::protocol("count_rows answered no number"))
        };
        answer.await.map_err(lance_error)
    }
}
        list_namespaces(ListNamespacesRequest) -> ListNamespacesResponse;
        describe_namespace(DescribeNamespaceRequest) -> DescribeNamespaceResponse;
        create_namespace(CreateNamespaceRequest) -> CreateNamespaceResponse;
        drop_namespace(DropNamespaceRequest) -> DropNamespaceResponse;
        namespace_exists(NamespaceExistsRequest) -> ();
        list_tables(ListTablesRequest) -> ListTablesResponse;
        describe_table(DescribeTableRequest) -> DescribeTableResponse;
        register_table(RegisterTableRequest) -> RegisterTableResponse;
        table_exists(TableExistsRequest) -> ();
        drop_table(DropTableRequest) -> DropTableResponse;
        deregister_table(DeregisterTableRequest) -> DeregisterTableResponse;
        declare_table(DeclareTableRequest) -> DeclareTableResponse;
        update_table(UpdateTableRequest) -> UpdateTableResponse;
        delete_from_table(DeleteFromTableRequest) -> DeleteFromTableResponse;
        create_table_index(CreateTableIndexRequest) -> CreateTableIndexResponse;
        list_table_indices(ListTableIndicesRequest) -> ListTableIndicesResponse;
        describe_table_index_stats(DescribeTableIndexStatsRequest) -> DescribeTableIndexStatsResponse;
        describe_transaction(DescribeTransactionRequest) -> DescribeTransactionResponse;
        alter_transaction(AlterTransactionRequest) -> AlterTransactionResponse;
        create_table_scalar_index(CreateTableIndexRequest) -> CreateTableScalarIndexResponse;
        drop_table_index(DropTableIndexRequest) -> DropTableIndexResponse;
        list_all_tables(ListTablesRequest) -> ListTablesResponse;
        restore_table(RestoreTableRequest) -> RestoreTableResponse;
        rename_table(RenameTableRequest) -> RenameTableResponse;
        list_table_versions(ListTableVersionsRequest) -> ListTableVersionsResponse;
        create_table_version(CreateTableVersionRequest) -> CreateTableVersionResponse;
        describe_table_version(DescribeTableVersionRequest) -> DescribeTableVersionResponse;
        batch_delete_table_versions(BatchDeleteTableVersionsRequest) -> BatchDeleteTableVersionsResponse;
        batch_create_table_versions(BatchCreateTableVersionsRequest) -> BatchCreateTableVersionsResponse;
        batch_commit_tables(BatchCommitTablesRequest) -> BatchCommitTablesResponse;
        update_table_schema_metadata(UpdateTableSchemaMetadataRequest) -> UpdateTableSchemaMetadataResponse;
        update_field_metadata(UpdateFieldMetadataRequest) -> UpdateFieldMetadataResponse;
        get_table_stats(GetTableStatsRequest) -> GetTableStatsResponse;
        explain_table_query_plan(ExplainTableQueryPlanRequest) -> String;
        analyze_table_query_plan(AnalyzeTableQueryPlanRequest) -> String;
        alter_table_add_columns(AlterTableAddColumnsRequest) -> AlterTableAddColumnsResponse;
        alter_table_alter_columns(AlterTableAlterColumnsRequest) -> AlterTableAlterColumnsResponse;
        alter_table_drop_columns(AlterTableDropColumnsRequest) -> AlterTableDropColumnsResponse;
        alter_table_backfill_columns(AlterTableBackfillColumnsRequest) -> AlterTableBackfillColumnsResponse;
        refresh_materialized_view(RefreshMaterializedViewRequest) -> RefreshMaterializedViewResponse;
        create_materialized_view(CreateMaterializedViewRequest) -> CreateMaterializedViewResponse;
        list_table_tags(ListTableTagsRequest) -> ListTableTagsResponse;
        get_table_tag_version(GetTableTagVersionRequest) -> GetTableTagVersionResponse;
        create_table_tag(CreateTableTagRequest) -> CreateTableTagResponse;
        delete_table_tag(DeleteTableTagRequest) -> DeleteTableTagResponse;
        update_table_tag(UpdateTableTagRequest) -> UpdateTableTagResponse;
        create_table_branch(CreateTableBranchRequest) -> CreateTableBranchResponse;
        list_table_branches(ListTableBranchesRequest) -> ListTableBranchesResponse;
        delete_table_branch(DeleteTableBranchRequest) -> DeleteTableBranchResponse;
}
