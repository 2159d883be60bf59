//! The auth matrix, generated from the operation inventory so a new
//! operation cannot skip it: every route without credentials is 401; a
//! principal with no grant gets 403; a reader reads and is refused writes;
//! a writer writes; an admin does everything. Over REST and over gRPC.

use lance_catalog::auth::cedar::group_of;
use lance_catalog::rest::{BodyKind, OpDef, CONTROL_OPS, OPS};
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{token, Server};

/// One route of the inventory, filled with ids of objects that exist.
fn route(op: &OpDef) -> (String, Option<Value>, Option<bytes::Bytes>) {
    let namespace_op = op.path.starts_with("/v1/namespace/");
    // A create makes its own object (its creator owns that one, not `m$t`).
    let creates = matches!(
        op.action,
        "create_namespace"
            | "create_table"
            | "declare_table"
            | "register_table"
            | "create_materialized_view"
    );
    let id = match (namespace_op, creates) {
        (true, true) => "m%24made",
        (true, false) => "m",
        (false, true) => "m%24made",
        (false, false) => "m%24t",
    };
    let path = op
        .path
        .replace("{id}", id)
        .replace("{index_name}", "idx")
        .replace("{job_id}", "job")
        .replace("{project_id}", "p")
        .replace("{warehouse_id}", "default")
        .replace("{key_id}", "0123456789abcdef")
        .replace("{username}", "someone")
        .replace("{grant_id}", "0123456789abcdef0123456789abcdef")
        .replace("{trash_id}", "0000000000001-000000000000")
        .replace("{task_id}", "00000000000000000000000000000000");
    let body = match op.action {
        "rename_table" => json!({"new_table_name": "t9"}),
        "create_project" => json!({"project_id": "p2"}),
        "create_warehouse" => {
            json!({"warehouse_id": "w2", "project_id": "p", "root": "/tmp/never-made"})
        }
        "create_warehouse_namespace" => json!({"namespace": "n2"}),
        "create_grant" => {
            json!({"resource": {"kind": "server", "id": []}, "principal": "x", "relation": "reader"})
        }
        "create_api_key" => json!({"principal": "someone-else"}),
        "create_user" => json!({"username": "made-user", "password": "a long passphrase"}),
        "set_user_password" => json!({"password": "another long passphrase"}),
        "batch_create_table_versions" => json!({"entries": []}),
        "batch_commit_tables" => json!({"operations": []}),
        "batch_delete_table_versions" => json!({"ranges": []}),
        "register_table" => json!({"location": "m/registered"}),
        "restore_table" | "create_table_version" => {
            json!({"version": 1, "manifest_path": "x"})
        }
        "alter_table_alter_columns" => json!({"alterations": []}),
        "update_field_metadata" | "update_table" => json!({"updates": []}),
        "alter_table_drop_columns" => json!({"columns": ["nope"]}),
        "delete_from_table" => json!({"predicate": "id < 0"}),
        "query_table" | "analyze_table_query_plan" => json!({"k": 1, "vector": {}}),
        "explain_table_query_plan" => json!({"query": {"k": 1, "vector": {}}}),
        "alter_table_add_columns" => json!({"new_columns": []}),
        "alter_table_backfill_columns" => json!({"column": "nope"}),
        "create_materialized_view" => {
            json!({"kind": "query", "source_query": "select 1", "output_schema": "{}"})
        }
        "create_table_index" | "create_table_scalar_index" => {
            json!({"column": "id", "index_type": "BTREE"})
        }
        "get_table_tag_version" | "create_table_tag" | "delete_table_tag" | "update_table_tag" => {
            json!({"tag": "v1", "version": 1})
        }
        "create_table_branch" | "delete_table_branch" => json!({"name": "b1"}),
        "alter_transaction" => json!({"actions": []}),
        a if a.ends_with("_protection") => json!({"protected": false}),
        "submit_lance_table_cleanup_task" => json!({"retain_versions": 1}),
        "submit_lance_table_scalar_index_task" | "submit_lance_table_vector_index_task" => {
            json!({"column": "id"})
        }
        _ => json!({}),
    };
    match op.body {
        BodyKind::Arrow => (path, None, Some(crate::harness::rows(10, 1))),
        _ if op.method == "GET" || op.method == "DELETE" => (path, None, None),
        _ => (path, Some(body), None),
    }
}

/// What a principal holding `relation` on the server may do with `op`.
fn allowed(relation: Option<&str>, op: &OpDef) -> bool {
    // Any authenticated caller may read the server's facts; catalog-wide
    // lists (projects, warehouses, all tables) are filtered, not refused.
    if matches!(
        op.action,
        "get_server_info"
            | "list_projects"
            | "list_warehouses"
            | "list_all_tables"
            | "list_trash"
            | "create_session"
            | "delete_session"
    ) {
        return true;
    }
    let group = group_of(op.action);
    // Registering existing bytes also needs the warehouse's admin (or
    // registrar): writing to a namespace is not enough.
    if op.action == "register_table" {
        return relation == Some("admin");
    }
    match relation {
        None => false,
        Some("reader") => matches!(group, "read_metadata" | "read_data"),
        Some("writer") => !matches!(group, "manage_grants" | "administer"),
        Some(_) => true,
    }
}

