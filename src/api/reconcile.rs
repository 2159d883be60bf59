//! The estate reconciler's findings: drift between the registries, each
//! warehouse's `__manifest` and the storage. A report; each finding names
//! the repair that removes it, which runs only when an operator asks for
//! that kind (`lance-catalog maintenance reconcile --repair KIND`).

use serde::{Deserialize, Serialize};

/// What kind of drift a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    /// A top-level namespace bound to a warehouse no registry holds.
    BindingToMissingWarehouse,
    /// A recorded table whose location holds no dataset (declared and
    /// never written, or its data lost).
    TableWithoutData,
    /// A directory under a warehouse's root that no table owns.
    UnownedDirectory,
    /// A trash entry of a table whose bytes are gone.
    TrashWithoutBytes,
    /// Task records of a table that no longer exists (nor in trash).
    TasksOfMissingTable,
    /// A maintenance policy record of a table or namespace that no longer
    /// exists (nor in trash).
    PolicyOfMissingObject,
    /// A symbolic link under a warehouse's root that no table owns:
    /// reported as what it is, never followed, never deleted (no repair).
    SymbolicLink,
}

/// What repairs a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    /// Remove the binding (only if it still names that warehouse).
    Unbind,
    /// Deregister the table: its row goes, no byte is touched.
    DeregisterTable,
    /// Forget the trash entry (nothing is left to delete).
    ForgetTrashEntry,
    /// Delete the task records (and the maintenance round) of that table.
    ForgetTasks,
    /// Delete the policy records and grants of that object.
    ForgetObject,
    /// Delete what lies at the path, once nothing there changed for an
    /// hour and no table or create names it.
    RemovePath,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drift {
    pub kind: DriftKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse_id: Option<String>,
    /// What it is about: a namespace name, a location, a trash id or a
    /// real id, by kind.
    pub subject: String,
    /// The table it concerns, where there is one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<Repair>,
    /// Set when a repair ran: what it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repaired: Option<String>,
}

/// `GET /v1/reconciliation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetReconciliationRequest {}

/// `POST /v1/reconciliation/repair`: run the repair of every finding of
/// these kinds (found again first).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepairDriftRequest {
    /// Absent reads as none (proto3 leaves an empty list out), refused.
    #[serde(default)]
    pub kinds: Vec<DriftKind>,
    /// The request context the REST adapter passes along; unused here.
    #[serde(default, skip_serializing)]
    pub context: Option<std::collections::HashMap<String, String>>,
    /// The spec's per-request identity, which clients may send with any
    /// body; the caller is told by its credentials.
    #[serde(default, skip_serializing)]
    pub identity: Option<serde_json::Value>,
}

/// Every finding across the estate (after a repair: with what it did).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReconciliationReport {
    pub drifts: Vec<Drift>,
}
