//! The audit trail: a typed event for every mutation and every denied
//! request (principal, action, resource, outcome, code, request id, time),
//! written to the log as JSON and appended to an event store on the control
//! root, which admins read back through the control plane.

use super::guard::Access;
use super::registry::{now_ms, Registry};
use crate::api::audit::{Event, EventResource, ListEventsRequest, ListEventsResponse, VendedEvent};
use crate::error::{CatalogError, CatalogResult, Code};

const EVENT: &str = "event";

/// `since` as milliseconds.
pub(super) fn since_ms(since: Option<&str>) -> CatalogResult<u64> {
    let Some(s) = since.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(0);
    };
    if let Ok(ms) = s.parse::<u64>() {
        return Ok(ms);
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.timestamp_millis().max(0) as u64)
        .map_err(|_| {
            CatalogError::invalid(format!(
                "since {s:?} is neither milliseconds since the epoch nor an RFC 3339 time"
            ))
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

    async fn record(
        &self,
        access: &Access,
        outcome: &str,
        code: Option<Code>,
        vended: Option<VendedEvent>,
    ) {
        let at_ms = now_ms();
        let event = Event {
            event_id: format!(
                "{at_ms:013}-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            ),
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
        };
        let json = serde_json::to_string(&event).unwrap_or_default();
        tracing::info!(target: "lance_catalog::audit", event = %json, "audit");
        if let Err(e) = self
            .records
            .create_unique(
                EVENT,
                &event.event_id,
                &event,
                Code::CONCURRENT_MODIFICATION,
            )
            .await
        {
            tracing::warn!(target: "lance_catalog::audit", error = %e.message, event = %json, "audit event not stored");
        }
    }

    /// Events at or after `since`, oldest first.
    pub(super) async fn events(
        &self,
        req: &ListEventsRequest,
    ) -> CatalogResult<ListEventsResponse> {
        let from = format!("{:013}", since_ms(req.since.as_deref())?);
        let ids: Vec<String> = self
            .records
            .ids::<Event>(EVENT)
            .await?
            .into_iter()
            .filter(|id| id.as_str() >= from.as_str())
            .collect();
        let (ids, page_token) = crate::api::page::page(
            &ids,
            req.page_token.as_deref(),
            req.limit,
            crate::api::page::CONTROL,
        )?;
        let mut events = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(e) = self.records.get::<Event>(EVENT, &id).await? {
                events.push(e.value);
            }
        }
        Ok(ListEventsResponse { events, page_token })
    }
}
