//! The OSS Tables maintenance-task API's requests, answers and tasks.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A submit: the table, and the task's parameters (the request body).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubmitLanceTaskRequest {
    pub id: Vec<String>,
    #[serde(default)]
    pub params: Map<String, Value>,
}

/// The new task's id, and the table's real id (`x-oss-table-id`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubmitLanceTaskResponse {
    pub task_id: String,
    pub table_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetLanceTaskStatusRequest {
    pub id: Vec<String>,
    pub task_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetLanceTaskStatusResponse {
    pub task_info: TaskInfo,
    pub table_id: String,
}

/// A page of one table's tasks of one type, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListLanceTasksRequest {
    pub id: Vec<String>,
    #[serde(default)]
    pub task_type: Option<String>,
    #[serde(default)]
    pub max_results: Option<i64>,
    #[serde(default)]
    pub marker: Option<String>,
    /// Not accepted: status filtering is the client's (400 when present).
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListLanceTasksResponse {
    pub tasks: Vec<TaskInfo>,
    /// The `marker` of the next page; empty on the last.
    pub next_marker: String,
    pub table_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteLanceTaskRequest {
    pub id: Vec<String>,
    pub task_id: String,
}

/// Cancel a submitted or running task: it ends `failed` with error
/// `TaskCancelled`, and the job running it is stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CancelLanceTaskRequest {
    pub id: Vec<String>,
    pub task_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteLanceTaskResponse {
    pub table_id: String,
}

/// A task as the API shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    pub task_id: String,
    pub task_type: String,
    /// The parameters as saved, defaults filled in.
    #[serde(default)]
    pub params: Map<String, Value>,
    pub status: String,
    pub created_at: String,
    /// Empty until a worker starts it.
    #[serde(default)]
    pub started_at: String,
    /// Empty until it ends.
    #[serde(default)]
    pub completed_at: String,
    /// What Lance reported, and which worker ran it.
    #[serde(default)]
    pub result: Map<String, Value>,
    /// Why it failed (null unless `failed`).
    #[serde(default)]
    pub error: Option<TaskError>,
}

/// A failed task's error, in the problem document's terms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskError {
    pub error: String,
    pub code: u32,
    pub detail: String,
}
