//! A batch's claim on a table's next version.
//!
//! A single table's commit has one atomic step, the put-if-absent of
//! version N's manifest (Lance's own, which plain Lance writers race on
//! too). A batch over several tables can only keep such writers off its
//! versions by taking those names before it decides, so it first records
//! an intent on each table's manifest row (one `__manifest` commit), then
//! places the manifests, then removes the intents in one more commit: the
//! decision. While an intent is on a row, its version (and anything built
//! on it) is not shown through the catalog and no single commit builds on
//! it; a batch that dies leaves an intent that the next committer past its
//! expiry aborts, removing what it placed.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use lance_table::io::commit::ManifestNamingScheme;
use object_store::path::Path;
use object_store::ObjectStoreExt;
use serde::{Deserialize, Serialize};

use crate::core::checks::display_id;
use crate::core::manifest_tx::{single_rows, with_properties};
use crate::core::reserved::BATCH_INTENT;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// How long a batch may hold an intent before a committer that meets it
/// presumes the batch dead and aborts it (a live batch decides in well
/// under a second; an abort and the batch's decision conflict, so only
/// one of them lands).
const DEFAULT_EXPIRY: Duration = Duration::from_secs(120);

static EXPIRY: OnceLock<Duration> = OnceLock::new();

/// Set the batch-intent expiry (`--batch-intent-expiry`); the first call
/// wins.
pub fn set_batch_intent_expiry(expiry: Duration) {
    let _ = EXPIRY.set(expiry.max(Duration::from_secs(1)));
}

fn expiry() -> Duration {
    EXPIRY.get().copied().unwrap_or(DEFAULT_EXPIRY)
}

/// The claim, as kept in the row's [`BATCH_INTENT`] property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Intent {
    /// The batch's id: only its own decision removes it.
    pub batch: String,
    /// The version the batch places for this table.
    pub version: i64,
    /// Its staged manifest (relative to the store), compared byte for byte
    /// before an abort removes the placed version.
    pub staging: String,
    /// Where the batch places it.
    pub placed: String,
    pub at_ms: u64,
    /// Set by an abort: the batch may no longer decide.
    #[serde(default)]
    pub aborted: bool,
}

impl Intent {
    /// The intent in a row's properties, if any.
    pub(crate) fn of(props: Option<&HashMap<String, String>>) -> Option<Intent> {
        let raw = props?.get(BATCH_INTENT)?;
        match serde_json::from_str(raw) {
            Ok(intent) => Some(intent),
            Err(e) => {
                // Unreadable: claim everything, so nothing half-decided
                // shows; the recovery removes it.
                tracing::warn!(error = %e, "unreadable batch intent");
                Some(Intent {
                    batch: String::new(),
                    version: 1,
                    staging: String::new(),
                    placed: String::new(),
                    at_ms: 0,
                    aborted: true,
                })
            }
        }
    }

    /// Whether version `v` waits on this batch's decision (it, or a
    /// version built on it).
    pub(crate) fn hides(&self, v: i64) -> bool {
        v >= self.version
    }

    /// Whether its batch is presumed dead.
    pub(crate) fn stale(&self) -> bool {
        self.aborted || now_ms().saturating_sub(self.at_ms) > expiry().as_millis() as u64
    }

    /// Whether its own batch is to give up rather than decide: past half
    /// the expiry, a committer may soon take it for dead (the margin is
    /// for the clocks of two replicas).
    pub(crate) fn overdue(&self) -> bool {
        now_ms().saturating_sub(self.at_ms) > expiry().as_millis() as u64 / 2
    }

    pub(crate) fn encoded(&self) -> CatalogResult<String> {
        serde_json::to_string(self)
            .map_err(|e| CatalogError::internal(format!("cannot encode a batch intent: {e}")))
    }
}

