//! Governance above the spec: the `project > warehouse > namespace > table`
//! hierarchy and who may touch it.
//!
//! | what | file |
//! |---|---|
//! | registries on the control root: projects, warehouses, bindings | `registry.rs`, `bindings.rs` |
//! | routing each request to its warehouse's core `Catalog` | `router.rs`, `ops.rs` |
//! | the spec's 54 operations over the hierarchy | `spec.rs`, `visible.rs` (what lists show) |
//! | the control plane; the door for top-level namespaces | `plane.rs`, `targets.rs`, `control.rs` |
//! | grant management: create, list, revoke | `grant_ops.rs` |
//! | the guard order's slots; grants, Cedar, ownership | `guard.rs`, `grants.rs`, `access.rs` |
//! | which object a request is about: minted and looked-up real ids | `objects.rs` |
//! | the audit trail; the caller of a control-plane call | `audit.rs`, `caller.rs` |
//! | recoverable drops: grace, undrop, trash listing, purge, sweep | `trash.rs` |
//! | maintenance tasks: the governed API and the worker pool | `maintenance.rs` |
//! | a view of one warehouse for any `LanceNamespace` | `scoped.rs` |

mod access;
mod audit;
mod bindings;
pub mod caller;
mod control;
mod data;
mod duration;
mod grant_ops;
mod grants;
pub mod guard;
mod health;
mod maintenance;
pub mod models;
mod objects;
mod ops;
mod plane;
mod registry;
mod router;
mod scoped;
mod spec;
mod targets;
pub mod trash;
mod visible;

pub use bindings::Binding;
pub use duration::parse_duration;
pub use maintenance::MaintenanceConfig;
pub use registry::Registry;
pub use router::{
    AuthConfig, Governance, GovernanceConfig, Route, DEFAULT_PROJECT, DEFAULT_WAREHOUSE,
};
pub use scoped::Scoped;
pub use trash::TrashConfig;
