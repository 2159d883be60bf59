//! What an operator sees of a running server: Prometheus metrics, one log
//! line per request, and readiness.
//!
//! Every request of every transport (REST, gRPC, Arrow Flight) passes one
//! middleware (`observe`) that names it, times it, counts its bytes and
//! writes its log line. What only deeper layers know (the operation's
//! name, the authenticated principal, the spec error code) they note on
//! the request's [`RequestInfo`], a task-local the middleware reads when
//! the answer is done.

pub mod logging;
pub mod metrics;
mod observe;

use std::sync::{Arc, Mutex};

use crate::error::Code;

pub use metrics::metrics;
pub use observe::{observe, plain_id, Transport};

tokio::task_local! {
    static REQUEST: Arc<RequestInfo>;
}

/// What the layers below the middleware learn about a request.
#[derive(Debug, Default)]
pub struct RequestInfo {
    pub id: String,
    operation: Mutex<Option<&'static str>>,
    principal: Mutex<Option<String>>,
    code: Mutex<Option<Code>>,
}

impl RequestInfo {
    fn operation(&self) -> Option<&'static str> {
        *self.operation.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn principal(&self) -> Option<String> {
        self.principal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
    fn code(&self) -> Option<Code> {
        *self.code.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn with_request(f: impl FnOnce(&RequestInfo)) {
    let _ = REQUEST.try_with(|r| f(r));
}

/// The operation the current request runs (its inventory name).
pub fn note_operation(name: &'static str) {
    with_request(|r| *r.operation.lock().unwrap_or_else(|e| e.into_inner()) = Some(name));
}

/// The principal the current request was authenticated as.
pub fn note_principal(id: &str) {
    with_request(|r| *r.principal.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.into()));
}

/// The spec error the current request is answered with.
pub fn note_error(code: Code) {
    with_request(|r| *r.code.lock().unwrap_or_else(|e| e.into_inner()) = Some(code));
}

/// The current request's id (the `x-request-id` its caller is shown).
pub fn request_id() -> Option<String> {
    REQUEST.try_with(|r| r.id.clone()).ok()
}
