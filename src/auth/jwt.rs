//! Bearer JWTs: HS256 with a shared secret, or RS256 / ES256 (and the other
//! asymmetric algorithms) from a JWKS: a file, a URL, or an OIDC issuer's
//! discovery document. The key set is cached and fetched again when a
//! token names an unknown `kid` (at most once a minute). `exp` and `nbf`
//! are checked; `iss` and `aud`, when configured, are required and checked.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use serde_json::Value;
use tokio::sync::Mutex;

use super::{unauthenticated, Principal};
use crate::error::{CatalogError, CatalogResult};

/// How tokens are checked. Debug never shows the shared secret.
#[derive(Clone, Default)]
pub struct JwtConfig {
    /// HS256/384/512 shared secret.
    pub secret: Option<String>,
    /// A JWKS document on disk.
    pub jwks_file: Option<PathBuf>,
    /// A JWKS document's URL.
    pub jwks_url: Option<String>,
    /// An OIDC issuer: its discovery document names the JWKS URL.
    pub oidc_issuer: Option<String>,
    /// Required `iss`.
    pub issuer: Option<String>,
    /// Required `aud`.
    pub audience: Option<String>,
    /// The claim naming the principal (`sub` by default).
    pub principal_claim: String,
    /// The claim listing the principal's groups (`groups` by default).
    pub groups_claim: String,
}

impl std::fmt::Debug for JwtConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtConfig")
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .field("jwks_file", &self.jwks_file)
            .field("jwks_url", &self.jwks_url)
            .field("oidc_issuer", &self.oidc_issuer)
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("principal_claim", &self.principal_claim)
            .field("groups_claim", &self.groups_claim)
            .finish()
    }
}

const REFETCH_EVERY: Duration = Duration::from_secs(60);

/// Checks bearer tokens.
#[derive(Debug)]
pub struct JwtVerifier {
    config: JwtConfig,
    keys: Mutex<(JwkSet, Option<Instant>)>,
}

impl JwtVerifier {
    /// Load the key set (a file now, a URL on first use).
    pub async fn new(mut config: JwtConfig) -> CatalogResult<Self> {
        if config.principal_claim.is_empty() {
            config.principal_claim = "sub".into();
        }
        if config.groups_claim.is_empty() {
            config.groups_claim = "groups".into();
        }
        // An OIDC issuer's tokens are checked as its own.
        if config.issuer.is_none() {
            config.issuer = config.oidc_issuer.clone();
        }
        // An identity provider signs tokens for many clients: without an
        // audience, any of them would be accepted here.
        let shared_keys =
            config.jwks_file.is_some() || config.jwks_url.is_some() || config.oidc_issuer.is_some();
        if shared_keys && config.audience.is_none() {
            return Err(CatalogError::invalid(
                "a JWKS or OIDC issuer needs --jwt-audience: the audience this catalog's tokens are issued for",
            ));
        }
        let keys = match &config.jwks_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    CatalogError::invalid(format!("cannot read JWKS file {}: {e}", path.display()))
                })?;
                serde_json::from_str(&text).map_err(|e| {
                    CatalogError::invalid(format!(
                        "JWKS file {} is not a key set: {e}",
                        path.display()
                    ))
                })?
            }
            None => JwkSet { keys: Vec::new() },
        };
        Ok(Self {
            config,
            keys: Mutex::new((keys, None)),
        })
    }

    /// The JWKS URL: configured, or from the issuer's discovery document.
    async fn jwks_url(&self) -> CatalogResult<Option<String>> {
        if let Some(url) = &self.config.jwks_url {
            return Ok(Some(url.clone()));
        }
        let Some(issuer) = &self.config.oidc_issuer else {
            return Ok(None);
        };
        let discovery = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let doc: Value = fetch(&discovery).await?;
        Ok(doc
            .get("jwks_uri")
            .and_then(Value::as_str)
            .map(str::to_string))
    }

    /// The key for `kid`, fetching the set again when it is unknown.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> CatalogResult<DecodingKey> {
        let mut keys = self.keys.lock().await;
        let find = |set: &JwkSet| -> Option<DecodingKey> {
            let jwk = match kid {
                Some(k) => set.find(k),
                None if set.keys.len() == 1 => set.keys.first(),
                None => None,
            }?;
            DecodingKey::from_jwk(jwk).ok()
        };
        if let Some(k) = find(&keys.0) {
            return Ok(k);
        }
        let due = keys.1.is_none_or(|at| at.elapsed() > REFETCH_EVERY);
        if due {
            if let Some(url) = self.jwks_url().await? {
                keys.1 = Some(Instant::now());
                keys.0 = fetch(&url).await?;
                if let Some(k) = find(&keys.0) {
                    return Ok(k);
                }
            }
        }
        Err(unauthenticated(format!(
            "no key {} for {alg:?} tokens is known",
            kid.map(|k| format!("{k:?}"))
                .unwrap_or_else(|| "(no kid)".into())
        )))
    }

    /// The principal a token stands for; 401 for any token that does not
    /// verify (signature, expiry, not-before, issuer, audience).
    pub async fn verify(&self, token: &str) -> CatalogResult<Principal> {
        let bad = |what: String| unauthenticated(format!("the bearer token is not valid: {what}"));
        let header = decode_header(token).map_err(|e| bad(e.to_string()))?;
        let key = match header.alg {
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
                let secret = self.config.secret.as_deref().ok_or_else(|| {
                    bad("HMAC-signed tokens are not accepted (no secret is configured)".into())
                })?;
                DecodingKey::from_secret(secret.as_bytes()).map_err(|e| bad(e.to_string()))?
            }
            alg => self.key(header.kid.as_deref(), alg).await?,
        };
        let mut validation = Validation::new(header.alg);
        validation.leeway = 30;
        validation.validate_nbf = true;
        // A configured issuer or audience is required, not only checked
        // when present: a token signed for another use that leaves the
        // claim out must not pass.
        let mut required = vec!["exp"];
        match &self.config.audience {
            Some(aud) => {
                validation.set_audience(&[aud]);
                required.push("aud");
            }
            None => validation.validate_aud = false,
        }
        if let Some(iss) = &self.config.issuer {
            validation.set_issuer(&[iss]);
            required.push("iss");
        }
        validation.set_required_spec_claims(&required);
        let claims = decode::<Value>(token, &key, &validation)
            .map_err(|e| bad(e.to_string()))?
            .claims;
        let id = claims
            .get(&self.config.principal_claim)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                bad(format!(
                    "claim {:?} is missing",
                    self.config.principal_claim
                ))
            })?;
        let groups = match claims.get(&self.config.groups_claim) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            Some(Value::String(g)) => g
                .split([',', ' '])
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        let text = |claim: &str| {
            claims
                .get(claim)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Ok(Principal {
            id: id.to_string(),
            groups,
            task: None,
            identity: super::Identity::Token {
                issuer: text("iss"),
                subject: text("sub"),
            },
        })
    }
}

async fn fetch<T: serde::de::DeserializeOwned>(url: &str) -> CatalogResult<T> {
    let unavailable = |e: String| {
        CatalogError::new(
            crate::error::Code::SERVICE_UNAVAILABLE,
            "cannot reach the identity provider (discovery or signing keys); try again",
        )
        .with_cause(format!("{url}: {e}"))
    };
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| unavailable(e.to_string()))?;
    let resp = client
        .get(url)
        .send()
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    if !resp.status().is_success() {
        return Err(unavailable(format!("status {}", resp.status())));
    }
    resp.json().await.map_err(|e| unavailable(e.to_string()))
}
