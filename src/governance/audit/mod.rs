//! The audit trail: a typed event for every mutation and every denied
//! request (principal, action, resource, outcome, code, request id, time),
//! written to the log as JSON and appended to the trail on the control root
//! (`store.rs`; written by `sink.rs`, kept by `upkeep.rs`) before the request's answer leaves, which admins read
//! back through the control plane.

pub(super) mod sink;
pub(super) mod store;
pub(super) mod upkeep;

use super::guard::Access;
use super::registry::{now_ms, Registry};
use super::UpkeepReport;
use crate::api::audit::{Event, EventResource, ListEventsRequest, ListEventsResponse, VendedEvent};
use crate::error::{CatalogError, CatalogResult, Code};
use store::Position;

/// Where events were kept, one record each, before segments.
const EVENT: &str = "event";
/// How long no event record must appear before the move is done.
const RECORDS_QUIET: std::time::Duration = std::time::Duration::from_secs(3600);
/// Old events moved into segments per write.
const MOVE_BATCH: usize = 5_000;

/// The latest time an event id can spell (ids are 13 digits of ms).
const LAST_MS: u64 = 9_999_999_999_999;

/// `since` as milliseconds, at most [`LAST_MS`] (ids compare as strings).
pub(super) fn since_ms(since: Option<&str>) -> CatalogResult<u64> {
    let Some(s) = since.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(0);
    };
    if let Ok(ms) = s.parse::<u64>() {
        return Ok(ms.min(LAST_MS));
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| (t.timestamp_millis().max(0) as u64).min(LAST_MS))
        .map_err(|_| {
            CatalogError::invalid(format!(
                "since {s:?} is neither milliseconds since the epoch nor an RFC 3339 time"
            ))
        })
}

