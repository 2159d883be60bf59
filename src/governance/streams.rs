//! The data operations whose bodies stream (the REST gateway's create,
//! insert and query, Arrow Flight's scans and writes): the same admit and
//! finish steps as every spec method (`spec.rs`), around the core's
//! streamed calls, so an Arrow body flows into the writer, and an answer
//! out of the scan, without being held whole. No transport reaches a
//! warehouse's catalog but through here.

use super::guard::entry::Admitted;
use super::guard::request::Named;
use lance_namespace::models::{
    CreateTableRequest, CreateTableResponse, InsertIntoTableRequest, InsertIntoTableResponse,
    QueryTableRequest,
};

use super::Governance;
use crate::api::op;
use crate::auth::Credentials;
use crate::core::data::ipc_out::Framing;
use crate::core::data::rows::{Chunks, Rows};
use crate::core::{Scan, ScanSpec, WriteOp, WriteOutcome};
use crate::error::CatalogResult;

impl Governance {
    /// CreateTable with its Arrow body as it arrives.
    pub async fn create_table_streamed(
        &self,
        request: CreateTableRequest,
        body: Chunks,
    ) -> CatalogResult<CreateTableResponse> {
        self.call_vending(
            &op::CreateTable,
            request,
            async move |a: &mut Admitted, request| {
                let rows = Rows::decode(body, op::CreateTable.action).await?;
                a.route.catalog.create_table_op(request, rows).await
            },
        )
        .await
    }

    /// InsertIntoTable with its Arrow body as it arrives.
    pub async fn insert_streamed(
        &self,
        request: InsertIntoTableRequest,
        body: Chunks,
    ) -> CatalogResult<InsertIntoTableResponse> {
        self.call(
            &op::InsertIntoTable,
            request,
            async move |a: &mut Admitted, request| {
                let rows = Rows::decode(body, op::InsertIntoTable.action).await?;
                a.route.catalog.insert_op(request, rows).await
            },
        )
        .await
    }

    /// QueryTable's answer, framed as asked (REST: an IPC file; gRPC: an
    /// IPC stream), chunk by chunk as the scan runs.
    pub async fn query_streamed(
        &self,
        request: QueryTableRequest,
        framing: Framing,
    ) -> CatalogResult<Chunks> {
        self.call(
            &op::QueryTable,
            request,
            async |a: &mut Admitted, request| a.route.catalog.query_answer(request, framing).await,
        )
        .await
    }

    /// A scan of one table (Flight's DoGet), as the caller holding
    /// `credentials`.
    pub async fn scan_streamed(
        &self,
        spec: &ScanSpec,
        credentials: &Credentials,
    ) -> CatalogResult<Scan> {
        let named = Named::by(credentials, &spec.id);
        self.call(&op::QueryTable, named, async |a: &mut Admitted, _| {
            a.route.catalog.scan(spec).await
        })
        .await
    }

    /// What a scan of one table would stream, from its metadata alone
    /// (Flight's GetFlightInfo, GetSchema, ListFlights): a schema and a row
    /// count are what describing the table tells, so they are admitted as
    /// DescribeTable (read_metadata), not as a read of the rows, and no
    /// scan is started.
    pub async fn scan_outline(
        &self,
        spec: &ScanSpec,
        credentials: &Credentials,
    ) -> CatalogResult<(arrow_schema::SchemaRef, Option<u64>)> {
        let named = Named::by(credentials, &spec.id);
        self.call(&op::DescribeTable, named, async |a: &mut Admitted, _| {
            a.route.catalog.scan_outline(spec).await
        })
        .await
    }

    /// A stream of batches written to one table as one commit (Flight's
    /// DoPut): a create (or create-or-append) is a create door, its creator
    /// owning what it made, as for every transport.
    pub async fn write_streamed(
        &self,
        id: &[String],
        branch: Option<String>,
        write: WriteOp,
        schema: arrow_schema::SchemaRef,
        batches: futures::stream::BoxStream<'static, CatalogResult<arrow_array::RecordBatch>>,
        credentials: &Credentials,
    ) -> CatalogResult<WriteOutcome> {
        let door = match &write {
            WriteOp::Create { .. } | WriteOp::CreateOrAppend => &op::CreateTable,
            WriteOp::Insert { .. } => &op::InsertIntoTable,
            WriteOp::MergeInsert(_) => &op::MergeInsertIntoTable,
        };
        let named = Named::by(credentials, id).or_existing();
        self.call(door, named, async move |a: &mut Admitted, _| {
            let made = a.access.new_object();
            a.route
                .catalog
                .write_stream(id, branch, write, schema, batches, made)
                .await
        })
        .await
    }
}
