//! Computed and virtual columns, and their asynchronous backfill.
//!
//! A `computed` column is bound to a SQL expression: the column is added
//! all-null and the expression is kept in its field metadata under
//! [`COMPUTED_KEY`]. A backfill job later evaluates the binding for the
//! existing rows (those matching `where`, reading `read_version` when given)
//! and commits the values. A `virtual_column` is bound to a Python UDF in a
//! container image; its definition is kept under [`VIRTUAL_KEY`], but this
//! server cannot run it, so its backfill is refused with code 0.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use lance::dataset::NewColumnTransform;
use lance::Dataset;
use lance_namespace::models::{
    AlterTableAddColumnsRequest, AlterTableAddColumnsResponse, AlterTableBackfillColumnsRequest,
    AlterTableBackfillColumnsResponse, JsonArrowDataType,
};
use serde_json::{json, Map};

use crate::core::branch::open::branch_of;
use crate::core::checks::{display_id, table_id};
use crate::core::derived::jobs::JobSpec;
use crate::core::derived::run::backfill_update;
use crate::core::maintenance::TaskKind;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

use crate::core::reserved::{COMPUTED_KEY, VIRTUAL_KEY};

impl Catalog {
    pub(crate) async fn add_columns_op(
        &self,
        req: AlterTableAddColumnsRequest,
    ) -> CatalogResult<AlterTableAddColumnsResponse> {
        let id = table_id(&req.id)?;
        if req.new_columns.is_empty() {
            return Err(CatalogError::invalid(
                "add_columns needs at least one new column",
            ));
        }
        // Plain expressions are added here too, not by the engine: the
        // names are checked first, the branch is honoured, and Lance's
        // verdict on an expression keeps its code.
        let mut ds = self.open_table(&id, branch_of(&req.branch)).await?;
        let mut expressions = Vec::new();
        let mut null_fields = Vec::new();
        let mut names = std::collections::HashSet::new();
        let mut new_name = |name: &str| -> CatalogResult<()> {
            if ds.schema().field(name).is_some() || !names.insert(name.to_string()) {
                return Err(CatalogError::invalid(format!(
                    "table {} already has, or is given twice, a column {name:?}",
                    display_id(&id)
                )));
            }
            Ok(())
        };
        for entry in &req.new_columns {
            if entry.name.trim().is_empty() {
                return Err(CatalogError::invalid("a new column needs a name"));
            }
            if entry.virtual_column.as_ref().is_none_or(|v| v.is_none()) {
                new_name(&entry.name)?;
            }
            let expression = entry.expression.clone().flatten();
            let computed = entry.computed.clone().flatten();
            let virtual_column = entry.virtual_column.clone().flatten();
            match (expression, computed, virtual_column) {
                (Some(expr), None, None) => expressions.push((entry.name.clone(), expr)),
                (None, Some(sql), None) => {
                    let data_type = expression_type(&ds, &entry.name, &sql).await?;
                    let meta = HashMap::from([(COMPUTED_KEY.to_string(), sql)]);
                    null_fields.push(Field::new(&entry.name, data_type, true).with_metadata(meta));
                }
                (None, None, Some(v)) => {
                    let definition = serde_json::to_string(&v).map_err(|e| {
                        CatalogError::internal(format!("cannot encode the UDF definition: {e}"))
                    })?;
                    if v.outputs.is_empty() {
                        return Err(CatalogError::invalid(format!(
                            "virtual column {:?} declares no outputs",
                            entry.name
                        )));
                    }
                    for out in &v.outputs {
                        new_name(&out.column)?;
                        let data_type = json_type(&out.data_type)?;
                        let mut meta = v.field_metadata.clone().unwrap_or_default();
                        meta.insert(VIRTUAL_KEY.to_string(), definition.clone());
                        null_fields.push(Field::new(&out.column, data_type, true).with_metadata(meta));
                    }
                }
                _ => {
                    return Err(CatalogError::invalid(format!(
                        "new column {:?} must have exactly one of expression, computed or virtual_column",
                        entry.name
                    )))
                }
            }
        }
        if !expressions.is_empty() {
            ds.add_columns(NewColumnTransform::SqlExpressions(expressions), None, None)
                .await?;
        }
        if !null_fields.is_empty() {
            let schema = Arc::new(Schema::new(null_fields));
            ds.add_columns(NewColumnTransform::AllNulls(schema), None, None)
                .await?;
        }
        Ok(AlterTableAddColumnsResponse {
            version: ds.version().version as i64,
            ..Default::default()
        })
    }

