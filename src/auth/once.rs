//! One verification of a request's credentials, however many times the
//! layers below the transport ask who is calling. The transport floor
//! opens a request's scope ([`per_request`], for REST, gRPC and Flight
//! alike); the first verification that succeeds inside it is kept, and a
//! later ask with the same credentials gets the same caller without
//! verifying them again. Only a success is kept (a refusal ends the
//! request anyway), and only for the request: nothing outlives it, so a
//! revoked key or a changed password is seen by the next request.

use std::future::Future;
use std::sync::{Arc, Mutex};

use super::{Credentials, Principal};

/// The credentials verified in this request and the caller they stand for.
type Kept = Arc<Mutex<Option<(Credentials, Principal)>>>;

tokio::task_local! {
    static VERIFIED: Kept;
}

/// Run one request's work in a scope that keeps its verified caller.
pub async fn per_request<F: Future>(work: F) -> F::Output {
    VERIFIED.scope(Kept::default(), work).await
}

/// The caller verified earlier in this request for exactly `credentials`.
pub(super) fn recall(credentials: &Credentials) -> Option<Principal> {
    VERIFIED
        .try_with(|kept| {
            let kept = kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.as_ref()
                .filter(|(seen, _)| seen == credentials)
                .map(|(_, p)| p.clone())
        })
        .ok()
        .flatten()
}

/// Keep `principal` as what `credentials` stand for in this request (no
/// scope, no keeping: work outside a request verifies each time).
pub(super) fn remember(credentials: &Credentials, principal: &Principal) {
    let _ = VERIFIED.try_with(|kept| {
        *kept.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((credentials.clone(), principal.clone()));
    });
}
