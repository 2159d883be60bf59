//! The maintenance policy and scheduler (`--maintenance-*`,
//! `--scheduler-*`, `--manifest-*`): the server's default policy, how often
//! this replica looks for due tables, and how `__manifest` is kept.

use clap::Args;

use crate::app::config::switch::Switch;
use crate::governance::parse_duration;

/// The "Maintenance policy and scheduler" flags.
#[derive(Debug, Clone, Args)]
pub struct MaintenanceArgs {
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
}

impl MaintenanceArgs {
    /// How the scheduler keeps `__manifest` (`--manifest-*`).
    pub fn manifest_keeping(&self) -> Result<crate::core::ManifestKeeping, String> {
        let secs = parse_duration(&self.manifest_retention)
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
        let d = |v: &str| parse_duration(v).unwrap_or_default();
        Ok(crate::governance::PolicyDefaults {
            version_retention_s: d(&self.maintenance_version_retention),
            versions_to_retain: self.maintenance_versions_to_retain,
            compaction: self.maintenance_compaction.is_on(),
            interval_s: d(&self.maintenance_interval),
            target_rows_per_fragment: self.maintenance_target_rows_per_fragment,
        })
    }

    /// Seconds between scheduler passes (0: off).
    pub fn scheduler_interval(&self) -> Result<u64, String> {
        parse_duration(&self.scheduler_interval).map_err(|e| format!("--scheduler-interval: {e}"))
    }
}
