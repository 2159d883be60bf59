//! Materialized views: a table whose content is a stored query over other
//! tables of the catalog.
//!
//! For `kind = query`, `source_query` is SQL run by DataFusion over the Lance
//! tables; a table is named by its full id joined by `$`, in double quotes
//! (`SELECT id, x FROM "sales$orders" WHERE id > 1`). The definition lives in
//! the view's table properties (keys under `lance-catalog.mv.`); a refresh
//! re-runs the query as a job and commits the result as a new version of the
//! view, recording the source versions it read. UDTF and chunker views need
//! an external UDF runner: they are stored, and their refresh answers code 0.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::Schema;
use base64::Engine;
use datafusion::prelude::SessionContext;
use lance::datafusion::LanceTableProvider;
use lance::dataset::{InsertBuilder, WriteMode, WriteParams};
use lance_namespace::models::create_materialized_view_request::Kind;
use lance_namespace::models::{
    CreateMaterializedViewRequest, CreateMaterializedViewResponse, CreateTableRequest,
    RefreshMaterializedViewRequest, RefreshMaterializedViewResponse,
};
use lance_namespace::LanceNamespace;

use crate::core::checks::{display_id, table_id};
use crate::core::data::body::{encode_stream, Stream};
use crate::core::derived::jobs::JobOutcome;
use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

use crate::core::reserved::{
    MV_KIND as KIND, MV_LAST_REFRESH as LAST_REFRESH, MV_SOURCE_QUERY as SOURCE_QUERY,
    MV_SOURCE_VERSIONS as SOURCE_VERSIONS, MV_UDTF_SPEC as UDTF_SPEC,
};

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Query => "query",
        Kind::Udtf => "udtf",
        Kind::Chunker => "chunker",
    }
}

/// A planned view query: a DataFusion context with the referenced catalog
/// tables registered, and the versions it read them at.
struct Planned {
    ctx: SessionContext,
    schema: Schema,
    source_versions: HashMap<String, u64>,
}

