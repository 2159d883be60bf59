//! One AssumeRole call: the server's credentials for the warehouse in,
//! a session scoped by its policy out.

use std::collections::HashMap;

use aws_sdk_sts::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sts::Client;
use sha2::{Digest, Sha256};

use super::policy::{Privilege, Scope};
use crate::api::vending::VendingSettings;
use crate::error::{CatalogError, CatalogResult, Code};

/// Temporary credentials as STS issued them.
#[derive(Clone)]
pub(super) struct Issued {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: String,
    pub expires_at_ms: u64,
    pub issued_at_ms: u64,
}

/// The key id only: a secret must not reach a log line by accident.
impl std::fmt::Debug for Issued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issued")
            .field("access_key_id", &self.access_key_id)
            .field("expires_at_ms", &self.expires_at_ms)
            .finish_non_exhaustive()
    }
}

/// The first of `keys` that `options` sets.
pub(super) fn first<'a>(options: &'a HashMap<String, String>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| options.get(*k))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

const ACCESS_KEY_ID: &[&str] = &["aws_access_key_id", "access_key_id"];
const SECRET: &[&str] = &["aws_secret_access_key", "secret_access_key"];
const TOKEN: &[&str] = &["aws_session_token", "session_token", "aws_token", "token"];
const ENDPOINT: &[&str] = &["aws_endpoint", "aws_endpoint_url", "endpoint"];
const REGION: &[&str] = &["aws_region", "region"];

/// Which credentials `source` assumes the role with: a digest of every
/// field that decides it (key id, secret, token, endpoint, region), so a
/// source naming a known key id with another secret never shares a
/// session or a client made with the right one. Kept in memory only.
pub(super) fn source_key(source: &HashMap<String, String>) -> String {
    let mut h = Sha256::new();
    for keys in [ACCESS_KEY_ID, SECRET, TOKEN, ENDPOINT, REGION] {
        let v = first(source, keys).unwrap_or("");
        h.update((v.len() as u64).to_le_bytes());
        h.update(v.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// An STS client speaking with the warehouse's own credentials (`source`:
/// its storage options with the namespaces' `lance.storage.*` over them),
/// or the server's environment when they name none.
pub(super) async fn client(
    settings: &VendingSettings,
    source: &HashMap<String, String>,
) -> CatalogResult<Client> {
    let region = settings
        .region
        .clone()
        .or_else(|| first(source, REGION).map(str::to_string))
        .unwrap_or_else(|| "us-east-1".to_string());
    let mut config = aws_sdk_sts::config::Builder::new()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region));
    if let Some(endpoint) = settings
        .sts_endpoint
        .as_deref()
        .or_else(|| first(source, ENDPOINT))
    {
        config = config.endpoint_url(endpoint);
    }
    config = match (first(source, ACCESS_KEY_ID), first(source, SECRET)) {
        (Some(id), Some(secret)) => config.credentials_provider(Credentials::new(
            id,
            secret,
            first(source, TOKEN).map(str::to_string),
            None,
            "lance-catalog-storage-options",
        )),
        _ => {
            let env = aws_config::defaults(BehaviorVersion::latest()).load().await;
            let Some(p) = env.credentials_provider() else {
                return Err(CatalogError::new(
                    Code::SERVICE_UNAVAILABLE,
                    "cannot vend credentials: the server has none to assume the vending role with (storage options, lance.storage.* or its environment)",
                ));
            };
            config.credentials_provider(p)
        }
    };
    Ok(Client::from_conf(config.build()))
}

/// Assume the role for one table and privilege.
pub(super) async fn assume(
    client: &Client,
    settings: &VendingSettings,
    scope: &Scope,
    privilege: Privilege,
) -> CatalogResult<Issued> {
    let issued_at_ms = now_ms();
    let mut call = client
        .assume_role()
        .role_arn(&settings.role_arn)
        .role_session_name("lance-catalog")
        .policy(scope.session_policy(privilege))
        .duration_seconds(settings.duration() as i32);
    if let Some(id) = &settings.external_id {
        call = call.external_id(id);
    }
    let unavailable = |cause: String| {
        CatalogError::new(
            Code::SERVICE_UNAVAILABLE,
            format!(
                "cannot vend credentials for the table at s3://{}/{}: the storage's STS refused or did not answer (the server log has the cause)",
                scope.bucket, scope.prefix
            ),
        )
        .with_cause(cause)
    };
    let out = call
        .send()
        .await
        .map_err(|e| unavailable(aws_sdk_sts::error::DisplayErrorContext(&e).to_string()))?;
    let c = out
        .credentials()
        .ok_or_else(|| unavailable("AssumeRole answered no credentials".into()))?;
    let expires_at_ms = c
        .expiration()
        .to_millis()
        .ok()
        .and_then(|ms| u64::try_from(ms).ok())
        .ok_or_else(|| unavailable("AssumeRole answered no expiry".into()))?;
    Ok(Issued {
        access_key_id: c.access_key_id().to_string(),
        secret_access_key: c.secret_access_key().to_string(),
        session_token: c.session_token().to_string(),
        expires_at_ms,
        issued_at_ms,
    })
}

pub(super) fn now_ms() -> u64 {
    chrono::Utc::now().timestamp_millis().max(0) as u64
}
