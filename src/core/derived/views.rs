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
use lance_namespace::models::create_materialized_view_request::Kind;
use lance_namespace::models::{
    CreateMaterializedViewRequest, CreateMaterializedViewResponse, CreateTableRequest,
    RefreshMaterializedViewRequest, RefreshMaterializedViewResponse,
};
use lance_namespace::LanceNamespace;

use crate::core::body::{encode_stream, Stream};
use crate::core::checks::{display_id, table_id};
use crate::core::derived::jobs::JobSpec;
use crate::core::maintenance::TaskKind;
use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

use crate::core::reserved::{
    MV_KIND as KIND, MV_SOURCE_QUERY as SOURCE_QUERY, MV_UDTF_SPEC as UDTF_SPEC,
};

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Query => "query",
        Kind::Udtf => "udtf",
        Kind::Chunker => "chunker",
    }
}

impl Catalog {
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
        let real = crate::core::object_ids::new_object_id(req.context.as_ref());
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
        self.plan_view_query(sql).await?;
        let spec = JobSpec {
            kind: TaskKind::Refresh,
            table_id: self.table_real_id(id).await?,
            location: self.table_location(id).await?,
            table: id.to_vec(),
            column: None,
            params: serde_json::Map::from_iter([("source_query".into(), sql.into())]),
        };
        self.jobs.start(self, spec).await
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
