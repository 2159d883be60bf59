//! Maintenance policy records on a project, namespaces and a table, over
//! REST and gRPC: winner-takes-all (the winner supplies every field, the
//! server's defaults fill what it leaves unset, never an ancestor's
//! record), the answer names the winner and marks each field, a rename
//! keeps a table's record and a new table under the old name does not
//! inherit it, removing a record hands the win to the next one, and a
//! drop takes its grace period from its own effective policy.

use lance_catalog::api::call::Call;
use lance_catalog::api::control::*;
use lance_catalog::grpc::control::GrpcControl;
use lance_catalog::rest::RestConfig;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

use crate::governance::hierarchy::call;
use crate::harness::{create, ids, namespace, rows, table};

const T: &str = "/v1/table/top%24sub%24t/maintenance_policy";
const SUB: &str = "/v1/namespace/top%24sub/maintenance_policy";
const TOP: &str = "/v1/namespace/top/maintenance_policy";
const PROJECT: &str = "/v1/projects/p/maintenance_policy";

fn source(answer: &Value, field: &str) -> (String, String) {
    let s = &answer["sources"][field];
    (
        s["state"].as_str().unwrap_or_default().to_string(),
        s["from"].as_str().unwrap_or_default().to_string(),
    )
}

fn pair(state: &str, from: &str) -> (String, String) {
    (state.to_string(), from.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_winning_record_supplies_every_field_and_is_named() {
    let (gov, _wh, _home) = crate::harness::warehouses().await;
    let addr = lance_catalog::app::server::spawn_governed(gov, RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let ns = RestNamespaceBuilder::new(format!("{base}/warehouses/wh")).build();
    namespace(&ns, &["top"]).await;
    table(&ns, &["top", "sub", "t"], 3).await;
    let c = Client::new();
    let get = |path: &str| call(&c, Method::GET, format!("{base}{path}"), None);
    let post =
        |path: &str, body: Value| call(&c, Method::POST, format!("{base}{path}"), Some(body));
    let delete = |path: &str| call(&c, Method::DELETE, format!("{base}{path}"), None);

    // No record anywhere: the server's defaults, every field inherited.
    let (s, p) = get(T).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["winner"]["level"], "server", "{p}");
    assert_eq!(
        p["policy"],
        json!({"version_retention": "7d", "versions_to_retain": 10, "compaction": true,
               "interval": "1d", "target_rows_per_fragment": 1048576,
               "purge_expired_trash": false, "trash_grace": "0"}),
        "{p}"
    );
    assert_eq!(source(&p, "compaction"), pair("inherited", "server"));
    assert!(p.get("own").is_none(), "{p}");

    // The project's record wins for everything below it.
    let (s, p) = post(
        PROJECT,
        json!({"version_retention": "30d", "trash_grace": "1h"}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["winner"]["level"], "project");
    assert_eq!(source(&p, "version_retention"), pair("set_here", "project"));
    assert_eq!(source(&p, "interval"), pair("inherited", "server"));
    let (_, p) = get(T).await;
    assert_eq!(
        p["winner"],
        json!({"level": "project", "id": ["p"], "updated_at_ms": p["winner"]["updated_at_ms"]}),
        "{p}"
    );
    assert_eq!(p["policy"]["version_retention"], "30d");
    assert_eq!(
        source(&p, "version_retention"),
        pair("inherited", "project")
    );

    // A namespace's record shadows the project's whole: what it leaves
    // unset is the server's, not the project's.
    let (s, p) = post(TOP, json!({"versions_to_retain": 3})).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    let (_, p) = get(T).await;
    assert_eq!(p["winner"]["level"], "namespace", "{p}");
    assert_eq!(p["winner"]["id"], json!(["top"]));
    assert!(p["winner"]["object_id"].is_string(), "{p}");
    assert_eq!(p["policy"]["versions_to_retain"], 3);
    assert_eq!(
        p["policy"]["version_retention"], "7d",
        "not the project's 30d: {p}"
    );
    assert_eq!(p["policy"]["trash_grace"], "0", "not the project's 1h: {p}");
    assert_eq!(
        source(&p, "versions_to_retain"),
        pair("inherited", "namespace")
    );
    assert_eq!(source(&p, "version_retention"), pair("inherited", "server"));

    // The innermost namespace wins over the outer one.
    post(SUB, json!({"compaction": false})).await;
    let (_, p) = get(T).await;
    assert_eq!(p["winner"]["id"], json!(["top", "sub"]), "{p}");
    assert_eq!(
        (
            p["policy"]["compaction"].clone(),
            p["policy"]["versions_to_retain"].clone()
        ),
        (json!(false), json!(10))
    );
    let (_, p) = get(SUB).await;
    assert_eq!(source(&p, "compaction"), pair("set_here", "namespace"));
    assert_eq!(p["own"], json!({"compaction": false}));

    // The table's own record wins over all.
    let (s, p) = post(
        T,
        json!({"interval": "2h", "target_rows_per_fragment": 5000}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["winner"]["level"], "table");
    assert_eq!(source(&p, "interval"), pair("set_here", "table"));
    assert_eq!(source(&p, "compaction"), pair("inherited", "server"));
    assert_eq!(p["policy"]["compaction"], true);

    // The same answer over gRPC.
    let grpc = GrpcControl::connect(&base).await.unwrap();
    let over_grpc = grpc
        .get_table_maintenance_policy(
            &Call::default(),
            GetMaintenancePolicyRequest {
                id: vec!["top".into(), "sub".into(), "t".into()],
            },
        )
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(&over_grpc).unwrap(), get(T).await.1);

    // A rename keeps the record (it follows the table's real id); a new
    // table under the old name does not inherit it.
    ns.rename_table(RenameTableRequest {
        id: ids(&["top", "sub", "t"]),
        new_table_name: "t2".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let (_, p) = get("/v1/table/top%24sub%24t2/maintenance_policy").await;
    assert_eq!(
        (
            p["winner"]["level"].clone(),
            p["policy"]["interval"].clone()
        ),
        (json!("table"), json!("2h")),
        "{p}"
    );
    assert_eq!(p["winner"]["id"], json!(["top", "sub", "t2"]));
    create(&ns, &["top", "sub", "t"], rows(0, 1)).await.unwrap();
    let (_, p) = get(T).await;
    assert_eq!(p["winner"]["id"], json!(["top", "sub"]), "{p}");

    // Removing a record hands the win to the next one up.
    let moved = "/v1/table/top%24sub%24t2/maintenance_policy";
    assert_eq!(delete(moved).await.1, json!({"removed": true}));
    assert_eq!(delete(moved).await.1, json!({"removed": false}));
    assert_eq!(get(moved).await.1["winner"]["id"], json!(["top", "sub"]));
    delete(SUB).await;
    assert_eq!(get(moved).await.1["winner"]["id"], json!(["top"]));
    delete(TOP).await;
    assert_eq!(get(moved).await.1["winner"]["level"], "project");
    // A project's own trash fields are its record's.
    let (_, project) = get("/v1/projects/p").await;
    assert_eq!(project["trash_grace"], "1h", "{project}");

    // Bad input names the problem and changes nothing.
    for (body, needle) in [
        (json!({"interval": "0"}), "interval"),
        (json!({"interval": "soon"}), "interval"),
        (json!({"versions_to_retain": 0}), "versions_to_retain"),
        (
            json!({"target_rows_per_fragment": 0}),
            "target_rows_per_fragment",
        ),
        (json!({"trash_grace": "7w"}), "trash_grace"),
        (json!({"retention": "1d"}), "retention"),
        (json!({"compaction": "yes"}), "compaction"),
    ] {
        let (s, e) = post(T, body.clone()).await;
        assert_eq!(
            (s, e["code"].clone()),
            (StatusCode::BAD_REQUEST, json!(13)),
            "{body}: {e}"
        );
        assert!(
            e["error"].as_str().unwrap_or_default().contains(needle),
            "{body}: {e}"
        );
    }
    assert_eq!(get(T).await.1["winner"]["level"], "project");
    let (s, e) = get("/v1/table/top%24sub%24nope/maintenance_policy").await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::NOT_FOUND, json!(4)),
        "{e}"
    );
    let (s, e) = post("/v1/namespace/top%24nope/maintenance_policy", json!({})).await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::NOT_FOUND, json!(1)),
        "{e}"
    );
    let (s, e) = get("/v1/projects/nope/maintenance_policy").await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::NOT_FOUND, json!(10003)),
        "{e}"
    );
}

