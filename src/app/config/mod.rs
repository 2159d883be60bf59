//! Server settings: command-line flags, each with an environment variable,
//! by section: the serve flags here, the config file (`file.rs`), Ray
//! (`ray.rs`), local users (`users.rs`), the generated reference
//! (`doc.rs`), and the on/off value (`switch.rs`).

pub mod doc;
pub mod file;
pub mod ray;
pub mod switch;
pub mod users;

use crate::app::config::switch::Switch;
use std::collections::HashMap;
use std::time::Duration;

use clap::Args;

use crate::api::vending::VendingSettings;
use crate::auth::JwtConfig;
use crate::core::StorageConfig;
use crate::governance::{AuthConfig, GovernanceConfig};
use crate::rest::RestConfig;

/// `lance-catalog serve` settings. Debug shows no secret (see below).
#[derive(Clone, Args)]
pub struct ServeArgs {
    /// Storage root: a path, file://…, memory://…, or s3://bucket/prefix.
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_ROOT",
        default_value = "./lance-catalog-data"
    )]
    pub root: String,

    /// Where the registries (projects, warehouses, bindings) live: a path
    /// or URI. Default: `<root>/_catalog/control`, which no spec id can
    /// address. Several replicas must share one.
    #[arg(help_heading = "Storage", long, env = "LANCE_CATALOG_CONTROL_ROOT")]
    pub control_root: Option<String>,

    /// `on`: top-level namespaces are created through their warehouse
    /// (`POST /v1/warehouses/{id}/namespaces`, or a client pointed at
    /// `/warehouses/{id}`) and routed to its root. `off`: one root.
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_WAREHOUSES",
        default_value = "off"
    )]
    pub warehouses: Switch,

    /// `required`: every request needs an API key or a bearer token, and
    /// Cedar policies fed by grants decide what it may do. `none` (the
    /// default, for a server on loopback): anyone who reaches the port may
    /// do anything.
    #[arg(help_heading = "Authentication and access", long, env = "LANCE_CATALOG_AUTH", default_value = "none", value_parser = ["none", "required"])]
    pub auth: String,

    /// Made server admin at start (a grant `admin` on the server), so a
    /// fresh deployment can be administered.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_BOOTSTRAP_ADMIN"
    )]
    pub bootstrap_admin: Option<String>,

    /// A directory of operators' own Cedar policy files (`*.cedar`),
    /// validated against the catalog's schema at start.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_POLICY_DIR"
    )]
    pub policy_dir: Option<std::path::PathBuf>,

    /// HS256 secret for bearer JWTs.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_SECRET",
        hide_env_values = true
    )]
    pub jwt_secret: Option<String>,

    /// A JWKS file with the keys of RS256 / ES256 bearer JWTs.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWKS_FILE"
    )]
    pub jwks_file: Option<std::path::PathBuf>,

    /// A JWKS URL (fetched, cached, fetched again for an unknown `kid`).
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWKS_URL"
    )]
    pub jwks_url: Option<String>,

    /// An OIDC issuer whose discovery document names the JWKS URL.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_OIDC_ISSUER"
    )]
    pub oidc_issuer: Option<String>,

    /// Required `iss` of bearer JWTs.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_ISSUER"
    )]
    pub jwt_issuer: Option<String>,

    /// Required `aud` of bearer JWTs.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_AUDIENCE"
    )]
    pub jwt_audience: Option<String>,

    /// The JWT claim naming the principal.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_PRINCIPAL_CLAIM",
        default_value = "sub"
    )]
    pub jwt_principal_claim: String,

    /// The JWT claim listing the principal's groups.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_GROUPS_CLAIM",
        default_value = "groups"
    )]
    pub jwt_groups_claim: String,

    /// How long a dropped table or namespace stays recoverable (undrop),
    /// e.g. 7d, 24h, 30m, 90 (seconds). 0 (the default): a drop deletes
    /// at once. A project may set its own.
    #[arg(
        help_heading = "Drops and leftovers",
        long,
        env = "LANCE_CATALOG_TRASH_GRACE",
        default_value = "0"
    )]
    pub trash_grace: String,

    /// Let the trash sweep purge expired entries (default: only report
    /// them). A project may set its own.
    #[arg(
        help_heading = "Drops and leftovers",
        long,
        env = "LANCE_CATALOG_TRASH_PURGE_EXPIRED",
        default_value_t = false
    )]
    pub trash_purge_expired: bool,

    /// The server's maintenance policy: how long a table version is kept
    /// once a newer one exists. Policy records (on a project, namespace or
    /// table) say otherwise; the winning record's unset fields are these.
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_MAINTENANCE_VERSION_RETENTION",
        default_value = "7d"
    )]
    pub maintenance_version_retention: String,

    /// The newest versions kept however old they are.
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_MAINTENANCE_VERSIONS_TO_RETAIN",
        default_value_t = 10
    )]
    pub maintenance_versions_to_retain: u64,

    /// Whether tables are compacted (`on`/`off`).
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_MAINTENANCE_COMPACTION",
        default_value = "on"
    )]
    pub maintenance_compaction: Switch,

    /// How often a table's maintenance round is due (at least 1s).
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_MAINTENANCE_INTERVAL",
        default_value = "1d"
    )]
    pub maintenance_interval: String,

    /// The rows a compacted fragment aims for.
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_MAINTENANCE_TARGET_ROWS_PER_FRAGMENT",
        default_value_t = 1_048_576
    )]
    pub maintenance_target_rows_per_fragment: u64,

    /// How often this replica's maintenance scheduler looks for tables whose
    /// round is due by their policy (0: the scheduler is off here; other
    /// replicas' still run, and a round happens once across all).
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_SCHEDULER_INTERVAL",
        default_value = "1m"
    )]
    pub scheduler_interval: String,

    /// `on` (the default): the scheduler also submits cleanups of old
    /// versions by policy. Each keeps what a shallow clone registered in
    /// any warehouse reads; a clone the catalog does not know of is not
    /// seen: turn it off where such clones read this catalog's tables.
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_SCHEDULER_CLEANUP",
        default_value = "on"
    )]
    pub scheduler_cleanup: Switch,

    /// The scheduler removes versions of each warehouse's `__manifest`
    /// older than this (at least 10m), keeping the newest
    /// `--manifest-versions-to-retain`. Every replica should be given the
    /// same.
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_MANIFEST_RETENTION",
        default_value = "1h"
    )]
    pub manifest_retention: String,

    /// The newest `__manifest` versions kept whatever their age.
    #[arg(
        help_heading = "Maintenance policy and scheduler",
        long,
        env = "LANCE_CATALOG_MANIFEST_VERSIONS_TO_RETAIN",
        default_value_t = 20
    )]
    pub manifest_versions_to_retain: usize,

    /// How often the trash sweep runs (0: never; `POST /v1/trash/sweep`
    /// runs it on demand).
    #[arg(
        help_heading = "Drops and leftovers",
        long,
        env = "LANCE_CATALOG_TRASH_SWEEP_INTERVAL",
        default_value = "1h"
    )]
    pub trash_sweep_interval: String,

    /// How long a create's intent may go untouched before the sweep takes
    /// the create for dead and removes the bytes it wrote (a running
    /// create touches it five times per period).
    #[arg(
        help_heading = "Drops and leftovers",
        long,
        env = "LANCE_CATALOG_CREATE_INTENT_EXPIRY",
        default_value = "15m"
    )]
    pub create_intent_expiry: String,

    /// How long audit events are kept, e.g. 90d; 0 (the default): for
    /// ever. The audit upkeep deletes what is older.
    #[arg(
        help_heading = "Audit trail",
        long,
        env = "LANCE_CATALOG_AUDIT_RETENTION",
        default_value = "0"
    )]
    pub audit_retention: String,

    /// How often the audit upkeep runs (merges closed segments, applies
    /// the retention; 0: never).
    #[arg(
        help_heading = "Audit trail",
        long,
        env = "LANCE_CATALOG_AUDIT_UPKEEP_INTERVAL",
        default_value = "1m"
    )]
    pub audit_upkeep_interval: String,

    /// Post every audit event as a CloudEvent (structured JSON) to this
    /// http(s) URL, at least once, retried with backoff; requests never
    /// wait for it. One replica sends at a time.
    #[arg(
        help_heading = "Audit trail",
        long,
        env = "LANCE_CATALOG_AUDIT_SINK_URL"
    )]
    pub audit_sink_url: Option<String>,

    /// Key of the sink's `X-Lance-Catalog-Signature` header:
    /// `sha256=` HMAC-SHA256 hex of `<X-Lance-Catalog-Timestamp>.<body>`.
    #[arg(
        help_heading = "Audit trail",
        long,
        env = "LANCE_CATALOG_AUDIT_SINK_SECRET",
        hide_env_values = true
    )]
    pub audit_sink_secret: Option<String>,

    /// The CloudEvents `source` of the sink's events.
    #[arg(
        help_heading = "Audit trail",
        long,
        env = "LANCE_CATALOG_AUDIT_SINK_SOURCE",
        default_value = "lance-catalog"
    )]
    pub audit_sink_source: String,

    /// How long after an event's time the sink sends it: longer than the
    /// control root's slowest write, so that an event still being stored
    /// by another replica is not passed over.
    #[arg(
        help_heading = "Audit trail",
        long,
        env = "LANCE_CATALOG_AUDIT_SINK_DELAY",
        default_value = "10s"
    )]
    pub audit_sink_delay: String,

    /// Maintenance tasks this replica runs at once (0: it serves the task
    /// API only and other replicas run the tasks).
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_WORKERS",
        default_value_t = 1
    )]
    pub workers: usize,

    /// Seconds a worker's claim on a task lasts without renewal: after a
    /// replica dies its running tasks wait this long for another replica.
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_TASK_LEASE",
        default_value_t = 30.0
    )]
    pub task_lease: f64,

    /// Seconds between an idle worker's looks at the task queue.
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_TASK_POLL",
        default_value_t = 1.0
    )]
    pub task_poll: f64,

    /// Maintenance tasks kept per table and task type, finished ones
    /// included until deleted; a submit beyond it answers 429 (10002).
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_TASK_QUOTA",
        default_value_t = 1000
    )]
    pub task_quota: usize,

    /// A TOML file of settings: keys are the flags' names with `_` (e.g.
    /// `control_root = "s3://…"`, `storage_options = ["aws_region=…"]`).
    /// A flag or an environment variable overrides the file; an unknown
    /// key is an error.
    #[arg(help_heading = "Serving", long, env = "LANCE_CATALOG_CONFIG")]
    pub config: Option<std::path::PathBuf>,

    /// `text` (the default, for a terminal) or `json`: one object per line,
    /// with one line per request (request id, operation, principal,
    /// status, code, duration).
    #[arg(help_heading = "Serving", long, env = "LANCE_CATALOG_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,

    /// Address to serve on; port 0 picks a free port (the log line names it).
    #[arg(
        help_heading = "Serving",
        long,
        env = "LANCE_CATALOG_LISTEN",
        default_value = "127.0.0.1:2333"
    )]
    pub listen: String,

    /// Serve gRPC on this address instead of on the REST port.
    #[arg(help_heading = "Serving", long, env = "LANCE_CATALOG_GRPC_LISTEN")]
    pub grpc_listen: Option<String>,

    /// Also serve the API under this path prefix, e.g. /lance.
    #[arg(help_heading = "Serving", long, env = "LANCE_CATALOG_PREFIX")]
    pub prefix: Option<String>,

    /// `on` (the default): serve the web console at /console/; it calls
    /// the REST routes with the user's own credential. `off`: not served.
    #[arg(
        help_heading = "Serving",
        long,
        env = "LANCE_CATALOG_CONSOLE",
        default_value = "on"
    )]
    pub console: Switch,

    /// Object-store option for the root, KEY=VALUE (repeatable), e.g.
    /// aws_endpoint=http://127.0.0.1:9000. The environment variable takes a
    /// comma-separated list.
    #[arg(
        help_heading = "Storage",
        long = "storage-option",
        env = "LANCE_CATALOG_STORAGE_OPTIONS",
        value_delimiter = ','
    )]
    pub storage_options: Vec<String>,

    /// Hand secret-like storage options (keys, tokens, passwords: the
    /// root's own, a warehouse's and namespaces' `lance.storage.*`) to
    /// clients in create, declare and describe answers. Off: they never
    /// leave the server, and clients bring their own credentials. On:
    /// every caller allowed to describe one table holds what those
    /// credentials reach; opt in only where that is meant.
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_FORWARD_STORAGE_SECRETS",
        default_value_t = false
    )]
    pub forward_storage_secrets: bool,

    /// Vend table-scoped credentials for the default warehouse: the IAM
    /// role the server assumes through STS for each table it hands out,
    /// with a session policy allowing that table's prefix only, read-only
    /// or read-write by the caller's grants. Unset: no vending. (Other
    /// warehouses carry their own settings in their record.)
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_ROLE_ARN"
    )]
    pub vend_role_arn: Option<String>,

    /// The external id the vending role's trust policy asks for.
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_EXTERNAL_ID"
    )]
    pub vend_external_id: Option<String>,

    /// Seconds a vended session lives (STS: 900 to 43200).
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_DURATION_SECONDS"
    )]
    pub vend_duration_seconds: Option<u32>,

    /// The STS endpoint; unset: the root's aws_endpoint if set (S3-compatible
    /// stores serve STS beside S3), else AWS's.
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_STS_ENDPOINT"
    )]
    pub vend_sts_endpoint: Option<String>,

    /// The STS region; unset: the root's aws_region, else us-east-1.
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_STS_REGION"
    )]
    pub vend_sts_region: Option<String>,

    /// The longest a vended answer lasts before its client refreshes (and
    /// is authorized again), in seconds, on every warehouse. The session
    /// itself lives at least STS's 900 s; this bounds how long an honest
    /// client goes without asking again.
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_MAX_SECONDS"
    )]
    pub vend_max_seconds: Option<u64>,

    /// MiB of Lance's metadata cache (manifests, fragment metadata) per
    /// warehouse: repeated reads of a table skip storage within it.
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_METADATA_CACHE_MIB",
        default_value_t = 128
    )]
    pub metadata_cache_mib: usize,

    /// MiB of Lance's index cache per warehouse (vector and scalar index
    /// pages that searches read).
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_INDEX_CACHE_MIB",
        default_value_t = 1024
    )]
    pub index_cache_mib: usize,

    /// Largest Arrow IPC request body, in bytes (create, insert, merge-insert).
    #[arg(help_heading = "Serving", long, env = "LANCE_CATALOG_MAX_ARROW_BODY", default_value_t = 2 * 1024 * 1024 * 1024)]
    pub max_arrow_body: usize,

    /// Largest JSON request body, in bytes.
    #[arg(help_heading = "Serving", long, env = "LANCE_CATALOG_MAX_JSON_BODY", default_value_t = 16 * 1024 * 1024)]
    pub max_json_body: usize,

    /// Seconds a client may take to send a request's headers (HTTP/1.1);
    /// past it the connection is closed.
    #[arg(
        help_heading = "Serving",
        long,
        env = "LANCE_CATALOG_HEADER_READ_TIMEOUT",
        default_value_t = 30.0
    )]
    pub header_read_timeout: f64,

    /// Seconds a REST request body may send nothing before it is refused
    /// with 408.
    #[arg(
        help_heading = "Serving",
        long,
        env = "LANCE_CATALOG_BODY_IDLE_TIMEOUT",
        default_value_t = 60.0
    )]
    pub body_idle_timeout: f64,

    /// Where maintenance tasks run (`ray.rs`).
    #[command(flatten)]
    pub ray: crate::app::config::ray::RayArgs,

    /// Local users' sign-in (`users.rs`).
    #[command(flatten)]
    pub users: crate::app::config::users::UsersArgs,
}

