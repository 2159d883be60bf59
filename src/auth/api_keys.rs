//! API keys: minted by the control plane, shown once, stored only as a
//! salted SHA-256 hash on the control root, listable without the secret,
//! revocable. A key reads `lck_<key id>_<secret>`; the id finds the record,
//! the secret is checked against its hash.

pub use crate::api::access::ApiKeyInfo;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::secrets::{cache_digest, digest, random_hex, same};
use serde::{Deserialize, Serialize};

use super::{unauthenticated, Principal};
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::Records;

const KIND: &str = "api_key";
const PREFIX: &str = "lck_";
/// A verified key is trusted this long before its record is read again;
/// a revocation in this process takes effect at once.
const TRUST: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    key_id: String,
    principal: String,
    #[serde(default)]
    description: Option<String>,
    salt: String,
    hash: String,
    created_at_ms: u64,
    #[serde(default)]
    created_by: Option<String>,
    /// The local user the key was minted for (its uid), when `principal`
    /// named one: the key holds that user's grants, and no later user's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_uid: Option<String>,
}

impl From<&Stored> for ApiKeyInfo {
    fn from(s: &Stored) -> Self {
        Self {
            key_id: s.key_id.clone(),
            principal: s.principal.clone(),
            description: s.description.clone(),
            created_at_ms: s.created_at_ms,
            created_by: s.created_by.clone(),
        }
    }
}

/// The API-key registry.
#[derive(Debug)]
pub struct ApiKeys {
    records: Records,
    tasks: super::task_keys::TaskKeys,
    trusted: Mutex<HashMap<String, (Principal, String, Instant)>>,
}

impl ApiKeys {
    pub fn new(records: Records) -> Self {
        Self {
            tasks: super::task_keys::TaskKeys::new(records.clone()),
            records,
            trusted: Mutex::new(HashMap::new()),
        }
    }

    /// The task keys of maintenance jobs, kept beside the API keys.
    pub fn tasks(&self) -> &super::task_keys::TaskKeys {
        &self.tasks
    }

    /// Whether a string has the shape of one of our keys.
    pub fn looks_like_key(s: &str) -> bool {
        s.starts_with(PREFIX)
    }

    /// The id a API key names, unverified (for the audit trail of a
    /// refused one: never the secret).
    pub fn claimed_id(key: &str) -> Option<String> {
        let (id, _) = key.strip_prefix(PREFIX)?.split_once('_')?;
        Some(id.chars().take(64).collect())
    }

    /// Mint a key for `principal`; the answer is the only time the secret
    /// is shown.
    pub async fn mint(
        &self,
        principal: &str,
        description: Option<String>,
        created_by: Option<String>,
        user_uid: Option<String>,
    ) -> CatalogResult<(ApiKeyInfo, String)> {
        let principal = principal.trim();
        if principal.is_empty() || principal.len() > 256 {
            return Err(CatalogError::invalid(
                "an API key needs a principal of 1-256 characters",
            ));
        }
        let key_id = random_hex()[..16].to_string();
        let secret = format!("{}{}", random_hex(), random_hex());
        let salt = random_hex();
        let stored = Stored {
            key_id: key_id.clone(),
            principal: principal.to_string(),
            description,
            hash: digest(&salt, &secret),
            salt,
            created_at_ms: chrono::Utc::now().timestamp_millis().max(0) as u64,
            created_by,
            user_uid,
        };
        self.records
            .create(KIND, &key_id, &stored, Code::CONCURRENT_MODIFICATION)
            .await?;
        Ok((
            ApiKeyInfo::from(&stored),
            format!("{PREFIX}{key_id}_{secret}"),
        ))
    }

