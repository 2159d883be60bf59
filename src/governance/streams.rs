//! The data operations whose bodies stream (the REST gateway's create,
//! insert and query, Arrow Flight's scans and writes): the same admit and
//! finish steps as every spec method (`spec.rs`), around the core's
//! streamed calls, so an Arrow body flows into the writer, and an answer
//! out of the scan, without being held whole. No transport reaches a
//! warehouse's catalog but through here.

use super::guard::request::Named;
use lance_namespace::models::{
    CreateTableRequest, CreateTableResponse, InsertIntoTableRequest, InsertIntoTableResponse,
    QueryTableRequest,
};

use super::Governance;
use crate::api::op;
use crate::auth::Credentials;
use crate::core::data::rows::{Chunks, Rows};
use crate::core::{Scan, ScanSpec, WriteOp, WriteOutcome};
use crate::error::CatalogResult;

impl Governance {
    /// CreateTable with its Arrow body as it arrives.
    pub async fn create_table_streamed(
        &self,
        mut request: CreateTableRequest,
        body: Chunks,
    ) -> CatalogResult<CreateTableResponse> {
        let (route, access) = self.admit(&op::CreateTable, &mut request).await?;
        let rows = Rows::decode(body, op::CreateTable.action).await?;
        let mut answer = route.catalog.create_table_op(request, rows).await?;
        self.finish(&access).await;
        self.hand_credentials(&route, &access, false, &mut answer)
            .await?;
        Ok(answer)
    }

    /// InsertIntoTable with its Arrow body as it arrives.
    pub async fn insert_streamed(
        &self,
        mut request: InsertIntoTableRequest,
        body: Chunks,
    ) -> CatalogResult<InsertIntoTableResponse> {
        let (route, access) = self.admit(&op::InsertIntoTable, &mut request).await?;
        let rows = Rows::decode(body, op::InsertIntoTable.action).await?;
        let answer = route.catalog.insert_op(request, rows).await?;
        self.finish(&access).await;
        Ok(answer)
    }

    /// QueryTable's Arrow IPC file, chunk by chunk as the scan runs.
    pub async fn query_streamed(&self, mut request: QueryTableRequest) -> CatalogResult<Chunks> {
        let (route, access) = self.admit(&op::QueryTable, &mut request).await?;
        let answer = route.catalog.query_answer(request).await?;
        self.finish(&access).await;
        Ok(answer)
    }

    /// A scan of one table (Flight's DoGet), as the caller holding
    /// `credentials`.
    pub async fn scan_streamed(
        &self,
        spec: &ScanSpec,
        credentials: &Credentials,
    ) -> CatalogResult<Scan> {
        let (route, access) = self
            .admit(&op::QueryTable, &mut Named::by(credentials, &spec.id))
            .await?;
        let scan = route.catalog.scan(spec).await?;
        self.finish(&access).await;
        Ok(scan)
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
        let (route, access) = self
            .admit(&op::DescribeTable, &mut Named::by(credentials, &spec.id))
            .await?;
        let outline = route.catalog.scan_outline(spec).await?;
        self.finish(&access).await;
        Ok(outline)
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
        let (route, access) = self
            .admit(door, &mut Named::by(credentials, id).or_existing())
            .await?;
        let outcome = route
            .catalog
            .write_stream(id, branch, write, schema, batches, access.new_object())
            .await?;
        self.finish(&access).await;
        Ok(outcome)
    }
}
