//! The caller of a control-plane operation. Spec requests carry their
//! identity in the request (`identity`); the control plane's own models do
//! not, so each transport runs the call inside the caller's scope.

use std::future::Future;

use crate::auth::Credentials;

tokio::task_local! {
    static CALLER: Credentials;
    static REQUEST_ID: String;
}

/// Run `f` as the request `id` (the `x-request-id` the caller is shown),
/// so the audit trail names it.
pub async fn with_request_id<F: Future>(id: String, f: F) -> F::Output {
    REQUEST_ID.scope(id, f).await
}

/// The current request's id, when a transport named one.
pub fn request_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Run `f` as the caller holding `credentials`.
pub async fn as_caller<F: Future>(credentials: Credentials, f: F) -> F::Output {
    CALLER.scope(credentials, f).await
}

/// The current caller's credentials (none outside a caller's scope).
pub fn current() -> Credentials {
    CALLER.try_with(Clone::clone).unwrap_or_default()
}
