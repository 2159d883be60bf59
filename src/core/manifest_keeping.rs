//! Old versions of `__manifest` removed. Every catalog write commits a
//! manifest version; the upkeep pass (`manifest_upkeep.rs`) folds their
//! fragments, and here the scheduler removes versions older than a
//! retention, keeping the newest few, so a root's version count follows
//! its write rate, not its age.
//!
//! The trap: a holder of version `v` learns of newer ones by probing
//! `v + 1`, and a cleanup can remove `v + 1` while `v` is held; the probe
//! would then say `v` is current forever. So:
//!
//! - the catalog's own handle trusts the probe for at most [`recheck_after`]
//!   (a minute) since it last resolved the latest version, and a removed
//!   version is always older than the retention, which is longer;
//! - the engine's namespace, which holds a handle of its own, is built
//!   again once it is that old (`engine_ns.rs`);
//! - the manifest carries a marker, Lance's own `lance.auto_cleanup.older_than`
//!   with no interval (Lance's automatic cleanup never runs without one):
//!   it holds the retention every replica derives a shorter recheck from
//!   (tests), and while it stands Lance's handle resolves the latest
//!   version itself. Lance's own rewrites of the manifest drop it; the
//!   keeping writes it again;
//! - with a retention under [`MIN_RETENTION`] (tests; the marker shortens
//!   every replica's recheck to a tenth of it), nothing is removed until
//!   the marker has stood [`MAX_RECHECK`], so a handle on an unmarked
//!   version has resolved the latest since.
//!
//! Marking also removes a legacy automatic cleanup policy's interval, as
//! Lance's namespace does on its rewrites: it removes versions of any age.

use std::time::Duration;

use lance::dataset::cleanup::{cleanup_old_versions, CleanupPolicyBuilder};
use lance::Dataset;

use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult};
use crate::records::now_ms;

/// Lance's key: the retention, and the sign to every reader that versions
/// may be removed.
const RETENTION_KEY: &str = "lance.auto_cleanup.older_than";
/// When the retention took its current value (ms since the epoch).
const RETENTION_SINCE_KEY: &str = "lance_catalog.manifest_retention_since_ms";
/// Lance's own automatic cleanup, which removes versions of any age.
const LEGACY_INTERVAL_KEY: &str = "lance.auto_cleanup.interval";
/// The longest a held version is trusted by its successor probe alone.
pub(crate) const MAX_RECHECK: Duration = Duration::from_secs(60);
/// The shortest retention (`--manifest-retention`): every replica's
/// handle rechecks well within it, whatever retention each was given.
pub const MIN_RETENTION: Duration = Duration::from_secs(600);

/// How the scheduler keeps `__manifest` (`--manifest-*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManifestKeeping {
    /// Versions younger than this stay.
    pub retention: Duration,
    /// The newest versions that stay whatever their age.
    pub versions_to_retain: usize,
}

impl Default for ManifestKeeping {
    fn default() -> Self {
        Self {
            retention: Duration::from_secs(3600),
            versions_to_retain: 20,
        }
    }
}

impl ManifestKeeping {
    /// How often a root's round is due: a few times per retention.
    pub fn interval(&self) -> Duration {
        (self.retention / 4).clamp(Duration::from_millis(100), Duration::from_secs(600))
    }
}

/// What one keeping did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestKept {
    /// The marker was written (or changed) this time; under a retention
    /// shorter than [`MIN_RETENTION`] nothing was removed then.
    pub marked: bool,
    pub versions_before: usize,
    pub versions_after: usize,
    pub bytes_removed: u64,
}

