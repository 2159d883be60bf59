//! Create intents. A new table's bytes are written before the table is
//! recorded, so a process killed between the two leaves a directory that no
//! table owns, and nothing tells it from data someone put there by hand.
//! So before it writes, a create records an intent on the root's control
//! records (location, table, replica, time), touches it while it writes,
//! and removes it once the table is recorded or its bytes are gone.
//!
//! An intent nobody has touched for the expiry belongs to a create that
//! died: [`Catalog::sweep_intents`] removes exactly its bytes, unless a
//! table owns them. Bytes without an intent stay report-only (`reconcile`).
//!
//! The sweep and a slow create race on the intent record, which is
//! conditional: the sweep deletes it only while it is still stale, and a
//! create confirms it (a touch that fails once it is gone) right before it
//! records its table. Whichever writes first wins; the loser backs off.

use std::sync::OnceLock;
use std::time::Duration;

use crate::api::sweep::{CreateIntent, CreateLeftover, LeftoverOutcome};
use crate::core::table::locations::find_overlap;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::{now_ms, Records};

/// The control records' family and kind of intents.
const FAMILY: &str = "create_intents";
const KIND: &str = "intent";

/// How long an untouched intent is taken for a live create.
/// The code `touch` answers for an intent that is gone (internal: a
/// create turns it into [`gone`]).
const MISSING: Code = Code::TRANSACTION_NOT_FOUND;

const DEFAULT_EXPIRY: Duration = Duration::from_secs(15 * 60);

static EXPIRY: OnceLock<Duration> = OnceLock::new();

/// Set how long an intent may go untouched before the sweep takes its
/// create for dead (`--create-intent-expiry`); the first call wins. A
/// create touches its intent five times per expiry.
pub fn set_intent_expiry(expiry: Duration) {
    let _ = EXPIRY.set(expiry.max(Duration::from_secs(1)));
}

fn expiry() -> Duration {
    EXPIRY.get().copied().unwrap_or(DEFAULT_EXPIRY)
}

/// This process as the writer of intents: host (a pod's name under
/// Kubernetes), process id and a random part, so a restarted replica is
/// another writer.
fn replica() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "replica".into());
        let random = uuid::Uuid::new_v4().simple().to_string();
        format!("{host}-{}-{}", std::process::id(), &random[..8])
    })
}

/// Whether intent `i` has gone untouched for the expiry at `now`.
fn stale(i: &CreateIntent, now: u64) -> bool {
    now.saturating_sub(i.touched_ms) >= expiry().as_millis() as u64
}

/// A create's intent while it writes: touched on its own task until it is
/// finished or dropped.
pub(crate) struct Held {
    records: Records,
    id: String,
    beat: tokio::task::JoinHandle<()>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.beat.abort();
    }
}

fn gone() -> CatalogError {
    CatalogError::new(
        Code::SERVICE_UNAVAILABLE,
        "the create was taken for dead (its intent went untouched for longer than --create-intent-expiry) and its bytes removed; nothing was recorded, retry",
    )
}

impl Held {
    /// Touch the intent now; refused once the sweep has taken it. Called
    /// right before the table is recorded.
    pub(crate) async fn confirm(&self) -> CatalogResult<()> {
        touch(&self.records, &self.id)
            .await
            .map_err(|e| match e.code {
                MISSING => gone(),
                _ => e,
            })
    }

    /// The create is over (recorded, or its bytes removed): forget the
    /// intent before the answer leaves, so an answered create leaves
    /// nothing behind. One a crash leaves is forgotten by the sweep, which
    /// finds its location owned or empty.
    pub(crate) async fn finish(self) {
        self.beat.abort();
        forget(&self.records, &self.id).await;
    }
}

async fn touch(records: &Records, id: &str) -> CatalogResult<()> {
    records
        .update::<CreateIntent, _>(KIND, id, MISSING, |mut i| {
            i.touched_ms = now_ms();
            Ok(i)
        })
        .await
        .map(|_| ())
}

