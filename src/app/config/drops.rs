//! Drops and leftovers (`--trash-*`, `--create-intent-expiry`,
//! `--batch-intent-expiry`, `--idempotency-ttl`): how long a dropped
//! object stays recoverable, how often the sweep runs, when a create's or
//! a batch's leftovers count as dead, and how long a retry's key is kept.

use clap::Args;

use crate::governance::{parse_duration, TrashConfig};

/// The "Drops and leftovers" flags.
#[derive(Debug, Clone, Args)]
pub struct DropsArgs {
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

    /// How long a batch of table versions may hold its claim before a
    /// committer that meets it takes the batch for dead, aborts it and
    /// removes the versions it placed (a live batch decides in well under
    /// a second).
    #[arg(
        help_heading = "Drops and leftovers",
        long,
        env = "LANCE_CATALOG_BATCH_INTENT_EXPIRY",
        default_value = "2m"
    )]
    pub batch_intent_expiry: String,

    /// How long an `Idempotency-Key` and the answer it was given are kept
    /// on the control root: a retry with the key within this time gets
    /// that answer from any replica; the trash sweep removes older ones.
    #[arg(
        help_heading = "Drops and leftovers",
        long,
        env = "LANCE_CATALOG_IDEMPOTENCY_TTL",
        default_value = "24h"
    )]
    pub idempotency_ttl: String,
}

impl DropsArgs {
    /// The trash's grace and whether the sweep purges.
    pub fn trash(&self) -> Result<TrashConfig, String> {
        Ok(TrashConfig {
            grace_s: parse_duration(&self.trash_grace)
                .map_err(|e| format!("--trash-grace: {e}"))?,
            purge_expired: self.trash_purge_expired,
        })
    }

    /// Seconds between trash sweeps (0: never).
    pub fn sweep_interval(&self) -> Result<u64, String> {
        parse_duration(&self.trash_sweep_interval)
            .map_err(|e| format!("--trash-sweep-interval: {e}"))
    }

    /// How long an undecided batch counts as live.
    pub fn batch_intent_expiry(&self) -> Result<std::time::Duration, String> {
        match parse_duration(&self.batch_intent_expiry) {
            Ok(0) => Err("--batch-intent-expiry must be at least 1s".to_string()),
            Ok(s) => Ok(std::time::Duration::from_secs(s)),
            Err(e) => Err(format!("--batch-intent-expiry: {e}")),
        }
    }

    /// How long a retry's key is kept.
    pub fn idempotency_ttl(&self) -> Result<std::time::Duration, String> {
        match parse_duration(&self.idempotency_ttl) {
            Ok(0) => Err("--idempotency-ttl must be at least 1s".to_string()),
            Ok(s) => Ok(std::time::Duration::from_secs(s)),
            Err(e) => Err(format!("--idempotency-ttl: {e}")),
        }
    }

    /// How long an untouched create intent counts as live.
    pub fn create_intent_expiry(&self) -> Result<std::time::Duration, String> {
        match parse_duration(&self.create_intent_expiry) {
            Ok(0) => Err("--create-intent-expiry must be at least 1s".to_string()),
            Ok(s) => Ok(std::time::Duration::from_secs(s)),
            Err(e) => Err(format!("--create-intent-expiry: {e}")),
        }
    }
}