/// A drop's grace period is its own effective policy's: a namespace's
/// record gives the tables under it a grace the server does not have,
/// and the sweep purges by the record that governed the entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drops_follow_their_effective_policy() {
    let (gov, wh, _home) = crate::harness::warehouses().await;
    let addr = lance_catalog::app::server::spawn_governed(gov, RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let ns = RestNamespaceBuilder::new(format!("{base}/warehouses/wh")).build();
    namespace(&ns, &["keep"]).await;
    table(&ns, &["keep", "a", "t"], 2).await;
    table(&ns, &["gone", "t"], 2).await;
    let c = Client::new();
    let post =
        |path: &str, body: Value| call(&c, Method::POST, format!("{base}{path}"), Some(body));
    let (s, p) = post(
        "/v1/namespace/keep/maintenance_policy",
        json!({"trash_grace": "1s", "purge_expired_trash": true}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    for id in [&["keep", "a", "t"][..], &["gone", "t"][..]] {
        ns.drop_table(DropTableRequest {
            id: ids(id),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    // Under "keep": into trash for 1 s. Elsewhere: the server's 0, gone.
    let (_, listed) = call(&c, Method::GET, format!("{base}/v1/trash"), None).await;
    let entries = listed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{listed}");
    let e = &entries[0];
    assert_eq!(e["id"], json!(["keep", "a", "t"]));
    assert_eq!(
        e["expires_at_ms"].as_u64().unwrap() - e["dropped_at_ms"].as_u64().unwrap(),
        1000
    );
    assert_eq!(
        e["ancestor_object_ids"].as_array().map(Vec::len),
        Some(2),
        "{e}"
    );
    let rel = e["location"].as_str().unwrap().to_string();
    assert!(wh.path().join(&rel).exists());
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let (s, swept) = post("/v1/trash/sweep", json!({})).await;
    assert_eq!(s, StatusCode::OK, "{swept}");
    assert_eq!(swept["purged"].as_array().map(Vec::len), Some(1), "{swept}");
    assert!(!wh.path().join(&rel).exists());

    // A cascade's namespace entry is purged only when everything its drop
    // put in trash says purge: a table whose own record says keep holds it.
    table(&ns, &["keep", "b", "held"], 2).await;
    let (s, p) = post(
        "/v1/table/keep%24b%24held/maintenance_policy",
        json!({"purge_expired_trash": false}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    ns.drop_namespace(DropNamespaceRequest {
        id: ids(&["keep", "b"]),
        behavior: Some("Cascade".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let (_, swept) = post("/v1/trash/sweep", json!({})).await;
    assert_eq!(
        swept["expired"].as_array().map(Vec::len),
        Some(2),
        "{swept}"
    );
    assert_eq!(swept["purged"], json!([]), "{swept}");
}
