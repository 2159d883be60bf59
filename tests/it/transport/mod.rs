//! Each transport's own wire, beyond the conformance cases: REST as a
//! plain HTTP client sees it (`wire`) and as a hostile one does
//! (`hostile`), gRPC, Arrow Flight, and the web console's files.

mod authentication;
mod console;
pub(crate) mod flight;
mod flight_actions;
pub(crate) mod flight_namespace;
mod grpc;
mod hostile;
pub(crate) mod wire;
