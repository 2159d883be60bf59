//! Serving: where the server listens, what it serves there, how large and
//! how slow a request may be, and how it logs (`--listen`, `--grpc-listen`,
//! `--prefix`, `--console`, `--max-*-body`, the timeouts, `--log-format`,
//! `--config`).

use std::time::Duration;

use clap::Args;

use crate::app::config::switch::Switch;
use crate::rest::RestConfig;

/// The "Serving" flags.
#[derive(Debug, Clone, Args)]
pub struct ServingArgs {
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
}

impl ServingArgs {
    /// The REST transport's settings.
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
pub(super) fn seconds(s: f64) -> Duration {
    Duration::from_secs_f64(if s.is_finite() { s.max(0.001) } else { 0.001 })
}
