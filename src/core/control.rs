//! The control plane's contract, as the core's callers have named it
//! (`crate::api::control`).

pub use crate::api::control::*;
