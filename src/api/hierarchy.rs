//! The hierarchy's records and their requests and answers: projects,
//! warehouses and the warehouse door for top-level namespaces.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::vending::VendingSettings;

/// A project: the tenant. A project has many warehouses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Project {
    pub project_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub properties: HashMap<String, String>,
    /// A protected project refuses deletion unless forced.
    #[serde(default)]
    pub protected: bool,
    /// How long its drops stay recoverable (`7d`, `24h`, `0` = off);
    /// unset: the server's `--trash-grace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trash_grace: Option<String>,
    /// Whether the sweep purges its expired trash; unset: the server's
    /// `--trash-purge-expired`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge_expired_trash: Option<bool>,
    #[serde(default)]
    pub created_at_ms: u64,
    #[serde(default)]
    pub updated_at_ms: u64,
}

/// Whether a warehouse takes writes; stored and answered in lower case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WarehouseStatus {
    /// It serves reads and writes.
    #[default]
    Active,
    /// It serves reads and refuses writes.
    Quarantined,
    /// Set while it is deleted: it refuses new namespaces and writes.
    Deleting,
}

impl WarehouseStatus {
    /// A status a caller may set (`active` or `quarantined`, in any case);
    /// `deleting` is the server's own.
    pub fn settable(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "active" => Some(WarehouseStatus::Active),
            "quarantined" => Some(WarehouseStatus::Quarantined),
            _ => None,
        }
    }
}

/// A warehouse: one storage root of a project.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Warehouse {
    pub warehouse_id: String,
    pub project_id: String,
    /// The storage root: a path, `file://…` or an object-store URI.
    pub root: String,
    /// Object-store options for the root. Values of secret-looking keys
    /// are never answered (see [`Warehouse::redacted`]).
    #[serde(default)]
    pub storage_options: HashMap<String, String>,
    #[serde(default)]
    pub properties: HashMap<String, String>,
    /// `active` or `quarantined` (`deleting` while it is deleted).
    pub status: WarehouseStatus,
    #[serde(default)]
    pub protected: bool,
    #[serde(default)]
    pub created_at_ms: u64,
    #[serde(default)]
    pub updated_at_ms: u64,
    /// Table credentials vended through STS; none: clients bring their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vending: Option<VendingSettings>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateProjectRequest {
    pub project_id: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub properties: Option<HashMap<String, String>>,
    #[serde(default)]
    pub trash_grace: Option<String>,
    #[serde(default)]
    pub purge_expired_trash: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListProjectsRequest {
    #[serde(default)]
    pub page_token: Option<String>,
    #[serde(default)]
    pub limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListProjectsResponse {
    pub projects: Vec<Project>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DescribeProjectRequest {
    pub project_id: String,
}

/// Set the description and merge properties (a `null`-free map; an empty
/// value deletes the key).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateProjectRequest {
    pub project_id: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub properties: Option<HashMap<String, String>>,
    #[serde(default)]
    pub trash_grace: Option<String>,
    #[serde(default)]
    pub purge_expired_trash: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteProjectRequest {
    pub project_id: String,
    /// Overrides the protected flag, and nothing else.
    #[serde(default)]
    pub force: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteProjectResponse {
    pub project_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetProjectProtectionRequest {
    pub project_id: String,
    pub protected: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateWarehouseRequest {
    pub warehouse_id: String,
    pub project_id: String,
    pub root: String,
    #[serde(default)]
    pub storage_options: Option<HashMap<String, String>>,
    #[serde(default)]
    pub properties: Option<HashMap<String, String>>,
    #[serde(default)]
    pub vending: Option<VendingSettings>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListWarehousesRequest {
    /// Only this project's warehouses.
    #[serde(default)]
    pub project_id: Option<String>,
    #[serde(default)]
    pub page_token: Option<String>,
    #[serde(default)]
    pub limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListWarehousesResponse {
    pub warehouses: Vec<Warehouse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DescribeWarehouseRequest {
    pub warehouse_id: String,
}

/// Change a warehouse's status (`active` / `quarantined`) and merge its
/// properties (an empty value deletes the key).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateWarehouseRequest {
    pub warehouse_id: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub properties: Option<HashMap<String, String>>,
    /// New vending settings; an empty `role_arn` turns vending off.
    #[serde(default)]
    pub vending: Option<VendingSettings>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteWarehouseRequest {
    pub warehouse_id: String,
    #[serde(default)]
    pub force: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteWarehouseResponse {
    pub warehouse_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetWarehouseProtectionRequest {
    pub warehouse_id: String,
    pub protected: bool,
}

/// Create a top-level namespace in a warehouse, binding it there: the one
/// door for top-level namespaces when warehouses are on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateWarehouseNamespaceRequest {
    pub warehouse_id: String,
    pub namespace: String,
    #[serde(default)]
    pub properties: Option<HashMap<String, String>>,
    /// `create` (default) or `exist_ok`, as in create_namespace.
    #[serde(default)]
    pub mode: Option<String>,
}

/// A top-level namespace and the warehouse that holds it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WarehouseNamespace {
    pub warehouse_id: String,
    pub namespace: String,
    #[serde(default)]
    pub properties: HashMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListWarehouseNamespacesRequest {
    pub warehouse_id: String,
    #[serde(default)]
    pub page_token: Option<String>,
    #[serde(default)]
    pub limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListWarehouseNamespacesResponse {
    pub namespaces: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}
