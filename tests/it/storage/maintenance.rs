//! The maintenance-task API through the real server over plain HTTP (the
//! OSS Tables Lance maintenance API), with Lance's own REST client for the
//! tables and Lance itself reading the results back.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use lance_catalog::governance::{Governance, MaintenanceConfig};
use lance_catalog::rest::RestConfig;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;
use md5::Digest;
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::{count, ids, namespace, rows, table, Env};

struct Server {
    ns: Arc<dyn LanceNamespace>,
    base: String,
    c: Client,
    dir: tempfile::TempDir,
}

async fn server(workers: usize, quota: usize) -> Server {
    let (catalog, dir) = Env::catalog().await;
    let gov = Arc::new(
        Governance::single(catalog).with_maintenance(MaintenanceConfig {
            workers,
            lease: Duration::from_secs(5),
            poll: Duration::from_millis(50),
            quota,
            ..Default::default()
        }),
    );
    gov.start_workers();
    let addr = lance_catalog::app::server::spawn_governed(gov, RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let ns = Arc::new(RestNamespaceBuilder::new(base.clone()).build());
    Server {
        ns,
        base,
        c: Client::new(),
        dir,
    }
}

impl Server {
    /// Send a maintenance request; the status, body and `x-oss-table-id`.
    async fn oss(
        &self,
        method: Method,
        path: &str,
        body: Option<&str>,
    ) -> (StatusCode, Value, Option<String>) {
        let mut req = self
            .c
            .request(method, format!("{}/lance/oss/v1/table/{path}", self.base));
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        let table_id = r
            .headers()
            .get("x-oss-table-id")
            .map(|v| v.to_str().unwrap().to_string());
        let text = r.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        (status, body, table_id)
    }

    /// `GET /v1/table/{table}/index_health`, which must answer 200.
    async fn index_health(&self, table: &str) -> Value {
        let url = format!("{}/v1/table/{table}/index_health", self.base);
        let r = self.c.get(url).send().await.unwrap();
        let status = r.status();
        let body: Value = r.json().await.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    async fn submit(&self, table: &str, action: &str, body: &str) -> String {
        let (s, b, _) = self
            .oss(Method::POST, &format!("{table}/{action}"), Some(body))
            .await;
        assert_eq!(s, StatusCode::OK, "{b}");
        b["task_id"].as_str().unwrap().to_string()
    }

    /// Poll a task until it ends.
    async fn finished(&self, table: &str, task_id: &str) -> Value {
        for _ in 0..600 {
            let (s, b, _) = self
                .oss(Method::GET, &format!("{table}/tasks/{task_id}"), None)
                .await;
            assert_eq!(s, StatusCode::OK, "{b}");
            let info = b["task_info"].clone();
            if info["status"] == "completed" || info["status"] == "failed" {
                return info;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("task {task_id} did not finish");
    }

    async fn dataset(&self, id: &[&str]) -> lance::Dataset {
        crate::harness::dataset(self.ns.as_ref(), id).await
    }
}

fn code(b: &Value) -> u64 {
    b["code"].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_get_list_delete_and_their_codes() {
    let s = server(0, 3).await;
    table(s.ns.as_ref(), &["prod", "docs"], 5).await;

    let (st, b, tid) = s
        .oss(
            Method::POST,
            "prod$docs/compact",
            Some(r#"{"batch_size": 9}"#),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{b}");
    let table_id = tid.expect("x-oss-table-id on a submit");
    assert_eq!(b.as_object().unwrap().len(), 1, "{b}");
    let first = b["task_id"].as_str().unwrap().to_string();
    assert_eq!(first.len(), 32);
    // The real id is not the name, and it is the table's.
    assert_ne!(table_id, "prod$docs");
    let (st, b, tid) = s
        .oss(Method::GET, &format!("prod$docs/tasks/{first}"), None)
        .await;
    assert_eq!(
        (st, tid.as_deref()),
        (StatusCode::OK, Some(table_id.as_str()))
    );
    let info = &b["task_info"];
    assert_eq!(info["task_type"], "lance_compact");
    assert_eq!(info["status"], "submitted");
    assert_eq!(
        info["params"],
        json!({"target_rows_per_fragment": 1048576, "materialize_deletions": true,
               "materialize_deletions_threshold": 0.1, "max_rows_per_group": 1024,
               "max_bytes_per_file": 0, "compaction_mode": "reencode"})
    );
    assert_eq!(
        (info["started_at"].as_str(), info["completed_at"].as_str()),
        (Some(""), Some(""))
    );
    assert_eq!(
        (info["result"].clone(), info["error"].clone()),
        (json!({}), Value::Null)
    );
    assert!(info["created_at"].as_str().unwrap().ends_with("+00:00"));

    // Not finished: not deletable.
    let (st, b, _) = s
        .oss(Method::DELETE, &format!("prod$docs/tasks/{first}"), None)
        .await;
    assert_eq!((st, code(&b)), (StatusCode::CONFLICT, 10001), "{b}");

    // Quota 3 per table and type; another type has its own.
    s.submit("prod$docs", "compact", "").await;
    s.submit("prod$docs", "compact", "{}").await;
    let (st, b, _) = s.oss(Method::POST, "prod$docs/compact", Some("{}")).await;
    assert_eq!(
        (st, code(&b)),
        (StatusCode::TOO_MANY_REQUESTS, 10002),
        "{b}"
    );
    s.submit("prod$docs", "cleanup", r#"{"retain_versions": 2}"#)
        .await;
    // The catalog's own pending-task listing shows them too.
    let pending: Value =
        s.c.get(format!("{}/v1/table/prod$docs/tasks", s.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    let types: Vec<&str> = pending["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task_type"].as_str().unwrap())
        .collect();
    assert_eq!(types.len(), 4, "{pending}");
    assert_eq!(types.iter().filter(|t| **t == "lance_compact").count(), 3);
    assert_eq!(pending["tasks"][0]["status"], "submitted", "{pending}");

    // Shapes and ranges are checked at submit.
    for (action, body) in [
        ("cleanup", ""),
        ("cleanup", r#"{"retain_versions": 0}"#),
        (
            "cleanup",
            r#"{"retain_versions": 1, "delete_unverified": true}"#,
        ),
        (
            "cleanup",
            r#"{"older_than": "7d", "error_if_tagged_old_versions": true}"#,
        ),
        ("create_scalar_index", "{}"),
        (
            "create_vector_index",
            r#"{"column": "v", "index_type": "BTREE"}"#,
        ),
        ("optimize_indices", r#"{"index_names": "a"}"#),
        ("compact", "[1]"),
    ] {
        let (st, b, _) = s
            .oss(Method::POST, &format!("prod$docs/{action}"), Some(body))
            .await;
        assert_eq!(
            (st, code(&b)),
            (StatusCode::BAD_REQUEST, 13),
            "{action} {body}: {b}"
        );
        assert!(b["instance"].is_string() && b["detail"].is_string(), "{b}");
    }

    // Paging, newest first.
    let (st, b, _) = s
        .oss(
            Method::GET,
            "prod$docs/tasks?task_type=lance_compact&max_results=2",
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{b}");
    let page1: Vec<String> = b["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(page1.len(), 2);
    assert!(page1[0] > page1[1]);
    let marker = b["next_marker"].as_str().unwrap().to_string();
    assert!(!marker.is_empty());
    let (_, b, _) = s
        .oss(
            Method::GET,
            &format!("prod$docs/tasks?task_type=lance_compact&max_results=2&marker={marker}"),
            None,
        )
        .await;
    assert_eq!(b["tasks"][0]["task_id"], first.as_str());
    assert_eq!(b["next_marker"], "");
    for q in [
        "task_type=lance_compact&mode=x",
        "task_type=lance_compact&status=",
        "",
        "task_type=compact",
        "task_type=lance_compact&max_results=0",
        "task_type=lance_compact&max_results=1001",
    ] {
        let (st, b, _) = s
            .oss(Method::GET, &format!("prod$docs/tasks?{q}"), None)
            .await;
        assert_eq!((st, code(&b)), (StatusCode::BAD_REQUEST, 13), "{q}: {b}");
    }

    // Ids: a custom delimiter names the same table; bad ones are refused.
    let (st, _, tid) = s
        .oss(
            Method::GET,
            "prod__docs/tasks?task_type=lance_cleanup&delimiter=__",
            None,
        )
        .await;
    assert_eq!(
        (st, tid.as_deref()),
        (StatusCode::OK, Some(table_id.as_str()))
    );
    let (st, _, _) = s
        .oss(
            Method::GET,
            "prod%24docs/tasks?task_type=lance_cleanup&delimiter=",
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK);
    for (path, status, c) in [
        (
            "prod-docs/tasks?task_type=lance_compact&delimiter=-",
            400,
            13,
        ),
        (
            "prod:docs/tasks?task_type=lance_compact&delimiter=:",
            400,
            13,
        ),
        ("a$b$c/tasks?task_type=lance_compact", 400, 13),
        ("prod/tasks?task_type=lance_compact", 400, 13),
        ("prod$/tasks?task_type=lance_compact", 400, 13),
        ("prod$nope/tasks?task_type=lance_compact", 404, 4),
        ("nope$docs/tasks?task_type=lance_compact", 404, 1),
        (
            "prod$docs/tasks/00000000000000000000000000000000",
            404,
            10000,
        ),
        ("prod$docs/tasks/..%2Fx", 404, 10000),
    ] {
        let (st, b, _) = s.oss(Method::GET, path, None).await;
        assert_eq!((st.as_u16(), code(&b)), (status, c), "{path}: {b}");
    }

    // Content-MD5: checked against the body; a mismatch changes nothing.
    let body = r#"{"retain_versions": 3}"#;
    let md5 = base64::engine::general_purpose::STANDARD.encode(md5::Md5::digest(body.as_bytes()));
    for (sent, ok) in [(md5.as_str(), true), ("1B2M2Y8AsgTpgAmY7PhCfg==", false)] {
        let r =
            s.c.post(format!("{}/lance/oss/v1/table/prod$docs/cleanup", s.base))
                .header("content-md5", sent)
                .body(body)
                .send()
                .await
                .unwrap();
        assert_eq!(r.status().is_success(), ok, "{sent}");
    }
    let (_, b, _) = s
        .oss(Method::GET, "prod$docs/tasks?task_type=lance_cleanup", None)
        .await;
    assert_eq!(b["tasks"].as_array().unwrap().len(), 2, "{b}");

    // Another table cannot see this table's task; a table dropped and
    // made again under the same name starts with none.
    crate::harness::create(s.ns.as_ref(), &["prod", "other"], rows(0, 1))
        .await
        .unwrap();
    let (st, b, _) = s
        .oss(Method::GET, &format!("prod$other/tasks/{first}"), None)
        .await;
    assert_eq!((st, code(&b)), (StatusCode::NOT_FOUND, 10000), "{b}");
    s.ns.drop_table(DropTableRequest {
        id: ids(&["prod", "docs"]),
        ..Default::default()
    })
    .await
    .unwrap();
    crate::harness::create(s.ns.as_ref(), &["prod", "docs"], rows(0, 2))
        .await
        .unwrap();
    let (st, b, tid) = s
        .oss(Method::GET, "prod$docs/tasks?task_type=lance_compact", None)
        .await;
    assert_eq!(st, StatusCode::OK);
    assert_ne!(tid.as_deref(), Some(table_id.as_str()));
    assert_eq!(b["tasks"], json!([]));
    let (st, b, _) = s
        .oss(Method::GET, &format!("prod$docs/tasks/{first}"), None)
        .await;
    assert_eq!((st, code(&b)), (StatusCode::NOT_FOUND, 10000), "{b}");

    // The same operations over gRPC.
    let control = lance_catalog::grpc::control::GrpcControl::connect(&s.base)
        .await
        .unwrap();
    use lance_catalog::api::control::*;
    let sub = control
        .submit_lance_table_cleanup_task(
            &Call::default(),
            SubmitLanceTaskRequest {
                id: vec!["prod".into(), "docs".into()],
                params: json!({"older_than": "1d"}).as_object().cloned().unwrap(),
            },
        )
        .await
        .unwrap();
    let got = control
        .get_lance_task_status(
            &Call::default(),
            GetLanceTaskStatusRequest {
                id: vec!["prod".into(), "docs".into()],
                task_id: sub.task_id.clone(),
            },
        )
        .await
        .unwrap();
    assert_eq!(got.table_id, sub.table_id);
    assert_eq!(got.task_info.params["older_than"], "1d");
    assert_eq!(got.task_info.error, None);
    let err = control
        .delete_lance_task(
            &Call::default(),
            DeleteLanceTaskRequest {
                id: vec!["prod".into(), "docs".into()],
                task_id: sub.task_id,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code.0, 10001);
}

/// Compaction, cleanup, indices and failure, run by a worker with Lance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_run_the_tasks_with_lance() {
    let s = server(1, 1000).await;
    let ns = s.ns.as_ref();
    let t = ["prod", "t"];
    namespace(ns, &["prod"]).await;
    crate::harness::create(ns, &t, rows(0, 4)).await.unwrap();
    for i in 1..50 {
        ns.insert_into_table(
            InsertIntoTableRequest {
                id: ids(&t),
                ..Default::default()
            },
            rows(i * 4, 4),
        )
        .await
        .unwrap();
    }
    let before = s.dataset(&t).await;
    assert_eq!(before.count_fragments(), 50);
    let v_before = before.version().version;

    let task = s.submit("prod$t", "compact", "{}").await;
    let info = s.finished("prod$t", &task).await;
    assert_eq!(info["status"], "completed", "{info}");
    assert_eq!(info["result"]["fragments_removed"], 50, "{info}");
    assert_eq!(info["result"]["fragments_added"], 1, "{info}");
    assert!(info["result"]["runner"].is_string());
    assert!(!info["started_at"].as_str().unwrap().is_empty());
    let after = s.dataset(&t).await;
    assert_eq!(after.count_fragments(), 1);
    assert!(after.version().version > v_before);
    assert_eq!(count(ns, &t).await, 200);
    let mut ids_after: Vec<i64> = Vec::new();
    for b in after.scan().try_into_batch().await.into_iter() {
        let col = b.column_by_name("id").unwrap();
        let a = col
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        ids_after.extend(a.values().iter());
    }
    ids_after.sort();
    assert_eq!(ids_after, (0..200).collect::<Vec<i64>>());

    // Finished: deletable once.
    let (st, b, tid) = s
        .oss(Method::DELETE, &format!("prod$t/tasks/{task}"), None)
        .await;
    assert_eq!(
        (st, b, tid.is_some()),
        (StatusCode::NO_CONTENT, Value::Null, true)
    );
    let (st, b, _) = s
        .oss(Method::DELETE, &format!("prod$t/tasks/{task}"), None)
        .await;
    assert_eq!((st, code(&b)), (StatusCode::NOT_FOUND, 10000));

    // Cleanup keeps the tagged version and the latest.
    ns.create_table_tag(CreateTableTagRequest {
        id: ids(&t),
        tag: "keep".into(),
        version: 3,
        ..Default::default()
    })
    .await
    .unwrap();
    let latest = s.dataset(&t).await.version().version;
    let task = s
        .submit("prod$t", "cleanup", r#"{"older_than": "0s"}"#)
        .await;
    let info = s.finished("prod$t", &task).await;
    assert_eq!(info["status"], "completed", "{info}");
    assert!(
        info["result"]["old_versions_removed"].as_u64().unwrap() > 40,
        "{info}"
    );
    let left: Vec<u64> = s
        .dataset(&t)
        .await
        .versions()
        .await
        .unwrap()
        .iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(left, vec![3, latest]);
    assert_eq!(count(ns, &t).await, 200);

    // A scalar index the query plan then uses.
    let task = s
        .submit("prod$t", "create_scalar_index", r#"{"column": "id"}"#)
        .await;
    let info = s.finished("prod$t", &task).await;
    assert_eq!(info["status"], "completed", "{info}");
    assert_eq!(info["result"]["index_name"], "id_idx");
    let ds = s.dataset(&t).await;
    let mut scan = ds.scan();
    scan.filter("id = 7").unwrap();
    let plan = scan.explain_plan(true).await.unwrap();
    assert!(
        plan.contains("ScalarIndexQuery") || plan.contains("id_idx"),
        "{plan}"
    );

    // More rows, then optimize_indices: nothing left unindexed.
    ns.insert_into_table(
        InsertIntoTableRequest {
            id: ids(&t),
            ..Default::default()
        },
        rows(200, 30),
    )
    .await
    .unwrap();
    let stats = |ns: Arc<dyn LanceNamespace>| async move {
        ns.describe_table_index_stats(DescribeTableIndexStatsRequest {
            id: ids(&["prod", "t"]),
            index_name: Some("id_idx".into()),
            ..Default::default()
        })
        .await
        .unwrap()
    };
    assert_eq!(stats(s.ns.clone()).await.num_unindexed_rows, Some(30));
    // The catalog's index health agrees with Lance's own statistics.
    let health = s.index_health("prod$t").await;
    assert_eq!(health["indices"][0]["name"], "id_idx", "{health}");
    assert_eq!(health["indices"][0]["columns"], json!(["id"]), "{health}");
    assert_eq!(health["indices"][0]["unindexed_rows"], 30, "{health}");
    assert_eq!(health["indices"][0]["fragments_unindexed"], 1, "{health}");
    assert_eq!(health["indices"][0]["optimize_due"], true, "{health}");
    assert_eq!(health["optimize_due"], true, "{health}");
    assert_eq!(health["rows"], 230, "{health}");
    let task = s.submit("prod$t", "optimize_indices", "{}").await;
    let info = s.finished("prod$t", &task).await;
    assert_eq!(info["status"], "completed", "{info}");
    assert_eq!(stats(s.ns.clone()).await.num_unindexed_rows, Some(0));
    let health = s.index_health("prod$t").await;
    assert_eq!(health["indices"][0]["unindexed_rows"], 0, "{health}");
    assert_eq!(health["indices"][0]["fragments_unindexed"], 0, "{health}");
    assert_eq!(
        health["indices"][0]["fragments_covered"], health["fragments"],
        "{health}"
    );
    assert_eq!(health["optimize_due"], false, "{health}");

    // A vector index the nearest-neighbour plan then uses.
    let v = ["prod", "vec"];
    crate::harness::create(ns, &v, crate::harness::vectors(300))
        .await
        .unwrap();
    let task = s
        .submit(
            "prod$vec",
            "create_vector_index",
            r#"{"column": "v", "num_partitions": 2, "num_sub_vectors": 4}"#,
        )
        .await;
    let info = s.finished("prod$vec", &task).await;
    assert_eq!(info["status"], "completed", "{info}");
    assert_eq!(info["params"]["index_type"], "IVF_PQ");
    let ds = s.dataset(&v).await;
    let mut scan = ds.scan();
    let q = arrow_array::Float32Array::from(vec![0.5f32; 16]);
    scan.nearest("v", &q, 5).unwrap();
    let plan = scan.explain_plan(true).await.unwrap();
    assert!(plan.contains("ANN"), "{plan}");

    // A missing column fails the task, not the submit.
    let task = s
        .submit("prod$t", "create_scalar_index", r#"{"column": "nope"}"#)
        .await;
    let info = s.finished("prod$t", &task).await;
    assert_eq!(info["status"], "failed", "{info}");
    assert_eq!(info["error"]["code"], 12, "{info}");
    let (st, _, _) = s
        .oss(Method::DELETE, &format!("prod$t/tasks/{task}"), None)
        .await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let _ = &s.dir;
}
