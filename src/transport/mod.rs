//! The floor every transport stands on: what REST, gRPC and Flight share,
//! so none of them imports another. `headers` reads a request's
//! credentials and context from its headers (or gRPC metadata); `caller`
//! makes each request one scope whose credentials are verified once;
//! `status` maps the one error type to gRPC statuses and back (gRPC and
//! Flight).

pub mod caller;
pub mod dispatch;
pub mod headers;
pub mod status;
