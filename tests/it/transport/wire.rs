//! What goes over the wire, checked with a plain HTTP client: status codes,
//! problem documents, bare answers, headers, limits, prefixes.

use std::sync::{Arc, Mutex};

use lance_catalog::rest::RestConfig;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use reqwest::{Client, Response, StatusCode};
use serde_json::{json, Value};

use crate::harness::{ids, rows, Env};

const ARROW: &str = "application/vnd.apache.arrow.stream";

pub(crate) async fn problem(resp: Response, status: StatusCode, code: u64) -> Value {
    assert_eq!(resp.status(), status);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert_eq!(ct, "application/problem+json");
    let body: Value = resp.json().await.unwrap();
    for key in [
        "type", "title", "status", "detail", "instance", "error", "code",
    ] {
        assert!(body.get(key).is_some(), "problem body lacks {key}: {body}");
    }
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status.as_u16());
    body
}

pub(crate) async fn server(config: RestConfig) -> (Env, String, Client) {
    let env = Env::over_rest_with(config).await;
    let base = env.base.clone().unwrap();
    (env, base, Client::new())
}

async fn post_json(c: &Client, url: String, body: Value) -> Response {
    c.post(url).json(&body).send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_problem_documents_with_spec_codes() {
    let (_env, base, c) = server(RestConfig::default()).await;
    let r = post_json(&c, format!("{base}/v1/table/nope%24t/describe"), json!({})).await;
    let body = problem(r, StatusCode::NOT_FOUND, 4).await;
    assert_eq!(body["title"], "TableNotFound");
    assert_eq!(body["instance"], "/v1/table/nope%24t/describe");

    let r = c.get(format!("{base}/v1/nowhere")).send().await.unwrap();
    problem(r, StatusCode::NOT_FOUND, 13).await;
    let r = c
        .get(format!("{base}/v1/namespace/a/create"))
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::METHOD_NOT_ALLOWED, 13).await;

    let r = c
        .post(format!("{base}/v1/namespace/a/create"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::BAD_REQUEST, 13).await;
    let r = c
        .post(format!("{base}/v1/namespace/a/create"))
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::BAD_REQUEST, 13).await;
    // Path and body ids that disagree.
    let r = post_json(
        &c,
        format!("{base}/v1/namespace/a/create"),
        json!({"id": ["b"]}),
    )
    .await;
    problem(r, StatusCode::BAD_REQUEST, 13).await;
    // A bad Arrow stream, and JSON sent where Arrow is expected.
    post_json(&c, format!("{base}/v1/namespace/a/create"), json!({})).await;
    let r = c
        .post(format!("{base}/v1/table/a%24t/create"))
        .header("content-type", ARROW)
        .body("garbage")
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::BAD_REQUEST, 13).await;
    let r = post_json(&c, format!("{base}/v1/table/a%24t/create"), json!({})).await;
    problem(r, StatusCode::BAD_REQUEST, 13).await;
    // Still nothing there.
    let r = post_json(&c, format!("{base}/v1/table/a%24t/exists"), json!({})).await;
    problem(r, StatusCode::NOT_FOUND, 4).await;
    // An empty batch.
    let r = post_json(
        &c,
        format!("{base}/v1/table/batch-commit"),
        json!({"operations": []}),
    )
    .await;
    problem(r, StatusCode::BAD_REQUEST, 13).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_limits_answer_413_problems() {
    let config = RestConfig {
        max_json_body: 1024,
        max_arrow_body: 4096,
        ..Default::default()
    };
    let (_env, base, c) = server(config).await;
    let big = "x".repeat(4000);
    let r = post_json(
        &c,
        format!("{base}/v1/namespace/a/create"),
        json!({"properties": {"k": big}}),
    )
    .await;
    problem(r, StatusCode::PAYLOAD_TOO_LARGE, 13).await;
    post_json(&c, format!("{base}/v1/namespace/a/create"), json!({})).await;
    let r = c
        .post(format!("{base}/v1/table/a%24t/create"))
        .header("content-type", ARROW)
        .body(rows(0, 1000).to_vec())
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::PAYLOAD_TOO_LARGE, 13).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bare_answers_and_delimiters() {
    let (_env, base, c) = server(RestConfig::default()).await;
    let r = post_json(
        &c,
        format!("{base}/v1/namespace/w/create?delimiter=.",),
        json!({}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let r = c
        .post(format!(
            "{base}/v1/table/w.t/create?delimiter=.&mode=CREATE"
        ))
        .header("content-type", ARROW)
        .body(rows(0, 7).to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let created: Value = r.json().await.unwrap();
    assert_eq!(created["version"], 1);

    let r = post_json(&c, format!("{base}/v1/table/w%24t/count_rows"), json!({})).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "7");
    let r = post_json(&c, format!("{base}/v1/table/w%24t/exists"), json!({})).await;
    assert_eq!(r.status(), 200);
    assert!(r.bytes().await.unwrap().is_empty());
    let r = post_json(
        &c,
        format!("{base}/v1/table/w%24t/explain_plan"),
        json!({"query": {"k": 10, "vector": {}}}),
    )
    .await;
    let plan: Value = r.json().await.unwrap();
    assert!(plan.is_string());
    let r = post_json(
        &c,
        format!("{base}/v1/table/w%24t/query"),
        json!({"k": 10, "vector": {}}),
    )
    .await;
    assert_eq!(
        r.headers()["content-type"],
        "application/vnd.apache.arrow.file"
    );
    let r = c
        .get(format!("{base}/v1/table?delimiter=."))
        .send()
        .await
        .unwrap();
    let all: Value = r.json().await.unwrap();
    assert_eq!(all["tables"], json!(["w.t"]));
    // Root is the delimiter itself.
    let r = c
        .get(format!("{base}/v1/namespace/%24/list"))
        .send()
        .await
        .unwrap();
    let list: Value = r.json().await.unwrap();
    assert_eq!(list["namespaces"], json!(["w"]));
    // Bodiless POST (as Lance's client sends list versions).
    let r = c
        .post(format!("{base}/v1/table/w%24t/version/list"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Schema metadata takes and answers a bare map.
    let r = post_json(
        &c,
        format!("{base}/v1/table/w%24t/schema_metadata/update"),
        json!({"k": "v"}),
    )
    .await;
    let meta: Value = r.json().await.unwrap();
    assert_eq!(meta["k"], "v");
    // A null value deletes the key; other keys merge.
    let r = post_json(
        &c,
        format!("{base}/v1/table/w%24t/schema_metadata/update"),
        json!({"k": null, "k2": "v2"}),
    )
    .await;
    let meta: Value = r.json().await.unwrap();
    assert!(meta.get("k").is_none(), "{meta}");
    assert_eq!(meta["k2"], "v2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_renames_one_wins() {
    let (_env, base, c) = server(RestConfig::default()).await;
    post_json(&c, format!("{base}/v1/namespace/cr/create"), json!({})).await;
    let r = c
        .post(format!("{base}/v1/table/cr%24t/create"))
        .header("content-type", ARROW)
        .body(rows(0, 3).to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let rename = |name: &'static str| {
        let c = c.clone();
        let url = format!("{base}/v1/table/cr%24t/rename");
        async move { post_json(&c, url, json!({"new_table_name": name})).await }
    };
    let (a, b) = tokio::join!(rename("a"), rename("b"));
    // Exactly one rename commits. The other either read the catalog before
    // that commit, so its own commit conflicts (409, 14), or after it, so
    // the table it names is gone (404, 4). Never both, never neither.
    let (winner, loser, loser_name) = match (a.status().as_u16(), b.status().as_u16()) {
        (200, _) => ("a", b, "b"),
        (_, 200) => ("b", a, "a"),
        other => panic!("no rename won: {other:?}"),
    };
    let (status, code) = match loser.status().as_u16() {
        409 => (StatusCode::CONFLICT, 14),
        404 => (StatusCode::NOT_FOUND, 4),
        other => panic!("the rename to {loser_name} answered {other}"),
    };
    problem(loser, status, code).await;
    let r = c
        .get(format!("{base}/v1/namespace/cr/table/list"))
        .send()
        .await
        .unwrap();
    let list: Value = r.json().await.unwrap();
    assert_eq!(list["tables"], json!([winner]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gravitino_prefix_and_headers() {
    let config = RestConfig {
        prefix: Some("/lance".into()),
        ..Default::default()
    };
    let (_env, base, c) = server(config).await;
    let r = post_json(
        &c,
        format!("{base}/lance/v1/namespace/cat/create"),
        json!({"mode": "exist_ok"}),
    )
    .await;
    assert_eq!(r.status(), 200);
    post_json(
        &c,
        format!("{base}/lance/v1/namespace/cat%24demo/create"),
        json!({"mode": "EXIST_OK"}),
    )
    .await;
    let r = c
        .post(format!(
            "{base}/lance/v1/table/cat%24demo%24articles/create"
        ))
        .header("content-type", ARROW)
        .header("x-lance-table-location", "custom_articles.lance")
        .header("x-lance-table-properties", r#"{"team": "news"}"#)
        .body(rows(0, 3).to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let created: Value = r.json().await.unwrap();
    assert!(
        created["location"]
            .as_str()
            .unwrap()
            .ends_with("custom_articles.lance"),
        "{created}"
    );
    let r = post_json(
        &c,
        format!("{base}/lance/v1/table/cat%24demo%24articles/describe"),
        json!({}),
    )
    .await;
    let d: Value = r.json().await.unwrap();
    assert!(
        d["location"]
            .as_str()
            .unwrap()
            .ends_with("custom_articles.lance"),
        "{d}"
    );
    assert_eq!(d["properties"]["team"], "news");
    // Unprefixed routes are served too.
    let r = post_json(
        &c,
        format!("{base}/v1/table/cat%24demo%24articles/count_rows"),
        json!({}),
    )
    .await;
    assert_eq!(r.text().await.unwrap(), "3");
    // A location outside the root is refused and leaves nothing behind.
    let r = c
        .post(format!("{base}/lance/v1/table/cat%24demo%24x/create"))
        .header("content-type", ARROW)
        .header("x-lance-table-location", "/tmp/elsewhere")
        .body(rows(0, 3).to_vec())
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::BAD_REQUEST, 13).await;
    let r = c
        .post(format!("{base}/lance/v1/table/cat%24demo%24x/create"))
        .header("content-type", ARROW)
        .header("x-lance-table-location", "nested/../../escape")
        .body(rows(0, 3).to_vec())
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::BAD_REQUEST, 13).await;
    // Nested under the root is the catalog's to hold.
    let r = c
        .post(format!("{base}/lance/v1/table/cat%24demo%24x/create"))
        .header("content-type", ARROW)
        .header("x-lance-table-location", "lance/demo/x")
        .body(rows(0, 3).to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // The table at its chosen location works like any other, to the drop.
    let r = post_json(
        &c,
        format!("{base}/lance/v1/table/cat%24demo%24articles/drop"),
        json!({}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let r = post_json(
        &c,
        format!("{base}/lance/v1/table/cat%24demo%24articles/exists"),
        json!({}),
    )
    .await;
    problem(r, StatusCode::NOT_FOUND, 4).await;
}

/// A namespace that records the requests the gateway builds, to check what
/// the gateway derives from headers.
#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<DescribeNamespaceRequest>>);

#[async_trait::async_trait]
impl LanceNamespace for Recorder {
    fn namespace_id(&self) -> String {
        "recorder".into()
    }
    async fn describe_namespace(
        &self,
        request: DescribeNamespaceRequest,
    ) -> lance::Result<DescribeNamespaceResponse> {
        self.0.lock().unwrap().push(request);
        Ok(DescribeNamespaceResponse {
            context: Some([("header.x-served-by".to_string(), "recorder".to_string())].into()),
            ..Default::default()
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_and_context_travel_as_headers() {
    let rec = Arc::new(Recorder::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = lance_catalog::rest::router(
        Arc::new(lance_catalog::api::spec::FromLance(rec.clone())),
        RestConfig::default(),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let c = Client::new();
    let r = c
        .post(format!("http://{addr}/v1/namespace/a/describe"))
        .header("x-api-key", "key-1")
        .header("authorization", "Bearer tok-1")
        .header("x-trace", "t-9")
        .json(&json!({"context": {"k": "v"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-served-by"], "recorder");
    assert!(r.headers().contains_key("x-request-id"));
    let req = rec.0.lock().unwrap().pop().unwrap();
    let identity = req.identity.unwrap();
    assert_eq!(identity.api_key.as_deref(), Some("key-1"));
    assert_eq!(identity.auth_token.as_deref(), Some("tok-1"));
    let ctx = req.context.unwrap();
    assert_eq!(ctx["header.x-trace"], "t-9");
    assert_eq!(ctx["k"], "v");

    // Lance's own client sees every response header as `header.<name>`.
    let client = lance_namespace_impls::RestNamespaceBuilder::new(format!("http://{addr}")).build();
    let d = client
        .describe_namespace(DescribeNamespaceRequest {
            id: ids(&["a"]),
            ..Default::default()
        })
        .await
        .unwrap();
    let ctx = d.context.unwrap();
    assert_eq!(ctx["header.x-served-by"], "recorder");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backfill_jobs_are_queryable() {
    let (_env, base, c) = server(RestConfig::default()).await;
    post_json(&c, format!("{base}/v1/namespace/j/create"), json!({})).await;
    c.post(format!("{base}/v1/table/j%24t/create"))
        .header("content-type", ARROW)
        .body(rows(0, 5).to_vec())
        .send()
        .await
        .unwrap();
    let r = post_json(
        &c,
        format!("{base}/v1/table/j%24t/add_columns"),
        json!({"new_columns": [{"name": "y", "computed": "id + 100"}]}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let r = post_json(
        &c,
        format!("{base}/v1/table/j%24t/backfill_column"),
        json!({"column": "y"}),
    )
    .await;
    assert_eq!(r.status(), 202);
    let job: Value = r.json().await.unwrap();
    let job_id = job["job_id"].as_str().unwrap().to_string();
    let mut state = Value::Null;
    for _ in 0..200 {
        let r = post_json(&c, format!("{base}/v1/job/{job_id}/describe"), json!({})).await;
        state = r.json().await.unwrap();
        if state["state"] == "succeeded" || state["state"] == "failed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(state["state"], "succeeded", "{state}");
    assert_eq!(state["rows_written"], 5);
    assert_eq!(state["column"], "y");
    let r = post_json(&c, format!("{base}/v1/job/0000/describe"), json!({})).await;
    problem(r, StatusCode::NOT_FOUND, 10000).await;
}

/// A record left `running` by a process that died (as one would find it on
/// storage after a crash) is answered as failed once it has gone unrefreshed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_job_is_failed() {
    let (env, base, c) = server(RestConfig::default()).await;
    let jobs = env.root().join("_catalog").join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let record = |id: &str, silent_ms: u64| {
        let at = now_ms - silent_ms;
        let job = json!({"job_id": id, "kind": "backfill", "table": ["j", "t"],
                         "state": "running", "created_at_ms": at, "updated_at_ms": at});
        std::fs::write(jobs.join(format!("{id}.json")), job.to_string()).unwrap();
    };
    let dead = "00000000-0000-4000-8000-000000000001";
    let alive = "00000000-0000-4000-8000-000000000002";
    record(dead, 10 * 60 * 1000);
    record(alive, 1000);
    let describe = |id: &str| post_json(&c, format!("{base}/v1/job/{id}/describe"), json!({}));
    let state: Value = describe(dead).await.json().await.unwrap();
    assert_eq!(state["state"], "failed", "{state}");
    assert!(
        state["error"].as_str().unwrap().contains("stopped"),
        "{state}"
    );
    let state: Value = describe(alive).await.json().await.unwrap();
    assert_eq!(state["state"], "running", "{state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_capability_is_406_code_0() {
    let (_env, base, c) = server(RestConfig::default()).await;
    post_json(&c, format!("{base}/v1/namespace/u/create"), json!({})).await;
    c.post(format!("{base}/v1/table/u%24t/create"))
        .header("content-type", ARROW)
        .body(rows(0, 2).to_vec())
        .send()
        .await
        .unwrap();
    let udf = json!({"new_columns": [{"name": "e", "virtual_column": {
        "input_columns": ["s"], "image": "img:1", "udf": "def f(): ...", "udf_name": "f",
        "udf_version": "1",
        "outputs": [{"column": "e", "struct_field": "e", "data_type": {"type": "int64"}, "nullable": true}]
    }}]});
    let r = post_json(&c, format!("{base}/v1/table/u%24t/add_columns"), udf).await;
    assert_eq!(r.status(), 200);
    let r = post_json(
        &c,
        format!("{base}/v1/table/u%24t/backfill_column"),
        json!({"column": "e"}),
    )
    .await;
    let body = problem(r, StatusCode::NOT_ACCEPTABLE, 0).await;
    assert!(
        body["detail"].as_str().unwrap().contains("UDF runner"),
        "{body}"
    );
}