    /// The principal a key stands for; 401 for anything else.
    pub async fn verify(&self, key: &str) -> CatalogResult<Principal> {
        let bad = || unauthenticated("the API key is not valid (unknown, revoked or malformed)");
        let rest = key.strip_prefix(PREFIX).ok_or_else(bad)?;
        let (key_id, secret) = rest.split_once('_').ok_or_else(bad)?;
        let valid_id = key_id.len() == 16 && key_id.bytes().all(|b| b.is_ascii_hexdigit());
        if !valid_id || secret.is_empty() || secret.len() > 256 {
            return Err(bad());
        }
        let cached = cache_digest(key);
        if let Ok(trusted) = self.trusted.lock() {
            if let Some((p, _, at)) = trusted.get(&cached) {
                if at.elapsed() < TRUST {
                    return Ok(p.clone());
                }
            }
        }
        let stored = self
            .records
            .get::<Stored>(KIND, key_id)
            .await?
            .ok_or_else(bad)?
            .value;
        let computed = digest(&stored.salt, secret);
        if !same(&computed, &stored.hash) {
            return Err(bad());
        }
        let principal = Principal {
            id: stored.principal.clone(),
            groups: Vec::new(),
            task: None,
            identity: super::Identity::ApiKey {
                key_id: key_id.to_string(),
                user_uid: stored.user_uid.clone(),
            },
        };
        if let Ok(mut trusted) = self.trusted.lock() {
            // Keyed by the whole key's digest: a wrong secret never hits.
            trusted.insert(
                cached,
                (principal.clone(), key_id.to_string(), Instant::now()),
            );
        }
        Ok(principal)
    }

    /// Give keys minted for a local user's name (after that user was
    /// made) the user's uid: the one-time step of binding grants to users.
    pub(crate) async fn bind_to_users(&self, users: &super::Users) -> CatalogResult<()> {
        for (key_id, stored) in self.records.all::<Stored>(KIND).await? {
            if stored.user_uid.is_some() {
                continue;
            }
            let Some(super::Identity::User { uid, created_at_ms }) =
                users.identity_of(&stored.principal).await?
            else {
                continue;
            };
            if stored.created_at_ms < created_at_ms {
                continue;
            }
            self.records
                .update(KIND, &key_id, Code::INTERNAL, |mut s: Stored| {
                    s.user_uid.get_or_insert(uid.clone());
                    Ok(s)
                })
                .await?;
        }
        Ok(())
    }

    /// Keys, optionally of one principal, sorted by id; never secrets.
    pub async fn list(&self, principal: Option<&str>) -> CatalogResult<Vec<ApiKeyInfo>> {
        let mut out = Vec::new();
        for id in self.records.ids::<Stored>(KIND).await? {
            if let Some(s) = self.records.get::<Stored>(KIND, &id).await? {
                if principal.is_none_or(|p| p == s.value.principal) {
                    out.push(ApiKeyInfo::from(&s.value));
                }
            }
        }
        Ok(out)
    }

    /// The key's record (for checking who may revoke it).
    pub async fn info(&self, key_id: &str) -> CatalogResult<ApiKeyInfo> {
        self.records
            .get::<Stored>(KIND, key_id)
            .await?
            .map(|s| ApiKeyInfo::from(&s.value))
            .ok_or_else(|| {
                CatalogError::new(
                    Code::API_KEY_NOT_FOUND,
                    format!("API key {key_id:?} does not exist"),
                )
            })
    }

    fn forget(&self, key_id: &str) {
        if let Ok(mut trusted) = self.trusted.lock() {
            trusted.retain(|_, (_, id, _)| id != key_id);
        }
    }

    /// Revoke a key: it stops working at once here, and within a few
    /// seconds on other replicas.
    pub async fn revoke(&self, key_id: &str) -> CatalogResult<()> {
        self.forget(key_id);
        let deleted = self
            .records
            .delete(KIND, key_id, |_: &Stored| Ok(()))
            .await?;
        self.forget(key_id);
        match deleted {
            true => Ok(()),
            false => Err(CatalogError::new(
                Code::API_KEY_NOT_FOUND,
                format!("API key {key_id:?} does not exist"),
            )),
        }
    }
}
