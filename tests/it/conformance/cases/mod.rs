//! The conformance suite: each case takes `&dyn LanceNamespace` and checks
//! answers and spec error codes, whichever transport is underneath.

mod data;
mod jobs;
mod mistakes;
mod namespaces;
mod ownership;
mod tables;
mod versions;

pub use data::*;
pub use jobs::*;
pub use mistakes::*;
pub use namespaces::*;
pub use ownership::*;
pub use tables::*;
pub use versions::*;