async fn forget(records: &Records, id: &str) {
    let done = async {
        records
            .delete::<CreateIntent, _>(KIND, id, |_| Ok(()))
            .await?;
        records.erase::<CreateIntent>(KIND, id).await
    };
    if let Err(e) = done.await {
        tracing::warn!(intent = %id, error = %e.message, "could not forget a finished create's intent; the sweep will");
    }
}

impl Catalog {
    fn intents(&self) -> Records {
        self.control_records().under(FAMILY)
    }

    /// Record that a create is about to write `location` for `table`, and
    /// keep touching it until the answer is finished or dropped.
    pub(crate) async fn begin_create(
        &self,
        table: &[String],
        location: &str,
        object_id: Option<String>,
    ) -> CatalogResult<Held> {
        let records = self.intents();
        let id = uuid::Uuid::new_v4().simple().to_string();
        let now = now_ms();
        let intent = CreateIntent {
            location: location.to_string(),
            table: table.to_vec(),
            object_id,
            replica: replica().to_string(),
            started_ms: now,
            touched_ms: now,
        };
        records
            .create(KIND, &id, &intent, Code::CONCURRENT_MODIFICATION)
            .await?;
        let beat = {
            let (records, id) = (records.clone(), id.clone());
            tokio::spawn(async move {
                let every = expiry() / 5;
                loop {
                    tokio::time::sleep(every).await;
                    if let Err(e) = touch(&records, &id).await {
                        // Gone: the sweep took it; confirm() tells the create.
                        if e.code == MISSING {
                            return;
                        }
                        tracing::warn!(intent = %id, error = %e.message, "could not touch a create's intent");
                    }
                }
            })
        };
        Ok(Held { records, id, beat })
    }

    /// Every intent of this root, by id.
    pub async fn create_intents(&self) -> CatalogResult<Vec<(String, CreateIntent)>> {
        self.intents().all(KIND).await
    }

    /// Stale intents and what the sweep would do about each (`apply`:
    /// does it). Removing bytes needs all of: the intent untouched for the
    /// expiry (checked again in the conditional delete of its record), no
    /// table (nor trash entry) owning the location, and no live intent
    /// over it.
    pub async fn sweep_intents(&self, apply: bool) -> CatalogResult<Vec<CreateLeftover>> {
        let records = self.intents();
        let all = self.create_intents().await?;
        let now = now_ms();
        let mut out = Vec::new();
        for (intent_id, intent) in &all {
            if !stale(intent, now) {
                continue;
            }
            let tables = self.placed_tables_near(&[&intent.location]).await?;
            let owned = find_overlap(&intent.location, &tables, None).is_some();
            let live_beside = all.iter().any(|(other, i)| {
                other != intent_id
                    && !stale(i, now)
                    && crate::core::table::locations::overlaps(&i.location, &intent.location)
            });
            let mut outcome = match (owned, live_beside) {
                (true, _) => LeftoverOutcome::Recorded,
                (false, true) => LeftoverOutcome::Kept,
                (false, false) => LeftoverOutcome::WouldRemove,
            };
            if apply {
                let taken = records
                    .delete::<CreateIntent, _>(KIND, intent_id, |current| {
                        match stale(current, now_ms()) {
                            true => Ok(()),
                            false => Err(CatalogError::new(Code::CONCURRENT_MODIFICATION, "live")),
                        }
                    })
                    .await;
                match taken {
                    Ok(true) => {}
                    // Forgotten meanwhile, or touched: the create lives.
                    Ok(false) => continue,
                    Err(e) if e.code == Code::CONCURRENT_MODIFICATION => continue,
                    Err(e) => return Err(e),
                }
                if outcome == LeftoverOutcome::WouldRemove {
                    outcome = match self.remove_if_unowned(&intent.location).await {
                        true => LeftoverOutcome::Removed,
                        false => LeftoverOutcome::Kept,
                    };
                }
                if let Err(e) = records.erase::<CreateIntent>(KIND, intent_id).await {
                    tracing::warn!(intent = %intent_id, error = %e.message, "could not erase a swept intent");
                }
            }
            out.push(CreateLeftover {
                intent_id: intent_id.clone(),
                intent: intent.clone(),
                outcome,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "intents_tests.rs"]
mod tests;
