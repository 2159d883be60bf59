//! Session tokens: what a local user's name and password are exchanged
//! for (Flight's `Handshake`, `POST /v1/sessions`), an HS256 JWT behind
//! `lcs_`, signed with a key kept on the control root (every replica
//! verifies it) and good while unexpired and while its user keeps the
//! generation it was made at.

use serde::{Deserialize, Serialize};

use super::{valid_username, Users, BAD};
use crate::auth::secrets::random_hex;
use crate::auth::{unauthenticated, Principal};
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::now_ms;

/// The session tokens' signing key, one for the whole control root.
const SESSION_KEY_KIND: &str = "session_key";
const SESSION_KEY_ID: &str = "hs256";
const SESSION_ISSUER: &str = "lance-catalog/session";
/// A session token reads `lcs_<HS256 JWT>`.
const SESSION_PREFIX: &str = "lcs_";

#[derive(Debug, Serialize, Deserialize)]
struct SessionClaims {
    sub: String,
    /// The user's generation when the token was made.
    generation: u64,
    iss: String,
    iat: u64,
    exp: u64,
    jti: String,
}

#[derive(Clone, Serialize, Deserialize)]
struct SessionKey {
    secret: String,
    created_at_ms: u64,
}

impl Users {
    /// The key session tokens are signed with: made once per control
    /// root, shared by every replica.
    async fn session_key(&self) -> CatalogResult<&[u8]> {
        self.session_key
            .get_or_try_init(|| async {
                let read = || {
                    self.records
                        .get::<SessionKey>(SESSION_KEY_KIND, SESSION_KEY_ID)
                };
                if let Some(k) = read().await? {
                    return Ok(k.value.secret.into_bytes());
                }
                let made = SessionKey {
                    secret: format!("{}{}{}", random_hex(), random_hex(), random_hex()),
                    created_at_ms: now_ms(),
                };
                match self
                    .records
                    .create(
                        SESSION_KEY_KIND,
                        SESSION_KEY_ID,
                        &made,
                        Code::CONCURRENT_MODIFICATION,
                    )
                    .await
                {
                    Ok(k) => Ok(k.value.secret.into_bytes()),
                    // Another replica made it first: use that one.
                    Err(e) if e.code == Code::CONCURRENT_MODIFICATION => {
                        read().await?.map(|k| k.value.secret.into_bytes()).ok_or(e)
                    }
                    Err(e) => Err(e),
                }
            })
            .await
            .map(Vec::as_slice)
    }

    /// A session token for a user just verified (Flight's `Handshake`):
    /// the token and when it expires (ms).
    pub async fn mint_session(&self, username: &str) -> CatalogResult<(String, u64)> {
        let stored = self
            .stored(username, true)
            .await?
            .filter(|s| !s.disabled)
            .ok_or_else(|| unauthenticated(BAD))?;
        let now = now_ms();
        let exp = now.saturating_add(self.config.session_ttl.as_millis() as u64);
        let claims = SessionClaims {
            sub: stored.username,
            generation: stored.generation,
            iss: SESSION_ISSUER.to_string(),
            iat: now / 1000,
            exp: exp / 1000,
            jti: random_hex(),
        };
        let key = jsonwebtoken::EncodingKey::from_secret(self.session_key().await?)
            .map_err(|e| CatalogError::internal(format!("the session key: {e}")))?;
        let token = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &claims,
            &key,
        )
        .map_err(|e| CatalogError::internal(format!("signing a session token failed: {e}")))?;
        Ok((format!("{SESSION_PREFIX}{token}"), exp))
    }

    pub fn looks_like_session(token: &str) -> bool {
        token.starts_with(SESSION_PREFIX)
    }

    /// The user a session token stands for, while it is unexpired and its
    /// user exists, is enabled and keeps the token's generation.
    pub async fn verify_session(&self, token: &str) -> CatalogResult<Principal> {
        let bad = || {
            unauthenticated(
                "the session token is not valid (expired, malformed, or its user was changed, disabled or deleted): sign in again",
            )
        };
        if !self.config.enabled {
            return Err(Self::turned_off());
        }
        let jwt = token.strip_prefix(SESSION_PREFIX).ok_or_else(bad)?;
        if jwt.len() > 4096 {
            return Err(bad());
        }
        let key = jsonwebtoken::DecodingKey::from_secret(self.session_key().await?)
            .map_err(|e| CatalogError::internal(format!("the session key: {e}")))?;
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.set_issuer(&[SESSION_ISSUER]);
        validation.set_required_spec_claims(&["exp", "iss", "sub"]);
        validation.leeway = 0;
        let claims = jsonwebtoken::decode::<SessionClaims>(jwt, &key, &validation)
            .map_err(|_| bad())?
            .claims;
        if !valid_username(&claims.sub) {
            return Err(bad());
        }
        match self.stored(&claims.sub, false).await? {
            Some(s) if !s.disabled && s.generation == claims.generation => Ok(Self::principal(&s)),
            _ => Err(bad()),
        }
    }

    /// The user name a session token claims, unverified (for the audit
    /// trail of a refused one).
    pub fn claimed_by_session(token: &str) -> Option<String> {
        use base64::Engine;
        let payload = token.strip_prefix(SESSION_PREFIX)?.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .ok()?;
        let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        claims
            .get("sub")?
            .as_str()
            .filter(|s| valid_username(s))
            .map(str::to_string)
    }
}