/// Every setting but the secrets: the JWT secret shows only whether it is
/// set, storage options only their keys.
impl std::fmt::Debug for ServeArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let option_keys: Vec<&str> = self
            .storage_options
            .iter()
            .map(|kv| kv.split_once('=').map_or(kv.as_str(), |(k, _)| k))
            .collect();
        f.debug_struct("ServeArgs")
            .field(
                "jwt_secret",
                &self.jwt_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("storage_options", &option_keys)
            .field("root", &self.root)
            .field("control_root", &self.control_root)
            .field("warehouses", &self.warehouses)
            .field("auth", &self.auth)
            .field("bootstrap_admin", &self.bootstrap_admin)
            .field("policy_dir", &self.policy_dir)
            .field("jwks_file", &self.jwks_file)
            .field("jwks_url", &self.jwks_url)
            .field("oidc_issuer", &self.oidc_issuer)
            .field("jwt_issuer", &self.jwt_issuer)
            .field("jwt_audience", &self.jwt_audience)
            .field("jwt_principal_claim", &self.jwt_principal_claim)
            .field("jwt_groups_claim", &self.jwt_groups_claim)
            .field("trash_grace", &self.trash_grace)
            .field("trash_purge_expired", &self.trash_purge_expired)
            .field("trash_sweep_interval", &self.trash_sweep_interval)
            .field("create_intent_expiry", &self.create_intent_expiry)
            .field("scheduler_interval", &self.scheduler_interval)
            .field("scheduler_cleanup", &self.scheduler_cleanup)
            .field("manifest_retention", &self.manifest_retention)
            .field(
                "manifest_versions_to_retain",
                &self.manifest_versions_to_retain,
            )
            .field(
                "maintenance_version_retention",
                &self.maintenance_version_retention,
            )
            .field(
                "maintenance_versions_to_retain",
                &self.maintenance_versions_to_retain,
            )
            .field("maintenance_compaction", &self.maintenance_compaction)
            .field("maintenance_interval", &self.maintenance_interval)
            .field(
                "maintenance_target_rows_per_fragment",
                &self.maintenance_target_rows_per_fragment,
            )
            .field("audit_retention", &self.audit_retention)
            .field("audit_upkeep_interval", &self.audit_upkeep_interval)
            .field("audit_sink_url", &self.audit_sink_url)
            .field(
                "audit_sink_secret",
                &self.audit_sink_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("audit_sink_source", &self.audit_sink_source)
            .field("audit_sink_delay", &self.audit_sink_delay)
            .field("workers", &self.workers)
            .field("task_lease", &self.task_lease)
            .field("ray", &self.ray)
            .field("users", &self.users)
            .field("task_poll", &self.task_poll)
            .field("task_quota", &self.task_quota)
            .field("config", &self.config)
            .field("log_format", &self.log_format)
            .field("listen", &self.listen)
            .field("grpc_listen", &self.grpc_listen)
            .field("prefix", &self.prefix)
            .field("console", &self.console)
            .field("forward_storage_secrets", &self.forward_storage_secrets)
            .field("vend_role_arn", &self.vend_role_arn)
            .field(
                "vend_external_id",
                &self.vend_external_id.as_ref().map(|_| "set"),
            )
            .field("vend_duration_seconds", &self.vend_duration_seconds)
            .field("vend_sts_endpoint", &self.vend_sts_endpoint)
            .field("vend_sts_region", &self.vend_sts_region)
            .field("vend_max_seconds", &self.vend_max_seconds)
            .field("metadata_cache_mib", &self.metadata_cache_mib)
            .field("index_cache_mib", &self.index_cache_mib)
            .field("max_arrow_body", &self.max_arrow_body)
            .field("max_json_body", &self.max_json_body)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_idle_timeout", &self.body_idle_timeout)
            .finish()
    }
}

