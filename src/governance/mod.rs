//! Governance above the spec: the `project > warehouse > namespace > table`
//! hierarchy's registries, kept as records on the control root.

pub mod models;
mod registry;

pub use registry::Registry;
