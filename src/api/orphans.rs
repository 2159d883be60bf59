//! The orphan scan and reclaim: files under a table's location that no
//! manifest of any retained version of any branch references (nor any
//! other table's, through a shallow clone's base paths). The scan is a
//! report and deletes nothing; reclaim is an explicit call that scans
//! again and deletes only what is still unreferenced and old enough.

use serde::{Deserialize, Serialize};

/// `GET /v1/table/{id}/orphans`, `GET /v1/namespace/{id}/orphans`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetOrphansRequest {
    pub id: Vec<String>,
}

/// `GET /v1/namespace/{id}/orphans`: every table in the namespace or below.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamespaceOrphans {
    pub tables: Vec<OrphanReport>,
}

/// `GET /v1/projects/{project_id}/orphans`: every table of every warehouse
/// of the project, by warehouse.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectOrphans {
    pub warehouses: Vec<WarehouseOrphans>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WarehouseOrphans {
    pub warehouse_id: String,
    pub tables: Vec<OrphanReport>,
}

/// One table's scan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrphanReport {
    pub id: Vec<String>,
    /// The table's location, relative to its warehouse's root; every path
    /// below is relative to it.
    pub location: String,
    pub files_scanned: u64,
    pub bytes_scanned: u64,
    /// Manifests read: every retained version of every branch.
    pub manifests_read: u64,
    pub branches: Vec<String>,
    /// Other tables whose manifests reach files here through their base
    /// paths (shallow clones): those files count as referenced.
    pub clones: Vec<TableRef>,
    /// Files nothing references.
    pub orphans: Vec<OrphanFile>,
    /// Transaction files (`_transactions/*.txn`) no retained manifest
    /// names: the record of a commit attempt that lost, or of a removed
    /// version. Reported apart; reclaim takes them too.
    pub transactions: Vec<OrphanFile>,
    /// Files the scan cannot judge (`_blobs/`, whose descriptors it does
    /// not read): never reclaimed.
    pub unverifiable: Vec<OrphanFile>,
    /// Symbolic links found under the location (relative paths of the
    /// links themselves): never followed, never reclaimed; what lies
    /// behind one is not the table's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symlinks: Vec<String>,
    /// Bytes of `orphans` and `transactions`.
    pub orphan_bytes: u64,
    /// How old an unreferenced file must be before reclaim takes it
    /// (Lance's own threshold for files no manifest names: a younger one
    /// may belong to a write still in flight).
    pub min_age_s: u64,
}

/// A table, by its id.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TableRef {
    pub id: Vec<String>,
    /// Set when it is a dropped table in trash: its trash entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trash_id: Option<String>,
}

/// A file the scan names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrphanFile {
    /// Relative to the table's location.
    pub path: String,
    pub size_bytes: u64,
    pub last_modified_ms: u64,
    /// Younger than `min_age_s`: maybe a write still in flight.
    pub maybe_in_flight: bool,
}

/// `POST /v1/table/{id}/reclaim`: delete files a scan named.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReclaimRequest {
    #[serde(default)]
    pub id: Vec<String>,
    /// Paths relative to the table's location, as a scan named them
    /// (absent reads as none: proto3 leaves an empty list out).
    #[serde(default)]
    pub paths: Vec<String>,
    /// The request context the REST adapter passes along; unused here.
    #[serde(default, skip_serializing)]
    pub context: Option<std::collections::HashMap<String, String>>,
    /// The spec's per-request identity, which clients may send with any
    /// body; the caller is told by its credentials.
    #[serde(default, skip_serializing)]
    pub identity: Option<serde_json::Value>,
}

/// What a reclaim did, path by path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReclaimResponse {
    pub deleted: Vec<OrphanFile>,
    pub kept: Vec<KeptFile>,
    pub bytes_deleted: u64,
}

/// A path reclaim did not delete, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptFile {
    pub path: String,
    pub reason: KeptReason,
}

/// Why reclaim kept a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeptReason {
    /// A manifest references it now (the table's, a branch's or a clone's).
    Referenced,
    /// Younger than the scan's `min_age_s`.
    InFlight,
    /// Nothing is there (any more).
    Missing,
    /// Never reclaimed: refs, version hints, markers, `_blobs/`, branch
    /// trees, the memory WAL, index fragment-reuse data.
    Protected,
    /// Not a plain path inside the table's location (`..`, absolute,
    /// empty segments).
    Invalid,
    /// The delete failed; the scan will name it again.
    Failed,
    /// It lies behind a symbolic link: never followed, never deleted.
    SymbolicLink,
}

/// Most paths one reclaim takes.
pub const MAX_RECLAIM_PATHS: usize = 10_000;
