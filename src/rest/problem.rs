//! Error answers: RFC 9457 problem documents that also carry the spec's
//! `error` and `code` members, which Lance clients classify by.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::CatalogError;

/// A REST error: the catalog error plus the request path it answers.
#[derive(Debug)]
pub struct Problem {
    pub error: CatalogError,
    /// Overrides the code's status where HTTP has a more precise one for a
    /// transport-level failure (404 unknown route, 405 wrong method, 413 too
    /// large). Domain errors always use the status table.
    pub status: Option<StatusCode>,
    pub instance: String,
    /// The request id the caller gets in `x-request-id`, for the log line
    /// of an internal error.
    pub request_id: Option<String>,
    /// The maintenance API's shape: `error` is the error's name (e.g.
    /// `TaskNotFound`) and `instance` the request id.
    pub named: bool,
}

impl Problem {
    pub fn new(error: CatalogError, instance: impl Into<String>) -> Self {
        Self {
            error,
            status: None,
            instance: instance.into(),
            request_id: None,
            named: false,
        }
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = Some(status);
        self
    }

    pub fn with_request_id(mut self, request_id: &str) -> Self {
        self.request_id = Some(request_id.to_string());
        self
    }

    /// Answer in the maintenance API's shape.
    pub fn named(mut self, named: bool) -> Self {
        self.named = named;
        self
    }

    pub fn invalid(message: impl Into<String>, instance: impl Into<String>) -> Self {
        Self::new(CatalogError::invalid(message), instance)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let code = self.error.code;
        crate::telemetry::note_error(code);
        let status = self.status.unwrap_or_else(|| {
            StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        });
        let request_id = self
            .request_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let message = self.error.public_message(&request_id, &self.instance);
        let (error, instance) = match self.named {
            true => (code.name().to_string(), request_id.clone()),
            false => (message.clone(), self.instance.clone()),
        };
        let body = json!({
            "type": format!("urn:lance-namespace:error:{}", code.0),
            "title": code.name(),
            "status": status.as_u16(),
            "detail": message,
            "instance": instance,
            "error": error,
            "code": code.0,
        });
        let mut resp = (status, body.to_string()).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if status == StatusCode::UNAUTHORIZED {
            // What credentials the server takes (RFC 9110, 11.6.1). Not
            // Basic, though local users sign in so: a browser offered it
            // pops its own dialog over the console's sign-in.
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(
                    "Bearer realm=\"lance-catalog\", ApiKey header=\"x-api-key\"",
                ),
            );
        }
        resp
    }
}
