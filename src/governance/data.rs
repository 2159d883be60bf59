//! The data operations whose bodies stream (the REST gateway's create,
//! insert and query): the same guards as every spec method (`spec.rs`),
//! around the core's streamed calls, so an Arrow body flows into the
//! writer, and an answer out of the scan, without being held whole.

use crate::api::op;
use lance_namespace::models::{
    CreateTableRequest, CreateTableResponse, InsertIntoTableRequest, InsertIntoTableResponse,
    QueryTableRequest,
};

use super::router::Governance;
use crate::core::rows::{Chunks, Rows};
use crate::error::CatalogResult;

impl Governance {
    /// CreateTable with its Arrow body as it arrives.
    pub async fn create_table_streamed(
        &self,
        mut request: CreateTableRequest,
        body: Chunks,
    ) -> CatalogResult<CreateTableResponse> {
        let (route, access) = self.admit(op::CreateTable.action, &mut request).await?;
        let rows = Rows::decode(body, op::CreateTable.action).await?;
        let answer = route.catalog.create_table_op(request, rows).await?;
        self.after(&access).await;
        Ok(answer)
    }

    /// InsertIntoTable with its Arrow body as it arrives.
    pub async fn insert_streamed(
        &self,
        mut request: InsertIntoTableRequest,
        body: Chunks,
    ) -> CatalogResult<InsertIntoTableResponse> {
        let (route, access) = self.admit(op::InsertIntoTable.action, &mut request).await?;
        let rows = Rows::decode(body, op::InsertIntoTable.action).await?;
        let answer = route.catalog.insert_op(request, rows).await?;
        self.after(&access).await;
        Ok(answer)
    }

    /// QueryTable's Arrow IPC file, chunk by chunk as the scan runs.
    pub async fn query_streamed(&self, mut request: QueryTableRequest) -> CatalogResult<Chunks> {
        let (route, access) = self.admit(op::QueryTable.action, &mut request).await?;
        let answer = route.catalog.query_answer(request).await?;
        self.after(&access).await;
        Ok(answer)
    }
}
