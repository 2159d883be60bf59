//! Checking a local user's password: Argon2id off the runtime, a few at a
//! time; one check at a time per name, so failures are counted before the
//! next guess at that name is looked at; a dummy hash for unknown names;
//! the hold-off after failures in a row; and the passwords verified here
//! remembered while their user's record stays as it was.

use std::sync::Arc;
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};

use super::{
    valid_username, Failures, Remembered, Stored, Users, BAD, COUNT_FOR, MAP_BOUND, MAX_HOLD_OFF,
    MAX_PASSWORD, REMEMBER, TRUST,
};
use crate::api::call::Basic;
use crate::auth::secrets::{digest, random_hex};
use crate::auth::{unauthenticated, Principal};
use crate::error::{CatalogError, CatalogResult, Code};

/// How long a password check may wait for its turn at Argon2 before the
/// server answers that it is busy.
const WAIT_FOR_HASHER: Duration = Duration::from_secs(5);

/// Keep only the names a hold-off stands on now.
fn prune(failures: &mut std::collections::HashMap<String, Failures>) {
    let now = Instant::now();
    failures.retain(|_, f| f.last.elapsed() < COUNT_FOR && f.until.is_some_and(|u| u > now));
}

/// A name's turn at its password check, let go (and its entry dropped when
/// no one else waits) however the check ends, a dropped request too.
struct Turn<'a> {
    users: &'a Users,
    name: &'a str,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Ok(mut checking) = self.users.checking.lock() {
            // The map's reference and this one: no one else holds it.
            if Arc::strong_count(&self.lock) <= 2 {
                checking.remove(self.name);
            }
        }
    }
}

/// A held-off name's answer (the same for known names and unknown ones).
fn throttled(wait: Duration) -> CatalogError {
    CatalogError::new(
        Code::THROTTLING,
        format!(
            "too many failed sign-ins for this user name: try again in {} s",
            wait.as_secs().max(1)
        ),
    )
}

