//! Governance above the spec: the `project > warehouse > namespace > table`
//! hierarchy. Its registries are records on the control root
//! (`registry.rs`, `bindings.rs`); `router.rs` routes each spec operation
//! to its warehouse's core `Catalog`, `spec.rs` and `control.rs` serve the
//! spec and the control plane through the guard order of `guard.rs`, and
//! `scoped.rs` is a view of one warehouse for any `LanceNamespace`.

mod access;
mod access_models;
mod audit;
mod bindings;
pub mod caller;
mod control;
mod grants;
pub mod guard;
pub mod models;
mod plane;
mod registry;
mod router;
mod scoped;
mod spec;
mod visible;

pub use bindings::Binding;
pub use registry::Registry;
pub use router::{
    AuthConfig, Governance, GovernanceConfig, Route, DEFAULT_PROJECT, DEFAULT_WAREHOUSE,
};
pub use scoped::Scoped;
