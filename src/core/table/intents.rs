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

use crate::api::sweep::CreateIntent;
use crate::core::location::Location;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::{now_ms, Records};

/// The control records' family and kind of intents.
const FAMILY: &str = "create_intents";
pub(super) const KIND: &str = "intent";

/// How long an untouched intent is taken for a live create.
/// The code `touch` answers for an intent that is gone (internal: a
/// create turns it into [`gone`]).
pub(super) const MISSING: Code = Code::TRANSACTION_NOT_FOUND;

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

/// Whether intent `i` has gone untouched for the expiry at `now`.
pub(crate) fn stale(i: &CreateIntent, now: u64) -> bool {
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
    /// The intent's id: its create's own, which its undo may overlap.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Touch the intent now; refused once the sweep has taken it. Called
    /// right before the table is recorded.
    #[tracing::instrument(level = "debug", skip_all)]
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
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn finish(self) {
        self.beat.abort();
        forget(&self.records, &self.id).await;
    }
}

/// Touch intent `id` now; refused (as [`MISSING`]) once a sweep took it.
async fn touch(records: &Records, id: &str) -> CatalogResult<()> {
    records
        .update::<CreateIntent, _>(KIND, id, MISSING, |mut i| {
            if i.taken_ms.is_some() {
                return Err(CatalogError::new(MISSING, "taken by the sweep"));
            }
            i.touched_ms = now_ms();
            Ok(i)
        })
        .await
        .map(|_| ())
}

pub(super) async fn forget(records: &Records, id: &str) {
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
    pub(super) fn intents(&self) -> Records {
        self.control_records().under(FAMILY)
    }

    /// Record that a create is about to write `location` for `table`, and
    /// keep touching it until the answer is finished or dropped. A
    /// `chosen` location (not one the catalog named fresh) may be another
    /// create's too: refused (14) while one writes or is swept there.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn begin_create(
        &self,
        table: &[String],
        location: &Location,
        object_id: Option<String>,
        chosen: bool,
    ) -> CatalogResult<Held> {
        let records = self.intents();
        let id = uuid::Uuid::new_v4().simple().to_string();
        let now = now_ms();
        let intent = CreateIntent {
            location: location.to_string(),
            table: table.to_vec(),
            object_id,
            replica: crate::core::object_ids::replica_name().to_string(),
            started_ms: now,
            touched_ms: now,
            taken_ms: None,
        };
        records
            .create(KIND, &id, &intent, Code::CONCURRENT_MODIFICATION)
            .await?;
        // Another create writing here, or a sweep removing a dead one's
        // bytes: this one stops before it writes. (A sweep lists intents
        // after it takes one, and this create listed after it wrote its
        // own: one of the two sees the other.)
        let others = match chosen {
            false => Ok(Vec::new()),
            true => self.create_intents().await,
        };
        let others = match others {
            Ok(all) => all,
            Err(e) => {
                forget(&records, &id).await;
                return Err(e);
            }
        };
        let now = now_ms();
        if let Some((_, other)) = others.iter().find(|(other, i)| {
            *other != id
                && (i.taken_ms.is_some() || !stale(i, now))
                && Location::new(&i.location).overlaps(location)
        }) {
            forget(&records, &id).await;
            return Err(CatalogError::new(
                Code::CONCURRENT_MODIFICATION,
                format!(
                    "another create of {} is writing at {:?}, or the bytes a failed one left there are being removed; retry",
                    crate::core::checks::display_id(&other.table),
                    other.location
                ),
            ));
        }
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
}

#[cfg(test)]
#[path = "intents_tests.rs"]
mod tests;
