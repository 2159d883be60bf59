//! Deletion protection of tables and namespaces.

use serde::{Deserialize, Serialize};

/// Set or clear the protection of a table (`/v1/table/{id}/protection`)
/// or a namespace (`/v1/namespace/{id}/protection`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetProtectionRequest {
    pub id: Vec<String>,
    pub protected: bool,
}

/// The object's protection after the change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProtectionResponse {
    pub id: Vec<String>,
    pub protected: bool,
}
