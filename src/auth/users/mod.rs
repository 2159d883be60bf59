//! Local users (`sign_in.rs`: passwords and hold-offs; `sessions.rs`:
//! session tokens): a name and a password, for deployments without an identity
//! provider (HTTP Basic on REST and gRPC, Flight's `Handshake`). A password
//! is kept only as an Argon2id PHC string (its own salt and parameters
//! beside the hash) in the user's record on the control root, checked off
//! the async runtime, never logged or answered.
//!
//! What stops a guesser: one answer for every failure (unknown user, wrong
//! password, disabled user), an Argon2 run against a dummy hash for unknown
//! names so timing tells nothing either, one check at a time per name, and
//! a hold-off per user name after `max_failures` failures in a row that
//! doubles with each further one.
//!
//! What ends access: every change that must (a new password, disabling)
//! bumps the record's `generation`, and a user made again under a deleted
//! one's name has a new `uid`. A remembered password and a session carry
//! both as they were made and are refused once either differs: at once on
//! the replica that made the change, within [`TRUST`] on the others (they
//! read the record again that often).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use argon2::Params;
use serde::{Deserialize, Serialize};
use tokio::sync::{OnceCell, Semaphore};

use super::secrets::random_hex;
use super::{unauthenticated, Principal};
pub use crate::api::users::UserInfo;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::{now_ms, Records};

const KIND: &str = "user";
/// How long a user's record, as read, is trusted before it is read again.
pub const TRUST: Duration = Duration::from_secs(5);
/// A verified password is remembered this long (while its user's record
/// keeps its generation), sparing an Argon2 run on every request.
const REMEMBER: Duration = Duration::from_secs(15 * 60);
/// The longest hold-off.
const MAX_HOLD_OFF: Duration = Duration::from_secs(15 * 60);
/// How long after its last failure a name's failures still count (longer
/// than the longest hold-off, so the doubling goes on).
const COUNT_FOR: Duration = Duration::from_secs(3600);
const MIN_PASSWORD: usize = 8;
const MAX_PASSWORD: usize = 1024;
const MAX_USERNAME: usize = 64;
/// Entries the in-memory maps keep before old ones are dropped.
const MAP_BOUND: usize = 100_000;
/// The one answer to every failed sign-in.
const BAD: &str = "the user name or password is not valid";

/// The local users' settings (`--local-users`, `--login-*`,
/// `--session-ttl`, `--password-*`).
#[derive(Debug, Clone)]
pub struct UsersConfig {
    /// Off: Basic credentials and session tokens are refused.
    pub enabled: bool,
    /// Failed sign-ins in a row before a user name is held off (0: never).
    pub max_failures: u32,
    /// The first hold-off; each further failure doubles it, up to 15 min.
    pub hold_off: Duration,
    /// How long a session (Flight's `Handshake`, `POST /v1/sessions`) lasts.
    pub session_ttl: Duration,
    /// Argon2id parameters for new hashes: memory (KiB), passes, lanes.
    pub memory_kib: u32,
    pub passes: u32,
    pub lanes: u32,
}

impl Default for UsersConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_failures: 5,
            hold_off: Duration::from_secs(30),
            session_ttl: Duration::from_secs(3600),
            // OWASP's first Argon2id setting (RFC 9106's low-memory choice).
            memory_kib: Params::DEFAULT_M_COST,
            passes: Params::DEFAULT_T_COST,
            lanes: Params::DEFAULT_P_COST,
        }
    }
}

#[derive(Clone, Serialize, Deserialize)]
struct Stored {
    username: String,
    /// This user, not its name: a user made again under the name is
    /// another one, and nothing of the old one reaches it.
    #[serde(default)]
    uid: String,
    /// The PHC string: algorithm, version, parameters, salt and hash.
    password_hash: String,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    disabled: bool,
    /// Moves with every change that must end what was verified before.
    generation: u64,
    created_at_ms: u64,
    #[serde(default)]
    created_by: Option<String>,
    password_changed_at_ms: u64,
}

