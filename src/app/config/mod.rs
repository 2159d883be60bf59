//! Server settings: command-line flags, each with an environment variable,
//! by section, one file each (`serving`, `storage`, `vending`, `access`,
//! `users`, `drops`, `maintenance`, `tasks`, `ray`, `audit`), the config
//! file (`file.rs`), the generated reference (`doc.rs`), and the on/off
//! value (`switch.rs`). `ServeArgs` flattens the sections and puts their
//! settings together for the governance layer.

pub mod access;
pub mod audit;
pub mod doc;
pub mod drops;
pub mod file;
pub mod maintenance;
pub mod ray;
pub mod serving;
pub mod storage;
pub mod switch;
pub mod tasks;
pub mod users;
pub mod vending;

use clap::Args;

use crate::governance::GovernanceConfig;

/// `lance-catalog serve` settings, by section (in `serve --help` order).
/// Debug shows no secret: each section hides its own.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub serving: serving::ServingArgs,
    #[command(flatten)]
    pub storage: storage::StorageArgs,
    #[command(flatten)]
    pub access: access::AccessArgs,
    #[command(flatten)]
    pub users: users::UsersArgs,
    #[command(flatten)]
    pub drops: drops::DropsArgs,
    #[command(flatten)]
    pub maintenance: maintenance::MaintenanceArgs,
    #[command(flatten)]
    pub tasks: tasks::TaskArgs,
    #[command(flatten)]
    pub ray: ray::RayArgs,
    #[command(flatten)]
    pub audit: audit::AuditArgs,
}

impl ServeArgs {
    /// The governance layer's settings, from every section.
    pub fn governance(&self) -> Result<GovernanceConfig, String> {
        Ok(GovernanceConfig {
            storage: self.storage.config()?,
            control_root: self.storage.control_root.clone(),
            warehouses: self.storage.warehouses.is_on(),
            auth: self.access.config(&self.users)?,
            trash: self.drops.trash()?,
            idempotency_ttl: Some(self.drops.idempotency_ttl()?),
            policy: self.maintenance.policy_defaults()?,
            maintenance: crate::governance::MaintenanceConfig {
                workers: self.tasks.workers,
                lease: self.tasks.lease(),
                poll: self.tasks.poll(),
                quota: self.tasks.task_quota,
                scheduled_cleanup: self.maintenance.scheduler_cleanup.is_on(),
                manifest: self.maintenance.manifest_keeping()?,
                executors: self.ray.executors()?,
                ..Default::default()
            },
        })
    }
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
            "--audit-sink-secret",
            "sink-topsecret",
            "--ray-token",
            "ray-topsecret",
        ]);
        let shown = format!("{:?}", cli.args);
        assert!(shown.contains("<redacted>"), "{shown}");
        assert!(!shown.contains("topsecret"), "{shown}");
        assert!(shown.contains("aws_secret_access_key"), "{shown}");
    }
}
