//! Recoverable drops through the real server: Lance's own REST client for
//! the spec, plain HTTP for the catalog's own routes, the catalog's gRPC
//! client for the same operations over gRPC, and Lance itself reading the
//! bytes back. Tables here; namespace subtrees and policies in
//! `subtree.rs`.

mod subtree;

use std::sync::Arc;

use lance_catalog::governance::{Governance, TrashConfig};
use lance_catalog::rest::RestConfig;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

use crate::governance::hierarchy::call;
use crate::harness::{code, count, create, ids, rows, table, Env};

pub(crate) const DAY: u64 = 86_400;

/// A server over a fresh root whose drops stay in trash for `grace_s`.
pub(crate) async fn server(grace_s: u64) -> (Arc<dyn LanceNamespace>, String, tempfile::TempDir) {
    let (catalog, dir) = Env::catalog().await;
    let gov = Governance::single(catalog).with_trash(TrashConfig {
        grace_s,
        purge_expired: false,
    });
    let addr = lance_catalog::app::server::spawn_governed(Arc::new(gov), RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let ns = Arc::new(RestNamespaceBuilder::new(base.clone()).build());
    (ns, base, dir)
}

/// Everything a caller can see of a table: rows, versions, tags,
/// branches, indices.
async fn snapshot(ns: &dyn LanceNamespace, id: &[&str]) -> Value {
    let versions = ns
        .list_table_versions(ListTableVersionsRequest {
            id: ids(id),
            ..Default::default()
        })
        .await
        .unwrap();
    let tags = ns
        .list_table_tags(ListTableTagsRequest {
            id: ids(id),
            ..Default::default()
        })
        .await
        .unwrap();
    let branches = ns
        .list_table_branches(ListTableBranchesRequest {
            id: ids(id),
            ..Default::default()
        })
        .await
        .unwrap();
    let indices = ns
        .list_table_indices(ListTableIndicesRequest {
            id: ids(id),
            ..Default::default()
        })
        .await
        .unwrap();
    let v: Vec<i64> = versions.versions.iter().map(|v| v.version).collect();
    let mut tag_names: Vec<String> = tags.tags.keys().cloned().collect();
    tag_names.sort();
    json!({
        "rows": count(ns, id).await,
        "versions": v,
        "tags": tag_names,
        "branches": serde_json::to_value(&branches).unwrap()["branches"],
        "indices": serde_json::to_value(&indices).unwrap()["indexes"],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_drop_undrop_keeps_versions_tags_branches_and_indices() {
    let (ns, base, root) = server(DAY).await;
    let ns = ns.as_ref();
    let c = Client::new();
    let t = ["sales", "orders"];
    table(ns, &t, 10).await;
    for start in [10, 20] {
        ns.insert_into_table(
            InsertIntoTableRequest {
                id: ids(&t),
                ..Default::default()
            },
            rows(start, 10),
        )
        .await
        .unwrap();
    }
    ns.create_table_tag(CreateTableTagRequest {
        id: ids(&t),
        tag: "v2".into(),
        version: 2,
        ..Default::default()
    })
    .await
    .unwrap();
    ns.create_table_branch(CreateTableBranchRequest {
        id: ids(&t),
        name: "dev".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    ns.create_table_scalar_index(CreateTableIndexRequest {
        id: ids(&t),
        column: "id".into(),
        index_type: "BTREE".into(),
        name: Some("id_idx".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let before = snapshot(ns, &t).await;
    assert_eq!(before["rows"], 30);
    let location = ns
        .describe_table(DescribeTableRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap()
        .location
        .unwrap();

    // The drop keeps the bytes and names its trash entry.
    let dropped = ns
        .drop_table(DropTableRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    let trash_id = dropped.transaction_id.expect("a trash id");
    assert_eq!(
        code(
            ns.describe_table(DescribeTableRequest {
                id: ids(&t),
                ..Default::default()
            })
            .await
        ),
        4
    );
    let on_disk = lance::Dataset::open(&location).await.unwrap();
    assert_eq!(on_disk.count_rows(None).await.unwrap(), 30);

    // Its pending deadline and the trash listing.
    let (s, tasks) = call(
        &c,
        Method::GET,
        format!("{base}/v1/table/sales$orders/tasks"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{tasks}");
    assert_eq!(tasks["tasks"][0]["task_type"], "trash_expiry");
    assert_eq!(tasks["tasks"][0]["task_id"], trash_id.as_str());
    assert_eq!(tasks["tasks"][0]["status"], "pending");
    let (s, listed) = call(&c, Method::GET, format!("{base}/v1/trash"), None).await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    let entry = &listed["entries"][0];
    assert_eq!(entry["id"], json!(["sales", "orders"]));
    assert_eq!(entry["kind"], "table");
    assert_eq!(entry["warehouse"], "default");
    assert!(entry["version"].as_u64().unwrap() >= 3, "{entry}");
    let deadline =
        entry["expires_at_ms"].as_u64().unwrap() - entry["dropped_at_ms"].as_u64().unwrap();
    assert_eq!(deadline, DAY * 1000);

    // The bytes stay claimed: no other table may be registered on them.
    let rel = entry["location"].as_str().unwrap().to_string();
    let r = ns
        .register_table(RegisterTableRequest {
            id: ids(&["sales", "thief"]),
            location: rel.clone(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);

    // Undrop: everything is back, and Lance reads the same rows.
    let (s, back) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/sales$orders/undrop"),
        Some(json!({})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{back}");
    assert_eq!(back["trash_id"], trash_id.as_str());
    assert_eq!(snapshot(ns, &t).await, before);
    assert_eq!(
        lance::Dataset::open(&location)
            .await
            .unwrap()
            .count_rows(None)
            .await
            .unwrap(),
        30
    );
    // Nothing is left in trash; a second undrop finds nothing.
    let (_, listed) = call(&c, Method::GET, format!("{base}/v1/trash"), None).await;
    assert_eq!(listed["entries"], json!([]));
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/sales$orders/undrop"),
        Some(json!({})),
    )
    .await;
    assert_eq!(
        (s, e["code"].as_u64()),
        (StatusCode::NOT_FOUND, Some(4)),
        "{e}"
    );

    // purge=true destroys the bytes now.
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/sales$orders/drop?purge=true"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{e}");
    assert!(e.get("transaction_id").is_none_or(Value::is_null), "{e}");
    assert!(!root.path().join(&rel).exists());
    let (_, listed) = call(&c, Method::GET, format!("{base}/v1/trash"), None).await;
    assert_eq!(listed["entries"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn name_reuse_while_in_trash_then_purge() {
    let (ns, base, root) = server(DAY).await;
    let ns = ns.as_ref();
    let c = Client::new();
    let t = ["n", "t"];
    table(ns, &t, 5).await;
    let first = ns
        .drop_table(DropTableRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    let first = first.transaction_id.unwrap();
    // The name is free again; the trashed copy keeps its bytes apart.
    create(ns, &t, rows(0, 7)).await.unwrap();
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/n$t/undrop"),
        Some(json!({})),
    )
    .await;
    assert_eq!(
        (s, e["code"].as_u64()),
        (StatusCode::CONFLICT, Some(5)),
        "{e}"
    );
    let detail = e["detail"]
        .as_str()
        .or(e["error"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        detail.contains(&first) || e.to_string().contains(&first),
        "{e}"
    );
    assert_eq!(count(ns, &t).await, 7);

    // Drop the new one too: two copies in trash; undrop picks by trash id.
    let second = ns
        .drop_table(DropTableRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    let second = second.transaction_id.unwrap();
    let (s, back) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/n$t/undrop"),
        Some(json!({"trash_id": first})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{back}");
    assert_eq!(count(ns, &t).await, 5);

    // Purge the other copy: its bytes go, the restored table's stay.
    let (_, listed) = call(&c, Method::GET, format!("{base}/v1/trash"), None).await;
    let rel = listed["entries"][0]["location"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(listed["entries"][0]["trash_id"], second.as_str());
    let (s, purged) = call(
        &c,
        Method::DELETE,
        format!("{base}/v1/trash/{second}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{purged}");
    assert_eq!(purged["purged"][0]["trash_id"], second.as_str());
    assert!(!root.path().join(&rel).exists());
    assert_eq!(count(ns, &t).await, 5);
    let (s, e) = call(
        &c,
        Method::DELETE,
        format!("{base}/v1/trash/{second}"),
        None,
    )
    .await;
    assert_eq!(
        (s, e["code"].as_u64()),
        (StatusCode::NOT_FOUND, Some(10013)),
        "{e}"
    );
    let (s, e) = call(
        &c,
        Method::DELETE,
        format!("{base}/v1/trash/..%2F..%2Fetc"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grace_zero_drops_at_once() {
    let (ns, base, root) = server(0).await;
    let ns = ns.as_ref();
    let t = ["z", "t"];
    table(ns, &t, 3).await;
    let location = ns
        .describe_table(DescribeTableRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap()
        .location
        .unwrap();
    let dropped = ns
        .drop_table(DropTableRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(dropped.transaction_id.is_none());
    assert!(lance::Dataset::open(&location).await.is_err());
    let (_, listed) = call(
        &Client::new(),
        Method::GET,
        format!("{base}/v1/trash"),
        None,
    )
    .await;
    assert_eq!(listed["entries"], json!([]));
    let (s, e) = call(
        &Client::new(),
        Method::POST,
        format!("{base}/v1/table/z$t/undrop"),
        Some(json!({})),
    )
    .await;
    assert_eq!(
        (s, e["code"].as_u64()),
        (StatusCode::NOT_FOUND, Some(4)),
        "{e}"
    );
    drop(root);
}