impl From<&Stored> for UserInfo {
    fn from(s: &Stored) -> Self {
        Self {
            username: s.username.clone(),
            groups: s.groups.clone(),
            description: s.description.clone(),
            disabled: s.disabled,
            created_at_ms: s.created_at_ms,
            created_by: s.created_by.clone(),
            password_changed_at_ms: s.password_changed_at_ms,
        }
    }
}

/// The mark that the bootstrap admin was made a local user once.
const BOOTSTRAPPED: &str = "user_bootstrap";

#[derive(Clone, Serialize, Deserialize)]
struct Bootstrapped {
    user: String,
    at_ms: u64,
}

/// A user's record as last read here.
#[derive(Clone)]
struct Seen {
    stored: Option<Stored>,
    at: Instant,
}

/// A password verified here: its user and the generation it was good for.
struct Remembered {
    username: String,
    uid: String,
    generation: u64,
    verified: Instant,
    checked: Instant,
}

/// Failed sign-ins of one user name in a row.
struct Failures {
    count: u32,
    last: Instant,
    until: Option<Instant>,
}

/// The local-user registry.
pub struct Users {
    records: Records,
    config: UsersConfig,
    /// Keys the remembered passwords (never leaves this process).
    salt: String,
    seen: Mutex<HashMap<String, Seen>>,
    /// Moved by every change made here: a record read before it is not
    /// kept as seen.
    changes: AtomicU64,
    remembered: Mutex<HashMap<String, Remembered>>,
    failures: Mutex<HashMap<String, Failures>>,
    /// One password check at a time per name (`sign_in.rs`).
    checking: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Argon2 runs at once: each takes `memory_kib` and a core.
    hashing: Arc<Semaphore>,
    dummy: OnceCell<String>,
    /// Sessions verified here, with when their record was read.
    sessions: Mutex<HashMap<String, (sessions::SessionRecord, Instant)>>,
    /// When this replica last removed expired sessions' records.
    swept: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Users {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Users")
            .field("config", &self.config)
            .finish()
    }
}

/// A user name: 1-64 letters, digits, '.', '_' and '-', starting with a
/// letter or digit (it is the record's id, and a principal's).
pub fn valid_username(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_USERNAME
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn not_found(name: &str) -> CatalogError {
    CatalogError::new(
        Code::USER_NOT_FOUND,
        format!("user {name:?} does not exist"),
    )
}

fn check_password(username: &str, password: &str) -> CatalogResult<()> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD || password.len() > MAX_PASSWORD {
        return Err(CatalogError::invalid(format!(
            "a password needs at least {MIN_PASSWORD} characters and at most {MAX_PASSWORD} bytes"
        )));
    }
    if password == username {
        return Err(CatalogError::invalid("a password cannot be the user name"));
    }
    Ok(())
}

fn check_groups(groups: &[String]) -> CatalogResult<()> {
    if groups.len() > 64 {
        return Err(CatalogError::invalid("a user has at most 64 groups"));
    }
    for g in groups {
        if g.trim().is_empty() || g.len() > 256 || g.chars().any(char::is_control) {
            return Err(CatalogError::invalid(format!(
                "group {g:?} must be 1-256 characters, none of them control characters"
            )));
        }
    }
    Ok(())
}

fn check_description(d: &Option<String>) -> CatalogResult<()> {
    match d {
        Some(d) if d.len() > 1024 => Err(CatalogError::invalid(
            "a user's description is at most 1024 bytes",
        )),
        _ => Ok(()),
    }
}