impl ServeArgs {
    /// The cache bounds of each warehouse's Lance session.
    pub fn cache_limits(&self) -> crate::core::CacheLimits {
        crate::core::CacheLimits {
            metadata_bytes: self.metadata_cache_mib.saturating_mul(1 << 20),
            index_bytes: self.index_cache_mib.saturating_mul(1 << 20),
        }
    }

    pub fn storage(&self) -> Result<StorageConfig, String> {
        let mut options = HashMap::new();
        for kv in self.storage_options.iter().filter(|s| !s.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("storage option {kv:?} is not KEY=VALUE"))?;
            options.insert(k.trim().to_string(), v.trim().to_string());
        }
        let vending = self.vend_role_arn.clone().map(|role_arn| VendingSettings {
            role_arn,
            external_id: self.vend_external_id.clone(),
            duration_seconds: self.vend_duration_seconds,
            sts_endpoint: self.vend_sts_endpoint.clone(),
            region: self.vend_sts_region.clone(),
        });
        let vending = VendingSettings::checked(vending)
            .map_err(|e| format!("the --vend-* settings: {}", e.message))?;
        if self.vend_max_seconds == Some(0) {
            return Err("--vend-max-seconds must be at least 1".to_string());
        }
        Ok(StorageConfig {
            root: self.root.clone(),
            storage_options: options,
            forward_secrets: self.forward_storage_secrets,
            vending,
            vend_max_seconds: self.vend_max_seconds,
        })
    }

    pub fn governance(&self) -> Result<GovernanceConfig, String> {
        Ok(GovernanceConfig {
            storage: self.storage()?,
            control_root: self.control_root.clone(),
            warehouses: self.warehouses.is_on(),
            auth: self.auth_config()?,
            trash: crate::governance::TrashConfig {
                grace_s: crate::governance::parse_duration(&self.trash_grace)
                    .map_err(|e| format!("--trash-grace: {e}"))?,
                purge_expired: self.trash_purge_expired,
            },
            policy: self.policy_defaults()?,
            maintenance: crate::governance::MaintenanceConfig {
                workers: self.workers,
                lease: seconds(self.task_lease),
                poll: seconds(self.task_poll),
                quota: self.task_quota,
                scheduled_cleanup: self.scheduler_cleanup.is_on(),
                manifest: self.manifest_keeping()?,
                executors: self.ray.executors()?,
                ..Default::default()
            },
        })
    }

    /// How the scheduler keeps `__manifest` (`--manifest-*`).
    pub fn manifest_keeping(&self) -> Result<crate::core::ManifestKeeping, String> {
        let secs = crate::governance::parse_duration(&self.manifest_retention)
            .map_err(|e| format!("--manifest-retention: {e}"))?;
        let retention = std::time::Duration::from_secs(secs);
        if retention < crate::core::MIN_RETENTION {
            return Err(format!(
                "--manifest-retention: {:?} is shorter than the shortest allowed, 10m (a replica trusts the manifest version it holds for up to a minute)",
                self.manifest_retention
            ));
        }
        if self.manifest_versions_to_retain == 0 {
            return Err("--manifest-versions-to-retain: keep at least 1 version".into());
        }
        Ok(crate::core::ManifestKeeping {
            retention,
            versions_to_retain: self.manifest_versions_to_retain,
        })
    }

    /// The server's maintenance policy (`--maintenance-*`), checked as a
    /// record's fields are.
    pub fn policy_defaults(&self) -> Result<crate::governance::PolicyDefaults, String> {
        let fields = crate::api::policy::PolicyFields {
            version_retention: Some(self.maintenance_version_retention.clone()),
            versions_to_retain: Some(self.maintenance_versions_to_retain),
            interval: Some(self.maintenance_interval.clone()),
            target_rows_per_fragment: Some(self.maintenance_target_rows_per_fragment),
            ..Default::default()
        };
        crate::governance::check_policy_fields(&fields)
            .map_err(|e| format!("the --maintenance-* settings: {}", e.message))?;
        let d = |v: &str| crate::governance::parse_duration(v).unwrap_or_default();
        Ok(crate::governance::PolicyDefaults {
            version_retention_s: d(&self.maintenance_version_retention),
            versions_to_retain: self.maintenance_versions_to_retain,
            compaction: self.maintenance_compaction.is_on(),
            interval_s: d(&self.maintenance_interval),
            target_rows_per_fragment: self.maintenance_target_rows_per_fragment,
        })
    }

    /// The audit trail's settings: retention and upkeep interval in
    /// seconds (0: for ever, never), and the sink.
    pub fn audit(&self) -> Result<(u64, u64, Option<crate::governance::SinkConfig>), String> {
        let d = |flag: &str, v: &str| {
            crate::governance::parse_duration(v).map_err(|e| format!("--{flag}: {e}"))
        };
        let retention = d("audit-retention", &self.audit_retention)?;
        let every = d("audit-upkeep-interval", &self.audit_upkeep_interval)?;
        let delay = d("audit-sink-delay", &self.audit_sink_delay)?;
        let sink = crate::governance::SinkConfig::parse(
            self.audit_sink_url.as_deref(),
            self.audit_sink_secret.clone(),
            &self.audit_sink_source,
            Duration::from_secs(delay),
        )?;
        Ok((retention, every, sink))
    }

    /// Seconds between scheduler passes (0: off).
    pub fn scheduler_interval(&self) -> Result<u64, String> {
        crate::governance::parse_duration(&self.scheduler_interval)
            .map_err(|e| format!("--scheduler-interval: {e}"))
    }

    /// Seconds between trash sweeps (0: never).
    pub fn trash_sweep_interval(&self) -> Result<u64, String> {
        crate::governance::parse_duration(&self.trash_sweep_interval)
            .map_err(|e| format!("--trash-sweep-interval: {e}"))
    }

    /// How long an untouched create intent counts as live.
    pub fn create_intent_expiry(&self) -> Result<std::time::Duration, String> {
        match crate::governance::parse_duration(&self.create_intent_expiry) {
            Ok(0) => Err("--create-intent-expiry must be at least 1s".to_string()),
            Ok(s) => Ok(std::time::Duration::from_secs(s)),
            Err(e) => Err(format!("--create-intent-expiry: {e}")),
        }
    }

    fn auth_config(&self) -> Result<AuthConfig, String> {
        let jwt = (self.jwt_secret.is_some()
            || self.jwks_file.is_some()
            || self.jwks_url.is_some()
            || self.oidc_issuer.is_some())
        .then(|| JwtConfig {
            secret: self.jwt_secret.clone(),
            jwks_file: self.jwks_file.clone(),
            jwks_url: self.jwks_url.clone(),
            oidc_issuer: self.oidc_issuer.clone(),
            issuer: self.jwt_issuer.clone(),
            audience: self.jwt_audience.clone(),
            principal_claim: self.jwt_principal_claim.clone(),
            groups_claim: self.jwt_groups_claim.clone(),
        });
        Ok(AuthConfig {
            required: self.auth == "required",
            jwt,
            bootstrap_admin: self.bootstrap_admin.clone(),
            policy_dir: self.policy_dir.clone(),
            users: self.users.config()?,
            bootstrap_admin_password_file: self.users.bootstrap_admin_password_file.clone(),
        })
    }

    /// Whether `--auth required` is set.
    pub fn auth_required(&self) -> bool {
        self.auth == "required"
    }

    pub fn rest(&self) -> RestConfig {
        RestConfig {
            prefix: self
                .prefix
                .clone()
                .filter(|p| !p.trim_matches('/').is_empty()),
            max_arrow_body: self.max_arrow_body,
            max_json_body: self.max_json_body,
            body_idle_timeout: seconds(self.body_idle_timeout),
            header_read_timeout: seconds(self.header_read_timeout),
            console: self.console.is_on(),
        }
    }
}

/// A positive number of seconds as a duration (at least 1 ms, so a zero or
/// negative setting cannot turn the timeout into an instant failure).
fn seconds(s: f64) -> Duration {
    Duration::from_secs_f64(if s.is_finite() { s.max(0.001) } else { 0.001 })
}

#[cfg(test)]
mod debug_tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ServeArgs,
    }

    #[test]
    fn debug_shows_no_secret() {
        let cli = Cli::parse_from([
            "x",
            "--jwt-secret",
            "hs256-topsecret",
            "--storage-option",
            "aws_secret_access_key=s3-topsecret",
        ]);
        let shown = format!("{:?}", cli.args);
        assert!(!shown.contains("topsecret"), "{shown}");
        assert!(shown.contains("aws_secret_access_key"), "{shown}");
    }
}
