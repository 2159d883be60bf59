//! The intents sweep: a create that died leaves an intent nobody touches;
//! the sweep takes it and removes exactly its bytes, unless the live set
//! (`live.rs`) says they are someone's. See `intents.rs` for the records.

use crate::api::sweep::{CreateIntent, CreateLeftover, LeftoverOutcome};
use crate::core::location::Location;
use crate::core::table::intents::{forget, stale, KIND, MISSING};
use crate::core::table::locations::find_overlap;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::now_ms;

impl Catalog {
    /// Stale intents and what the sweep would do about each (`apply`:
    /// does it). Bytes are removed only when all hold: the intent went
    /// untouched for the expiry and is taken by this sweep (a conditional
    /// write, after which its create can neither touch nor confirm it, and
    /// no new create starts there); no table (nor trash entry) owns the
    /// location; and no other create's live intent lies over it, as listed
    /// after the take. An intent whose bytes could not be removed stays
    /// taken, for the next sweep.
    pub async fn sweep_intents(&self, apply: bool) -> CatalogResult<Vec<CreateLeftover>> {
        let records = self.intents();
        let all = self.create_intents().await?;
        let now = now_ms();
        let mut out = Vec::new();
        for (intent_id, intent) in &all {
            if !stale(intent, now) {
                continue;
            }
            let mut outcome = self.leftover_outcome(intent_id, intent, &all, now).await?;
            if apply {
                let taken = records
                    .update::<CreateIntent, _>(KIND, intent_id, MISSING, |mut current| {
                        if !stale(&current, now_ms()) {
                            return Err(CatalogError::new(Code::CONCURRENT_MODIFICATION, "live"));
                        }
                        current.taken_ms.get_or_insert_with(now_ms);
                        Ok(current)
                    })
                    .await;
                match taken {
                    Ok(_) => {}
                    // Forgotten meanwhile, or touched: the create lives.
                    Err(e) if e.code == MISSING || e.code == Code::CONCURRENT_MODIFICATION => {
                        continue
                    }
                    Err(e) => return Err(e),
                }
                // Judged again now that no create can start there.
                let fresh = self.create_intents().await?;
                outcome = self
                    .leftover_outcome(intent_id, intent, &fresh, now_ms())
                    .await?;
                if outcome == LeftoverOutcome::WouldRemove {
                    if !self
                        .remove_if_unowned(&Location::new(&intent.location), Some(intent_id))
                        .await
                    {
                        tracing::warn!(intent = %intent_id, location = %intent.location, "the bytes of a dead create could not be removed; the next sweep tries again");
                        continue;
                    }
                    outcome = LeftoverOutcome::Removed;
                }
                forget(&records, intent_id).await;
            }
            out.push(CreateLeftover {
                intent_id: intent_id.clone(),
                intent: intent.clone(),
                outcome,
            });
        }
        Ok(out)
    }

    /// What the sweep does about stale intent `id` given every intent
    /// `all` as listed at `now`.
    async fn leftover_outcome(
        &self,
        id: &str,
        intent: &CreateIntent,
        all: &[(String, CreateIntent)],
        now: u64,
    ) -> CatalogResult<LeftoverOutcome> {
        let place = Location::new(&intent.location);
        let tables = self
            .placed_tables_near(std::slice::from_ref(&place))
            .await?;
        if find_overlap(&place, &tables, None).is_some() {
            return Ok(LeftoverOutcome::Recorded);
        }
        let live_beside = all.iter().any(|(other, i)| {
            other != id
                && !stale(i, now)
                && i.taken_ms.is_none()
                && Location::new(&i.location).overlaps(&place)
        });
        Ok(match live_beside {
            true => LeftoverOutcome::Kept,
            false => LeftoverOutcome::WouldRemove,
        })
    }
}
