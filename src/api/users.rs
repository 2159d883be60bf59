//! The local users' requests and answers (`/v1/users`), named as their
//! proto messages. No answer ever carries a password or its hash.

use serde::{Deserialize, Serialize};

/// What may be shown of a local user.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserInfo {
    pub username: String,
    /// Groups the user's principal carries (grants to `group:<name>`).
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A disabled user cannot sign in, and its session tokens stop.
    #[serde(default)]
    pub disabled: bool,
    pub created_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    pub password_changed_at_ms: u64,
}

#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateUserRequest {
    pub username: String,
    pub password: String,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub disabled: Option<bool>,
}

/// Debug never shows a password.
impl std::fmt::Debug for CreateUserRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreateUserRequest")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("groups", &self.groups)
            .field("description", &self.description)
            .field("disabled", &self.disabled)
            .finish()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListUsersRequest {
    #[serde(default)]
    pub page_token: Option<String>,
    #[serde(default)]
    pub limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListUsersResponse {
    pub users: Vec<UserInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetUserRequest {
    pub username: String,
}

/// Change what is set; a field left out stays as it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateUserRequest {
    pub username: String,
    #[serde(default)]
    pub disabled: Option<bool>,
    #[serde(default)]
    pub groups: Option<Vec<String>>,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteUserRequest {
    pub username: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteUserResponse {
    pub username: String,
    /// The grants that named the user, ended with it.
    #[serde(default)]
    pub grants_revoked: u64,
    /// The API keys minted for its name, revoked with it.
    #[serde(default)]
    pub api_keys_revoked: u64,
}

/// A user changing its own password sends its current one; the server
/// admin resetting another's does not.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetUserPasswordRequest {
    pub username: String,
    pub password: String,
    #[serde(default)]
    pub current_password: Option<String>,
}

/// Debug never shows a password.
impl std::fmt::Debug for SetUserPasswordRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetUserPasswordRequest")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field(
                "current_password",
                &self.current_password.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Sign in: the call's own `Authorization: Basic` credentials are what is
/// checked; the body carries nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateSessionRequest {}

/// Sign out: the call's own session token is the one ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteSessionRequest {}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteSessionResponse {}

/// A session token for a local user: sent as `Authorization: Bearer` on
/// later calls, until `expires_at_ms` or until the user changes.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub username: String,
    pub token: String,
    pub expires_at_ms: u64,
}

/// Debug never shows the token.
impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("username", &self.username)
            .field("token", &"<redacted>")
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}
