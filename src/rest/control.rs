//! The catalog's own routes beside the spec's, in the same grammar
//! (`POST /v1/<object>/{id}/<action>`) and with the same error bodies.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};

use super::method_not_allowed;
use super::problem::Problem;
use crate::core::Catalog;

pub fn routes(catalog: Arc<Catalog>) -> Router {
    Router::new()
        .route(
            "/v1/job/{id}/describe",
            post(describe_job).fallback(method_not_allowed),
        )
        .with_state(catalog)
}

/// A backfill or refresh job: state, error, rows written, version.
async fn describe_job(
    State(catalog): State<Arc<Catalog>>,
    id: Result<Path<String>, PathRejection>,
    uri: axum::http::Uri,
) -> Response {
    let id = match id {
        Ok(Path(id)) => id,
        Err(e) => return super::path_problem(&e, uri.path()).into_response(),
    };
    match catalog.job(&id).await {
        Ok(job) => Json(job).into_response(),
        Err(e) => Problem::new(e, format!("/v1/job/{id}/describe")).into_response(),
    }
}
