//! Index health: how much of a table each of its indices covers, and
//! whether an optimize is due. A report: computing it writes nothing.

use serde::{Deserialize, Serialize};

/// `GET /v1/table/{id}/index_health`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetIndexHealthRequest {
    pub id: Vec<String>,
}

/// `GET /v1/namespace/{id}/index_health`: every table in the namespace or
/// below.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamespaceIndexHealth {
    pub tables: Vec<IndexHealth>,
}

/// One table's indices, as of its latest version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexHealth {
    pub id: Vec<String>,
    /// The table version read.
    pub version: u64,
    /// The table's fragments and rows (deleted rows not counted).
    pub fragments: u64,
    pub rows: u64,
    pub indices: Vec<IndexHealthEntry>,
    /// Whether any index has an optimize due.
    pub optimize_due: bool,
}

/// One index of a table (all its segments).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexHealthEntry {
    pub name: String,
    pub columns: Vec<String>,
    /// Segments: the base and the deltas an optimize appended.
    pub segments: u64,
    pub fragments_covered: u64,
    pub fragments_unindexed: u64,
    /// Rows of the fragments no segment covers: a query reads them
    /// without the index.
    pub unindexed_rows: u64,
    /// Some segment does not say which fragments it covers (an index from
    /// an old Lance): its coverage is not known, and counted as none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub coverage_unknown: bool,
    /// Fragments are unindexed, or the segments are more than
    /// [`MAX_SEGMENTS`]: `lance_optimize_indices` would fold them in.
    pub optimize_due: bool,
}

/// Index segments tolerated before an optimize is due.
pub const MAX_SEGMENTS: u64 = 8;

/// One warehouse's index health, table by table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WarehouseIndexHealth {
    pub warehouse_id: String,
    pub tables: Vec<IndexHealth>,
}

/// A project's index health, warehouse by warehouse.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectIndexHealth {
    pub warehouses: Vec<WarehouseIndexHealth>,
}