impl Users {
    pub fn new(records: Records, config: UsersConfig) -> Self {
        let lanes = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            records,
            config,
            salt: random_hex(),
            seen: Mutex::new(HashMap::new()),
            changes: AtomicU64::new(0),
            remembered: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
            checking: Mutex::new(HashMap::new()),
            hashing: Arc::new(Semaphore::new(lanes.clamp(1, 8))),
            dummy: OnceCell::new(),
            sessions: Mutex::new(HashMap::new()),
            swept: Mutex::new(None),
        }
    }

    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    fn turned_off() -> CatalogError {
        unauthenticated(
            "local users are turned off on this server (--local-users off): use an API key or a bearer token",
        )
    }

    /// A user's record: read again when `fresh`, else as read within
    /// [`TRUST`].
    async fn stored(&self, name: &str, fresh: bool) -> CatalogResult<Option<Stored>> {
        if !fresh {
            if let Ok(seen) = self.seen.lock() {
                if let Some(s) = seen.get(name).filter(|s| s.at.elapsed() < TRUST) {
                    return Ok(s.stored.clone());
                }
            }
        }
        let before = self.changes.load(Ordering::SeqCst);
        let stored = self
            .records
            .get::<Stored>(KIND, name)
            .await?
            .map(|v| v.value);
        // Only users are kept (unknown names cost no memory), and only a
        // read no change here overtook.
        if let (Some(found), Ok(mut seen)) = (&stored, self.seen.lock()) {
            if self.changes.load(Ordering::SeqCst) == before {
                if seen.len() >= MAP_BOUND {
                    seen.retain(|_, s| s.at.elapsed() < TRUST);
                }
                seen.insert(
                    name.to_string(),
                    Seen {
                        stored: Some(found.clone()),
                        at: Instant::now(),
                    },
                );
            }
        }
        Ok(stored)
    }

    fn principal(stored: &Stored) -> Principal {
        Principal {
            id: stored.username.clone(),
            groups: stored.groups.clone(),
            task: None,
            identity: super::Identity::User {
                uid: stored.uid.clone(),
                created_at_ms: stored.created_at_ms,
            },
        }
    }

    /// Drop what this process verified of `name`: its next request is
    /// checked against the record as it is now.
    fn forget(&self, name: &str) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut remembered) = self.remembered.lock() {
            remembered.retain(|_, r| r.username != name);
        }
        if let Ok(mut seen) = self.seen.lock() {
            seen.remove(name);
        }
    }

    pub async fn create(
        &self,
        username: &str,
        password: &str,
        groups: Vec<String>,
        description: Option<String>,
        disabled: bool,
        created_by: Option<String>,
    ) -> CatalogResult<UserInfo> {
        if !valid_username(username) {
            return Err(CatalogError::invalid(format!(
                "user name {username:?} must be 1-{MAX_USERNAME} letters, digits, '.', '_' or '-', starting with a letter or digit"
            )));
        }
        check_password(username, password)?;
        check_groups(&groups)?;
        check_description(&description)?;
        let now = now_ms();
        let stored = Stored {
            username: username.to_string(),
            uid: random_hex(),
            password_hash: self.hash(password.to_string()).await?,
            groups,
            description,
            disabled,
            generation: 1,
            created_at_ms: now,
            created_by,
            password_changed_at_ms: now,
        };
        self.records
            .create(KIND, username, &stored, Code::USER_ALREADY_EXISTS)
            .await
            .map_err(|e| match e.code {
                Code::USER_ALREADY_EXISTS => {
                    CatalogError::new(e.code, format!("user {username:?} already exists"))
                }
                _ => e,
            })?;
        self.forget(username);
        self.cleared(username);
        Ok(UserInfo::from(&stored))
    }

    /// The bootstrap admin as a local user, once per control root: made
    /// when no mark of it is there, the mark written after. Deleting the
    /// user later retires it for good (a restart does not bring it back).
    /// Whether it was made now.
    pub async fn bootstrap(&self, admin: &str, password: &str) -> CatalogResult<bool> {
        if self
            .records
            .get::<Bootstrapped>(BOOTSTRAPPED, "admin")
            .await?
            .is_some()
        {
            return Ok(false);
        }
        let made = self
            .create(
                admin,
                password,
                Vec::new(),
                Some("the --bootstrap-admin".into()),
                false,
                Some("--bootstrap-admin-password-file".into()),
            )
            .await;
        let made = match made {
            Ok(_) => true,
            Err(e) if e.code == Code::USER_ALREADY_EXISTS => false,
            Err(e) => return Err(e),
        };
        let mark = Bootstrapped {
            user: admin.to_string(),
            at_ms: now_ms(),
        };
        self.records
            .upsert::<Bootstrapped, _>(BOOTSTRAPPED, "admin", |_| Some(mark.clone()))
            .await?;
        Ok(made)
    }

    /// The identity of the local user named `name` now (a fresh read),
    /// if there is one: what a grant to that name binds to.
    pub async fn identity_of(&self, name: &str) -> CatalogResult<Option<super::Identity>> {
        if !valid_username(name) {
            return Ok(None);
        }
        Ok(self
            .stored(name, true)
            .await?
            .map(|s| Self::principal(&s).identity))
    }

    /// The user `--bootstrap-admin-password-file` made, while it stands
    /// (`None` once it was deleted: retired for good).
    pub async fn bootstrapped(&self) -> CatalogResult<Option<super::Identity>> {
        let Some(mark) = self
            .records
            .get::<Bootstrapped>(BOOTSTRAPPED, "admin")
            .await?
        else {
            return Ok(None);
        };
        let Some(user) = self.stored(&mark.value.user, true).await? else {
            return Ok(None);
        };
        // A user made later under the name is not the one bootstrapped.
        let made_by_bootstrap = user.created_by.as_deref()
            == Some("--bootstrap-admin-password-file")
            && user.created_at_ms <= mark.value.at_ms;
        Ok(made_by_bootstrap.then(|| Self::principal(&user).identity))
    }

    /// Every user, sorted by name.
    pub async fn list(&self) -> CatalogResult<Vec<UserInfo>> {
        Ok(self
            .records
            .all::<Stored>(KIND)
            .await?
            .iter()
            .map(|(_, s)| UserInfo::from(s))
            .collect())
    }

    pub async fn get(&self, username: &str) -> CatalogResult<UserInfo> {
        if !valid_username(username) {
            return Err(not_found(username));
        }
        self.records
            .get::<Stored>(KIND, username)
            .await?
            .map(|v| UserInfo::from(&v.value))
            .ok_or_else(|| not_found(username))
    }

    async fn change<F>(&self, username: &str, mut change: F) -> CatalogResult<UserInfo>
    where
        F: FnMut(Stored) -> CatalogResult<Stored>,
    {
        if !valid_username(username) {
            return Err(not_found(username));
        }
        let changed = self
            .records
            .update(KIND, username, Code::USER_NOT_FOUND, &mut change)
            .await
            .map_err(|e| match e.code {
                Code::USER_NOT_FOUND => not_found(username),
                _ => e,
            });
        self.forget(username);
        Ok(UserInfo::from(&changed?.value))
    }

    /// Enable or disable a user, or set its groups or description.
    pub async fn update(
        &self,
        username: &str,
        disabled: Option<bool>,
        groups: Option<Vec<String>>,
        description: Option<String>,
    ) -> CatalogResult<UserInfo> {
        if let Some(g) = &groups {
            check_groups(g)?;
        }
        check_description(&description)?;
        self.change(username, |mut s| {
            if let Some(d) = disabled {
                if d != s.disabled {
                    s.disabled = d;
                    // Enabling again does not bring old sessions back.
                    s.generation += 1;
                }
            }
            if let Some(g) = &groups {
                s.groups = g.clone();
            }
            if let Some(d) = &description {
                s.description = Some(d.clone()).filter(|d| !d.is_empty());
            }
            Ok(s)
        })
        .await
    }

    /// Set a new password: what was verified with the old one (remembered
    /// passwords, session tokens) stops.
    pub async fn set_password(&self, username: &str, password: &str) -> CatalogResult<UserInfo> {
        check_password(username, password)?;
        if !valid_username(username) || self.stored(username, true).await?.is_none() {
            return Err(not_found(username));
        }
        let hash = self.hash(password.to_string()).await?;
        let info = self
            .change(username, |mut s| {
                s.password_hash = hash.clone();
                s.generation += 1;
                s.password_changed_at_ms = now_ms();
                Ok(s)
            })
            .await?;
        self.cleared(username);
        Ok(info)
    }

    /// Delete a user: its sessions stop with it (and a user made later
    /// under the name has another `uid`).
    pub async fn delete(&self, username: &str) -> CatalogResult<()> {
        if !valid_username(username) {
            return Err(not_found(username));
        }
        self.forget(username);
        let deleted = self
            .records
            .delete(KIND, username, |_: &Stored| Ok(()))
            .await?;
        self.forget(username);
        match deleted {
            true => Ok(()),
            false => Err(not_found(username)),
        }
    }
}

mod sessions;
mod sign_in;

#[cfg(test)]
mod tests;
