//! A materialized view's query, planned: its tables resolved to catalog
//! tables and registered in a DataFusion context, with the versions read.
//! A refresh plans when asked (so a broken query fails the request) and
//! again when it runs.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::Schema;
use datafusion::prelude::SessionContext;
use lance::datafusion::LanceTableProvider;

use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// A planned view query: a DataFusion context with the referenced catalog
/// tables registered, and the versions it read them at.
pub(in crate::core) struct Planned {
    pub ctx: SessionContext,
    pub schema: Schema,
    pub source_versions: HashMap<String, u64>,
}

impl Catalog {
    /// Resolve the query's tables to catalog tables and plan it.
    pub(in crate::core) async fn plan_view_query(&self, sql: &str) -> CatalogResult<Planned> {
        let ctx = SessionContext::new();
        let state = ctx.state();
        let dialect = state.config().options().sql_parser.dialect;
        let statement = state
            .sql_to_statement(sql, &dialect)
            .map_err(|e| CatalogError::invalid(format!("source_query is not valid SQL: {e}")))?;
        let references = state
            .resolve_table_references(&statement)
            .map_err(|e| CatalogError::invalid(format!("source_query: {e}")))?;
        let mut source_versions = HashMap::new();
        for reference in references {
            let name = reference.table().to_string();
            let id = crate::core::checks::table_id(&Some(crate::core::checks::manifest_id(&name)))
                .map_err(|e| {
                    CatalogError::invalid(format!("source_query names {name:?}: {}", e.message))
                })?;
            let ds = self.open_table(&id, None).await.map_err(|e| {
                if e.code == Code::TABLE_NOT_FOUND {
                    CatalogError::new(
                        Code::TABLE_NOT_FOUND,
                        format!(
                            "source_query reads {name:?}, which is not a table of this catalog"
                        ),
                    )
                } else {
                    e
                }
            })?;
            source_versions.insert(name.clone(), ds.version().version);
            let provider = LanceTableProvider::new(Arc::new(ds), false, false);
            ctx.register_table(reference, Arc::new(provider))
                .map_err(|e| CatalogError::internal(format!("cannot register {name}: {e}")))?;
        }
        let df = ctx
            .sql(sql)
            .await
            .map_err(|e| CatalogError::invalid(format!("source_query cannot run: {e}")))?;
        let schema = df.schema().as_arrow().clone();
        Ok(Planned {
            ctx,
            schema,
            source_versions,
        })
    }
}