/// The name version `version + 1` takes beside `placed` (version
/// `version`'s manifest), in the same naming scheme.
fn next_path(placed: &Path, version: i64) -> Option<Path> {
    let name = placed.filename()?;
    let scheme = ManifestNamingScheme::detect_scheme(name)?;
    let parts: Vec<_> = placed.parts().collect();
    let base: Path = parts[..parts.len().checked_sub(2)?]
        .iter()
        .cloned()
        .collect();
    Some(scheme.manifest_path(&base, u64::try_from(version).ok()? + 1))
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// A table's versions wait on a batch's decision.
pub(crate) fn in_progress(id: &[String]) -> CatalogError {
    CatalogError::new(
        Code::CONCURRENT_MODIFICATION,
        format!(
            "a batch commit of table {} is in progress: retry",
            display_id(id)
        ),
    )
}

impl Catalog {
    /// The batch intent on table `id`'s row, read after whatever the caller
    /// listed or loaded (so an intent recorded before that is seen).
    pub(crate) async fn intent_on(&self, id: &[String]) -> CatalogResult<Option<Intent>> {
        let described = self.describe(id, Default::default()).await?;
        Ok(Intent::of(described.properties.as_ref()))
    }

    /// The version a reader of table `id` that loaded version `loaded`
    /// reads: `loaded`, unless a batch has not decided it (then the one
    /// before the batch's; 14 when there is none yet).
    pub(crate) async fn readable_version(&self, id: &[String], loaded: i64) -> CatalogResult<i64> {
        match self.intent_on(id).await? {
            Some(intent) if intent.hides(loaded) => match intent.version - 1 {
                before if before >= 1 => Ok(before),
                _ => Err(in_progress(id)),
            },
            _ => Ok(loaded),
        }
    }

    /// The version a read the engine serves is pinned to: the one asked
    /// for, unless a batch has not decided it (11); else the latest
    /// decided one, found as [`Catalog::readable_version`] finds it (the
    /// engine would read the latest it finds, decided or not). `None` for
    /// a table with no version yet (the engine says what that means).
    pub(crate) async fn pinned_version(
        &self,
        id: &[String],
        asked: Option<i64>,
    ) -> CatalogResult<Option<i64>> {
        if let Some(v) = asked {
            let undecided = self.intent_on(id).await?.is_some_and(|i| i.hides(v));
            return match undecided {
                true => Err(CatalogError::new(
                    Code::TABLE_VERSION_NOT_FOUND,
                    format!("table {} has no version {v}", display_id(id)),
                )),
                false => Ok(Some(v)),
            };
        }
        let location = self.table_location(id).await?;
        let table_path = lance::io::ObjectStore::extract_path_from_uri(
            self.session.store_registry(),
            &location,
        )?;
        match self.latest_placed(&table_path).await? {
            0 => Ok(None),
            latest => self.readable_version(id, latest).await.map(Some),
        }
    }

    /// Refuse to build on a version a batch has not decided (14); undo a
    /// batch presumed dead first, and then go on.
    pub(crate) async fn fence_batch(&self, id: &[String]) -> CatalogResult<()> {
        let described = self.describe(id, Default::default()).await?;
        self.fence_seen(id, described.properties.as_ref()).await
    }

    /// [`Catalog::fence_batch`] on properties just read (a writer that
    /// described the table already).
    pub(crate) async fn fence_seen(
        &self,
        id: &[String],
        props: Option<&HashMap<String, String>>,
    ) -> CatalogResult<()> {
        match Intent::of(props) {
            None => Ok(()),
            Some(intent) if intent.stale() => self.abort_intent(id, &intent).await,
            Some(_) => Err(in_progress(id)),
        }
    }

    /// Undo the claim of a batch presumed dead on table `id`, if there is
    /// one (before a batch takes the manifest lock: the undo takes it).
    pub(crate) async fn recover_stale(&self, id: &[String]) -> CatalogResult<()> {
        match self.intent_on(id).await? {
            Some(intent) if intent.stale() => self.abort_intent(id, &intent).await,
            _ => Ok(()),
        }
    }

    /// Abort the batch intent `seen` on table `id`: mark it aborted (which
    /// conflicts with the batch's own decision, so one of the two lands),
    /// remove the version it placed if that is still the batch's own bytes
    /// and nothing was built on it, then forget the intent. An intent whose
    /// version could not be settled (a store error) stays, aborted, and
    /// keeps hiding it until the next committer tries again.
    pub(crate) async fn abort_intent(&self, id: &[String], seen: &Intent) -> CatalogResult<()> {
        let key = crate::core::checks::manifest_key(id);
        let marked = Intent {
            aborted: true,
            ..seen.clone()
        };
        // Only once the abort is recorded may the version go: a batch
        // that decided meanwhile left no intent, and its version stays.
        if !seen.aborted && !self.rewrite_intent(&key, seen, Some(&marked)).await? {
            return Ok(());
        }
        if !seen.aborted {
            tracing::warn!(table = %display_id(id), batch = %seen.batch, version = seen.version,
                "aborted a batch that did not decide in time");
        }
        let location = self.table_location(id).await?;
        let table = lance::io::ObjectStore::extract_path_from_uri(
            self.session.store_registry(),
            &location,
        )?;
        if self.unplace(&table, seen).await {
            self.rewrite_intent(&key, &marked, None).await?;
        }
        Ok(())
    }

    /// Remove a version an aborted batch placed: only its own bytes, and
    /// only while nothing was built on it (a writer outside the catalog
    /// that did keeps it, and the batch is then partial for that table).
    /// Answers whether nothing of the batch is left to hide: removed,
    /// never placed, not its bytes, or built on; `false` when the store
    /// could not tell.
    pub(crate) async fn unplace(&self, table: &Path, intent: &Intent) -> bool {
        let (Ok(staging), Ok(placed)) = (Path::parse(&intent.staging), Path::parse(&intent.placed))
        else {
            return true;
        };
        // Only ever a version manifest in this table's own `_versions/`.
        if !crate::core::version::materialize::owned_version(table, &staging, &placed) {
            tracing::warn!(
                version = intent.version,
                "a batch intent names a version outside its table; nothing removed"
            );
            return true;
        }
        let store = self.store.inner.as_ref();
        match store.head(&placed).await {
            Ok(_) => {}
            Err(object_store::Error::NotFound { .. }) => return true,
            Err(_) => return false,
        }
        match crate::core::version::materialize::same_bytes(store, &staging, &placed, None).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(
                    version = intent.version,
                    "an aborted batch's version is not its staged bytes (or they are gone); kept"
                );
                return true;
            }
            Err(_) => return false,
        }
        if let Some(next) = next_path(&placed, intent.version) {
            match store.head(&next).await {
                Ok(_) => {
                    tracing::warn!(
                        version = intent.version,
                        "a version was built on an aborted batch's; kept"
                    );
                    return true;
                }
                Err(object_store::Error::NotFound { .. }) => {}
                Err(_) => return false,
            }
        }
        match store.delete(&placed).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => true,
            Err(e) => {
                tracing::warn!(error = %e, "an aborted batch's version was not removed");
                false
            }
        }
    }

    /// Replace the intent `from` on row `key` with `to` (none: remove it),
    /// in one commit on the snapshot read here; the row moving on meanwhile
    /// (the batch deciding, another abort) is a conflict (14). Answers
    /// whether it was replaced (not when the row no longer holds `from`).
    async fn rewrite_intent(
        &self,
        key: &str,
        from: &Intent,
        to: Option<&Intent>,
    ) -> CatalogResult<bool> {
        let held = self.hold_manifest().await;
        let ds = self.manifest_snapshot().await?;
        let rows = self.manifest_rows(&ds, &[key.to_string()]).await?;
        let table = single_rows(&rows)
            .find(|r| crate::core::manifest_tx::row_type(r).as_deref() == Some("table"));
        let Some(row) = table else {
            return Ok(false);
        };
        let props = crate::core::manifest_tx::row_properties(&row)?;
        if Intent::of(Some(&props)).as_ref() != Some(from) {
            return Ok(false);
        }
        let encoded = to.map(Intent::encoded).transpose()?;
        let row = with_properties(&row, |p| match &encoded {
            Some(e) => {
                p.insert(BATCH_INTENT.to_string(), e.clone());
            }
            None => {
                p.remove(BATCH_INTENT);
            }
        })?;
        self.manifest_apply(&held, ds, vec![row], &[], true).await?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_hides_its_version_and_what_is_built_on_it() {
        let intent = Intent {
            batch: "b".into(),
            version: 4,
            staging: "t/_versions/4.manifest-x".into(),
            placed: "t/_versions/4.manifest".into(),
            at_ms: now_ms(),
            aborted: false,
        };
        assert!(!intent.hides(3));
        assert!(intent.hides(4) && intent.hides(5));
        assert!(!intent.stale());
        let props = HashMap::from([(BATCH_INTENT.to_string(), intent.encoded().unwrap())]);
        assert_eq!(Intent::of(Some(&props)), Some(intent));
        let garbled = HashMap::from([(BATCH_INTENT.to_string(), "{".to_string())]);
        let read = Intent::of(Some(&garbled)).unwrap();
        assert!(read.hides(1) && read.stale());
    }
}