    pub(crate) async fn backfill_op(
        &self,
        req: AlterTableBackfillColumnsRequest,
    ) -> CatalogResult<AlterTableBackfillColumnsResponse> {
        let id = table_id(&req.id)?;
        let column = req.column.trim().to_string();
        // The table is resolved once: the job writes the very table
        // checked here, wherever its name points meanwhile.
        let location = self.table_location(&id).await?;
        let mut ds = self.open_at(&id, &location, branch_of(&req.branch)).await?;
        let table_id = self.table_real_id(&id).await?;
        let field = ds.schema().field(&column).ok_or_else(|| {
            CatalogError::new(
                Code::TABLE_COLUMN_NOT_FOUND,
                format!("table {} has no column {column:?}", display_id(&id)),
            )
        })?;
        if let Some(def) = field.metadata.get(VIRTUAL_KEY) {
            let udf: serde_json::Value = serde_json::from_str(def).unwrap_or_default();
            return Err(CatalogError::unsupported(format!(
                "column {column:?} is bound to the Python UDF {} in image {}; this server has no UDF runner, so it cannot backfill it: run the backfill with an external UDF runner",
                udf["udf_name"], udf["image"]
            )));
        }
        let sql = field.metadata.get(COMPUTED_KEY).cloned().ok_or_else(|| {
            CatalogError::invalid(format!(
                "column {column:?} has no computed binding to backfill; add it with `computed`"
            ))
        })?;
        let read_version = req.read_version.flatten();
        if let Some(v) = read_version {
            ds = self.checkout(ds, v as u64, &id).await?;
        }
        let filter = req
            .r#where
            .clone()
            .flatten()
            .filter(|w| !w.trim().is_empty());
        // Everything that can be wrong with the request is checked here,
        // with the builder the job runs, before a job exists.
        backfill_update(ds, &column, &sql, filter.as_deref())?;
        let mut params = Map::new();
        params.insert("column".into(), json!(column));
        params.insert("expression".into(), json!(sql));
        if let Some(w) = filter {
            params.insert("where".into(), json!(w));
        }
        if let Some(v) = read_version {
            params.insert("read_version".into(), json!(v));
        }
        if let Some(b) = branch_of(&req.branch) {
            params.insert("branch".into(), json!(b));
        }
        let spec = JobSpec {
            kind: TaskKind::Backfill,
            table: id,
            table_id,
            location,
            column: Some(column),
            params,
        };
        let job_id = self.jobs.start(self, spec).await?;
        Ok(AlterTableBackfillColumnsResponse {
            job_id,
            ..Default::default()
        })
    }
}

/// The type a SQL expression yields over the table's columns.
async fn expression_type(ds: &Dataset, name: &str, sql: &str) -> CatalogResult<DataType> {
    let mut scan = ds.scan();
    scan.project_with_transform(&[(name, sql)]).map_err(|e| {
        CatalogError::invalid(format!(
            "computed column {name:?}: {sql:?} is not a valid expression over the table: {}",
            CatalogError::from_lance(&e).message
        ))
    })?;
    let schema = scan.schema().await?;
    Ok(schema.field(0).data_type().clone())
}

fn json_type(value: &serde_json::Value) -> CatalogResult<DataType> {
    let parsed: JsonArrowDataType = serde_json::from_value(value.clone()).map_err(|e| {
        CatalogError::invalid(format!("output data_type {value} is not a type: {e}"))
    })?;
    Ok(lance_namespace::schema::convert_json_arrow_type(&parsed)?)
}
