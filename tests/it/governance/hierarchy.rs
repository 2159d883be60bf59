//! The hierarchy's registries over the control plane: projects and
//! warehouses over REST and gRPC, their rules (no warehouse without a
//! project, no cascade, protection and force), and races between two
//! servers sharing one control root.

use lance_catalog::api::call::Call;
use lance_catalog::api::control::*;
use lance_catalog::grpc::control::GrpcControl;
use lance_catalog::rest::RestConfig;
use lance_catalog::{Catalog, StorageConfig};
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::Env;

pub(crate) async fn call(
    c: &Client,
    method: Method,
    url: String,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = c.request(method, url);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projects_and_warehouses_over_rest_and_grpc() {
    let env = Env::over_rest().await;
    let base = env.base.clone().unwrap();
    let c = Client::new();
    let (s, p) = call(
        &c,
        Method::POST,
        format!("{base}/v1/projects"),
        Some(json!({"project_id": "acme", "description": "ACME", "properties": {"team": "data"}})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["project_id"], "acme");
    assert_eq!(p["protected"], false);
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/projects"),
        Some(json!({"project_id": "acme"})),
    )
    .await;
    assert_eq!((s, e["code"].clone()), (StatusCode::CONFLICT, json!(10004)));
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/projects"),
        Some(json!({"project_id": "../x"})),
    )
    .await;
    assert_eq!((s, e["code"].clone()), (StatusCode::BAD_REQUEST, json!(13)));

    // The same registry through gRPC.
    let grpc = GrpcControl::connect(&base).await.unwrap();
    let got = grpc
        .describe_project(
            &Call::default(),
            DescribeProjectRequest {
                project_id: "acme".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(got.description.as_deref(), Some("ACME"));
    assert_eq!(got.properties["team"], "data");
    grpc.create_project(
        &Call::default(),
        CreateProjectRequest {
            project_id: "beta".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let (_, page1) = call(&c, Method::GET, format!("{base}/v1/projects?limit=1"), None).await;
    assert_eq!(page1["projects"][0]["project_id"], "acme");
    let token = page1["page_token"].as_str().unwrap().to_string();
    let (_, page2) = call(
        &c,
        Method::GET,
        format!("{base}/v1/projects?limit=1&page_token={token}"),
        None,
    )
    .await;
    assert_eq!(page2["projects"][0]["project_id"], "beta");
    assert!(page2.get("page_token").is_none(), "{page2}");

    // Update merges properties; an empty value deletes a key.
    let (s, p) = call(
        &c,
        Method::PATCH,
        format!("{base}/v1/projects/acme"),
        Some(json!({"properties": {"team": "", "cost": "c1"}})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["properties"], json!({"cost": "c1"}));

    // A warehouse needs its project; secrets never come back.
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/warehouses"),
        Some(json!({"warehouse_id": "w1", "project_id": "nope", "root": "/data/w1"})),
    )
    .await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::NOT_FOUND, json!(10003))
    );
    assert!(
        e["error"].as_str().unwrap().contains("POST /v1/projects"),
        "{e}"
    );
    // A root that cannot be reached is refused at create, naming it.
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/warehouses"),
        Some(
            json!({"warehouse_id": "w0", "project_id": "acme", "root": "s3://bucket/lance",
                    "storage_options": {"aws_endpoint": "http://127.0.0.1:9", "allow_http": "true",
                                        "aws_access_key_id": "k", "aws_secret_access_key": "s",
                                        "aws_region": "eu-west-1"}}),
        ),
    )
    .await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(13)),
        "{e}"
    );
    assert!(
        e["error"].as_str().unwrap().contains("s3://bucket/lance"),
        "{e}"
    );
    let (s, w) = call(
        &c,
        Method::POST,
        format!("{base}/v1/warehouses"),
        Some(json!({"warehouse_id": "w1", "project_id": "acme", "root": "memory://w1",
                    "storage_options": {"aws_secret_access_key": "s3cr3t", "aws_region": "eu-west-1"}})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{w}");
    assert_eq!(w["status"], "active");
    assert_eq!(w["storage_options"]["aws_secret_access_key"], "********");
    assert_eq!(w["storage_options"]["aws_region"], "eu-west-1");
    let (_, listed) = call(
        &c,
        Method::GET,
        format!("{base}/v1/warehouses?project_id=acme"),
        None,
    )
    .await;
    assert_eq!(listed["warehouses"][0]["warehouse_id"], "w1");
    assert!(!listed.to_string().contains("s3cr3t"), "{listed}");
    let (s, e) = call(
        &c,
        Method::PATCH,
        format!("{base}/v1/warehouses/w1"),
        Some(json!({"status": "closed"})),
    )
    .await;
    assert_eq!((s, e["code"].clone()), (StatusCode::BAD_REQUEST, json!(13)));
    let (_, w) = call(
        &c,
        Method::PATCH,
        format!("{base}/v1/warehouses/w1"),
        Some(json!({"status": "Quarantined"})),
    )
    .await;
    assert_eq!(w["status"], "quarantined");

    // No cascade: a project with warehouses refuses, naming them.
    let (s, e) = call(
        &c,
        Method::DELETE,
        format!("{base}/v1/projects/acme?force=true"),
        None,
    )
    .await;
    assert_eq!((s, e["code"].clone()), (StatusCode::CONFLICT, json!(10005)));
    assert!(e["error"].as_str().unwrap().contains("w1"), "{e}");
    // Protection refuses deletion; force overrides it and nothing else.
    let (_, w) = call(
        &c,
        Method::POST,
        format!("{base}/v1/warehouses/w1/protection"),
        Some(json!({"protected": true})),
    )
    .await;
    assert_eq!(w["protected"], true);
    let (s, e) = call(&c, Method::DELETE, format!("{base}/v1/warehouses/w1"), None).await;
    assert_eq!((s, e["code"].clone()), (StatusCode::CONFLICT, json!(10010)));
    let (s, _) = call(
        &c,
        Method::DELETE,
        format!("{base}/v1/warehouses/w1?force=true"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let (s, e) = call(&c, Method::GET, format!("{base}/v1/warehouses/w1"), None).await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::NOT_FOUND, json!(10006))
    );
    grpc.set_project_protection(
        &Call::default(),
        SetProjectProtectionRequest {
            project_id: "acme".into(),
            protected: true,
        },
    )
    .await
    .unwrap();
    let e = grpc
        .delete_project(
            &Call::default(),
            DeleteProjectRequest {
                project_id: "acme".into(),
                force: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code.0, 10010);
    let (s, _) = call(
        &c,
        Method::DELETE,
        format!("{base}/v1/projects/acme?force=true"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let (s, e) = call(&c, Method::GET, format!("{base}/v1/projects/acme"), None).await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::NOT_FOUND, json!(10003))
    );
    // A wrong method on a resource path is 405 with a problem body.
    let (s, e) = call(&c, Method::PUT, format!("{base}/v1/projects/beta"), None).await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::METHOD_NOT_ALLOWED, json!(13))
    );
}

