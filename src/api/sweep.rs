//! The sweep report: per table, what its maintenance policy finds and what
//! the scheduler's next round would do about it; with the namespace's
//! expired trash. A report: computing it changes nothing.

use serde::{Deserialize, Serialize};

use super::policy::PolicyWinner;
use super::trash::TrashEntry;

/// `GET /v1/table/{id}/maintenance_sweep`, `GET /v1/namespace/{id}/maintenance_sweep`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetSweepRequest {
    pub id: Vec<String>,
}

/// One table as the scheduler sees it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableSweep {
    pub id: Vec<String>,
    /// The record whose policy governs it.
    pub winner: PolicyWinner,
    /// False: declared, never written (nothing to keep).
    pub has_data: bool,
    pub fragments: u64,
    /// Fragments under the target rows, or with a tenth of their rows
    /// deleted.
    pub untidy_fragments: u64,
    /// The fragments Lance's compaction plan would rewrite now: a round
    /// submits a compaction only when there are some.
    #[serde(default)]
    pub compactable_fragments: u64,
    pub target_rows_per_fragment: u64,
    pub versions: u64,
    /// Versions a cleanup by the policy would remove: older than its
    /// `version_retention`, not among the newest `versions_to_retain`, not
    /// tagged, not kept for a shallow clone.
    pub versions_past_retention: u64,
    /// When its last round began (none: the scheduler has not seen it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_round_at_ms: Option<u64>,
    /// When its next round is due (none: one interval after it is first
    /// seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_round_at_ms: Option<u64>,
    /// The task types its next round would submit, as the table is now
    /// (`lance_cleanup` unless `--scheduler-cleanup off`).
    pub would_submit: Vec<String>,
    /// Those it would skip: one of that type is still unfinished.
    pub unfinished: Vec<String>,
}

/// A namespace's sweep: every table in it or below, and its expired trash.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub tables: Vec<TableSweep>,
    /// Trash entries under the namespace past their deadline (the trash
    /// sweep purges those whose policy says `purge_expired_trash`).
    pub expired_trash: Vec<TrashEntry>,
    /// Stale intents of creates of tables under the namespace that died
    /// before recording them (the server's sweep removes their bytes).
    #[serde(default)]
    pub create_leftovers: Vec<CreateLeftover>,
}

/// What a create is about to write: recorded before its bytes, so a create
/// killed between writing and recording leaves bytes the sweep can tell
/// from anyone else's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateIntent {
    /// The directory, relative to the storage root.
    pub location: String,
    pub table: Vec<String>,
    /// The real id the table gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
    pub replica: String,
    pub started_ms: u64,
    pub touched_ms: u64,
    /// When a sweep took it to remove its bytes (then no create may touch
    /// it, nor start at its location, until the sweep is done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_ms: Option<u64>,
}

/// A stale create intent found by the sweep, and what became of it
/// (see `core/table/intents.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateLeftover {
    pub intent_id: String,
    #[serde(flatten)]
    pub intent: CreateIntent,
    pub outcome: LeftoverOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftoverOutcome {
    /// Its bytes were removed: no table owns them.
    Removed,
    /// A table owns the location (the create was recorded, or another
    /// table took the location since): only the intent was forgotten.
    Recorded,
    /// Another create is writing there now: the bytes stay for it.
    Kept,
    /// A report: the sweep would remove its bytes.
    WouldRemove,
}

/// `GET /v1/projects/{project_id}/maintenance_sweep`,
/// `GET /v1/projects/{project_id}/index_health`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetProjectReportRequest {
    pub project_id: String,
}

/// One warehouse's sweep: every table, its expired trash, and the stale
/// intents of creates that died (what the sweep would do about each).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WarehouseSweep {
    pub warehouse_id: String,
    pub tables: Vec<TableSweep>,
    pub expired_trash: Vec<TrashEntry>,
    pub create_leftovers: Vec<CreateLeftover>,
}

/// A project's sweep, warehouse by warehouse.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectSweep {
    pub warehouses: Vec<WarehouseSweep>,
}
