//! Job records (backfills, view refreshes).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
}

/// What a job did or is doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub job_id: String,
    /// `backfill` or `refresh`.
    pub kind: String,
    /// The table (or view) the job writes.
    pub table: Vec<String>,
    /// The column a backfill fills.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    pub state: JobState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_written: Option<u64>,
    /// The table version the job committed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    /// Job-specific facts (e.g. the source versions a refresh read).
    #[serde(default, skip_serializing_if = "HashMap::is_empty")]
    pub details: HashMap<String, String>,
    pub created_at_ms: u64,
    pub updated_at_ms: u64,
}
