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

use std::sync::Arc;

use futures::stream::BoxStream;
use futures::StreamExt;

use super::guard::request::SpecRequest;
use super::once::{tapped, Body, StreamedBody, Tap};
use super::Governance;
use crate::api::call::Call;
use crate::api::op;
use crate::auth::Credentials;
use crate::core::data::ipc_out::Framing;
use crate::core::data::rows::{Chunks, Rows};
use crate::core::{Scan, ScanSpec, WriteOp, WriteOutcome};
use crate::error::{CatalogError, CatalogResult};

impl Governance {
    /// CreateTable with its Arrow body as it arrives.
    pub async fn create_table_streamed(
        &self,
        request: CreateTableRequest,
        body: Chunks,
    ) -> CatalogResult<CreateTableResponse> {
        let (digest, body) = streamed_body(&request, body);
        self.call_vending(
            &op::CreateTable,
            request,
            digest,
            async move |a: &mut Admitted, request| {
                let rows = Rows::decode(unread(&body)?, op::CreateTable.action).await?;
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
        let (digest, body) = streamed_body(&request, body);
        self.call_kept(
            &op::InsertIntoTable,
            request,
            digest,
            async move |a: &mut Admitted, request| {
                let rows = Rows::decode(unread(&body)?, op::InsertIntoTable.action).await?;
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
    /// owning what it made, as for every transport. `asked` is the
    /// request as its caller sent it (the descriptor's command), which a
    /// retry under the call's `Idempotency-Key` must send again, with the
    /// same batches (`body`'s tap digests them).
    pub async fn write_streamed(
        &self,
        put: Put,
        body: Arc<StreamedBody<Batches>>,
        call: &Call,
    ) -> CatalogResult<WriteOutcome> {
        let Put {
            id,
            branch,
            write,
            schema,
            asked,
        } = put;
        let door = match &write {
            WriteOp::Create { .. } | WriteOp::CreateOrAppend => &op::CreateTable,
            WriteOp::Insert { .. } => &op::InsertIntoTable,
            WriteOp::MergeInsert(_) => &op::MergeInsertIntoTable,
        };
        let named = Named::called(call, &id)
            .or_existing()
            .keyed(call.idempotency_key.as_deref(), asked);
        let digest = match call.idempotency_key {
            Some(_) => Body::Streamed(body.clone()),
            None => Body::None,
        };
        self.call_kept(door, named, digest, async move |a: &mut Admitted, _| {
            let made = a.access.new_object();
            a.route
                .catalog
                .write_stream(&id, branch, write, schema, unread(&body)?, made)
                .await
        })
        .await
    }
}

/// Batches as Flight's DoPut decodes them.
pub type Batches = BoxStream<'static, CatalogResult<arrow_array::RecordBatch>>;

/// What a Flight DoPut writes, as its descriptor says.
#[derive(Debug)]
pub struct Put {
    pub id: Vec<String>,
    pub branch: Option<String>,
    pub write: WriteOp,
    pub schema: arrow_schema::SchemaRef,
    /// The descriptor's command as sent: what a keyed retry must repeat.
    pub asked: serde_json::Value,
}

/// A streamed request body, digested as the write reads it when its
/// request is keyed (a retry's body is compared with it).
fn streamed_body(request: &dyn SpecRequest, body: Chunks) -> (Body, Arc<StreamedBody<Chunks>>) {
    let tap = Arc::new(Tap::default());
    match request.idempotency_key() {
        Some(_) => {
            let body = StreamedBody::new(tap.clone(), tapped(tap, body).boxed());
            (Body::Streamed(body.clone()), body)
        }
        None => (Body::None, StreamedBody::new(tap, body)),
    }
}

/// The body for the writer: read once.
fn unread<S>(body: &StreamedBody<S>) -> CatalogResult<S> {
    body.take()
        .ok_or_else(|| CatalogError::internal("the request body was read already"))
}
