//! `Idempotency-Key` on every transport, across two replicas of one root:
//! a retry of a change that answered gets that answer and does nothing
//! again; the same key with another request or body is refused (13); a
//! key is its caller's own; a key sent twice at once runs once; an
//! operation whose request or answer holds a secret takes no key.

use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::{Action, FlightDescriptor};
use futures::TryStreamExt;
use lance_catalog::grpc::pb;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::harness::{rows, serve_governed, token};

const KEY: &str = "idempotency-key";

/// Two replicas over one root, `root` their admin.
struct Two {
    a: String,
    b: String,
    _dir: TempDir,
}

async fn two() -> Two {
    let dir = tempfile::tempdir().unwrap();
    let a = serve_governed(dir.path(), |_| {}).await;
    let b = serve_governed(dir.path(), |_| {}).await;
    Two { a, b, _dir: dir }
}

/// [`two`], holding table `ns.t` of one row.
async fn with_table() -> Two {
    let t = two().await;
    let ns = post(
        &t.a,
        "root",
        "/v1/namespace/ns/create",
        None,
        Sent::Json(json!({})),
    )
    .await;
    assert_eq!(ns.0, StatusCode::OK, "{}", ns.1);
    let made = post(
        &t.a,
        "root",
        "/v1/table/ns$t/create",
        None,
        Sent::Arrow(rows(0, 1)),
    )
    .await;
    assert_eq!(made.0, StatusCode::OK, "{}", made.1);
    t
}

enum Sent {
    Json(Value),
    Arrow(bytes::Bytes),
}

