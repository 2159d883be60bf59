//! Recoverable drops of namespace subtrees, and a project's own trash
//! policy with expiry and the sweep, over gRPC.

use lance_catalog::api::call::Call;
use lance_catalog::api::control::{
    ControlPlane, ListTrashRequest, UndropNamespaceRequest, UndropTableRequest,
    UpdateProjectRequest,
};
use lance_catalog::rest::RestConfig;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;
use reqwest::{Client, Method, StatusCode};
use serde_json::json;

use super::{server, DAY};
use crate::governance::hierarchy::call;
use crate::harness::{code, count, create, ids, namespace, rows, table};

/// Tables `a$t0..t2`, `a$b$t3..t5`, `a$b$c$t6..t9`, each with `n + 1` rows.
async fn subtree(ns: &dyn LanceNamespace) -> Vec<Vec<String>> {
    namespace(ns, &["a"]).await;
    namespace(ns, &["a", "b"]).await;
    namespace(ns, &["a", "b", "c"]).await;
    let mut made = Vec::new();
    for n in 0..10 {
        let parent: &[&str] = match n {
            0..=2 => &["a"],
            3..=5 => &["a", "b"],
            _ => &["a", "b", "c"],
        };
        let name = format!("t{n}");
        let mut id: Vec<&str> = parent.to_vec();
        id.push(&name);
        create(ns, &id, rows(0, n + 1)).await.unwrap();
        made.push(id.iter().map(|s| s.to_string()).collect());
    }
    made
}

async fn all_tables(ns: &dyn LanceNamespace) -> Vec<String> {
    let mut t = ns
        .list_all_tables(ListTablesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .unwrap()
        .tables;
    t.sort();
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cascade_drop_and_undrop_of_a_three_level_subtree() {
    let (ns, base, _root) = server(DAY).await;
    let ns = ns.as_ref();
    let c = Client::new();
    let made = subtree(ns).await;
    // A declared table holds no data: undrop skips it with a warning.
    ns.declare_table(DeclareTableRequest {
        id: ids(&["a", "b", "planned"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let tables_before = all_tables(ns).await;
    assert_eq!(tables_before.len(), 11);

    let dropped = ns
        .drop_namespace(DropNamespaceRequest {
            id: ids(&["a"]),
            behavior: Some("Cascade".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let group = dropped.transaction_id.unwrap()[0].clone();
    assert_eq!(
        code(
            ns.namespace_exists(NamespaceExistsRequest {
                id: ids(&["a"]),
                ..Default::default()
            })
            .await
        ),
        1
    );
    assert!(all_tables(ns).await.is_empty());
    let (_, listed) = call(
        &c,
        Method::GET,
        format!("{base}/v1/trash?namespace_id=a"),
        None,
    )
    .await;
    let entries = listed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3 + 11, "{listed}");
    assert!(entries.iter().all(|e| e["group"] == group.as_str()));
    let deadlines: std::collections::HashSet<u64> = entries
        .iter()
        .map(|e| e["expires_at_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(deadlines.len(), 1, "one shared deadline");
    let (s, tasks) = call(
        &c,
        Method::GET,
        format!("{base}/v1/namespace/a/tasks"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{tasks}");
    assert_eq!(tasks["tasks"].as_array().unwrap().len(), 14);

    // A table of the subtree cannot come back alone: its namespace is gone.
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/a$t0/undrop"),
        Some(json!({})),
    )
    .await;
    assert_eq!(
        (s, e["code"].as_u64()),
        (StatusCode::NOT_FOUND, Some(1)),
        "{e}"
    );

    let (s, back) = call(
        &c,
        Method::POST,
        format!("{base}/v1/namespace/a/undrop"),
        Some(json!({})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{back}");
    assert_eq!(back["restored"].as_array().unwrap().len(), 13, "{back}");
    assert_eq!(back["skipped"][0]["id"], json!(["a", "b", "planned"]));
    assert!(back["warnings"][0]
        .as_str()
        .unwrap()
        .contains("never written"));
    let mut expected = tables_before.clone();
    expected.retain(|t| t != "a$b$planned");
    assert_eq!(all_tables(ns).await, expected);
    for (n, id) in made.iter().enumerate() {
        let id: Vec<&str> = id.iter().map(String::as_str).collect();
        assert_eq!(count(ns, &id).await, n as i64 + 1);
    }
    let (_, listed) = call(&c, Method::GET, format!("{base}/v1/trash"), None).await;
    assert_eq!(listed["entries"], json!([]));
    // A restrict drop of an empty namespace files nothing.
    namespace(ns, &["empty"]).await;
    ns.drop_namespace(DropNamespaceRequest {
        id: ids(&["empty"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let (_, listed) = call(&c, Method::GET, format!("{base}/v1/trash"), None).await;
    assert_eq!(listed["entries"], json!([]));
}

/// A project's own grace period and purge policy, in a warehouse of its
/// own, with the control plane over gRPC: expiry is reported, and purged
/// only once the project says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_policy_expiry_and_sweep_over_grpc() {
    let (gov, wh, _home) = crate::harness::warehouses().await;
    gov.update_project(
        &Call::default(),
        UpdateProjectRequest {
            project_id: "p".into(),
            trash_grace: Some("1s".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let addr = lance_catalog::app::server::spawn_governed(gov.clone(), RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let ns = RestNamespaceBuilder::new(format!("{base}/warehouses/wh")).build();
    let control = lance_catalog::grpc::control::GrpcControl::connect(&base)
        .await
        .unwrap();
    let t = ["top", "t"];
    table(&ns, &t, 4).await;
    ns.drop_namespace(DropNamespaceRequest {
        id: ids(&["top"]),
        behavior: Some("Cascade".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let listed = control
        .list_trash(
            &Call::default(),
            ListTrashRequest {
                warehouse_id: Some("wh".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(listed.entries.len(), 2);
    assert!(listed
        .entries
        .iter()
        .all(|e| e.expired && e.project.as_deref() == Some("p")));
    let rel = listed
        .entries
        .iter()
        .find(|e| e.is_table())
        .unwrap()
        .location
        .clone()
        .unwrap();
    // Reported, not purged: no policy says so.
    let swept = control
        .sweep_trash(&Call::default(), Default::default())
        .await
        .unwrap();
    assert_eq!((swept.expired.len(), swept.purged.len()), (2, 0));
    assert!(wh.path().join(&rel).exists());
    // Undrop of a top-level namespace over gRPC: bound again, in its warehouse.
    let back = control
        .undrop_namespace(
            &Call::default(),
            UndropNamespaceRequest {
                id: vec!["top".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(back.restored.len(), 2);
    assert_eq!(count(&ns, &t).await, 4);
    let e = control
        .undrop_table(
            &Call::default(),
            UndropTableRequest {
                id: vec!["top".into(), "t".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code.0, 4);
    // Now the project purges expired trash.
    gov.update_project(
        &Call::default(),
        UpdateProjectRequest {
            project_id: "p".into(),
            purge_expired_trash: Some(true),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    ns.drop_table(DropTableRequest {
        id: ids(&t),
        ..Default::default()
    })
    .await
    .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let swept = control
        .sweep_trash(&Call::default(), Default::default())
        .await
        .unwrap();
    assert_eq!((swept.expired.len(), swept.purged.len()), (1, 1));
    assert!(!wh.path().join(&rel).exists());
    assert!(control
        .list_trash(&Call::default(), Default::default())
        .await
        .unwrap()
        .entries
        .is_empty());
}
