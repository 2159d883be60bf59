//! Sessions: what a local user's name and password are exchanged for
//! (Flight's `Handshake`, `POST /v1/sessions`). A session token reads
//! `lcs_<session id>_<secret>`; the control root keeps only its salted
//! hash (as for API keys), so whoever reads the storage cannot make one.
//! It is good until it expires, and while its user keeps the `uid` and
//! `generation` it was made at: a new password, disabling or deletion ends
//! it (at once here, within [`TRUST`](super::TRUST) elsewhere).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{valid_username, Users, MAP_BOUND, TRUST};
use crate::api::call::Basic;
use crate::auth::secrets::{digest, random_hex, same};
use crate::auth::{unauthenticated, Principal};
use crate::error::CatalogResult;
use crate::records::now_ms;

const KIND: &str = "session";
const PREFIX: &str = "lcs_";
/// How often a replica removes the records of expired sessions, and how
/// many at most each time.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);
const SWEEP_AT_MOST: usize = 10_000;

#[derive(Clone, Serialize, Deserialize)]
pub(super) struct SessionRecord {
    username: String,
    uid: String,
    generation: u64,
    salt: String,
    hash: String,
    created_at_ms: u64,
    expires_at_ms: u64,
}

fn bad() -> crate::error::CatalogError {
    unauthenticated(
        "the session token is not valid (expired, malformed, or its user was changed, disabled or deleted): sign in again",
    )
}

/// A token's session id, when it has a token's shape.
fn session_id(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.strip_prefix(PREFIX)?.split_once('_')?;
    let id_ok = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
    (id_ok && secret.len() == 64).then_some((id, secret))
}

impl Users {
    pub fn looks_like_session(token: &str) -> bool {
        token.starts_with(PREFIX)
    }

    /// The session id a token names, unverified (for the audit trail of a
    /// refused one: never the secret).
    pub fn claimed_session(token: &str) -> Option<String> {
        session_id(token).map(|(id, _)| id.to_string())
    }

    /// Sign in: a session for the user a name and password stand for,
    /// checked against its record as it is now (never a remembered
    /// password), and made for that record's `uid` and generation. The
    /// token (shown this once), the user, and when it expires (ms).
    pub async fn open_session(&self, basic: &Basic) -> CatalogResult<(String, Principal, u64)> {
        let user = self.verify_basic_now(basic).await?;
        let id = random_hex();
        let secret = format!("{}{}", random_hex(), random_hex());
        let salt = random_hex();
        let now = now_ms();
        let stored = SessionRecord {
            username: user.username.clone(),
            uid: user.uid.clone(),
            generation: user.generation,
            hash: digest(&salt, &secret),
            salt,
            created_at_ms: now,
            expires_at_ms: now.saturating_add(self.config.session_ttl.as_millis() as u64),
        };
        self.records
            .create(
                KIND,
                &id,
                &stored,
                crate::error::Code::CONCURRENT_MODIFICATION,
            )
            .await?;
        self.sweep_sessions();
        Ok((
            format!("{PREFIX}{id}_{secret}"),
            Self::principal(&user),
            stored.expires_at_ms,
        ))
    }

    /// A session's record, as read within [`TRUST`] when this replica
    /// verified it then.
    /// (The record, and when it was read: `None` when it came from the
    /// cache, or a change here overtook the read.)
    async fn session(&self, id: &str) -> CatalogResult<(Option<SessionRecord>, Option<Instant>)> {
        if let Ok(seen) = self.sessions.lock() {
            if let Some((s, _)) = seen.get(id).filter(|(_, at)| at.elapsed() < TRUST) {
                return Ok((Some(s.clone()), None));
            }
        }
        let before = self.changes.load(Ordering::SeqCst);
        let read_at = Instant::now();
        let record = self
            .records
            .get::<SessionRecord>(KIND, id)
            .await?
            .map(|v| v.value);
        let fresh = self.changes.load(Ordering::SeqCst) == before;
        Ok((record, fresh.then_some(read_at)))
    }

    /// The user a session token stands for, while it is unexpired and its
    /// user exists, is enabled and is the one it was made for, unchanged.
    pub async fn verify_session(&self, token: &str) -> CatalogResult<Principal> {
        if !self.config.enabled {
            return Err(Self::turned_off());
        }
        let (id, secret) = session_id(token).ok_or_else(bad)?;
        let (session, read_at) = self.session(id).await?;
        let session = session.ok_or_else(bad)?;
        let now = now_ms();
        if !same(&digest(&session.salt, secret), &session.hash)
            || session.expires_at_ms <= now
            || !valid_username(&session.username)
        {
            return Err(bad());
        }
        // Kept only once its secret was shown (the cache holds sessions
        // someone has the token of, not every id asked about), and only
        // as read before any change here.
        if let (Some(at), Ok(mut seen)) = (read_at, self.sessions.lock()) {
            if seen.len() >= MAP_BOUND {
                seen.retain(|_, (s, at)| at.elapsed() < TRUST && s.expires_at_ms > now);
            }
            if seen.len() < MAP_BOUND {
                seen.insert(id.to_string(), (session.clone(), at));
            }
        }
        match self.stored(&session.username, false).await? {
            Some(u)
                if !u.disabled && u.uid == session.uid && u.generation == session.generation =>
            {
                Ok(Self::principal(&u))
            }
            _ => Err(bad()),
        }
    }

    /// End a session (sign-out): its token stops at once everywhere.
    pub async fn end_session(&self, token: &str) -> CatalogResult<()> {
        let (id, secret) = session_id(token).ok_or_else(bad)?;
        let Some(session) = self.records.get::<SessionRecord>(KIND, id).await? else {
            return Ok(());
        };
        if !same(&digest(&session.value.salt, secret), &session.value.hash) {
            return Err(bad());
        }
        self.records
            .delete(KIND, id, |_: &SessionRecord| Ok(()))
            .await?;
        // After the delete: a read from before it is not cached again.
        self.changes.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut seen) = self.sessions.lock() {
            seen.remove(id);
        }
        self.records.erase::<SessionRecord>(KIND, id).await
    }

    /// Remove the records of expired sessions, at most once an hour per
    /// replica, in the background (never in a sign-in's way), a bounded
    /// number per run; best effort: what fails waits for the next run.
    fn sweep_sessions(&self) {
        {
            let Ok(mut swept) = self.swept.lock() else {
                return;
            };
            if swept.is_some_and(|at: Instant| at.elapsed() < SWEEP_EVERY) {
                return;
            }
            *swept = Some(Instant::now());
        }
        let records = self.records.clone();
        tokio::spawn(async move {
            let Ok(all) = records.all::<SessionRecord>(KIND).await else {
                return;
            };
            let now = now_ms();
            let expired = all.into_iter().filter(|(_, s)| s.expires_at_ms <= now);
            for (id, _) in expired.take(SWEEP_AT_MOST) {
                if records
                    .delete(KIND, &id, |_: &SessionRecord| Ok(()))
                    .await
                    .is_ok()
                {
                    let _ = records.erase::<SessionRecord>(KIND, &id).await;
                }
            }
        });
    }
}
