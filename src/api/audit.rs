//! The audit trail's events and its listing, named as their proto
//! messages.

use serde::{Deserialize, Serialize};

/// What an event is about.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EventResource {
    pub kind: String,
    #[serde(default)]
    pub id: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse: Option<String>,
    /// The real id of the namespace or table, when it is known: which
    /// object it was, whatever its name is now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
}

/// One audited act.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub event_id: String,
    pub at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    pub action: String,
    pub resource: EventResource,
    /// `succeeded` or `denied`.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Credentials the answer handed: which, for what, until when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vended: Option<VendedEvent>,
    /// The table version the write made (a commit, an insert, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
}

/// Vended credentials as the audit trail keeps them: never the secret.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VendedEvent {
    /// `read` or `read_write`.
    pub privilege: String,
    pub access_key_id: String,
    pub expires_at_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListEventsRequest {
    /// Only events at or after this time: milliseconds since the epoch, or
    /// an RFC 3339 timestamp.
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub page_token: Option<String>,
    #[serde(default)]
    pub limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListEventsResponse {
    pub events: Vec<Event>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}
