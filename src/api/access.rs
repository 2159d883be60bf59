//! The access control plane's requests and answers (grants, API keys),
//! named as their proto messages.

use serde::{Deserialize, Serialize};

/// What a grant is on: `server` (id `[]`), `project` or `warehouse` (one
/// segment), `namespace` or `table` (the spec id of the object it names).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GrantResource {
    pub kind: String,
    #[serde(default)]
    pub id: Vec<String>,
    /// A namespace's or table's warehouse; found from the id when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse: Option<String>,
    /// A namespace's or table's real id: the object the grant is bound to,
    /// set by the server when the grant is made (a caller's value is
    /// ignored). The grant follows that object through renames, into
    /// trash and back out by undrop, and never reaches another object that
    /// takes its name; `id` is the name it had when last seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
}

/// A principal's relation to a resource, inherited by everything below it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    pub grant_id: String,
    pub resource: GrantResource,
    /// A user id, or `group:<name>`.
    pub principal: String,
    /// The local user the grant was made to (its uid), when `principal`
    /// named one: only that user holds it, not one made later under the
    /// name. Without it the grant is held by the non-local principals of
    /// that name (API keys, tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal_uid: Option<String>,
    /// `admin`, `writer` or `reader`.
    pub relation: String,
    #[serde(default)]
    pub created_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted_by: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateGrantRequest {
    pub resource: GrantResource,
    pub principal: String,
    pub relation: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListGrantsRequest {
    #[serde(default)]
    pub resource_kind: Option<String>,
    /// The resource's id (repeat the query key for each segment).
    #[serde(default)]
    pub resource_id: Option<Vec<String>>,
    #[serde(default)]
    pub principal: Option<String>,
    #[serde(default)]
    pub page_token: Option<String>,
    #[serde(default)]
    pub limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListGrantsResponse {
    pub grants: Vec<Grant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RevokeGrantRequest {
    pub grant_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RevokeGrantResponse {
    pub grant_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateApiKeyRequest {
    pub principal: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// A new key: the only answer that ever shows its secret.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateApiKeyResponse {
    pub key_id: String,
    pub key: String,
    pub principal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub created_at_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListApiKeysRequest {
    #[serde(default)]
    pub principal: Option<String>,
    #[serde(default)]
    pub page_token: Option<String>,
    #[serde(default)]
    pub limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListApiKeysResponse {
    pub api_keys: Vec<ApiKeyInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RevokeApiKeyRequest {
    pub key_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RevokeApiKeyResponse {
    pub key_id: String,
}

/// What may be shown of a key: never its secret.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ApiKeyInfo {
    pub key_id: String,
    pub principal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub created_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}