async fn sweep(server: &Server, who: Option<&str>, relation: Option<&str>) {
    let mut wrong = Vec::new();
    for op in OPS.iter().chain(CONTROL_OPS) {
        let (path, body, arrow) = route(op);
        let (status, b, headers) = server.send(who, op.method, &path, body, arrow).await;
        let code = b["code"].as_u64().unwrap_or(0);
        let verdict = match who {
            None => {
                status == StatusCode::UNAUTHORIZED
                    && code == 16
                    && headers.contains_key("www-authenticate")
            }
            Some(_) if allowed(relation, op) => {
                status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN
            }
            Some(_) => status == StatusCode::FORBIDDEN && code == 15,
        };
        if !verdict {
            wrong.push(format!("{} {} {path}: {status} {b}", op.name, op.method));
        }
    }
    assert!(
        wrong.is_empty(),
        "{who:?} / {relation:?}:\n{}",
        wrong.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auth_matrix_covers_every_route() {
    let s = Server::hs256(None).await;
    s.ok("root", "POST", "/v1/projects", json!({"project_id": "p"}))
        .await;
    s.ok("root", "POST", "/v1/namespace/m/create", json!({}))
        .await;
    s.create_table("root", "m%24t").await;
    s.grant("server", json!([]), "reader", "reader").await;
    s.grant("server", json!([]), "writer", "writer").await;

    sweep(&s, None, None).await;
    sweep(&s, Some("nobody"), None).await;
    sweep(&s, Some("reader"), Some("reader")).await;
    // Writes last: they change what the later routes find.
    sweep(&s, Some("writer"), Some("writer")).await;
    sweep(&s, Some("root"), Some("admin")).await;
}

/// A route's request as the gateway builds it: the body, with the path's
/// ids in their fields.
fn request_of(op: &OpDef) -> (serde_json::Map<String, Value>, bytes::Bytes) {
    let (path, body, arrow) = route(op);
    let mut obj = body
        .and_then(|b| b.as_object().cloned())
        .unwrap_or_default();
    if op.body == BodyKind::Params {
        obj = serde_json::Map::from_iter([("params".to_string(), Value::Object(obj))]);
    }
    let id = if path.contains("m%24made") {
        vec!["m", "made"]
    } else if op.path.starts_with("/v1/namespace/") {
        vec!["m"]
    } else {
        vec!["m", "t"]
    };
    if op.path.contains("{id}") {
        obj.insert("id".into(), json!(id));
    }
    for (param, value) in [
        ("{index_name}", "idx"),
        ("{job_id}", "job"),
        ("{project_id}", "p"),
        ("{warehouse_id}", "default"),
        ("{key_id}", "0123456789abcdef"),
        ("{username}", "someone"),
        ("{grant_id}", "0123456789abcdef0123456789abcdef"),
        ("{trash_id}", "0000000000001-000000000000"),
        ("{task_id}", "00000000000000000000000000000000"),
    ] {
        if op.path.contains(param) {
            let name = param.trim_matches(|c| c == '{' || c == '}');
            obj.insert(name.into(), json!(value));
        }
    }
    (obj, arrow.unwrap_or_default())
}

/// The same matrix over gRPC, through the catalog's own gRPC clients:
/// the spec operations with the token in the request's identity (sent as
/// metadata), the control plane with it as call metadata.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auth_matrix_over_grpc() {
    use lance_catalog::grpc::control::GrpcControl;
    use lance_catalog::grpc::GrpcNamespace;
    let s = Server::hs256(None).await;
    s.ok("root", "POST", "/v1/projects", json!({"project_id": "p"}))
        .await;
    s.ok("root", "POST", "/v1/namespace/m/create", json!({}))
        .await;
    s.create_table("root", "m%24t").await;
    s.grant("server", json!([]), "reader", "reader").await;
    let ns = GrpcNamespace::connect(&s.base).await.unwrap();
    let mut wrong = Vec::new();
    for (who, relation) in [
        (None, None),
        (Some("nobody"), None),
        (Some("reader"), Some("reader")),
    ] {
        let mut control = GrpcControl::connect(&s.base).await.unwrap();
        if let Some(w) = who {
            control = control.with_bearer(&token(w, json!({})));
        }
        for op in OPS.iter().chain(CONTROL_OPS) {
            let (mut obj, data) = request_of(op);
            if let Some(w) = who {
                obj.insert(
                    "identity".into(),
                    json!({"auth_token": token(w, json!({}))}),
                );
            }
            let got = lance_catalog::rest::invoke(&ns, &control, op, obj, data).await;
            let code = got.as_ref().err().map(|e| e.code.0).unwrap_or(0);
            let fine = match who {
                None => code == 16,
                Some(_) if allowed(relation, op) => code != 16 && code != 15,
                Some(_) => code == 15,
            };
            if !fine {
                wrong.push(format!("{who:?} {}: {got:?}", op.name));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
