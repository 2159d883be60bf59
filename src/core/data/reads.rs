//! Counting rows and query plans: reads the engine serves, with the
//! catalog's checks first (SQL text, the table id) and its own path on a
//! branch, which the engine ignores.

use lance_namespace::models::{
    AnalyzeTableQueryPlanRequest, CountTableRowsRequest, ExplainTableQueryPlanRequest,
    QueryTableRequest,
};
use lance_namespace::LanceNamespace;

use crate::core::checks::table_id;
use crate::core::settle::{checked, Names};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn count_rows_op(
        &self,
        mut request: CountTableRowsRequest,
    ) -> CatalogResult<i64> {
        crate::core::data::sql_text::check_request(&request)?;
        let id = table_id(&request.id)?;
        if crate::core::branch::open::branch_of(&request.branch).is_none() {
            request.version = self.pinned_version(&id, request.version).await?;
        }
        let predicate = request.predicate.clone();
        match checked(
            Ok(id.clone()),
            Names::Table,
            self.inner().await?.count_table_rows(request),
        )
        .await
        {
            Err(e) if e.code == Code::INTERNAL => {
                // The engine reports a predicate that does not parse as
                // Internal; say what is wrong with it instead.
                if let Some(p) = predicate.as_deref().filter(|p| !p.trim().is_empty()) {
                    self.check_predicate(&id, p).await?;
                }
                Err(e)
            }
            other => other,
        }
    }

    pub(crate) async fn explain_plan_op(
        &self,
        mut request: ExplainTableQueryPlanRequest,
    ) -> CatalogResult<String> {
        crate::core::data::sql_text::check_request(&request)?;
        if crate::core::branch::open::branch_of(&request.branch).is_none() {
            let id = table_id(&request.id)?;
            request.query.version = self.pinned_version(&id, request.query.version).await?;
        }
        if crate::core::branch::open::branch_of(&request.branch).is_some() {
            let mut query = (*request.query).clone();
            query.id = request.id.clone();
            query.branch = request.branch.clone();
            return self
                .query_plan(&query, false, request.verbose.unwrap_or(false))
                .await;
        }
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.explain_table_query_plan(request),
        )
        .await
    }

    pub(crate) async fn analyze_plan_op(
        &self,
        mut request: AnalyzeTableQueryPlanRequest,
    ) -> CatalogResult<String> {
        crate::core::data::sql_text::check_request(&request)?;
        if crate::core::branch::open::branch_of(&request.branch).is_none() {
            let id = table_id(&request.id)?;
            request.version = self.pinned_version(&id, request.version).await?;
        }
        if crate::core::branch::open::branch_of(&request.branch).is_some() {
            // The analyse request carries the query's fields inline.
            let query: QueryTableRequest = serde_json::to_value(&request)
                .and_then(serde_json::from_value)
                .map_err(|e| CatalogError::invalid(format!("the query to analyse: {e}")))?;
            return self.query_plan(&query, true, false).await;
        }
        checked(
            table_id(&request.id),
            Names::Table,
            self.inner().await?.analyze_table_query_plan(request),
        )
        .await
    }
}
