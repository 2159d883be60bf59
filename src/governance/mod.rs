//! Governance above the spec: the `project > warehouse > namespace > table`
//! hierarchy and who may touch it.
//!
//! | what | file |
//! |---|---|
//! | the `Governance` struct and the `Route` a request takes | `mod.rs` |
//! | its settings; opening it (registries, auth, Cedar, real ids) | `config.rs`, `open.rs` |
//! | registries on the control root: projects, warehouses, bindings | `registry.rs`, `bindings.rs` |
//! | routing each request to its warehouse's core `Catalog` | `router.rs` |
//! | the spec's 54 operations over the hierarchy: one admit, one finish | `spec.rs` |
//! | the bodies that stream (REST create/insert/query, Flight) | `streams.rs` |
//! | the control plane, a file per concern, served per call (grant management in `plane/grants.rs`) | `plane/` |
//! | the door for top-level namespaces; warehouse roots | `door.rs` |
//! | admission: the guard order's slots, what a typed request names (`SpecRequest`), authorization and what a write does to grants (`authorize.rs`), Cedar (`cedar.rs`), real ids (`objects.rs`), what lists show (`visible.rs`), the caller an entry hands on (`sight.rs`), task keys (`task_key.rs`) | `guard/` |
//! | grant records and the relations they give | `grants.rs` |
//! | the audit trail: events, the sink, the store and its upkeep | `audit/` |
//! | recoverable drops: grace, undrop, trash listing, purge, sweep | `trash.rs` |
//! | removing what creates that died left (stale intents) | `leftovers.rs` |
//! | maintenance policy records and their winner-takes-all resolution | `policy_records.rs` |
//! | the scheduler: rounds by policy, tasks through the queue | `scheduler.rs` |
//! | sweep and index health of whole warehouses (projects, the CLI) | `estate_reports.rs` |
//! | the estate reconciler: drift between registries, manifests, storage | `drift.rs` |
//! | maintenance tasks: the governed API and the worker pool | `maintenance.rs` |
//! | readiness; a view of one warehouse for any `Spec` | `health.rs`, `scoped.rs` |
//! | credentials vended with the answers that hand a table | `vending.rs` |
//! | durations (`7d`, `90m`) | `duration.rs` |

mod audit;
mod bindings;
mod clones;
mod config;
mod door;
pub(crate) mod drift;
mod duration;
mod estate_reports;
mod grants;
pub mod guard;
mod health;
mod leftovers;
mod maintenance;
pub mod models;
mod once;
mod open;
mod plane;
mod policy_records;
mod registry;
mod router;
mod scheduler;
mod scoped;
mod sign_in;
mod spec;
mod streams;
pub mod trash;
mod vending;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crate::core::Catalog;
use guard::{Authorizer, Hooks};

pub use audit::sink::SinkConfig;
pub use audit::store::{AuditStore, UpkeepReport};
pub use bindings::Binding;
pub use config::{AuthConfig, GovernanceConfig};
pub use duration::parse_duration;
pub use maintenance::MaintenanceConfig;
pub use models::{DEFAULT_PROJECT, DEFAULT_WAREHOUSE};
pub use once::{StreamedBody, Tap};
pub use policy_records::{check_fields as check_policy_fields, PolicyDefaults};
pub use registry::Registry;
pub use scheduler::{SchedulePass, SCHEDULER};
pub use scoped::Scoped;
pub use streams::{Batches, Put};
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
    /// The estate's references, installed on every catalog it opens (the
    /// cleanup pre-pass; see `clones.rs`).
    estate: Arc<clones::EstateHook>,
    warehouses: bool,
    home: Arc<Catalog>,
    control_root: String,
    /// Open catalogs by warehouse, with what each was opened from (root and
    /// vending settings).
    catalogs: tokio::sync::Mutex<HashMap<String, (String, Arc<Catalog>)>>,
    bound: std::sync::Mutex<HashMap<String, (String, Instant)>>,
    /// Who decides, in order; all must allow (Cedar's policies first when
    /// authentication is required; none: everything is allowed).
    authorizers: Vec<Arc<dyn Authorizer>>,
    hooks: Arc<dyn Hooks>,
    /// Who is calling (API keys, JWTs).
    auth: Arc<crate::auth::Authenticator>,
    grants: grants::GrantCache,
    /// Denials stored per principal this minute (the rest are only logged).
    denials: std::sync::Mutex<HashMap<String, (Instant, u32)>>,
    /// The server's trash settings (a policy record may say otherwise).
    trash: TrashConfig,
    /// The server's other maintenance policy fields.
    policy_defaults: PolicyDefaults,
    /// How maintenance tasks are kept and run.
    maintenance: MaintenanceConfig,
    /// How long an `Idempotency-Key` and its answer are kept (`once/`).
    idempotency_ttl: std::time::Duration,
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
