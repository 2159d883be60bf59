//! Recoverable drops: trash entries, pending deadlines, undrop, listing,
//! purge and sweep.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// One object in trash.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrashEntry {
    /// The entry's own id (when it was dropped, then random: sorts by age).
    pub trash_id: String,
    /// `table` or `namespace`.
    pub kind: String,
    /// The object's id when it was dropped.
    pub id: Vec<String>,
    /// A table's location relative to its root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// A table's last version; none for a table declared but never written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The object's properties, restored with it (its real id among them).
    #[serde(default)]
    pub properties: HashMap<String, String>,
    /// The real id of the namespace it was dropped from: an undrop into a
    /// namespace made since under that name needs the right to create
    /// there, as a rename into it would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_object_id: Option<String>,
    /// The real ids of every namespace it was dropped from, outermost
    /// first (empty where one had none): the maintenance policy records
    /// that governed it then still govern its expiry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ancestor_object_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_by: Option<String>,
    pub dropped_at_ms: u64,
    pub expires_at_ms: u64,
    /// The trash id of the drop that filed it: a cascade's namespace entry,
    /// or the entry itself.
    pub group: String,
    /// A group's own entry: whether its drop finished.
    #[serde(default)]
    pub complete: bool,
    /// Whether its grace period is over (computed when read).
    #[serde(default)]
    pub expired: bool,
    /// Where it is (filled in by the governance layer's answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// Something pending on an object: a trash deadline, or an unfinished
/// maintenance task (no deadline: `deadline_ms` 0).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PendingTask {
    pub task_id: String,
    /// `trash_expiry`.
    pub task_type: String,
    /// `pending`, or `expired` once the deadline passed.
    pub status: String,
    pub id: Vec<String>,
    pub kind: String,
    pub created_at_ms: u64,
    pub deadline_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Undrop a table: the newest trashed copy of `id`, or the one `trash_id`
/// names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UndropTableRequest {
    #[serde(default)]
    pub id: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trash_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UndropTableResponse {
    pub id: Vec<String>,
    pub trash_id: String,
    pub location: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
}

/// Undrop a namespace: what the newest drop of `id` (or the drop whose
/// entry `trash_id` names) put in trash under it. `warehouse_id` picks the
/// warehouse of a top-level namespace that is bound nowhere any more.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UndropNamespaceRequest {
    #[serde(default)]
    pub id: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trash_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UndropNamespaceResponse {
    pub id: Vec<String>,
    /// Restored now, or found already restored.
    pub restored: Vec<TrashEntry>,
    /// Left out: tables declared but never written (no data was lost).
    pub skipped: Vec<TrashEntry>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListTasksRequest {
    #[serde(default)]
    pub id: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListTasksResponse {
    pub tasks: Vec<PendingTask>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListTrashRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse_id: Option<String>,
    /// Only entries at or below this namespace.
    #[serde(default)]
    pub namespace_id: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListTrashResponse {
    pub entries: Vec<TrashEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PurgeTrashRequest {
    pub trash_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PurgeTrashResponse {
    pub purged: Vec<TrashEntry>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepTrashRequest {}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepTrashResponse {
    /// Every entry past its deadline.
    pub expired: Vec<TrashEntry>,
    /// Those purged, where a policy says so.
    pub purged: Vec<TrashEntry>,
}
