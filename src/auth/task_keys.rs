//! Task keys: the credential a maintenance job's runner (on a Ray cluster)
//! calls the catalog with. One per task, minted when its job is started,
//! stored like an API key (salted SHA-256, the secret shown once), and
//! good only for the task's table while the task runs: the governance
//! layer checks its scope on every call, the key ends when the task does,
//! and it expires on its own after a bound. A key reads
//! `lct_<task id>_<secret>`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::secrets::{cache_digest, digest, random_hex, same};
use super::{unauthenticated, Principal, TaskScope};
use crate::error::CatalogResult;
use crate::records::{now_ms, Records};

const KIND: &str = "task_key";
const PREFIX: &str = "lct_";
/// A verified key is trusted this long before its record is read again.
const TRUST: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    scope: TaskScope,
    salt: String,
    hash: String,
    created_at_ms: u64,
    expires_at_ms: u64,
}

/// The task-key registry.
#[derive(Debug)]
pub struct TaskKeys {
    records: Records,
    trusted: Mutex<HashMap<String, (Principal, u64, Instant)>>,
}

impl TaskKeys {
    pub(super) fn new(records: Records) -> Self {
        Self {
            records,
            trusted: Mutex::new(HashMap::new()),
        }
    }

    pub fn looks_like_key(s: &str) -> bool {
        s.starts_with(PREFIX)
    }

    /// The id a task key names, unverified (for the audit trail of a
    /// refused one: never the secret).
    pub fn claimed_id(key: &str) -> Option<String> {
        let (id, _) = key.strip_prefix(PREFIX)?.split_once('_')?;
        Some(id.chars().take(64).collect())
    }

    /// A key for the task of `scope`, valid `ttl` at most; it replaces the
    /// task's earlier key, if any (a job started again gets a new one).
    pub async fn mint(&self, scope: TaskScope, ttl: Duration) -> CatalogResult<String> {
        crate::records::check_id("task id", &scope.task_id)?;
        let secret = format!("{}{}", random_hex(), random_hex());
        let salt = random_hex();
        let now = now_ms();
        let stored = Stored {
            hash: digest(&salt, &secret),
            salt,
            created_at_ms: now,
            expires_at_ms: now.saturating_add(ttl.as_millis() as u64),
            scope: scope.clone(),
        };
        self.records
            .upsert::<Stored, _>(KIND, &scope.task_id, |_| Some(stored.clone()))
            .await?;
        self.forget(&scope.task_id);
        Ok(format!("{PREFIX}{}_{secret}", scope.task_id))
    }

    /// The task principal a key stands for; 401 for anything else.
    pub async fn verify(&self, key: &str) -> CatalogResult<Principal> {
        let bad =
            || unauthenticated("the task key is not valid (unknown, ended, expired or malformed)");
        let rest = key.strip_prefix(PREFIX).ok_or_else(bad)?;
        let (task_id, secret) = rest.split_once('_').ok_or_else(bad)?;
        let valid_id = task_id.len() == 32 && task_id.bytes().all(|b| b.is_ascii_hexdigit());
        if !valid_id || secret.is_empty() || secret.len() > 256 {
            return Err(bad());
        }
        let cached = cache_digest(key);
        if let Ok(trusted) = self.trusted.lock() {
            if let Some((p, expires, at)) = trusted.get(&cached) {
                if at.elapsed() < TRUST && *expires > now_ms() {
                    return Ok(p.clone());
                }
            }
        }
        let stored = self
            .records
            .get::<Stored>(KIND, task_id)
            .await?
            .ok_or_else(bad)?
            .value;
        if !same(&digest(&stored.salt, secret), &stored.hash) || stored.expires_at_ms <= now_ms() {
            return Err(bad());
        }
        let principal = Principal {
            id: format!("task:{task_id}"),
            groups: Vec::new(),
            task: Some(stored.scope.clone()),
            identity: super::Identity::Task {
                task_id: task_id.to_string(),
            },
        };
        if let Ok(mut trusted) = self.trusted.lock() {
            trusted.insert(
                cached,
                (principal.clone(), stored.expires_at_ms, Instant::now()),
            );
        }
        Ok(principal)
    }

    /// End a task's key: at once here, within a few seconds elsewhere.
    pub async fn revoke(&self, task_id: &str) -> CatalogResult<()> {
        self.forget(task_id);
        self.records
            .delete(KIND, task_id, |_: &Stored| Ok(()))
            .await?;
        self.records.erase::<Stored>(KIND, task_id).await?;
        self.forget(task_id);
        Ok(())
    }

    fn forget(&self, task_id: &str) {
        if let Ok(mut trusted) = self.trusted.lock() {
            trusted.retain(|_, (p, _, _)| p.task.as_ref().is_none_or(|s| s.task_id != task_id));
        }
    }
}