/// A fresh event id at `at_ms`: its time, then a random part.
fn event_id(at_ms: u64) -> String {
    format!(
        "{at_ms:013}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// Whether `t` is spelled as an event id (13 digits, '-', letters and
/// digits): a page token is the last id of the page before.
fn is_event_id(t: &str) -> bool {
    let (ms, rest) = t.split_at(t.len().min(13));
    ms.len() == 13
        && ms.bytes().all(|b| b.is_ascii_digit())
        && rest.strip_prefix('-').is_some_and(|r| {
            !r.is_empty() && r.len() <= 64 && r.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

impl Registry {
    /// Append an event (ids sort by time) and log it. Never fails the
    /// request it records: a lost event is logged as lost.
    pub(super) async fn audit(&self, access: &Access, outcome: &str, code: Option<Code>) {
        self.record(access, outcome, code, None).await
    }

    /// Record credentials an answer handed (key id, privilege, expiry).
    pub(super) async fn audit_vended(&self, access: &Access, vended: VendedEvent) {
        self.record(access, "succeeded", None, Some(vended)).await
    }

    /// Record an act of the catalog's own (no caller, no request): a
    /// sweep's removal.
    pub(super) async fn audit_system(&self, action: &str, resource: EventResource) {
        let at_ms = now_ms();
        let mut event = Event {
            event_id: event_id(at_ms),
            at_ms,
            action: action.to_string(),
            resource,
            outcome: "succeeded".to_string(),
            ..Default::default()
        };
        self.store_event(&mut event).await;
    }

    async fn record(
        &self,
        access: &Access,
        outcome: &str,
        code: Option<Code>,
        vended: Option<VendedEvent>,
    ) {
        let at_ms = now_ms();
        let event = Event {
            event_id: event_id(at_ms),
            at_ms,
            principal: access.principal.as_ref().map(|p| p.id.clone()),
            action: access.action.to_string(),
            resource: EventResource {
                kind: access.kind.to_string(),
                id: access.id.clone(),
                warehouse: access.warehouse.clone(),
                object_id: access
                    .object
                    .known()
                    .map(str::to_string)
                    .or_else(|| access.minted.first().map(|(_, real)| real.clone())),
            },
            outcome: outcome.to_string(),
            code: code.map(|c| c.0),
            request_id: access
                .request_id
                .clone()
                .or_else(crate::telemetry::request_id),
            vended,
            version: access.version,
        };
        let mut event = event;
        self.store_event(&mut event).await;
    }

    /// Append `event` (its id and time as stored) and log it.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn store_event(&self, event: &mut Event) {
        match self.audit.append(event.clone()).await {
            Ok((id, at_ms)) => {
                (event.event_id, event.at_ms) = (id, at_ms);
                let json = serde_json::to_string(&event).unwrap_or_default();
                tracing::info!(target: "lance_catalog::audit", event = %json, "audit");
            }
            Err(e) => {
                let json = serde_json::to_string(&event).unwrap_or_default();
                tracing::warn!(target: "lance_catalog::audit", error = %e, event = %json, "audit event not stored");
            }
        }
    }

    /// Events at or after `since`, oldest first.
    pub(super) async fn events(
        &self,
        req: &ListEventsRequest,
    ) -> CatalogResult<ListEventsResponse> {
        let limit = crate::api::page::size(req.limit, crate::api::page::CONTROL)?.unwrap_or(1000);
        let after = req.page_token.clone().filter(|t| !t.is_empty());
        if let Some(t) = after.as_deref().filter(|t| !is_event_id(t)) {
            return Err(CatalogError::invalid(format!(
                "page_token {t:?} is not a token this listing answered"
            )));
        }
        let pos = Position {
            from: format!("{:013}", since_ms(req.since.as_deref())?),
            after,
        };
        let (events, more) = self.audit.page(&pos, limit).await?;
        let page_token = more
            .then(|| events.last().map(|e| e.event_id.clone()))
            .flatten();
        Ok(ListEventsResponse { events, page_token })
    }

    /// One upkeep pass of the audit trail: events stored as records by
    /// older versions move into segments (once: a marker says when it is
    /// done, an hour after the last one appeared), then closed slots merge
    /// and expired ones go.
    pub async fn audit_upkeep(&self, retention_ms: Option<u64>) -> CatalogResult<UpkeepReport> {
        if !self.audit.records_moved().await {
            let old = self.records.listed_ids(EVENT).await?;
            let mut moved_any = false;
            for ids in old.chunks(MOVE_BATCH) {
                let mut moved = Vec::new();
                for id in ids {
                    if let Some(e) = self.records.get::<Event>(EVENT, id).await? {
                        moved.push(e.value);
                    }
                }
                moved_any |= !moved.is_empty();
                let earliest = moved.iter().map(|e| e.at_ms).min();
                // Stored before the records go: a crash between repeats
                // events, which pages drop, and loses none.
                self.audit.import(moved).await?;
                for id in ids {
                    self.records
                        .delete::<Event, _>(EVENT, id, |_| Ok(()))
                        .await?;
                    self.records.erase::<Event>(EVENT, id).await?;
                }
                if let Some(ms) = earliest {
                    self.audit.rewind(ms).await;
                }
            }
            // Replicas of the older version go on writing records during a
            // rolling upgrade: done only after an hour of finding none.
            if self.audit.quiet_for(moved_any) >= RECORDS_QUIET {
                self.audit.set_records_moved().await?;
            }
        }
        self.audit.upkeep(now_ms(), retention_ms).await
    }
}

#[cfg(test)]
mod tests {
    use super::is_event_id;

    #[test]
    fn page_tokens_must_be_spelled_as_event_ids() {
        assert!(is_event_id("1796291336036-89da032c2689"));
        for bad in [
            "",
            "zzzz",
            "2",
            "~",
            "1796291336036",
            "1796291336036-",
            "179629133603x-ab",
            "1796291336036-a b",
            "é796291336036-ab",
        ] {
            assert!(!is_event_id(bad), "{bad:?}");
        }
    }
}
