//! The conformance suite: each case takes `&dyn LanceNamespace` and checks
//! answers and spec error codes, whichever transport is underneath.

mod data;
mod namespaces;
mod tables;

pub use data::*;
pub use namespaces::*;
pub use tables::*;
