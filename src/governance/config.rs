//! The governance layer's settings, as the server's flags and config file
//! give them.

use crate::core::StorageConfig;

/// Settings of the governance layer.
#[derive(Debug, Clone, Default)]
pub struct GovernanceConfig {
    /// The default warehouse's root (`--root`).
    pub storage: StorageConfig,
    /// Where the registries live; `None`: `<root>/_catalog/control`.
    pub control_root: Option<String>,
    /// `--warehouses on`: top-level namespaces are created through their
    /// warehouse and bound to it.
    pub warehouses: bool,
    /// Authentication and authorization.
    pub auth: AuthConfig,
    /// Recoverable drops (`--trash-grace`, `--trash-purge-expired`).
    pub trash: super::TrashConfig,
    /// Maintenance tasks (`--workers`, `--task-lease`, `--task-quota`).
    pub maintenance: super::MaintenanceConfig,
    /// The server's maintenance policy (`--maintenance-*`): what applies
    /// where no record wins, and to fields a winning record leaves unset.
    pub policy: super::PolicyDefaults,
    /// How long an `Idempotency-Key` and its answer are kept
    /// (`--idempotency-ttl`; `None`: a day).
    pub idempotency_ttl: Option<std::time::Duration>,
}

/// `--auth` and its settings.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// `--auth required`: every request must be authenticated, and Cedar
    /// decides what it may do.
    pub required: bool,
    pub jwt: Option<crate::auth::JwtConfig>,
    /// Made server admin at start.
    pub bootstrap_admin: Option<String>,
    /// Operators' own `*.cedar` policy files.
    pub policy_dir: Option<std::path::PathBuf>,
    /// Local users' sign-in.
    pub users: crate::auth::UsersConfig,
    /// The bootstrap admin's password as a local user (read at start).
    pub bootstrap_admin_password_file: Option<std::path::PathBuf>,
}
