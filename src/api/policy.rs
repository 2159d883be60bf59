//! Maintenance policies: one record per project, namespace or table, and
//! the effective policy an object has, naming the record that won.
//!
//! Resolution is winner-takes-all: the table's own record, else the
//! nearest namespace's (innermost first), else the project's, else none.
//! The winner supplies every field; a field the winning record leaves
//! unset is the server's default, never an ancestor record's value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The fields of a policy record. Unset: the server's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFields {
    /// How old a table version must be (by its own commit time) before a
    /// cleanup may remove it, unless it is among the newest
    /// `versions_to_retain` or tagged (`7d`, `24h`, `90` seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_retention: Option<String>,
    /// How many of the newest versions are kept however old they are
    /// (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions_to_retain: Option<u64>,
    /// Whether the scheduler compacts fragments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<bool>,
    /// How often a maintenance round is due (at least 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// The rows a compacted fragment aims for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rows_per_fragment: Option<u64>,
    /// Whether the sweep purges expired trash (otherwise it only reports it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge_expired_trash: Option<bool>,
    /// How long a drop stays recoverable (`0`: drops delete at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trash_grace: Option<String>,
}

/// Every field of a policy, resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    pub version_retention: String,
    pub versions_to_retain: u64,
    pub compaction: bool,
    pub interval: String,
    pub target_rows_per_fragment: u64,
    pub purge_expired_trash: bool,
    pub trash_grace: String,
}

/// Where a policy record sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyLevel {
    Table,
    Namespace,
    Project,
    /// No record: the server's defaults.
    Server,
}

impl PolicyLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyLevel::Table => "table",
            PolicyLevel::Namespace => "namespace",
            PolicyLevel::Project => "project",
            PolicyLevel::Server => "server",
        }
    }
}

/// One object's own record, as stored on the control root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyRecord {
    pub level: PolicyLevel,
    /// The object's id when the record was set (a table's may have moved
    /// since: the record follows its real id).
    pub id: Vec<String>,
    /// The real id of the table or namespace; none for a project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
    /// The warehouse of a table or namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse: Option<String>,
    pub fields: PolicyFields,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_by: Option<String>,
    pub updated_at_ms: u64,
}

/// The record an effective policy came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyWinner {
    pub level: PolicyLevel,
    /// Its object's id now (empty for the server).
    #[serde(default)]
    pub id: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at_ms: Option<u64>,
}

/// Where one field's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldSource {
    /// `set_here` (the object's own record) or `inherited`.
    pub state: String,
    /// The level that supplied it: the winner's, or `server` for a field
    /// the winning record leaves unset.
    pub from: PolicyLevel,
}

/// An object's effective policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EffectivePolicy {
    /// What was asked about.
    pub level: PolicyLevel,
    pub id: Vec<String>,
    pub winner: PolicyWinner,
    pub policy: Policy,
    /// Per field of `policy`: set here or inherited, and from where.
    pub sources: BTreeMap<String, FieldSource>,
    /// The object's own record, if it has one (then it is the winner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<PolicyFields>,
}

/// A table's or namespace's policy: `GET /v1/<object>/{id}/maintenance_policy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetMaintenancePolicyRequest {
    pub id: Vec<String>,
}

/// Remove a table's or namespace's own record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteMaintenancePolicyRequest {
    pub id: Vec<String>,
}

/// A project's policy: `GET /v1/projects/{project_id}/maintenance_policy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetProjectMaintenancePolicyRequest {
    pub project_id: String,
}

/// Remove a project's own record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteProjectMaintenancePolicyRequest {
    pub project_id: String,
}

/// What a removal did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteMaintenancePolicyResponse {
    /// Whether there was a record to remove.
    pub removed: bool,
}

/// A request that sets a record: the object's id field, then every field
/// of [`PolicyFields`] inline (a flat body, unknown fields refused).
macro_rules! set_request {
    ($(#[$doc:meta])* $Req:ident { $key:ident: $Key:ty }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $Req {
            pub $key: $Key,
            /// The request context the REST adapter passes along (headers
            /// as `header.<name>`); a policy has no use for it.
            #[serde(default, skip_serializing)]
            pub context: Option<std::collections::HashMap<String, String>>,
            /// The spec's per-request identity, which clients may send with
            /// any body; the caller is told by its credentials.
            #[serde(default, skip_serializing)]
            pub identity: Option<serde_json::Value>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub version_retention: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub versions_to_retain: Option<u64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub compaction: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub interval: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub target_rows_per_fragment: Option<u64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub purge_expired_trash: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub trash_grace: Option<String>,
        }

        impl $Req {
            /// The record's fields.
            pub fn fields(&self) -> PolicyFields {
                PolicyFields {
                    version_retention: self.version_retention.clone(),
                    versions_to_retain: self.versions_to_retain,
                    compaction: self.compaction,
                    interval: self.interval.clone(),
                    target_rows_per_fragment: self.target_rows_per_fragment,
                    purge_expired_trash: self.purge_expired_trash,
                    trash_grace: self.trash_grace.clone(),
                }
            }
        }
    };
}

set_request!(
    /// Set a table's or namespace's own record (the whole record: fields
    /// left out are the server's defaults, not its ancestors').
    SetMaintenancePolicyRequest { id: Vec<String> }
);

set_request!(
    /// Set a project's own record.
    SetProjectMaintenancePolicyRequest { project_id: String }
);
