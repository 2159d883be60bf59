//! Endpoints for the platform rather than for Lance clients: liveness,
//! readiness, Prometheus metrics and the OpenAPI document. They need no credentials (kubelets and
//! scrapers carry none) and reveal no table.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::problem::Problem;
use crate::error::{CatalogError, Code};
use crate::governance::Governance;

/// The OpenMetrics text format, which Prometheus asks for and prefers.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub(super) fn routes(gov: Arc<Governance>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .with_state(gov)
}

/// The process is alive and serving HTTP; storage is not consulted (a
/// storage outage must not get every replica restarted).
async fn healthz() -> Response {
    json_ok(serde_json::json!({"status": "ok"}))
}

/// The storage root and the control root answered the latest check (one
/// runs every few seconds); 503 with the reason when not, so a load
/// balancer stops sending requests here.
async fn readyz(State(gov): State<Arc<Governance>>) -> Response {
    match gov.ready_now() {
        Ok(()) => json_ok(serde_json::json!({"status": "ready"})),
        Err(reason) => Problem::new(
            CatalogError::new(Code::SERVICE_UNAVAILABLE, format!("not ready: {reason}")),
            "/readyz",
        )
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
        .into_response(),
    }
}

async fn metrics() -> Response {
    (
        [(header::CONTENT_TYPE, OPENMETRICS)],
        crate::telemetry::metrics().encode(),
    )
        .into_response()
}

/// The OpenAPI document of every route served (see `openapi.rs`).
async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        super::openapi::served(),
    )
        .into_response()
}

fn json_ok(body: serde_json::Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
