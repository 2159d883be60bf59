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
//! | the audit trail | `audit.rs` |
//! | recoverable drops: grace, undrop, trash listing, purge, sweep | `trash.rs` |
//! | maintenance tasks: the governed API and the worker pool | `maintenance.rs` |
//! | a view of one warehouse for any `LanceNamespace` | `scoped.rs` |

mod access;
mod audit;
mod bindings;
mod config;
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
mod open;
mod ops;
mod plane;
mod registry;
mod router;
mod scoped;
mod spec;
mod targets;
pub mod trash;
mod visible;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crate::core::Catalog;
use guard::{Authorizer, Hooks};

pub use bindings::Binding;
pub use config::{AuthConfig, GovernanceConfig};
pub use duration::parse_duration;
pub use maintenance::MaintenanceConfig;
pub use models::{DEFAULT_PROJECT, DEFAULT_WAREHOUSE};
pub use registry::Registry;
pub use scoped::Scoped;
pub use trash::TrashConfig;

/// The catalog an operation runs on, and its warehouse.
#[derive(Debug, Clone)]
pub struct Route {
    pub warehouse: String,
    pub catalog: Arc<Catalog>,
}

/// The hierarchy above the core: registries, routing, guards.
pub struct Governance {
    registry: Registry,
    warehouses: bool,
    home: Arc<Catalog>,
    control_root: String,
    /// Open catalogs by warehouse, with the root each was opened at.
    catalogs: tokio::sync::Mutex<HashMap<String, (String, Arc<Catalog>)>>,
    bound: std::sync::Mutex<HashMap<String, (String, Instant)>>,
    authorizer: Arc<dyn Authorizer>,
    hooks: Arc<dyn Hooks>,
    /// Who is calling (API keys, JWTs).
    auth: Arc<crate::auth::Authenticator>,
    /// The policies, when authentication is required.
    cedar: Option<Arc<crate::auth::cedar::CedarAuthorizer>>,
    grants: grants::GrantCache,
    /// Denials stored per principal this minute (the rest are only logged).
    denials: std::sync::Mutex<HashMap<String, (Instant, u32)>>,
    /// The server's trash settings (a project may have its own).
    trash: TrashConfig,
    /// How maintenance tasks are kept and run.
    maintenance: MaintenanceConfig,
    /// The latest readiness check's outcome (see `health.rs`).
    ready: tokio::sync::watch::Sender<Option<String>>,
}

impl std::fmt::Debug for Governance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Governance")
            .field("root", &self.home.root())
            .field("control_root", &self.control_root)
            .field("warehouses", &self.warehouses)
            .finish()
    }
}
