//! What each operation names and does, read from its request: the
//! top-level namespaces it routes by, whether it reads or writes, whether
//! it creates, and the access it asks for.

use serde_json::Value;

use super::guard::{Access, Kind};
use crate::api::{Effect, Target};

/// The access an operation asks for, from its request.
pub(super) fn access(op: &'static str, warehouse: &str, request: &Value) -> Access {
    Access {
        principal: None,
        action: op,
        warehouse: Some(warehouse.to_string()),
        kind: if id_is_namespace(op) {
            Kind::Namespace
        } else {
            Kind::Table
        },
        id: {
            let mut id = string_list(request.get("id")).unwrap_or_default();
            // A transaction's id is its table's id and one more segment.
            if names_transaction(op) {
                id.pop();
            }
            id
        },
        ..Default::default()
    }
}

/// The inventory row of operation `op` (its method), when it is one.
fn row(op: &str) -> Option<&'static crate::api::OpDef> {
    crate::api::by_action(op)
}

/// Operations whose own `id` names a namespace (the rest name a table, or
/// a transaction of one).
pub(super) fn id_is_namespace(op: &str) -> bool {
    row(op).is_some_and(|o| o.target == Target::Namespace)
}

/// Whether `op`'s id is a transaction's: its table's and one more segment.
fn names_transaction(op: &str) -> bool {
    row(op).is_some_and(|o| o.target == Target::Transaction)
}

/// Operations that create an object: their shape and parent are checked
/// before authorization.
pub(super) fn is_door(op: &str) -> bool {
    row(op).is_some_and(|o| o.is_door())
}

/// Operations that only read: served by a quarantined warehouse. An
/// action that is no operation is not one.
pub(super) fn is_read(op: &str) -> bool {
    row(op).is_some_and(|o| o.reads())
}

/// A rename: a door at its destination that keeps its object (its source
/// must stand first, and its grants follow it to its new name).
pub(super) fn moves(op: &str) -> bool {
    row(op).is_some_and(|o| o.effect == Effect::Move)
}

/// Whether `op`'s SQL may read any table of its warehouse (a materialized
/// view's; `OpDef::reads_tables`).
pub(super) fn reads_tables(op: &str) -> bool {
    row(op).is_some_and(|o| o.reads_tables)
}

/// Whether `op` also needs the register privilege on its warehouse
/// (`OpDef::registers`).
pub(super) fn registers(op: &str) -> bool {
    row(op).is_some_and(|o| o.registers)
}

/// Whether `op` ends the table its id names (`OpDef::ends_object`).
pub(super) fn ends_object(op: &str) -> bool {
    row(op).is_some_and(|o| o.ends_object)
}

pub(super) fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The top-level namespace of every id a request names (`None`: the root).
/// The request's own `id` is a namespace id for namespace operations, a
/// table id plus one segment for transactions, else a table id; ids nested
/// in batches are table ids; `new_namespace_id` (rename) is a namespace id.
pub(super) fn top_levels(op: &str, request: &Value) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let Some(obj) = request.as_object() else {
        return out;
    };
    for (key, value) in obj {
        match key.as_str() {
            "id" => {
                if let Some(id) = string_list(Some(value)) {
                    let namespace_len = if id_is_namespace(op) {
                        id.len()
                    } else if names_transaction(op) {
                        id.len().saturating_sub(2)
                    } else {
                        id.len().saturating_sub(1)
                    };
                    out.push((namespace_len > 0).then(|| id[0].clone()));
                }
            }
            "new_namespace_id" => {
                if let Some(id) = string_list(Some(value)) {
                    out.push(id.first().cloned());
                }
            }
            "context" | "identity" => {}
            _ => nested_table_ids(value, &mut out),
        }
    }
    if out.is_empty() {
        out.push(None);
    }
    out
}

fn nested_table_ids(value: &Value, out: &mut Vec<Option<String>>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| nested_table_ids(v, out)),
        Value::Object(obj) => {
            for (k, v) in obj {
                match (k.as_str(), string_list(Some(v))) {
                    ("id", Some(id)) => out.push((id.len() > 1).then(|| id[0].clone())),
                    _ => nested_table_ids(v, out),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::api::op;
    use serde_json::json;

    use super::{is_read, top_levels};

    #[test]
    fn every_named_id_is_routed() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            top_levels(op::CreateNamespace.action, &json!({"id": ["a"]})),
            vec![some("a")]
        );
        assert_eq!(
            top_levels(op::DescribeTable.action, &json!({"id": ["t"]})),
            vec![None]
        );
        assert_eq!(
            top_levels(op::DescribeTable.action, &json!({"id": ["a", "t"]})),
            vec![some("a")]
        );
        assert_eq!(
            top_levels(op::ListTables.action, &json!({"id": ["a"]})),
            vec![some("a")]
        );
        assert_eq!(
            top_levels(op::DescribeTransaction.action, &json!({"id": ["t", "3"]})),
            vec![None]
        );
        let rename = json!({"id": ["a", "t"], "new_namespace_id": ["b"], "new_table_name": "u"});
        assert_eq!(
            top_levels(op::RenameTable.action, &rename),
            vec![some("a"), some("b")]
        );
        let batch = json!({"entries": [{"id": ["a", "t"]}, {"id": ["b", "c", "t"]}]});
        assert_eq!(
            top_levels(op::BatchCreateTableVersions.action, &batch),
            vec![some("a"), some("b")]
        );
        assert_eq!(
            top_levels(op::ListNamespaces.action, &json!({})),
            vec![None]
        );
    }

    #[test]
    fn reads_are_told_from_writes() {
        for op in [
            op::DescribeTable.action,
            op::ListTables.action,
            op::TableExists.action,
            op::QueryTable.action,
            op::CountTableRows.action,
        ] {
            assert!(is_read(op), "{op}");
        }
        for op in [
            op::CreateTable.action,
            op::DropTable.action,
            op::InsertIntoTable.action,
            op::RestoreTable.action,
            op::CreateTableTag.action,
        ] {
            assert!(!is_read(op), "{op}");
        }
    }
}
