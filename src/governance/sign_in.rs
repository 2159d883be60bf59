//! Authentication as the governance layer sees it: every request's
//! credentials are checked here (REST's gate, gRPC's, Flight's calls, the
//! control plane's caller), so every refusal of a presented credential is
//! an audit event; and Flight's `Handshake` turns a local user's name and
//! password into a session token.

use super::guard::authorize::{within_minute, MINUTE};
use super::guard::Access;
use super::Governance;
use crate::api::kind::Kind;
use crate::api::op;
use crate::api::users::Session;
use crate::auth::{Authenticator, Credentials, Principal, Users};
use crate::error::{CatalogError, CatalogResult, Code};

/// Refusals of one claimed identity stored per minute, and of all
/// together: a flood of bad credentials cannot fill the control root
/// (the log line is written for each still).
const REFUSALS_PER_NAME: u32 = 60;
const REFUSALS_PER_MINUTE: u32 = 1_200;

impl Governance {
    /// The caller a request's credentials stand for (`None` with
    /// authentication off; 401 when they are required and missing or
    /// invalid), checked before anything else of a request is read; a
    /// refusal of credentials it presented is audited, with what they
    /// claimed (never a secret).
    pub async fn authenticate(
        &self,
        credentials: &Credentials,
    ) -> CatalogResult<Option<Principal>> {
        let verified = self.auth.authenticate(credentials).await;
        if let Err(e) = &verified {
            self.refused(credentials, e).await;
        }
        verified
    }

    /// Audit a refusal of presented credentials (a 401 or a hold-off's
    /// 429; other failures are not about the credential).
    async fn refused(&self, credentials: &Credentials, error: &CatalogError) {
        let refusal = matches!(error.code, Code::UNAUTHENTICATED | Code::THROTTLING);
        if !refusal || credentials.is_empty() {
            return;
        }
        let (kind, id) = match Authenticator::claimed(credentials) {
            Some((kind, id)) => (kind, vec![id]),
            None => (Kind::Server, Vec::new()),
        };
        let access = Access {
            action: &crate::api::op::Authenticate,
            kind,
            id,
            ..Default::default()
        };
        let name = format!("{kind}:{}", access.id.join("/"));
        match self.store_refusal(&name) {
            true => {
                self.registry
                    .audit(&access, "denied", Some(error.code))
                    .await
            }
            false => tracing::info!(
                target: "lance_catalog::audit",
                claimed = name.as_str(),
                code = error.code.0,
                "sign-in refused (not stored: over the minute's limit)"
            ),
        }
    }

    /// Whether this refusal goes to the event store. Names are counted
    /// while fewer than 10,000 are; past that only the total is, and the
    /// names are swept once a minute.
    fn store_refusal(&self, name: &str) -> bool {
        let Ok(mut seen) = self.denials.lock() else {
            return false;
        };
        let total = "authenticate:*";
        if seen
            .get(total)
            .is_some_and(|(at, _)| at.elapsed() >= MINUTE)
        {
            seen.retain(|_, (at, _)| at.elapsed() < MINUTE);
        }
        if !within_minute(&mut seen, total, REFUSALS_PER_MINUTE) {
            return false;
        }
        let key = format!("authenticate:{name}");
        if !seen.contains_key(&key) && seen.len() >= 10_000 {
            return true;
        }
        within_minute(&mut seen, &key, REFUSALS_PER_NAME)
    }

    /// A local user's name and password (Flight's `Handshake`, `POST
    /// /v1/sessions`) made a session token its later calls carry. `None`
    /// for other credentials, which travel on every call themselves, and
    /// with authentication off.
    pub async fn sign_in(&self, credentials: &Credentials) -> CatalogResult<Option<Session>> {
        let Some(crate::auth::AuthToken::Basic(basic)) = credentials.token() else {
            return Ok(None);
        };
        if !self.auth.required() {
            return Ok(None);
        }
        // The password must be what is checked: an API key beside it would
        // be verified instead.
        if credentials.api_key.is_some() {
            return Err(CatalogError::invalid(
                "sign in with a user name and password alone: drop the x-api-key header",
            ));
        }
        let opened = self.auth.users().open_session(&basic).await;
        let (token, principal, expires_at_ms) = match opened {
            Ok(made) => made,
            Err(e) => {
                self.refused(credentials, &e).await;
                return Err(e);
            }
        };
        self.succeeded(&Access {
            action: &op::CreateSession,
            kind: Kind::User,
            id: vec![principal.id.clone()],
            principal: Some(principal.clone()),
            ..Default::default()
        })
        .await;
        Ok(Some(Session {
            username: principal.id,
            token,
            expires_at_ms,
        }))
    }

    /// End the session whose token the call carries (sign-out).
    pub async fn sign_out(&self, credentials: &Credentials) -> CatalogResult<()> {
        let token = match credentials.token() {
            Some(crate::auth::AuthToken::Bearer(t)) if Users::looks_like_session(t) => t,
            _ => {
                return Err(CatalogError::invalid(
                    "sign-out ends the session whose token the call carries (Authorization: Bearer lcs_…)",
                ))
            }
        };
        let principal = self.authenticate(credentials).await?;
        self.auth.users().end_session(token).await?;
        if let Some(p) = principal {
            self.succeeded(&Access {
                action: &op::DeleteSession,
                kind: Kind::User,
                id: vec![p.id.clone()],
                principal: Some(p),
                ..Default::default()
            })
            .await;
        }
        Ok(())
    }
}