impl Users {
    pub(super) fn argon2(&self) -> CatalogResult<Argon2<'static>> {
        let params = Params::new(
            self.config.memory_kib,
            self.config.passes,
            self.config.lanes,
            None,
        )
        .map_err(|e| CatalogError::invalid(format!("Argon2 parameters: {e}")))?;
        Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
    }

    /// Run Argon2 off the async runtime, a few at a time (each takes
    /// `memory_kib` and a core). The permit goes with the work, so a caller
    /// that gives up (a dropped connection) does not free a slot that is
    /// still hashing; a check that waits too long is told the server is
    /// busy.
    async fn off_runtime<T, F>(&self, work: F) -> CatalogResult<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let busy = || {
            CatalogError::new(
                Code::SERVICE_UNAVAILABLE,
                "too many password checks at once: try again shortly",
            )
        };
        let permit = tokio::time::timeout(WAIT_FOR_HASHER, self.hashing.clone().acquire_owned())
            .await
            .map_err(|_| busy())?
            .map_err(|_| CatalogError::internal("the password hasher closed"))?;
        tokio::task::spawn_blocking(move || {
            let done = work();
            drop(permit);
            done
        })
        .await
        .map_err(|e| CatalogError::internal(format!("the password hasher stopped: {e}")))
    }

    /// Hash a password (a fresh salt each time).
    pub(super) async fn hash(&self, password: String) -> CatalogResult<String> {
        let argon2 = self.argon2()?;
        self.off_runtime(move || {
            argon2
                .hash_password(password.as_bytes())
                .map(|h| h.to_string())
                .map_err(|e| CatalogError::internal(format!("hashing a password failed: {e}")))
        })
        .await?
    }

    /// Whether `password` is the one `hash` was made of, with the
    /// parameters the hash records; constant time in the comparison.
    pub(super) async fn matches(&self, password: String, hash: String) -> CatalogResult<bool> {
        self.off_runtime(move || {
            Argon2::default()
                .verify_password(password.as_bytes(), hash.as_str())
                .is_ok()
        })
        .await
    }

    /// What an unknown name's password is checked against, so it takes
    /// as long as a known one's.
    pub(super) async fn dummy(&self) -> CatalogResult<String> {
        self.dummy
            .get_or_try_init(|| self.hash(format!("{}{}", random_hex(), random_hex())))
            .await
            .cloned()
    }

    /// How long `name` is still held off after failed sign-ins. With the
    /// failure counts full (a flood of names), the names that hold nothing
    /// off now are dropped; only if every one still does is a name not
    /// counted yet held off too (unknown guessers are not let through
    /// uncounted).
    pub(super) fn held_off(&self, name: &str) -> Option<Duration> {
        let mut failures = self.failures.lock().ok()?;
        if let Some(f) = failures.get(name) {
            return f.until?.checked_duration_since(Instant::now());
        }
        if failures.len() >= MAP_BOUND {
            prune(&mut failures);
        }
        (failures.len() >= MAP_BOUND).then_some(Duration::from_secs(60))
    }

    pub(super) fn failed(&self, name: &str) {
        let Ok(mut failures) = self.failures.lock() else {
            return;
        };
        if failures.len() >= MAP_BOUND && !failures.contains_key(name) {
            prune(&mut failures);
            if failures.len() >= MAP_BOUND {
                return;
            }
        }
        let now = Instant::now();
        let f = failures.entry(name.to_string()).or_insert(Failures {
            count: 0,
            last: now,
            until: None,
        });
        if f.last.elapsed() >= COUNT_FOR {
            f.count = 0;
        }
        f.count = f.count.saturating_add(1);
        f.last = now;
        let max = self.config.max_failures;
        if max > 0 && f.count >= max {
            let doublings = (f.count - max).min(16);
            let wait = self
                .config
                .hold_off
                .saturating_mul(1u32 << doublings)
                .min(MAX_HOLD_OFF);
            f.until = Some(now + wait);
        }
    }

    pub(super) fn cleared(&self, name: &str) {
        if let Ok(mut failures) = self.failures.lock() {
            failures.remove(name);
        }
    }

    fn remember_key(&self, basic: &Basic) -> String {
        digest(
            &self.salt,
            &format!("{}\0{}", basic.username, basic.password),
        )
    }

    /// The user a remembered password stands for, while its record is the
    /// same user at the generation it was verified at.
    async fn recall(&self, key: &str) -> CatalogResult<Option<Principal>> {
        let (name, uid, generation, check) = {
            let Ok(mut remembered) = self.remembered.lock() else {
                return Ok(None);
            };
            let Some(r) = remembered.get(key) else {
                return Ok(None);
            };
            if r.verified.elapsed() >= REMEMBER {
                remembered.remove(key);
                return Ok(None);
            }
            (
                r.username.clone(),
                r.uid.clone(),
                r.generation,
                r.checked.elapsed() >= TRUST,
            )
        };
        let stored = self.stored(&name, check).await?;
        match stored {
            Some(s) if !s.disabled && s.uid == uid && s.generation == generation => {
                if let Ok(mut remembered) = self.remembered.lock() {
                    if let Some(r) = remembered.get_mut(key).filter(|_| check) {
                        r.checked = Instant::now();
                    }
                }
                Ok(Some(Self::principal(&s)))
            }
            _ => {
                if let Ok(mut remembered) = self.remembered.lock() {
                    remembered.remove(key);
                }
                Ok(None)
            }
        }
    }

    /// `name`'s turn: one check of a name at a time.
    fn turn<'a>(&'a self, name: &'a str) -> CatalogResult<Turn<'a>> {
        let mut checking = self
            .checking
            .lock()
            .map_err(|_| CatalogError::internal("the sign-in locks are poisoned"))?;
        let lock = checking.entry(name.to_string()).or_default().clone();
        Ok(Turn {
            users: self,
            name,
            lock,
        })
    }

    /// The name and password's shape and hold-off, checked before any
    /// work: a name no user can have (the rules are public) is refused at
    /// once, with nothing to count.
    fn admissible(&self, basic: &Basic) -> CatalogResult<()> {
        if !self.config.enabled {
            return Err(Self::turned_off());
        }
        let name = basic.username.as_str();
        if !valid_username(name) || basic.password.len() > MAX_PASSWORD {
            return Err(unauthenticated(BAD));
        }
        match self.held_off(name) {
            Some(wait) => Err(throttled(wait)),
            None => Ok(()),
        }
    }

    /// The user a name and password stand for; one 401 for every failure,
    /// 429 while the name is held off. A password verified here lately is
    /// recalled (after the hold-off check: a hold-off holds for it too).
    pub async fn verify_basic(&self, basic: &Basic) -> CatalogResult<Principal> {
        self.admissible(basic)?;
        let key = self.remember_key(basic);
        // A success is a success however it was checked: it ends the
        // failures counted so far, or a client sending Basic on every
        // call would be held off by typos spread over an hour.
        if let Some(p) = self.recall(&key).await? {
            self.cleared(&basic.username);
            return Ok(p);
        }
        let turn = self.turn(&basic.username)?;
        let _mine = turn.lock.lock().await;
        if let Some(wait) = self.held_off(&basic.username) {
            return Err(throttled(wait));
        }
        // A check of the same password may have ended while this waited.
        if let Some(p) = self.recall(&key).await? {
            self.cleared(&basic.username);
            return Ok(p);
        }
        let user = self.check_basic(basic).await?;
        self.remember(key, &user);
        Ok(Self::principal(&user))
    }

    /// A name and password checked against the user's record as it is now
    /// (never a remembered password), answering that record: what a
    /// session is made for.
    pub(super) async fn verify_basic_now(&self, basic: &Basic) -> CatalogResult<Stored> {
        self.admissible(basic)?;
        let turn = self.turn(&basic.username)?;
        let _mine = turn.lock.lock().await;
        if let Some(wait) = self.held_off(&basic.username) {
            return Err(throttled(wait));
        }
        self.check_basic(basic).await
    }

    /// The Argon2 check, in the name's turn, against a fresh read of its
    /// record (a dummy hash for an unknown name); a failure is counted.
    async fn check_basic(&self, basic: &Basic) -> CatalogResult<Stored> {
        let name = basic.username.as_str();
        let stored = self.stored(name, true).await?;
        let hash = match &stored {
            Some(s) => s.password_hash.clone(),
            None => self.dummy().await?,
        };
        let right = self.matches(basic.password.clone(), hash).await?;
        match stored {
            Some(s) if right && !s.disabled => {
                self.cleared(name);
                Ok(s)
            }
            _ => {
                self.failed(name);
                Err(unauthenticated(BAD))
            }
        }
    }

    fn remember(&self, key: String, user: &Stored) {
        if let Ok(mut remembered) = self.remembered.lock() {
            if remembered.len() >= MAP_BOUND {
                remembered.retain(|_, r| r.verified.elapsed() < REMEMBER);
            }
            let now = Instant::now();
            remembered.insert(
                key,
                Remembered {
                    username: user.username.clone(),
                    uid: user.uid.clone(),
                    generation: user.generation,
                    verified: now,
                    checked: now,
                },
            );
        }
    }

    /// Whether `password` is `username`'s current one (a user changing its
    /// own password proves it knows the old): in the name's turn and under
    /// its hold-off, as a sign-in. A wrong one counts as a failed sign-in.
    pub async fn confirm(&self, username: &str, password: &str) -> CatalogResult<()> {
        let basic = Basic {
            username: username.to_string(),
            password: password.to_string(),
        };
        match self.verify_basic_now(&basic).await {
            Err(e) if e.code == Code::UNAUTHENTICATED => Err(CatalogError::new(
                Code::PERMISSION_DENIED,
                "the current password is not right",
            )),
            other => other.map(|_| ()),
        }
    }
}