/// The retention as written in the marker (Lance reads it with humantime).
fn marker_value(retention: Duration) -> String {
    match retention.as_millis() {
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

/// How long a held manifest version may be trusted by the probe of its
/// successor: [`MAX_RECHECK`], or a tenth of a shorter retention in its
/// marker; zero under Lance's legacy automatic cleanup.
pub(crate) fn recheck_after(ds: &Dataset) -> Duration {
    let config = &ds.manifest.config;
    if config.contains_key(LEGACY_INTERVAL_KEY) {
        return Duration::ZERO;
    }
    match config.get(RETENTION_KEY).map(|v| parse_marker(v)) {
        None => MAX_RECHECK,
        Some(Some(r)) => (r / 10).min(MAX_RECHECK),
        // Written by someone else, in a form not ours: trust no probe.
        Some(None) => Duration::ZERO,
    }
}

/// How long the engine's namespace may serve after it loaded the latest
/// manifest (`engine_ns.rs`), by the manifest held now: [`recheck_after`],
/// or without bound under Lance's legacy automatic cleanup, when the
/// engine itself resolves the latest version on every read.
pub(crate) fn engine_max_age(held: Option<&Dataset>) -> Duration {
    match held {
        Some(ds) if ds.manifest.config.contains_key(LEGACY_INTERVAL_KEY) => Duration::MAX,
        Some(ds) => recheck_after(ds),
        None => MAX_RECHECK,
    }
}

/// A marker's retention, as [`marker_value`] writes it.
fn parse_marker(value: &str) -> Option<Duration> {
    match value.strip_suffix("ms") {
        Some(ms) => ms.parse().ok().map(Duration::from_millis),
        None => value
            .strip_suffix('s')?
            .parse()
            .ok()
            .map(Duration::from_secs),
    }
}

/// Mark `ds` with retention `value` since now (and without a legacy
/// policy's interval): one config commit.
async fn mark(ds: &mut Dataset, value: &str) -> lance::Result<()> {
    let now = now_ms().to_string();
    ds.update_config([
        (RETENTION_KEY, Some(value)),
        (RETENTION_SINCE_KEY, Some(now.as_str())),
        (LEGACY_INTERVAL_KEY, None),
    ])
    .await
    .map(|_| ())
}

/// Mark `ds` with the default retention unless it carries a marker: done
/// when a root is opened, before the engine takes its own handle, so that
/// handle resolves the latest version from its first read on. (A handle
/// taken on an unmarked version probes successors only, and one left idle
/// while its successor is removed would never see a newer version.)
pub(super) async fn mark_unmarked(ds: &mut Dataset) -> lance::Result<()> {
    for _ in 0..3 {
        if ds.manifest.config.contains_key(RETENTION_KEY) {
            return Ok(());
        }
        let value = marker_value(ManifestKeeping::default().retention);
        match mark(ds, &value).await {
            Ok(_) => return Ok(()),
            // Another replica opening the root at once: see what it wrote.
            Err(_) => ds.checkout_latest().await?,
        }
    }
    Ok(())
}

impl Catalog {
    /// Remove the manifest's versions older than the retention but the
    /// newest `versions_to_retain` (and their files no kept version
    /// needs). Writes the marker first when it is missing (Lance's own
    /// rewrites drop it) or says another retention. A retention shorter
    /// than [`MIN_RETENTION`] (tests) removes nothing until its marker has
    /// stood [`MAX_RECHECK`]: a handle on an unmarked version trusts its
    /// probe that long.
    pub(crate) async fn keep_manifest(
        &self,
        keeping: ManifestKeeping,
    ) -> CatalogResult<ManifestKept> {
        if keeping.retention.is_zero() || keeping.versions_to_retain == 0 {
            return Err(CatalogError::internal(
                "a manifest retention and a count of versions to retain above zero are required",
            ));
        }
        let value = marker_value(keeping.retention);
        let mut ds = self.load_manifest().await?;
        let marker = ds.manifest.config.get(RETENTION_KEY).cloned();
        let mut marked = false;
        if marker.as_ref() != Some(&value) {
            if let Some(other) = &marker {
                // Replicas given different retentions would undo each
                // other's marker.
                tracing::info!(root = %self.root, was = %other, now = %value, "the manifest retention changes (replicas should share one --manifest-retention)");
            }
            let _held = self.hold_manifest().await;
            let mut latest = (*self.load_manifest().await?).clone();
            engine(mark(&mut latest, &value).await)?;
            marked = true;
            ds = std::sync::Arc::new(latest);
        }
        let since = ds
            .manifest
            .config
            .get(RETENTION_SINCE_KEY)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(u64::MAX);
        let stood = Duration::from_millis(now_ms().saturating_sub(since));
        let before = engine(ds.versions().await)?.len();
        if keeping.retention < MIN_RETENTION && (marked || stood < MAX_RECHECK) {
            return Ok(ManifestKept {
                marked,
                versions_before: before,
                versions_after: before,
                ..Default::default()
            });
        }
        let age = chrono::Duration::from_std(keeping.retention)
            .map_err(|e| CatalogError::internal(e.to_string()))?;
        let policy = CleanupPolicyBuilder::default()
            // A commit in flight writes its files before its version:
            // files no version names are left to their 7 days.
            .delete_unverified(false)
            .error_if_tagged_old_versions(false)
            .before_timestamp(chrono::Utc::now() - age);
        let policy = engine(
            policy
                .retain_n_versions(&ds, keeping.versions_to_retain)
                .await,
        )?;
        let stats = engine(cleanup_old_versions(&ds, policy.build()).await)?;
        let after = engine(ds.versions().await)?.len();
        Ok(ManifestKept {
            marked,
            versions_before: before,
            versions_after: after,
            bytes_removed: stats.bytes_removed,
        })
    }
}
