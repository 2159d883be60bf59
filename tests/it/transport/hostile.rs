//! Hostile and sloppy HTTP: every error is a problem document with a code,
//! stalled clients are cut off, and bodies Lance's clients really send
//! (`null`, nothing) are accepted.

use std::time::Duration;

use lance_catalog::rest::RestConfig;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::rows;
use crate::transport::wire::{problem, server};

const ARROW: &str = "application/vnd.apache.arrow.stream";

/// lancedb sends `null` as the body of `version/list`; others send nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_and_empty_json_bodies_are_empty_requests() {
    let (_env, base, c) = server(RestConfig::default()).await;
    let r = c
        .post(format!("{base}/v1/namespace/n/create"))
        .header("content-type", "application/json")
        .body("null")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = c
        .post(format!("{base}/v1/table/n%24t/create"))
        .header("content-type", ARROW)
        .body(rows(0, 3))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    for body in ["null", "", " null "] {
        let r = c
            .post(format!("{base}/v1/table/n%24t/version/list"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "body {body:?}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["versions"].as_array().unwrap().len(), 1, "{v}");
    }
    // Anything else that is not an object is still refused.
    let r = c
        .post(format!("{base}/v1/table/n%24t/version/list"))
        .header("content-type", "application/json")
        .body("[1]")
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::BAD_REQUEST, 13).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_paths_and_header_floods_are_problems() {
    let (_env, base, c) = server(RestConfig::default()).await;
    let r = c
        .post(format!("{base}/v1/namespace/%ff%fe/describe"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let body = problem(r, StatusCode::BAD_REQUEST, 13).await;
    assert!(body["error"].as_str().unwrap().contains("UTF-8"), "{body}");
    let r = c
        .post(format!("{base}/v1/job/%ff/describe"))
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::BAD_REQUEST, 13).await;

    let mut req = c.post(format!("{base}/v1/namespace/a/describe"));
    for i in 0..150 {
        req = req.header(format!("x-flood-{i}"), "v");
    }
    let r = req.json(&json!({})).send().await.unwrap();
    problem(r, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, 13).await;
    let r = c
        .post(format!("{base}/v1/namespace/a/describe"))
        .header("x-huge", "v".repeat(70 * 1024))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    problem(r, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, 13).await;
}

async fn raw(base: &str, request: &[u8]) -> tokio::net::TcpStream {
    let addr = base.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    s
}

/// What the server sends until it closes the connection or finishes a JSON
/// body; None if it neither answers nor closes within `wait`.
async fn read_answer(s: &mut tokio::net::TcpStream, wait: Duration) -> Option<String> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + wait;
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => {
                out.extend_from_slice(&buf[..n]);
                if out.ends_with(b"}") {
                    break;
                }
            }
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_clients_are_cut_off() {
    let config = RestConfig {
        header_read_timeout: Duration::from_millis(500),
        body_idle_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let (_env, base, _c) = server(config).await;
    // Headers that never end: the connection is closed.
    let mut s = raw(
        &base,
        b"POST /v1/namespace/a/create HTTP/1.1\r\nHost: x\r\n",
    )
    .await;
    let answer = read_answer(&mut s, Duration::from_secs(10)).await;
    assert!(
        answer.is_some(),
        "a stalled header section was never cut off"
    );
    // A body that stops: 408 with a problem document, then closed.
    let mut s = raw(
        &base,
        b"POST /v1/namespace/a/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"pro",
    )
    .await;
    let answer = read_answer(&mut s, Duration::from_secs(10))
        .await
        .expect("a stalled body was never cut off");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
    assert!(answer.contains("\"code\":13"), "{answer}");
}
