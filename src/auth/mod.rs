//! Who is calling: authentication (API keys, bearer JWTs, local users'
//! passwords and their session tokens) and the Cedar
//! authorizer fed by grants. The governance layer asks these on every door,
//! whatever the transport (REST headers, gRPC metadata and Flight call
//! headers all arrive as the request's identity).

mod api_keys;
pub mod cedar;
mod jwt;
mod secrets;
mod task_keys;
mod users;

use serde::{Deserialize, Serialize};

pub use crate::api::call::{AuthToken, Credentials};
pub use api_keys::{ApiKeyInfo, ApiKeys};
pub use jwt::{JwtConfig, JwtVerifier};
pub use task_keys::TaskKeys;
pub use users::{valid_username, UserInfo, Users, UsersConfig, TRUST as USER_TRUST};

use crate::error::{CatalogError, CatalogResult, Code};

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    pub id: String,
    #[serde(default)]
    pub groups: Vec<String>,
    /// A maintenance job's runner: it may touch this task's table only,
    /// and only while the task runs (`task_keys.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskScope>,
}

/// What a task key is good for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskScope {
    pub warehouse: String,
    /// The table's real id.
    pub table_id: String,
    pub task_type: String,
    pub task_id: String,
}

/// How requests are authenticated.
pub struct Authenticator {
    required: bool,
    keys: ApiKeys,
    jwt: Option<JwtVerifier>,
    users: Users,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("required", &self.required)
            .field("jwt", &self.jwt.is_some())
            .finish()
    }
}

pub fn unauthenticated(message: impl Into<String>) -> CatalogError {
    CatalogError::new(Code::UNAUTHENTICATED, message)
}

impl Authenticator {
    /// `required`: every request must carry a valid credential.
    pub fn new(required: bool, keys: ApiKeys, jwt: Option<JwtVerifier>, users: Users) -> Self {
        Self {
            required,
            keys,
            jwt,
            users,
        }
    }

    /// Whether credentials are required (and authorization enforced).
    pub fn required(&self) -> bool {
        self.required
    }

    pub fn keys(&self) -> &ApiKeys {
        &self.keys
    }

    pub fn users(&self) -> &Users {
        &self.users
    }

    /// Who a request's credentials claim to be, unverified: what the
    /// audit trail names for a refused one (`user`, `api_key` or `task`
    /// and its id), never a secret.
    pub fn claimed(credentials: &Credentials) -> Option<(&'static str, String)> {
        let id_of = |key: &str, prefix: &str| {
            key.strip_prefix(prefix)
                .and_then(|rest| rest.split_once('_'))
                .map(|(id, _)| id.chars().take(64).collect::<String>())
        };
        if let Some(key) = &credentials.api_key {
            return match TaskKeys::looks_like_key(key) {
                true => id_of(key, "lct_").map(|id| ("task", id)),
                false => id_of(key, "lck_").map(|id| ("api_key", id)),
            };
        }
        match credentials.token()? {
            // Only a name a user could have: a password typed into the
            // name field is not written down.
            AuthToken::Basic(b) if valid_username(&b.username) => Some(("user", b.username)),
            AuthToken::Basic(_) | AuthToken::BadBasic => None,
            AuthToken::Bearer(t) if Users::looks_like_session(t) => {
                Users::claimed_session(t).map(|id| ("session", id))
            }
            AuthToken::Bearer(t) if ApiKeys::looks_like_key(t) => {
                id_of(t, "lck_").map(|id| ("api_key", id))
            }
            AuthToken::Bearer(t) if TaskKeys::looks_like_key(t) => {
                id_of(t, "lct_").map(|id| ("task", id))
            }
            AuthToken::Bearer(_) => None,
        }
    }

    /// The caller of a request: `None` when authentication is off. With it
    /// required, no credential, or one that does not verify, is 401.
    pub async fn authenticate(
        &self,
        credentials: &Credentials,
    ) -> CatalogResult<Option<Principal>> {
        let principal = self.verify(credentials).await?;
        if let Some(p) = &principal {
            // For the request's log line.
            crate::telemetry::note_principal(&p.id);
        }
        Ok(principal)
    }

    async fn verify(&self, credentials: &Credentials) -> CatalogResult<Option<Principal>> {
        if !self.required {
            return Ok(None);
        }
        if let Some(key) = &credentials.api_key {
            if TaskKeys::looks_like_key(key) {
                return self.keys.tasks().verify(key).await.map(Some);
            }
            return self.keys.verify(key).await.map(Some);
        }
        let Some(token) = credentials.token() else {
            return Err(unauthenticated(match self.users.enabled() {
                true => "authentication required: send an API key (x-api-key), a bearer token (Authorization: Bearer …) or a user name and password (Authorization: Basic …)",
                false => "authentication required: send an API key (x-api-key) or a bearer token (Authorization: Bearer …)",
            }));
        };
        let token = match token {
            AuthToken::Basic(basic) => return self.users.verify_basic(&basic).await.map(Some),
            AuthToken::BadBasic => return Err(unauthenticated(
                "the Basic credentials do not decode to user:password (base64 of UTF-8, RFC 7617)",
            )),
            AuthToken::Bearer(token) => token,
        };
        // Clients that only speak bearer tokens may carry an API key so.
        if ApiKeys::looks_like_key(token) {
            return self.keys.verify(token).await.map(Some);
        }
        if TaskKeys::looks_like_key(token) {
            return self.keys.tasks().verify(token).await.map(Some);
        }
        if Users::looks_like_session(token) {
            return self.users.verify_session(token).await.map(Some);
        }
        match &self.jwt {
            Some(jwt) => jwt.verify(token).await.map(Some),
            None => Err(unauthenticated(
                "bearer tokens are not accepted by this server (no JWT issuer is configured); use an API key",
            )),
        }
    }
}
