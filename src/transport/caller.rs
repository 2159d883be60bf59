//! Every request of every transport is one scope for its caller: the
//! credentials are verified once (by whichever layer asks first, the
//! transport's early check in REST and gRPC, the governance layer's in
//! Flight) and every later ask in the request gets that answer
//! (`auth::once`).

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

/// The middleware opening a request's caller scope.
pub async fn one_caller(req: Request, next: Next) -> Response {
    crate::auth::once::per_request(next.run(req)).await
}
