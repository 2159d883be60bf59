//! The floor every transport stands on: what REST, gRPC and Flight share,
//! so none of them imports another. `headers` reads a request's
//! credentials and context from its headers (or gRPC metadata); `status`
//! maps the one error type to gRPC statuses and back (gRPC and Flight).

pub mod headers;
pub mod status;
