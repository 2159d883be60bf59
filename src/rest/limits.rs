//! Transport-level protection of the REST gateway: header limits answered
//! as problem documents (hyper's own limits are set higher, since it can
//! only answer with an empty body), a body-idle timeout, and a last net that
//! turns any error response not already a problem document into one.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body::{Frame, SizeHint};

use super::problem::Problem;
use crate::error::{CatalogError, Code};

/// The header that names a request, for callers and the server log.
pub const REQUEST_ID: &str = "x-request-id";

/// Most request headers the gateway reads; more answers 431.
pub const MAX_HEADERS: usize = 100;
/// Most bytes of request headers (names and values) the gateway reads.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// The header count hyper itself allows: above ours, so that ours answers
/// with a problem document; past it hyper closes with a bare 431.
pub const HYPER_MAX_HEADERS: usize = 1024;

/// Refuse oversized header sections with a problem document, and give the
/// request body an idle timeout.
pub async fn limits(idle: Duration, req: Request, next: Next) -> Response {
    let instance = req.uri().path().to_string();
    let headers = req.headers();
    let bytes: usize = headers
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len())
        .sum();
    if headers.len() > MAX_HEADERS || bytes > MAX_HEADER_BYTES {
        return Problem::invalid(
            format!(
                "the request has {} headers ({bytes} bytes); the limit is {MAX_HEADERS} headers and {MAX_HEADER_BYTES} bytes",
                headers.len()
            ),
            instance,
        )
        .with_status(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
        .into_response();
    }
    // One request id for the whole request: the caller's, or a fresh one.
    let mut req = req;
    let given = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|id| crate::telemetry::plain_id(id))
        .map(str::to_string);
    let request_id = match given {
        Some(id) => id,
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            if let Ok(v) = HeaderValue::from_str(&id) {
                req.headers_mut().insert(REQUEST_ID, v);
            }
            id
        }
    };
    let (parts, body) = req.into_parts();
    let body = Body::new(IdleBody {
        inner: body,
        idle,
        timer: Box::pin(tokio::time::sleep(idle)),
    });
    // A panic anywhere below is a bug, answered as one internal error
    // instead of a dropped connection.
    let run = std::panic::AssertUnwindSafe(next.run(Request::from_parts(parts, body)));
    let resp = match futures::FutureExt::catch_unwind(run).await {
        Ok(resp) => resp,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(request_id = %request_id, instance = %instance, panic = %what, "request handler panicked");
            let mut resp = Problem::new(
                CatalogError::internal("the request handler panicked"),
                instance.clone(),
            )
            .with_request_id(&request_id)
            .into_response();
            if let Ok(v) = HeaderValue::from_str(&request_id) {
                resp.headers_mut().insert(REQUEST_ID, v);
            }
            resp
        }
    };
    let mut resp = problem_net(resp, &instance, &request_id);
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        resp.headers_mut().entry(REQUEST_ID).or_insert(v);
    }
    resp
}

/// Any error response that is not yet a problem document (an extractor's
/// plain-text rejection, an empty-bodied status) becomes one, keeping its
/// status; the code follows the status.
fn problem_net(resp: Response, instance: &str, request_id: &str) -> Response {
    let status = resp.status();
    let is_problem = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return resp;
    }
    let code = match status.as_u16() {
        401 => Code::UNAUTHENTICATED,
        429 => Code::THROTTLING,
        503 | 504 => Code::SERVICE_UNAVAILABLE,
        s if s >= 500 => Code::INTERNAL,
        _ => Code::INVALID_INPUT,
    };
    let reason = status.canonical_reason().unwrap_or("error");
    tracing::debug!(%status, instance, "error response without a problem body: wrapped");
    let (parts, _) = resp.into_parts();
    let mut wrapped = Problem::new(
        CatalogError::new(code, format!("{reason} ({})", status.as_u16())),
        instance,
    )
    .with_status(status)
    .with_request_id(request_id)
    .into_response();
    // Keep the original's headers (`allow`, `retry-after`, …) but its body's.
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            wrapped.headers_mut().insert(name.clone(), value.clone());
        }
    }
    wrapped
}

/// The error a request body stream ends with when the client stops sending.
#[derive(Debug)]
pub struct BodyIdle(pub Duration);

impl std::fmt::Display for BodyIdle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the client sent no request body data for {} s",
            self.0.as_secs_f64()
        )
    }
}

impl std::error::Error for BodyIdle {}

/// A request body that fails with [`BodyIdle`] when no data arrives for
/// `idle`; the timer restarts on every frame.
struct IdleBody {
    inner: Body,
    idle: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl http_body::Body for IdleBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                let next = tokio::time::Instant::now() + this.idle;
                this.timer.as_mut().reset(next);
                Poll::Ready(frame)
            }
            Poll::Pending => match this.timer.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(BodyIdle(this.idle))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Whether a body-read error is the idle timeout.
pub fn is_idle_timeout(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if e.is::<BodyIdle>() {
            return true;
        }
        cur = e.source();
    }
    false
}