/// Two servers sharing one root (and so one control root): eight creates of
/// one project id give one 200 and seven 409s; eight concurrent updates of
/// one warehouse all land.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_races_across_two_servers() {
    let dir = tempfile::tempdir().unwrap();
    let open = || async {
        Catalog::open(&StorageConfig {
            root: dir.path().to_string_lossy().into_owned(),
            ..Default::default()
        })
        .await
        .unwrap()
    };
    let a = lance_catalog::app::server::spawn(open().await, RestConfig::default())
        .await
        .unwrap();
    let b = lance_catalog::app::server::spawn(open().await, RestConfig::default())
        .await
        .unwrap();
    let c = Client::new();
    let creates: Vec<_> = (0..8)
        .map(|i| {
            let c = c.clone();
            let url = format!("http://{}/v1/projects", [a, b][i % 2]);
            tokio::spawn(async move {
                call(
                    &c,
                    Method::POST,
                    url,
                    Some(json!({"project_id": "race", "description": format!("writer {i}")})),
                )
                .await
            })
        })
        .collect();
    let mut won = 0;
    for t in creates {
        let (s, body) = t.await.unwrap();
        if s == StatusCode::OK {
            won += 1;
        } else {
            assert_eq!(
                (s, body["code"].clone()),
                (StatusCode::CONFLICT, json!(10004)),
                "{body}"
            );
        }
    }
    assert_eq!(won, 1);
    let (_, listed) = call(&c, Method::GET, format!("http://{a}/v1/projects"), None).await;
    assert_eq!(listed["projects"].as_array().unwrap().len(), 1);

    let (s, _) = call(
        &c,
        Method::POST,
        format!("http://{b}/v1/warehouses"),
        Some(json!({"warehouse_id": "w", "project_id": "race", "root": "/data/w"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let updates: Vec<_> = (0..8)
        .map(|i| {
            let c = c.clone();
            let server = [a, b][i % 2];
            tokio::spawn(async move {
                if i == 0 {
                    call(
                        &c,
                        Method::POST,
                        format!("http://{server}/v1/warehouses/w/protection"),
                        Some(json!({"protected": true})),
                    )
                    .await
                } else if i == 1 {
                    call(
                        &c,
                        Method::PATCH,
                        format!("http://{server}/v1/warehouses/w"),
                        Some(json!({"status": "quarantined"})),
                    )
                    .await
                } else {
                    call(
                        &c,
                        Method::PATCH,
                        format!("http://{server}/v1/warehouses/w"),
                        Some(json!({"properties": {format!("k{i}"): "v"}})),
                    )
                    .await
                }
            })
        })
        .collect();
    for t in updates {
        let (s, body) = t.await.unwrap();
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    let (_, w) = call(&c, Method::GET, format!("http://{a}/v1/warehouses/w"), None).await;
    assert_eq!(w["protected"], true, "{w}");
    assert_eq!(w["status"], "quarantined", "{w}");
    assert_eq!(w["properties"].as_object().unwrap().len(), 6, "{w}");
}

/// Deletion protection of tables and namespaces: drop, deregister and a
/// cascade refuse with 409 (code 19, the spec's code Lance clients know);
/// `force=true` overrides it and nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_tables_and_namespaces_refuse_deletion() {
    let env = Env::over_rest().await;
    let base = env.base.clone().unwrap();
    let c = Client::new();
    let post =
        |path: &str, body: Value| call(&c, Method::POST, format!("{base}{path}"), Some(body));
    assert_eq!(
        post("/v1/namespace/p/create", json!({})).await.0,
        StatusCode::OK
    );
    let r = c
        .post(format!("{base}/v1/table/p%24t/create"))
        .header("content-type", "application/vnd.apache.arrow.stream")
        .body(crate::harness::rows(0, 3))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);

    let (s, p) = post("/v1/table/p%24t/protection", json!({"protected": true})).await;
    assert_eq!(
        (s, p.clone()),
        (StatusCode::OK, json!({"id": ["p", "t"], "protected": true}))
    );
    let (_, d) = post("/v1/table/p%24t/describe", json!({})).await;
    assert_eq!(d["properties"]["lance-catalog.protected"], "true", "{d}");
    // An overwrite replaces the data, not the protection.
    let r = c
        .post(format!("{base}/v1/table/p%24t/create?mode=overwrite"))
        .header("content-type", "application/vnd.apache.arrow.stream")
        .body(crate::harness::rows(0, 1))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let (_, d) = post("/v1/table/p%24t/describe", json!({})).await;
    assert_eq!(d["properties"]["lance-catalog.protected"], "true", "{d}");
    for path in [
        "/v1/table/p%24t/drop",
        "/v1/table/p%24t/deregister",
        "/v1/namespace/p/drop?force=false",
    ] {
        let body = if path.contains("namespace") {
            json!({"behavior": "cascade"})
        } else {
            json!({})
        };
        let (s, e) = post(path, body).await;
        assert_eq!(
            (s, e["code"].clone()),
            (StatusCode::CONFLICT, json!(19)),
            "{path}: {e}"
        );
        assert!(e["error"].as_str().unwrap().contains("protected"), "{e}");
    }
    // A batch's deregister is refused the same way, and changes nothing.
    let (s, e) = post(
        "/v1/table/batch-commit",
        json!({"operations": [{"deregister_table": {"id": ["p", "t"]}}]}),
    )
    .await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::CONFLICT, json!(19)),
        "{e}"
    );
    // Protection cannot be set as a property.
    let (s, _) = post(
        "/v1/namespace/p2/create",
        json!({"properties": {"lance-catalog.protected": "true"}}),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    // Force overrides protection, not the other rules: a restrict drop of a
    // non-empty namespace is still 3.
    let (s, e) = post("/v1/namespace/p/protection", json!({"protected": true})).await;
    assert_eq!(s, StatusCode::OK, "{e}");
    let (s, e) = post("/v1/namespace/p/drop?force=true", json!({})).await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::CONFLICT, json!(3)),
        "{e}"
    );
    let (s, e) = post("/v1/namespace/p/drop", json!({"behavior": "cascade"})).await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::CONFLICT, json!(19)),
        "{e}"
    );
    // Cleared over gRPC, the table drops normally; forced, the namespace too.
    let grpc = GrpcControl::connect(&base).await.unwrap();
    let cleared = grpc
        .set_table_protection(
            &Call::default(),
            SetProtectionRequest {
                id: vec!["p".into(), "t".into()],
                protected: false,
            },
        )
        .await
        .unwrap();
    assert!(!cleared.protected);
    assert_eq!(
        post("/v1/table/p%24t/drop", json!({})).await.0,
        StatusCode::OK
    );
    let (s, e) = post("/v1/namespace/p/drop?force=true", json!({})).await;
    assert_eq!(s, StatusCode::OK, "{e}");
    let (s, e) = post("/v1/namespace/%24/protection", json!({"protected": true})).await;
    assert_eq!((s, e["code"].clone()), (StatusCode::BAD_REQUEST, json!(13)));
    let (s, e) = post("/v1/table/p%24gone/protection", json!({"protected": true})).await;
    assert_eq!((s, e["code"].clone()), (StatusCode::NOT_FOUND, json!(4)));
}
