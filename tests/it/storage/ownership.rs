//! What the catalog leaves on storage: aliases recorded before the location
//! rules existed are never deleted through, lost creates leave nothing, and
//! the reconciler reports what a crash left behind.

use std::collections::BTreeSet;

use lance_catalog::core::{Orphan, TableWithoutData};
use lance_catalog::rest::RestConfig;
use lance_catalog::{Catalog, CatalogError, StorageConfig};
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use reqwest::StatusCode;
use serde_json::Value;

use crate::harness::{batch, code, count, create, ids, namespace, rows, schema, Env};

/// The table directories under a root (everything but the catalog's own).
fn table_dirs(root: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "__manifest" && n != "_catalog")
        .collect()
}

async fn open(root: &std::path::Path) -> Catalog {
    Catalog::open(&StorageConfig {
        root: root.to_string_lossy().into_owned(),
        ..Default::default()
    })
    .await
    .unwrap()
}

async fn drop_table(ns: &dyn LanceNamespace, id: &[&str]) -> lance::Result<DropTableResponse> {
    ns.drop_table(DropTableRequest {
        id: ids(id),
        ..Default::default()
    })
    .await
}

/// Aliases that the engine alone accepts (the root, the manifest, another
/// table's directory), as a catalog without the rules recorded them: no
/// drop deletes through them, and the tables they overlap are safe too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_aliases_never_delete_foreign_bytes() {
    let (catalog, dir) = Env::catalog().await;
    namespace(&catalog, &["h"]).await;
    let t_dir = super::created_dir(&catalog, &["h", "t"]).await;
    super::register_legacy(
        dir.path(),
        &[
            ("root", ""),
            ("man", "__manifest"),
            ("alias", t_dir.as_str()),
        ],
    )
    .await;

    for name in ["root", "man", "alias", "t"] {
        let e = CatalogError::from_lance(&drop_table(&catalog, &["h", name]).await.unwrap_err());
        assert_eq!(e.code.0, 19, "drop h${name}: {}", e.message);
    }
    // A cascade refuses before it deletes anything.
    let r = catalog
        .drop_namespace(DropNamespaceRequest {
            id: ids(&["h"]),
            behavior: Some("cascade".into()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 19);
    assert_eq!(count(&catalog, &["h", "t"]).await, 5);
    assert!(dir.path().join("__manifest").is_dir());

    // Deregistering keeps bytes; then the table's own drop is allowed.
    for name in ["root", "man", "alias"] {
        catalog
            .deregister_table(DeregisterTableRequest {
                id: ids(&["h", name]),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    assert_eq!(count(&catalog, &["h", "t"]).await, 5);
    drop_table(&catalog, &["h", "t"]).await.unwrap();
    assert!(!dir.path().join(&t_dir).exists());
    assert!(dir.path().join("__manifest").is_dir());
    catalog
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .unwrap();
}

/// The issue's reproduction over HTTP: register at the root, drop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_at_root_then_drop_loses_nothing() {
    let env = Env::over_rest().await;
    let base = env.base.clone().unwrap();
    let c = reqwest::Client::new();
    let post = |path: &str, body: &str| {
        c.post(format!("{base}{path}"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    assert_eq!(
        post("/v1/namespace/h/create", "{}").await.unwrap().status(),
        200
    );
    let r = post("/v1/table/h%24x/register", r#"{"location":""}"#)
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["code"], 13, "{body}");
    let r = post("/v1/table/h%24x/drop", "{}").await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = c
        .get(format!("{base}/v1/namespace/%24/list"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["namespaces"], serde_json::json!(["h"]));
}

/// Eight creates of one table at once, on one server and across two
/// servers on one root: one wins, seven get 409 / 5, one directory stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_creates_remove_what_they_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let a = lance_catalog::app::server::spawn(open(dir.path()).await, RestConfig::default())
        .await
        .unwrap();
    let b = lance_catalog::app::server::spawn(open(dir.path()).await, RestConfig::default())
        .await
        .unwrap();
    let c = reqwest::Client::new();
    let r = c
        .post(format!("http://{a}/v1/namespace/race/create"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    for (round, servers) in [("one", vec![a, a]), ("two", vec![a, b])].into_iter() {
        let body = rows(0, 2000);
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let url = format!(
                    "http://{}/v1/table/race%24{round}/create",
                    servers[i % servers.len()]
                );
                let c = c.clone();
                let body = body.clone();
                tokio::spawn(async move {
                    let r = c
                        .post(url)
                        .header("content-type", "application/vnd.apache.arrow.stream")
                        .body(body)
                        .send()
                        .await
                        .unwrap();
                    let status = r.status();
                    let text = r.text().await.unwrap();
                    (status, text)
                })
            })
            .collect();
        let mut won = 0;
        for t in tasks {
            let (status, text) = t.await.unwrap();
            if status == StatusCode::OK {
                won += 1;
            } else {
                assert_eq!(status, StatusCode::CONFLICT, "{text}");
                let body: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(body["code"], 5, "{body}");
            }
        }
        assert_eq!(won, 1, "round {round}");
    }
    // One directory per table, each the recorded one.
    let catalog = open(dir.path()).await;
    let mut recorded = BTreeSet::new();
    for name in ["one", "two"] {
        let d = catalog
            .describe_table(DescribeTableRequest {
                id: ids(&["race", name]),
                ..Default::default()
            })
            .await
            .unwrap();
        recorded.insert(d.location.unwrap().rsplit('/').next().unwrap().to_string());
        assert_eq!(count(&catalog, &["race", name]).await, 2000);
    }
    assert_eq!(table_dirs(dir.path()), recorded);
    assert_eq!(catalog.reconcile().await.unwrap(), Default::default());
}

/// A create killed between writing its dataset and recording it leaves a
/// dataset no table owns: the reconciler reports it (and a table whose
/// location holds nothing), and deletes neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciler_reports_crash_leftovers() {
    let (catalog, dir) = Env::catalog().await;
    namespace(&catalog, &["h"]).await;
    create(&catalog, &["h", "kept"], rows(0, 3)).await.unwrap();
    catalog
        .register_table(RegisterTableRequest {
            id: ids(&["h", "empty"]),
            location: "nothing/here".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    // What a killed create leaves: a whole dataset in a fresh directory.
    let leftover = dir.path().join("0badc0de_h$crashed");
    let reader = arrow_array::RecordBatchIterator::new(vec![Ok(batch(0, 10))], schema());
    lance::Dataset::write(reader, leftover.to_str().unwrap(), None)
        .await
        .unwrap();
    std::fs::create_dir_all(dir.path().join("stray")).unwrap();
    std::fs::write(dir.path().join("stray/file.txt"), b"x").unwrap();

    let report = catalog.reconcile().await.unwrap();
    assert_eq!(
        report.orphans,
        vec![
            Orphan {
                location: "0badc0de_h$crashed".into(),
                dataset: true,
                symlink: false,
            },
            Orphan {
                location: "stray".into(),
                dataset: false,
                symlink: false,
            },
        ]
    );
    assert_eq!(
        report.without_data,
        vec![TableWithoutData {
            table: vec!["h".into(), "empty".into()],
            location: "nothing/here".into()
        }]
    );
    // Reported, not deleted.
    assert!(leftover.join("_versions").is_dir());
}
