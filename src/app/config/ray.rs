//! Where maintenance tasks run: the Ray cluster's settings and the rules
//! that send tasks to it (`--ray-*`, `--executor-rule`). Without
//! `--ray-address` every task runs in process, as before.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::core::maintenance::executor::ExecutorKind;
use crate::core::maintenance::executors::Executors;
use crate::core::maintenance::placement::Rule;
use crate::core::maintenance::ray::{RayConfig, RayExecutor};

/// The `--ray-*` flags. Debug shows no token (see below).
#[derive(Clone, Args)]
pub struct RayArgs {
    /// The Ray dashboard's address (its Jobs API), e.g.
    /// `http://ray-head:8265`. Unset: no task runs on Ray.
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_RAY_ADDRESS"
    )]
    pub ray_address: Option<String>,

    /// Ray's token when the cluster runs with `RAY_AUTH_MODE=token`.
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_RAY_TOKEN",
        hide_env_values = true
    )]
    pub ray_token: Option<String>,

    /// The catalog's REST URL as the cluster's jobs reach it (default:
    /// this server's own listening address, fine for a cluster on the
    /// same host; behind a load balancer, its URL).
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_RAY_CATALOG_URL"
    )]
    pub ray_catalog_url: Option<String>,

    /// The Python the cluster runs jobs with; it needs pylance and
    /// lance-ray (docs/ray.md).
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_RAY_PYTHON",
        default_value = "python"
    )]
    pub ray_python: String,

    /// lance-ray's workers per job (its `num_workers`).
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_RAY_WORKERS",
        default_value_t = 4
    )]
    pub ray_workers: usize,

    /// A job running longer is stopped and its task fails; a job's
    /// credential never outlives it.
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_RAY_JOB_TIMEOUT",
        default_value = "24h"
    )]
    pub ray_job_timeout: String,

    /// Send tasks and jobs to an executor, first match wins (repeatable;
    /// in the environment, space-separated): `EXECUTOR[:CONDITION,…]` with
    /// conditions `task_types=T|T…` (task types, `backfill`, `refresh`),
    /// `min_rows=N`, `min_bytes=N[KiB|MiB|GiB|TiB]`,
    /// e.g. `ray:task_types=lance_compact|lance_vector_index,min_rows=10000000`.
    /// No rule matching: in process.
    #[arg(
        help_heading = "Maintenance tasks",
        long,
        env = "LANCE_CATALOG_EXECUTOR_RULES",
        value_delimiter = ' '
    )]
    pub executor_rule: Vec<String>,
}

impl std::fmt::Debug for RayArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RayArgs")
            .field("ray_address", &self.ray_address)
            .field("ray_token", &self.ray_token.as_ref().map(|_| "<redacted>"))
            .field("ray_catalog_url", &self.ray_catalog_url)
            .field("ray_python", &self.ray_python)
            .field("ray_workers", &self.ray_workers)
            .field("ray_job_timeout", &self.ray_job_timeout)
            .field("executor_rule", &self.executor_rule)
            .finish()
    }
}

/// Whether a URL's host is this machine.
fn loopback(address: &str) -> bool {
    url::Url::parse(address)
        .ok()
        .is_some_and(|u| match u.host() {
            Some(url::Host::Domain(d)) => d == "localhost",
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        })
}

impl RayArgs {
    /// The executors these flags describe; a rule naming Ray without a
    /// Ray address, or one that does not parse, is an error at start.
    pub fn executors(&self) -> Result<Arc<Executors>, String> {
        let rules = self
            .executor_rule
            .iter()
            .filter(|r| !r.trim().is_empty())
            .map(|r| Rule::parse(r))
            .collect::<Result<Vec<_>, _>>()?;
        let address = self.ray_address.as_deref().filter(|a| !a.is_empty());
        let ray = match address {
            None => {
                if let Some(r) = rules.iter().find(|r| r.executor == ExecutorKind::Ray) {
                    return Err(format!(
                        "executor rule {:?} sends tasks to Ray, and no --ray-address is set",
                        r.text
                    ));
                }
                None
            }
            Some(address) => {
                let timeout = crate::governance::parse_duration(&self.ray_job_timeout)
                    .map_err(|e| format!("--ray-job-timeout: {e}"))?;
                if timeout == 0 {
                    return Err("--ray-job-timeout must be more than 0".into());
                }
                if self.ray_workers == 0 {
                    return Err("--ray-workers must be at least 1".into());
                }
                match self.ray_catalog_url.as_deref() {
                    Some(url) => {
                        url::Url::parse(url)
                            .map_err(|e| format!("--ray-catalog-url {url:?}: {e}"))?;
                    }
                    None if !loopback(address) => tracing::warn!(
                        "--ray-address names another host and --ray-catalog-url is not set: jobs call this server back at its own listening address, which the cluster's nodes may not reach (set --ray-catalog-url to its Service or load balancer URL)"
                    ),
                    None => {}
                }
                Some(Arc::new(RayExecutor::new(RayConfig {
                    address: address.to_string(),
                    token: self.ray_token.clone().filter(|t| !t.is_empty()),
                    catalog_url: self
                        .ray_catalog_url
                        .as_ref()
                        .map(|u| u.trim_end_matches('/').to_string()),
                    python: self.ray_python.clone(),
                    workers: self.ray_workers,
                    timeout: Duration::from_secs(timeout),
                    poll: Duration::from_secs(1),
                })?))
            }
        };
        Ok(Arc::new(Executors::new(rules, ray)))
    }
}
