//! Vended credentials: for each table handed to a client, temporary
//! storage credentials scoped to that table's prefix and to what the
//! caller may do (read, or read and write), from AWS STS (or an
//! S3-compatible store's STS) with a session policy (`policy.rs`).
//!
//! The server's own credentials for the warehouse (its storage options,
//! the namespaces' `lance.storage.*` keys above the table, or its
//! environment) are only what it assumes the role *with*; they never
//! leave it. Issued sessions are kept per (scope, privilege, source) for
//! half their life, so a read credential never serves a writer nor the
//! reverse, and a burst of describes costs one STS call.

mod policy;
mod sts;

use std::collections::HashMap;
use std::sync::Mutex;

pub use policy::{Privilege, Scope};

use crate::api::vending::VendingSettings;
use crate::error::CatalogResult;

/// Sessions kept at most; past it, lapsed ones go first, then all.
const KEPT: usize = 10_000;

/// Credentials handed with one answer.
#[derive(Clone)]
pub struct Vended {
    /// The table's storage options for the client: the non-secret ones of
    /// the warehouse and namespaces, and the session.
    pub options: HashMap<String, String>,
    pub privilege: Privilege,
    /// The session's key id (an audit event names it; never the secret).
    pub access_key_id: String,
    /// When the client must have refreshed (the session's expiry, or
    /// sooner under the operator's cap).
    pub expires_at_ms: u64,
}

/// Options and the key id only: the session's secret must not reach a
/// log line by accident.
impl std::fmt::Debug for Vended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vended")
            .field("privilege", &self.privilege)
            .field("access_key_id", &self.access_key_id)
            .field("expires_at_ms", &self.expires_at_ms)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    scope: Scope,
    privilege: Privilege,
    /// Whose credentials assumed the role (`sts::source_key`).
    source: String,
}

/// One warehouse's vendor.
pub struct Vendor {
    settings: VendingSettings,
    /// `--vend-max-seconds`: how long a client may go before refreshing.
    max_seconds: Option<u64>,
    kept: Mutex<HashMap<Key, sts::Issued>>,
    /// STS clients by source: one credential chain each, whose own cache
    /// (an instance profile's, a web identity's) lives with it.
    clients: Mutex<HashMap<String, aws_sdk_sts::Client>>,
}

impl std::fmt::Debug for Vendor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vendor")
            .field("role_arn", &self.settings.role_arn)
            .field("max_seconds", &self.max_seconds)
            .finish_non_exhaustive()
    }
}

impl Vendor {
    pub fn new(settings: VendingSettings, max_seconds: Option<u64>) -> Self {
        Self {
            settings,
            max_seconds,
            kept: Mutex::new(HashMap::new()),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Credentials for the table at `location`, or `None` where its store
    /// has no STS (a local root). `source` is the table's effective storage
    /// options, secrets included (what the role is assumed with); `handed`
    /// what of them a client may see (`Catalog::handed`), which the
    /// session joins.
    pub async fn vend(
        &self,
        location: &str,
        privilege: Privilege,
        source: &HashMap<String, String>,
        mut handed: HashMap<String, String>,
    ) -> CatalogResult<Option<Vended>> {
        let Some(scope) = Scope::of(location)? else {
            return Ok(None);
        };
        let key = Key {
            scope: scope.clone(),
            privilege,
            source: sts::source_key(source),
        };
        let now = sts::now_ms();
        let issued = match self.kept(&key, now) {
            Some(issued) => issued,
            None => {
                let client = self.client(&key.source, source).await?;
                let issued = sts::assume(&client, &self.settings, &scope, privilege).await?;
                self.keep(key, issued.clone(), now);
                issued
            }
        };
        let cap = self
            .max_seconds
            .map(|s| now.saturating_add(s.saturating_mul(1000)))
            .unwrap_or(u64::MAX);
        let expires_at_ms = issued.expires_at_ms.min(cap);
        handed.insert("aws_access_key_id".into(), issued.access_key_id.clone());
        handed.insert(
            "aws_secret_access_key".into(),
            issued.secret_access_key.clone(),
        );
        handed.insert("aws_session_token".into(), issued.session_token.clone());
        handed.insert("expires_at_millis".into(), expires_at_ms.to_string());
        // Lance refreshes this long before the expiry (60 s unless told):
        // a short life gets a proportionate lead.
        let life = expires_at_ms.saturating_sub(now);
        handed.insert(
            "refresh_offset_millis".into(),
            (life / 4).min(60_000).to_string(),
        );
        Ok(Some(Vended {
            options: handed,
            privilege,
            access_key_id: issued.access_key_id,
            expires_at_ms,
        }))
    }

    /// The STS client for `source`, made on first use.
    async fn client(
        &self,
        name: &str,
        source: &HashMap<String, String>,
    ) -> CatalogResult<aws_sdk_sts::Client> {
        if let Some(c) = self.lock_clients().get(name) {
            return Ok(c.clone());
        }
        let made = sts::client(&self.settings, source).await?;
        self.lock_clients().insert(name.to_string(), made.clone());
        Ok(made)
    }

    fn lock_clients(&self) -> std::sync::MutexGuard<'_, HashMap<String, aws_sdk_sts::Client>> {
        self.clients.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A kept session still in the first half of its life.
    fn kept(&self, key: &Key, now: u64) -> Option<sts::Issued> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.get(key).filter(|i| fresh(i, now)).cloned()
    }

    fn keep(&self, key: Key, issued: sts::Issued, now: u64) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= KEPT {
            kept.retain(|_, i| fresh(i, now));
            if kept.len() >= KEPT {
                kept.clear();
            }
        }
        kept.insert(key, issued);
    }
}

/// In the first half of its life: a client handed it has most of it left.
fn fresh(issued: &sts::Issued, now: u64) -> bool {
    let life = issued.expires_at_ms.saturating_sub(issued.issued_at_ms);
    now < issued.issued_at_ms.saturating_add(life / 2)
}