/// POST `path` on `base` as `who`, with `key` when given.
async fn post(
    base: &str,
    who: &str,
    path: &str,
    key: Option<&str>,
    body: Sent,
) -> (StatusCode, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .bearer_auth(token(who, json!({})));
    if let Some(key) = key {
        req = req.header(KEY, key);
    }
    req = match body {
        Sent::Json(v) => req.json(&v),
        Sent::Arrow(b) => req
            .header("content-type", "application/vnd.apache.arrow.stream")
            .body(b),
    };
    let r = req.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn count(base: &str, table: &str) -> i64 {
    let (s, v) = post(
        base,
        "root",
        &format!("/v1/table/{table}/count_rows"),
        None,
        Sent::Json(json!({})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v.as_i64().unwrap()
}

fn refused(answer: &(StatusCode, Value), status: StatusCode, code: u64, says: &str) {
    assert_eq!(answer.0, status, "{}", answer.1);
    assert_eq!(answer.1["code"].as_u64(), Some(code), "{}", answer.1);
    let text = answer.1.to_string();
    assert!(text.contains(says), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_another_replica_gets_the_first_answer_and_does_nothing_again() {
    let t = two().await;
    let create_ns = "/v1/namespace/ns/create";
    let first = post(&t.a, "root", create_ns, Some("k-ns"), Sent::Json(json!({}))).await;
    assert_eq!(first.0, StatusCode::OK, "{}", first.1);
    let again = post(&t.b, "root", create_ns, Some("k-ns"), Sent::Json(json!({}))).await;
    assert_eq!(again, first);
    // Unkeyed, the same create is a conflict: the retry did not run it.
    let plain = post(&t.b, "root", create_ns, None, Sent::Json(json!({}))).await;
    assert_eq!(plain.0, StatusCode::CONFLICT, "{}", plain.1);
    // The same key for another request.
    let other = post(
        &t.a,
        "root",
        "/v1/namespace/other/create",
        Some("k-ns"),
        Sent::Json(json!({})),
    )
    .await;
    refused(
        &other,
        StatusCode::BAD_REQUEST,
        13,
        "first used for another request",
    );

    // A create whose body streams, retried on the other replica.
    let create = "/v1/table/ns$t/create";
    let made = post(&t.a, "root", create, Some("k-t"), Sent::Arrow(rows(0, 10))).await;
    assert_eq!(made.0, StatusCode::OK, "{}", made.1);
    let remade = post(&t.b, "root", create, Some("k-t"), Sent::Arrow(rows(0, 10))).await;
    assert_eq!(remade, made);
    assert_eq!(count(&t.a, "ns$t").await, 10);

    // An insert sent three times under one key adds its rows once.
    let insert = "/v1/table/ns$t/insert";
    let put = post(&t.a, "root", insert, Some("k-i"), Sent::Arrow(rows(10, 5))).await;
    assert_eq!(put.0, StatusCode::OK, "{}", put.1);
    for base in [&t.b, &t.a] {
        let again = post(base, "root", insert, Some("k-i"), Sent::Arrow(rows(10, 5))).await;
        assert_eq!(again, put);
    }
    assert_eq!(count(&t.b, "ns$t").await, 15);
    // The same key with other rows is refused, and writes nothing.
    let other = post(&t.b, "root", insert, Some("k-i"), Sent::Arrow(rows(100, 5))).await;
    refused(&other, StatusCode::BAD_REQUEST, 13, "another request body");
    assert_eq!(count(&t.a, "ns$t").await, 15);
    // A new key is a new insert.
    let next = post(
        &t.b,
        "root",
        insert,
        Some("k-i2"),
        Sent::Arrow(rows(100, 5)),
    )
    .await;
    assert_eq!(next.0, StatusCode::OK, "{}", next.1);
    assert_eq!(count(&t.a, "ns$t").await, 20);

    // A drop retried after it answered answers as it did, though the
    // table is gone (unkeyed, the same drop is a 404).
    let drop = "/v1/table/ns$t/drop";
    let dropped = post(&t.a, "root", drop, Some("k-d"), Sent::Json(json!({}))).await;
    assert_eq!(dropped.0, StatusCode::OK, "{}", dropped.1);
    let redropped = post(&t.b, "root", drop, Some("k-d"), Sent::Json(json!({}))).await;
    assert_eq!(redropped, dropped);
    let plain = post(&t.b, "root", drop, None, Sent::Json(json!({}))).await;
    assert_eq!(plain.0, StatusCode::NOT_FOUND, "{}", plain.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_is_its_callers_own_and_a_secret_takes_none() {
    let t = two().await;
    let create_ns = "/v1/namespace/mine/create";
    let first = post(
        &t.a,
        "root",
        create_ns,
        Some("shared"),
        Sent::Json(json!({})),
    )
    .await;
    assert_eq!(first.0, StatusCode::OK, "{}", first.1);
    // Another caller with the same key and request gets no replay of
    // root's answer: its own request is judged as its own (refused).
    let other = post(
        &t.b,
        "alice",
        create_ns,
        Some("shared"),
        Sent::Json(json!({})),
    )
    .await;
    assert_eq!(other.0, StatusCode::FORBIDDEN, "{}", other.1);
    // A new API key's answer is its secret, which is never kept.
    let minted = post(
        &t.a,
        "root",
        "/v1/api-keys",
        Some("k-key"),
        Sent::Json(json!({"principal": "bob"})),
    )
    .await;
    refused(&minted, StatusCode::BAD_REQUEST, 13, "holds a secret");
    // A key that is not one.
    let long = "k".repeat(300);
    let bad = post(
        &t.a,
        "root",
        "/v1/namespace/x/create",
        Some(&long),
        Sent::Json(json!({})),
    )
    .await;
    refused(&bad, StatusCode::BAD_REQUEST, 13, "Idempotency-Key must be");
    // A control-plane change, retried on the other replica.
    let project = json!({"project_id": "p1"});
    let made = post(
        &t.a,
        "root",
        "/v1/projects",
        Some("k-p"),
        Sent::Json(project.clone()),
    )
    .await;
    assert_eq!(made.0, StatusCode::OK, "{}", made.1);
    let remade = post(
        &t.b,
        "root",
        "/v1/projects",
        Some("k-p"),
        Sent::Json(project.clone()),
    )
    .await;
    assert_eq!(remade, made);
    let plain = post(&t.b, "root", "/v1/projects", None, Sent::Json(project)).await;
    assert_eq!(plain.0, StatusCode::CONFLICT, "{}", plain.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_key_sent_to_both_replicas_at_once_runs_once() {
    let t = with_table().await;
    for round in 0..4 {
        let key = format!("k-race-{round}");
        let insert = "/v1/table/ns$t/insert";
        let (x, y) = tokio::join!(
            post(&t.a, "root", insert, Some(&key), Sent::Arrow(rows(10, 5))),
            post(&t.b, "root", insert, Some(&key), Sent::Arrow(rows(10, 5))),
        );
        for answer in [&x, &y] {
            match answer.0 {
                StatusCode::OK => {}
                _ => refused(answer, StatusCode::CONFLICT, 14, "still running"),
            }
        }
        assert!(
            x.0 == StatusCode::OK || y.0 == StatusCode::OK,
            "{x:?} {y:?}"
        );
        if x.0 == StatusCode::OK && y.0 == StatusCode::OK {
            assert_eq!(x, y);
        }
        assert_eq!(count(&t.a, "ns$t").await, 1 + 5 * (round + 1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_metadata_and_flight_headers_carry_the_key() {
    let t = with_table().await;

    // gRPC: the key in the call's metadata, on each replica in turn.
    let bearer = format!("Bearer {}", token("root", json!({})));
    let mut answers = Vec::new();
    for base in [&t.a, &t.b] {
        let mut client =
            pb::lance_namespace_service_client::LanceNamespaceServiceClient::connect(base.clone())
                .await
                .unwrap();
        let mut req = tonic::Request::new(pb::InsertIntoTableRequest {
            id: vec!["ns".into(), "t".into()],
            data: rows(1, 3).to_vec(),
            ..Default::default()
        });
        req.metadata_mut()
            .insert("authorization", bearer.parse().unwrap());
        req.metadata_mut().insert(KEY, "k-grpc".parse().unwrap());
        answers.push(client.insert_into_table(req).await.unwrap().into_inner());
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(count(&t.a, "ns$t").await, 4);

    // Flight: DoPut and an action, the key in the call's headers.
    let mut puts = Vec::new();
    let mut made = Vec::new();
    for base in [&t.a, &t.b] {
        let mut client = crate::transport::flight::signed_in(base, "root").await;
        client.add_header(KEY, "k-flight").unwrap();
        let descriptor = FlightDescriptor::new_cmd(
            json!({"op": "insert_into_table", "id": ["ns", "t"]}).to_string(),
        );
        let input = futures::stream::iter([Ok(crate::harness::batch(50, 7))]);
        let data = FlightDataEncoderBuilder::new()
            .with_flight_descriptor(Some(descriptor))
            .build(input);
        let results: Vec<_> = client
            .do_put(data)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        puts.push(results[0].app_metadata.clone());
        let action = Action::new("create_namespace", json!({"id": ["flight_ns"]}).to_string());
        let mut action_client = crate::transport::flight::signed_in(base, "root").await;
        action_client.add_header(KEY, "k-flight-ns").unwrap();
        let answer: Vec<_> = action_client
            .do_action(action)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        made.push(answer);
    }
    assert_eq!(puts[0], puts[1]);
    assert_eq!(made[0], made[1]);
    assert_eq!(count(&t.b, "ns$t").await, 11);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_change_releases_its_key_and_an_expired_key_is_swept() {
    let dir = tempfile::tempdir().unwrap();
    let ttl = std::time::Duration::from_secs(2);
    let (base, gov) =
        crate::harness::serve_governed_with(dir.path(), |c| c.idempotency_ttl = Some(ttl)).await;
    post(
        &base,
        "root",
        "/v1/namespace/ns/create",
        None,
        Sent::Json(json!({})),
    )
    .await;
    // The table is not there yet: the insert fails, and did nothing...
    let insert = "/v1/table/ns$t/insert";
    let failed = post(
        &base,
        "root",
        insert,
        Some("k-late"),
        Sent::Arrow(rows(0, 3)),
    )
    .await;
    assert_eq!(failed.0, StatusCode::NOT_FOUND, "{}", failed.1);
    // ...so its retry runs, once the table is.
    let made = post(
        &base,
        "root",
        "/v1/table/ns$t/create",
        None,
        Sent::Arrow(rows(0, 1)),
    )
    .await;
    assert_eq!(made.0, StatusCode::OK, "{}", made.1);
    let ran = post(
        &base,
        "root",
        insert,
        Some("k-late"),
        Sent::Arrow(rows(0, 3)),
    )
    .await;
    assert_eq!(ran.0, StatusCode::OK, "{}", ran.1);
    assert_eq!(count(&base, "ns$t").await, 4);
    // Past its time to live a key names nothing: the same insert runs
    // again, and the sweep removes what is left.
    tokio::time::sleep(ttl + std::time::Duration::from_millis(200)).await;
    let again = post(
        &base,
        "root",
        insert,
        Some("k-late"),
        Sent::Arrow(rows(0, 3)),
    )
    .await;
    assert_eq!(again.0, StatusCode::OK, "{}", again.1);
    assert_eq!(count(&base, "ns$t").await, 7);
    tokio::time::sleep(ttl + std::time::Duration::from_millis(200)).await;
    assert_eq!(gov.sweep_idempotency_keys().await.unwrap(), 1);
    let kept = dir.path().join("data/_catalog/control/idempotency");
    let left = std::fs::read_dir(&kept).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "{kept:?}");
}
