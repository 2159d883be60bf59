//! One match from operation name to the core call. Each arm only converts:
//! the request object into the model, the model answer into a reply.

use bytes::Bytes;
use lance_namespace::LanceNamespace;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::CatalogError;

/// What a successful operation answers.
pub enum Reply {
    /// A JSON value (an object for model answers; a bare integer or string
    /// for count and plan answers).
    Json(Value),
    /// An empty 200 (the exists operations).
    Empty,
    /// An Arrow IPC file (query).
    ArrowFile(Bytes),
}

fn model<T: DeserializeOwned>(obj: Map<String, Value>) -> Result<T, CatalogError> {
    serde_json::from_value(Value::Object(obj))
        .map_err(|e| CatalogError::invalid(format!("invalid request: {e}")))
}

fn json<T: Serialize>(v: T) -> Result<Reply, CatalogError> {
    serde_json::to_value(v)
        .map(Reply::Json)
        .map_err(|e| CatalogError::internal(format!("cannot render answer: {e}")))
}

/// Run operation `op` with its request object (and Arrow body, for the data
/// operations).
pub async fn dispatch(
    ns: &dyn LanceNamespace,
    op: &str,
    obj: Map<String, Value>,
    body: Bytes,
) -> Result<Reply, CatalogError> {
    macro_rules! call {
        ($method:ident) => {
            json(ns.$method(model(obj)?).await?)
        };
        ($method:ident, data) => {
            json(ns.$method(model(obj)?, body).await?)
        };
    }
    match op {
        "CreateNamespace" => call!(create_namespace),
        "ListNamespaces" => call!(list_namespaces),
        "DescribeNamespace" => call!(describe_namespace),
        "DropNamespace" => call!(drop_namespace),
        "NamespaceExists" => {
            ns.namespace_exists(model(obj)?).await?;
            Ok(Reply::Empty)
        }
        "ListTables" => call!(list_tables),
        "ListAllTables" => call!(list_all_tables),
        "RegisterTable" => call!(register_table),
        "DescribeTable" => call!(describe_table),
        "TableExists" => {
            ns.table_exists(model(obj)?).await?;
            Ok(Reply::Empty)
        }
        "DropTable" => call!(drop_table),
        "DeregisterTable" => call!(deregister_table),
        "RestoreTable" => call!(restore_table),
        "RenameTable" => call!(rename_table),
        "UpdateTableSchemaMetadata" => {
            // The spec sends and answers a bare `{key: value}` map here.
            // A `null` value asks to delete the key: the model cannot carry
            // that, so it travels in the context (see core::UNSET_KEYS).
            let mut req = Map::new();
            let mut metadata = Map::new();
            let mut unset = Vec::new();
            for (k, v) in obj {
                match k.as_str() {
                    "id" | "branch" | "identity" | "context" => {
                        req.insert(k, v);
                    }
                    _ if v.is_null() => unset.push(k),
                    _ => {
                        metadata.insert(k, v);
                    }
                }
            }
            req.insert("metadata".into(), Value::Object(metadata));
            if !unset.is_empty() {
                let ctx = req
                    .entry("context")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(ctx) = ctx {
                    ctx.insert(
                        crate::core::UNSET_KEYS.into(),
                        Value::from(Value::from(unset).to_string()),
                    );
                }
            }
            let resp = ns.update_table_schema_metadata(model(req)?).await?;
            json(resp.metadata.unwrap_or_default())
        }
        "ListTableVersions" => call!(list_table_versions),
        "CreateTableVersion" => call!(create_table_version),
        "DescribeTableVersion" => call!(describe_table_version),
        "BatchDeleteTableVersions" => call!(batch_delete_table_versions),
        "BatchCreateTableVersions" => call!(batch_create_table_versions),
        "BatchCommitTables" => call!(batch_commit_tables),
        "AlterTableAlterColumns" => call!(alter_table_alter_columns),
        "UpdateFieldMetadata" => call!(update_field_metadata),
        "AlterTableDropColumns" => call!(alter_table_drop_columns),
        "GetTableStats" => call!(get_table_stats),
        "InsertIntoTable" => call!(insert_into_table, data),
        "MergeInsertIntoTable" => call!(merge_insert_into_table, data),
        "UpdateTable" => call!(update_table),
        "DeleteFromTable" => call!(delete_from_table),
        "QueryTable" => Ok(Reply::ArrowFile(ns.query_table(model(obj)?).await?)),
        "CountTableRows" => json(ns.count_table_rows(model(obj)?).await?),
        "CreateTable" => call!(create_table, data),
        "ExplainTableQueryPlan" => json(ns.explain_table_query_plan(model(obj)?).await?),
        "AnalyzeTableQueryPlan" => json(ns.analyze_table_query_plan(model(obj)?).await?),
        "AlterTableAddColumns" => call!(alter_table_add_columns),
        "AlterTableBackfillColumns" => call!(alter_table_backfill_columns),
        "RefreshMaterializedView" => call!(refresh_materialized_view),
        "CreateMaterializedView" => call!(create_materialized_view),
        "CreateTableIndex" => call!(create_table_index),
        "CreateTableScalarIndex" => call!(create_table_scalar_index),
        "ListTableIndices" => call!(list_table_indices),
        "DescribeTableIndexStats" => call!(describe_table_index_stats),
        "DropTableIndex" => call!(drop_table_index),
        "ListTableTags" => call!(list_table_tags),
        "GetTableTagVersion" => call!(get_table_tag_version),
        "DeclareTable" => call!(declare_table),
        "CreateTableTag" => call!(create_table_tag),
        "DeleteTableTag" => call!(delete_table_tag),
        "UpdateTableTag" => call!(update_table_tag),
        "ListTableBranches" => call!(list_table_branches),
        "CreateTableBranch" => call!(create_table_branch),
        "DeleteTableBranch" => call!(delete_table_branch),
        "DescribeTransaction" => call!(describe_transaction),
        "AlterTransaction" => call!(alter_transaction),
        other => Err(CatalogError::unsupported(format!(
            "operation {other} is not served"
        ))),
    }
}
