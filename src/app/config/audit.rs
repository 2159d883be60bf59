//! The audit trail (`--audit-*`): how long events are kept, how often the
//! upkeep runs, and the CloudEvents sink.

use std::time::Duration;

use clap::Args;

use crate::governance::{parse_duration, SinkConfig};

/// The "Audit trail" flags. Debug shows whether the sink secret is set,
/// not its value.
#[derive(Clone, Args)]
pub struct AuditArgs {
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
}

/// The audit trail's settings, checked.
#[derive(Debug)]
pub struct AuditSettings {
    /// Seconds events are kept (0: for ever).
    pub retention_s: u64,
    /// Seconds between upkeep runs (0: never).
    pub upkeep_s: u64,
    pub sink: Option<SinkConfig>,
}

impl AuditArgs {
    pub fn settings(&self) -> Result<AuditSettings, String> {
        let d = |flag: &str, v: &str| parse_duration(v).map_err(|e| format!("--{flag}: {e}"));
        let delay = d("audit-sink-delay", &self.audit_sink_delay)?;
        Ok(AuditSettings {
            retention_s: d("audit-retention", &self.audit_retention)?,
            upkeep_s: d("audit-upkeep-interval", &self.audit_upkeep_interval)?,
            sink: SinkConfig::parse(
                self.audit_sink_url.as_deref(),
                self.audit_sink_secret.clone(),
                &self.audit_sink_source,
                Duration::from_secs(delay),
            )?,
        })
    }
}

impl std::fmt::Debug for AuditArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditArgs")
            .field("audit_retention", &self.audit_retention)
            .field("audit_upkeep_interval", &self.audit_upkeep_interval)
            .field("audit_sink_url", &self.audit_sink_url)
            .field(
                "audit_sink_secret",
                &self.audit_sink_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("audit_sink_source", &self.audit_sink_source)
            .field("audit_sink_delay", &self.audit_sink_delay)
            .finish()
    }
}
