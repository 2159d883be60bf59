//! A job's work in this process: a column backfill or a view refresh, as
//! the in-process executor runs it (`maintenance/executor.rs`). The job
//! API checks the request first (`computed.rs`, `views.rs`), with the
//! same builders, so a bad request fails before a job exists.

use std::collections::HashMap;
use std::sync::Arc;

use lance::dataset::{InsertBuilder, UpdateBuilder, UpdateJob, WriteMode, WriteParams};
use lance::Dataset;
use serde_json::{json, Map, Value};

use crate::core::maintenance::TaskKind;
use crate::core::reserved::{MV_LAST_REFRESH, MV_SOURCE_VERSIONS};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult};

/// A backfill's parameters, as its job records them.
struct BackfillParams<'a>(pub &'a Map<String, Value>);

impl BackfillParams<'_> {
    fn text(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    }
    fn column(&self) -> &str {
        self.text("column").unwrap_or_default()
    }
    fn expression(&self) -> &str {
        self.text("expression").unwrap_or_default()
    }
    fn filter(&self) -> Option<&str> {
        self.text("where")
    }
    fn branch(&self) -> Option<&str> {
        self.text("branch")
    }
    fn read_version(&self) -> Option<u64> {
        self.0.get("read_version").and_then(Value::as_u64)
    }
}

/// The update a backfill commits: `column` set to its expression on the
/// rows `filter` keeps.
pub(in crate::core) fn backfill_update(
    ds: Dataset,
    column: &str,
    expression: &str,
    filter: Option<&str>,
) -> CatalogResult<UpdateJob> {
    let mut builder = UpdateBuilder::new(Arc::new(ds)).set(column, expression)?;
    if let Some(w) = filter {
        builder = builder.update_where(w)?;
    }
    Ok(builder.build()?)
}

impl Catalog {
    /// Run job `kind` on table `table` (recorded at `location`).
    pub(in crate::core) async fn run_job(
        &self,
        table: &[String],
        location: &str,
        kind: TaskKind,
        params: &Map<String, Value>,
    ) -> CatalogResult<Map<String, Value>> {
        match kind {
            TaskKind::Backfill => self.run_backfill(table, location, params).await,
            TaskKind::Refresh => self.run_refresh(table, location, params).await,
            task => Err(CatalogError::internal(format!(
                "{} is a task, not a job",
                task.name()
            ))),
        }
    }

    async fn run_backfill(
        &self,
        table: &[String],
        location: &str,
        params: &Map<String, Value>,
    ) -> CatalogResult<Map<String, Value>> {
        let p = BackfillParams(params);
        let mut ds = self.open_at(table, location, p.branch()).await?;
        if let Some(v) = p.read_version() {
            ds = self.checkout(ds, v, table).await?;
        }
        let update = backfill_update(ds, p.column(), p.expression(), p.filter())?;
        let result = update.execute().await?;
        Ok(Map::from_iter([
            ("rows_written".into(), json!(result.rows_updated)),
            (
                "version".into(),
                json!(result.new_dataset.version().version),
            ),
        ]))
    }

    /// Re-run the view's query and commit its result as the view's new
    /// version, recording the source versions it read.
    async fn run_refresh(
        &self,
        view: &[String],
        location: &str,
        params: &Map<String, Value>,
    ) -> CatalogResult<Map<String, Value>> {
        let sql = params
            .get("source_query")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let planned = self.plan_view_query(sql).await?;
        let target = Arc::new(self.open_at(view, location, None).await?);
        let df = planned
            .ctx
            .sql(sql)
            .await
            .map_err(|e| CatalogError::invalid(format!("source_query cannot run: {e}")))?;
        let stream = df
            .execute_stream()
            .await
            .map_err(|e| CatalogError::invalid(format!("source_query failed: {e}")))?;
        let write = WriteParams {
            mode: WriteMode::Overwrite,
            session: Some(self.session.clone()),
            ..Default::default()
        };
        let written = InsertBuilder::new(target)
            .with_params(&write)
            .execute_stream(stream)
            .await?;
        let rows = written.count_rows(None).await? as u64;
        let version = written.version().version;
        let versions = serde_json::to_string(&planned.source_versions).unwrap_or_default();
        let last = json!({
            "version": version,
            "rows": rows,
            "at_ms": crate::records::now_ms(),
        })
        .to_string();
        self.update_table_properties(
            view,
            HashMap::from([
                (MV_SOURCE_VERSIONS.to_string(), versions.clone()),
                (MV_LAST_REFRESH.to_string(), last),
            ]),
        )
        .await?;
        Ok(Map::from_iter([
            ("rows_written".into(), json!(rows)),
            ("version".into(), json!(version)),
            (MV_SOURCE_VERSIONS.into(), json!(versions)),
        ]))
    }
}
