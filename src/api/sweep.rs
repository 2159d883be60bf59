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
    /// deleted: what a compaction would rewrite.
    pub untidy_fragments: u64,
    pub target_rows_per_fragment: u64,
    pub versions: u64,
    /// Versions a cleanup by the policy would remove: older than its
    /// `version_retention`, not among the newest `versions_to_retain`, not
    /// tagged.
    pub versions_past_retention: u64,
    /// When its last round began (none: the scheduler has not seen it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_round_at_ms: Option<u64>,
    /// When its next round is due (none: one interval after it is first
    /// seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_round_at_ms: Option<u64>,
    /// The task types its next round would submit, as the table is now
    /// (`lance_cleanup` only with `--scheduler-cleanup on`).
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
}
