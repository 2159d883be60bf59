//! Who is calling: authentication (API keys, bearer JWTs, local users'
//! passwords and their session tokens) and the Cedar
//! authorizer fed by grants. The governance layer asks these on every door,
//! whatever the transport (REST headers, gRPC metadata and Flight call
//! headers all arrive as the request's identity).

mod api_keys;
pub mod cedar;
mod jwt;
pub mod once;
mod secrets;
mod task_keys;
mod users;

use serde::{Deserialize, Serialize};

pub use crate::api::call::{AuthToken, Credentials};
use crate::api::kind::Kind;
pub use api_keys::{ApiKeyInfo, ApiKeys};
pub use jwt::{JwtConfig, JwtVerifier};
pub use task_keys::TaskKeys;
pub use users::{valid_username, UserInfo, Users, UsersConfig, TRUST as USER_TRUST};

use crate::error::{CatalogError, CatalogResult, Code};

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    /// The name grants, Cedar and the audit trail call it by.
    pub id: String,
    #[serde(default)]
    pub groups: Vec<String>,
    /// A maintenance job's runner: it may touch this task's table only,
    /// and only while the task runs (`task_keys.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskScope>,
    /// Who it is behind the name (see [`Identity`]).
    #[serde(default)]
    pub identity: Identity,
}

/// Who a principal is, beyond the name it goes by: what a grant binds to
/// where a name could be taken by someone else later.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Identity {
    /// A name the server takes as given (no authentication).
    #[default]
    Named,
    /// A local user: a user made again under a deleted one's name has a
    /// new `uid` and is another principal.
    User { uid: String, created_at_ms: u64 },
    /// An API key (its principal's name is the operator's choice); one
    /// minted for a local user carries that user's uid.
    ApiKey {
        key_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user_uid: Option<String>,
    },
    /// A verified token: its issuer and subject (the principal claim
    /// names it).
    Token { issuer: String, subject: String },
    /// A maintenance task's runner.
    Task { task_id: String },
}

impl Identity {
    /// The local user's uid, if the principal is one (or a key minted
    /// for one).
    pub fn user_uid(&self) -> Option<&str> {
        match self {
            Identity::User { uid, .. } => Some(uid),
            Identity::ApiKey { user_uid, .. } => user_uid.as_deref(),
            _ => None,
        }
    }
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
    /// Credentials verified so far (a request's second ask is not one).
    verified: std::sync::atomic::AtomicU64,
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
            verified: Default::default(),
        }
    }

    /// How many times credentials were verified (each request's are
    /// verified once, see [`once`]), refusals included.
    pub fn verifications(&self) -> u64 {
        self.verified.load(std::sync::atomic::Ordering::Relaxed)
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
    /// audit trail names for a refused one (`user`, `session`, `api_key`
    /// or `task` and its id), never a secret.
    pub fn claimed(credentials: &Credentials) -> Option<(Kind, String)> {
        match Presented::of(credentials)? {
            // Only a name a user could have: a password typed into the
            // name field is not written down.
            Presented::Basic(b) => valid_username(&b.username).then_some((Kind::User, b.username)),
            Presented::Session(t) => Users::claimed_session(t).map(|id| (Kind::Session, id)),
            Presented::ApiKey(k) => ApiKeys::claimed_id(k).map(|id| (Kind::ApiKey, id)),
            Presented::TaskKey(k) => TaskKeys::claimed_id(k).map(|id| (Kind::Task, id)),
            Presented::BadBasic | Presented::Jwt(_) => None,
        }
    }

    /// The caller of a request: `None` when authentication is off. With it
    /// required, no credential, or one that does not verify, is 401.
    pub async fn authenticate(
        &self,
        credentials: &Credentials,
    ) -> CatalogResult<Option<Principal>> {
        if let Some(p) = once::recall(credentials) {
            return Ok(Some(p));
        }
        let principal = self.verify(credentials).await?;
        if let Some(p) = &principal {
            once::remember(credentials, p);
            // For the request's log line.
            crate::telemetry::note_principal(&p.id);
        }
        Ok(principal)
    }

    async fn verify(&self, credentials: &Credentials) -> CatalogResult<Option<Principal>> {
        if !self.required {
            return Ok(None);
        }
        self.verified
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(presented) = Presented::of(credentials) else {
            return Err(unauthenticated(match self.users.enabled() {
                true => "authentication required: send an API key (x-api-key), a bearer token (Authorization: Bearer …) or a user name and password (Authorization: Basic …)",
                false => "authentication required: send an API key (x-api-key) or a bearer token (Authorization: Bearer …)",
            }));
        };
        let principal = match presented {
            Presented::ApiKey(key) => self.keys.verify(key).await?,
            Presented::TaskKey(key) => self.keys.tasks().verify(key).await?,
            Presented::Basic(basic) => self.users.verify_basic(&basic).await?,
            Presented::BadBasic => {
                return Err(unauthenticated(
                    "the Basic credentials do not decode to user:password (base64 of UTF-8, RFC 7617)",
                ))
            }
            Presented::Session(token) => self.users.verify_session(token).await?,
            Presented::Jwt(token) => match &self.jwt {
                Some(jwt) => jwt.verify(token).await?,
                None => {
                    return Err(unauthenticated(
                        "bearer tokens are not accepted by this server (no JWT issuer is configured); use an API key",
                    ))
                }
            },
        };
        Ok(Some(principal))
    }
}

/// What kind of credential a request presents: read once, for verifying
/// it and for naming it when it is refused.
enum Presented<'a> {
    /// `x-api-key`, or a bearer token shaped as an API key (for clients
    /// that only speak bearer tokens).
    ApiKey(&'a str),
    TaskKey(&'a str),
    Basic(crate::api::call::Basic),
    BadBasic,
    Session(&'a str),
    Jwt(&'a str),
}

impl<'a> Presented<'a> {
    fn of(credentials: &'a Credentials) -> Option<Self> {
        if let Some(key) = &credentials.api_key {
            return Some(match TaskKeys::looks_like_key(key) {
                true => Presented::TaskKey(key),
                false => Presented::ApiKey(key),
            });
        }
        Some(match credentials.token()? {
            AuthToken::Basic(b) => Presented::Basic(b),
            AuthToken::BadBasic => Presented::BadBasic,
            AuthToken::Bearer(t) if ApiKeys::looks_like_key(t) => Presented::ApiKey(t),
            AuthToken::Bearer(t) if TaskKeys::looks_like_key(t) => Presented::TaskKey(t),
            AuthToken::Bearer(t) if Users::looks_like_session(t) => Presented::Session(t),
            AuthToken::Bearer(t) => Presented::Jwt(t),
        })
    }
}