impl Catalog {
    /// Resolve the query's tables to catalog tables and plan it.
    async fn plan_view_query(&self, sql: &str) -> CatalogResult<Planned> {
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

    pub(crate) async fn create_view_op(
        &self,
        req: CreateMaterializedViewRequest,
    ) -> CatalogResult<CreateMaterializedViewResponse> {
        let id = table_id(&req.id)?;
        self.require_parent(&id).await?;
        let declared = decode_output_schema(&req.output_schema)?;
        let mut properties = HashMap::from([(KIND.to_string(), kind_name(req.kind).to_string())]);
        let schema = match req.kind {
            Kind::Query => {
                if req.source_query.trim().is_empty() {
                    return Err(CatalogError::invalid("a query view needs a source_query"));
                }
                let planned = self.plan_view_query(&req.source_query).await?;
                if let Some(declared) = &declared {
                    let names = |s: &Schema| -> Vec<String> {
                        s.fields().iter().map(|f| f.name().clone()).collect()
                    };
                    if names(declared) != names(&planned.schema) {
                        return Err(CatalogError::new(
                            Code::SCHEMA_VALIDATION,
                            format!(
                                "output_schema has columns {:?} but source_query yields {:?}",
                                names(declared),
                                names(&planned.schema)
                            ),
                        ));
                    }
                }
                properties.insert(SOURCE_QUERY.to_string(), req.source_query.clone());
                planned.schema
            }
            Kind::Udtf | Kind::Chunker => {
                let spec = req.udtf_spec.clone().flatten();
                properties.insert(SOURCE_QUERY.to_string(), req.source_query.clone());
                properties.insert(
                    UDTF_SPEC.to_string(),
                    serde_json::to_string(&spec).unwrap_or_default(),
                );
                declared.ok_or_else(|| {
                    CatalogError::invalid(format!(
                        "a {} view needs output_schema (a base64 Arrow IPC schema)",
                        kind_name(req.kind)
                    ))
                })?
            }
        };
        let real = crate::core::identity::new_object_id(req.context.as_ref());
        properties.insert(crate::core::reserved::TABLE_ID.to_string(), real);
        let empty = Stream {
            schema: Arc::new(schema),
            batches: Vec::new(),
        };
        let created = engine(
            self.inner()
                .await?
                .create_table(
                    CreateTableRequest {
                        id: Some(id.clone()),
                        properties: Some(properties),
                        ..Default::default()
                    },
                    encode_stream(&empty)?,
                )
                .await,
        )?;
        let job_id = if req.kind == Kind::Query && req.with_no_data == Some(false) {
            Some(self.start_refresh(&id, &req.source_query).await?)
        } else {
            None
        };
        Ok(CreateMaterializedViewResponse {
            version: created.version.unwrap_or(1),
            job_id: Some(job_id),
            ..Default::default()
        })
    }

    pub(crate) async fn refresh_view_op(
        &self,
        req: RefreshMaterializedViewRequest,
    ) -> CatalogResult<RefreshMaterializedViewResponse> {
        let id = table_id(&req.id)?;
        let described = self.describe(&id, Default::default()).await?;
        let props = described.properties.unwrap_or_default();
        let kind = props.get(KIND).ok_or_else(|| {
            CatalogError::invalid(format!(
                "{} is a table, not a materialized view",
                display_id(&id)
            ))
        })?;
        if kind != "query" {
            return Err(CatalogError::unsupported(format!(
                "{} is a {kind} view: refreshing it runs a UDF, which needs an external UDF runner this server does not have",
                display_id(&id)
            )));
        }
        let sql = props.get(SOURCE_QUERY).cloned().unwrap_or_default();
        let job_id = self.start_refresh(&id, &sql).await?;
        Ok(RefreshMaterializedViewResponse {
            job_id,
            ..Default::default()
        })
    }

    /// Plan now (so a broken query fails the request), run as a job.
    async fn start_refresh(&self, id: &[String], sql: &str) -> CatalogResult<String> {
        let planned = self.plan_view_query(sql).await?;
        let view = Arc::new(self.open_table(id, None).await?);
        let catalog = self.clone();
        let (view_id, sql) = (id.to_vec(), sql.to_string());
        let work = async move {
            let df = planned
                .ctx
                .sql(&sql)
                .await
                .map_err(|e| CatalogError::invalid(format!("source_query cannot run: {e}")))?;
            let stream = df
                .execute_stream()
                .await
                .map_err(|e| CatalogError::invalid(format!("source_query failed: {e}")))?;
            let params = WriteParams {
                mode: WriteMode::Overwrite,
                session: Some(catalog.session.clone()),
                ..Default::default()
            };
            let written = InsertBuilder::new(view)
                .with_params(&params)
                .execute_stream(stream)
                .await?;
            let rows = written.count_rows(None).await? as u64;
            let version = written.version().version as i64;
            let versions = serde_json::to_string(&planned.source_versions).unwrap_or_default();
            let last = serde_json::json!({
                "version": version,
                "rows": rows,
                "at_ms": std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0),
            })
            .to_string();
            catalog
                .update_table_properties(
                    &view_id,
                    HashMap::from([
                        (SOURCE_VERSIONS.to_string(), versions.clone()),
                        (LAST_REFRESH.to_string(), last),
                    ]),
                )
                .await?;
            Ok(JobOutcome {
                rows_written: rows,
                version,
                details: HashMap::from([(SOURCE_VERSIONS.to_string(), versions)]),
            })
        };
        Ok(self.jobs.spawn("refresh", id.to_vec(), None, work).await)
    }
}

/// `output_schema`: base64 of an Arrow IPC stream carrying the schema.
fn decode_output_schema(encoded: &str) -> CatalogResult<Option<Schema>> {
    let encoded = encoded.trim();
    if encoded.is_empty() {
        return Ok(None);
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| CatalogError::invalid(format!("output_schema is not base64: {e}")))?;
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
        .map_err(|e| {
            CatalogError::invalid(format!(
                "output_schema is not a base64 Arrow IPC schema: {e}"
            ))
        })?;
    Ok(Some(reader.schema().as_ref().clone()))
}
