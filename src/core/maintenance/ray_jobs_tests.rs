//! The Jobs API client against a stand-in of Ray's dashboard on loopback
//! (the Python suite runs against a real head): the token on every call,
//! a duplicate submit told by a second look rather than by Ray's wording,
//! an unknown job, a stop.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use super::{JobsApi, Submitted};
use crate::error::Code;

type Jobs = Arc<Mutex<HashMap<String, String>>>;

fn authorized(h: &HeaderMap) -> bool {
    h.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer ray-secret")
}

async fn fake_ray() -> String {
    let jobs: Jobs = Arc::default();
    let app = Router::new()
        .route(
            "/api/jobs/",
            post(
                |State(jobs): State<Jobs>, h: HeaderMap, Json(body): Json<Value>| async move {
                    if !authorized(&h) {
                        return (StatusCode::UNAUTHORIZED, "Unauthorized".to_string());
                    }
                    let id = body["submission_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    let mut jobs = jobs.lock().unwrap();
                    if jobs.contains_key(&id) {
                        // Worded unlike Ray 2.60, on purpose.
                        return (
                            StatusCode::BAD_REQUEST,
                            "Traceback …\nValueError: id taken\n".into(),
                        );
                    }
                    jobs.insert(id.clone(), "RUNNING".into());
                    (
                        StatusCode::OK,
                        json!({"job_id": null, "submission_id": id}).to_string(),
                    )
                },
            ),
        )
        .route(
            "/api/jobs/{id}",
            get(
                |State(jobs): State<Jobs>, Path(id): Path<String>| async move {
                    match jobs.lock().unwrap().get(&id) {
                        Some(s) => (
                            StatusCode::OK,
                            json!({"status": s, "message": "ok"}).to_string(),
                        ),
                        None => (StatusCode::NOT_FOUND, format!("Job {id} does not exist")),
                    }
                },
            ),
        )
        .route(
            "/api/jobs/{id}/logs",
            get(|| async { Json(json!({"logs": "x\nLANCE_CATALOG_RESULT {\"a\": 1}\n"})) }),
        )
        .route(
            "/api/jobs/{id}/stop",
            post(
                |State(jobs): State<Jobs>, Path(id): Path<String>| async move {
                    match jobs.lock().unwrap().get_mut(&id) {
                        Some(s) => {
                            *s = "STOPPED".into();
                            (StatusCode::OK, json!({"stopped": true}).to_string())
                        }
                        None => (StatusCode::NOT_FOUND, format!("Job {id} does not exist")),
                    }
                },
            ),
        )
        .with_state(jobs);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/")
}

#[tokio::test]
async fn the_client_speaks_the_jobs_api() {
    let base = fake_ray().await;
    let api = JobsApi::new(&base, Some("ray-secret".into())).unwrap();
    assert_eq!(api.base(), base.trim_end_matches('/'));
    let body = json!({"entrypoint": "python -c pass", "submission_id": "t1"});
    assert_eq!(api.submit("t1", &body).await.unwrap(), Submitted::New);
    // The same id again: the job is there, so it is this task's.
    assert_eq!(api.submit("t1", &body).await.unwrap(), Submitted::Exists);
    assert_eq!(api.get("t1").await.unwrap().unwrap().status, "RUNNING");
    assert!(api.get("nope").await.unwrap().is_none());
    assert!(api
        .logs("t1")
        .await
        .unwrap()
        .contains("LANCE_CATALOG_RESULT"));
    api.stop("t1").await.unwrap();
    assert_eq!(api.get("t1").await.unwrap().unwrap().status, "STOPPED");
    // Stopping a job the cluster does not know is not an error.
    api.stop("nope").await.unwrap();
}

#[tokio::test]
async fn a_wrong_token_or_no_cluster_says_so() {
    let base = fake_ray().await;
    let wrong = JobsApi::new(&base, Some("guess".into())).unwrap();
    let e = wrong
        .submit("t2", &json!({"submission_id": "t2"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::SERVICE_UNAVAILABLE);
    assert!(e.message.contains("--ray-token"), "{}", e.message);
    assert!(!e.message.contains("guess"), "{}", e.message);
    let gone = JobsApi::new("http://127.0.0.1:9", None).unwrap();
    let e = gone.get("t").await.unwrap_err();
    assert_eq!(e.code, Code::SERVICE_UNAVAILABLE);
    assert!(e.message.contains("did not answer"), "{}", e.message);
    for bad in [
        "ray-head:8265",
        "ftp://x",
        "not a url",
        "http://u:p@ray:8265",
    ] {
        assert!(JobsApi::new(bad, None).is_err(), "{bad}");
    }
}
