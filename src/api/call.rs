//! Who makes a call, as request metadata handed explicitly to every
//! control-plane operation (`ControlPlane` methods take a [`Call`]): the
//! credentials a transport read from its headers or metadata, and the
//! request id its caller is shown. Nothing of a caller travels in a
//! task-local or in a request body the caller controls.

/// Credentials as a request carries them. Debug never shows their values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub api_key: Option<String>,
    /// The `Authorization` header's credential: a bearer token's value, or
    /// `Basic …` whole (the spec's `identity.auth_token`).
    pub auth_token: Option<String>,
}

/// A user name and password (HTTP Basic, RFC 7617). Debug never shows the
/// password.
#[derive(Clone, PartialEq, Eq)]
pub struct Basic {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Basic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Basic")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// What an `auth_token` is. Debug shows its kind only.
pub enum AuthToken<'a> {
    /// `Basic <base64 of user:password>`.
    Basic(Basic),
    /// A `Basic` credential that does not decode to `user:password`.
    BadBasic,
    /// Anything else: a bearer token (a JWT, a session token, a key).
    Bearer(&'a str),
}

impl std::fmt::Debug for AuthToken<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthToken::Basic(b) => f.debug_tuple("Basic").field(b).finish(),
            AuthToken::BadBasic => f.write_str("BadBasic"),
            AuthToken::Bearer(_) => f.write_str("Bearer(<redacted>)"),
        }
    }
}

/// The base64 of a `Basic` credential, when `token` is one (the scheme's
/// name is case-insensitive, RFC 9110 11.1).
fn basic_payload(token: &str) -> Option<&str> {
    let (scheme, rest) = token.split_once(' ')?;
    scheme.eq_ignore_ascii_case("basic").then(|| rest.trim())
}

fn decode_basic(payload: &str) -> Option<Basic> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    // The user id cannot hold a colon; the password may (RFC 7617, 2).
    let (username, password) = text.split_once(':')?;
    Some(Basic {
        username: username.to_string(),
        password: password.to_string(),
    })
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: &Option<String>| v.as_ref().map(|_| "<redacted>");
        f.debug_struct("Credentials")
            .field("api_key", &shown(&self.api_key))
            .field("auth_token", &shown(&self.auth_token))
            .finish()
    }
}

/// A credential as given: trimmed, and a blank one is none.
fn given(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Credentials {
    /// From a spec request's typed `identity`; blank values are none.
    pub fn of_identity(identity: Option<&lance_namespace::models::Identity>) -> Self {
        Self {
            api_key: given(identity.and_then(|i| i.api_key.as_deref())),
            auth_token: given(identity.and_then(|i| i.auth_token.as_deref())),
        }
    }

    /// From a request's `identity` (`api_key`, `auth_token`), as JSON.
    pub fn from_identity(identity: Option<&serde_json::Value>) -> Self {
        let field = |name: &str| given(identity.and_then(|i| i.get(name))?.as_str());
        Self {
            api_key: field("api_key"),
            auth_token: field("auth_token"),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.api_key.is_none() && self.auth_token.is_none()
    }

    /// The `auth_token`, read by its scheme.
    pub fn token(&self) -> Option<AuthToken<'_>> {
        let token = self.auth_token.as_deref()?;
        Some(match basic_payload(token) {
            Some(payload) => match decode_basic(payload) {
                Some(basic) => AuthToken::Basic(basic),
                None => AuthToken::BadBasic,
            },
            None => AuthToken::Bearer(token),
        })
    }

    /// The `Authorization` header that carries the `auth_token` on: `Basic`
    /// as it came, anything else as a bearer token.
    pub fn authorization(&self) -> Option<String> {
        let token = self.auth_token.as_deref()?;
        Some(match basic_payload(token) {
            Some(_) => token.to_string(),
            None => format!("Bearer {token}"),
        })
    }
}

/// The header a caller names a change by, so that sending it again does
/// it once (`Idempotency-Key`, draft-ietf-httpapi-idempotency-key-header);
/// gRPC metadata and Flight headers of the same name.
pub const IDEMPOTENCY_HEADER: &str = "idempotency-key";

/// Where a spec request carries that key: its context entry, as every
/// other header of the call (the spec's Context mapping).
pub const IDEMPOTENCY_CONTEXT: &str = "header.idempotency-key";

/// One call's metadata: who calls, the id the request is known by, and
/// the key its caller names the change by.
#[derive(Debug, Clone, Default)]
pub struct Call {
    pub credentials: Credentials,
    /// The `x-request-id` the caller is shown, named in the audit trail.
    pub request_id: Option<String>,
    /// The call's `Idempotency-Key`, as sent.
    pub idempotency_key: Option<String>,
}

impl Call {
    pub fn new(credentials: Credentials, request_id: Option<String>) -> Self {
        Self {
            credentials,
            request_id,
            idempotency_key: None,
        }
    }

    /// The same call, naming its change by `key`.
    pub fn keyed(mut self, key: Option<String>) -> Self {
        self.idempotency_key = key;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_credential() {
        let call = Call::new(
            Credentials {
                api_key: Some("lck_secret_value".into()),
                auth_token: Some("eyJ.secret.token".into()),
            },
            Some("r-1".into()),
        );
        let shown = format!("{call:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("r-1"));
    }

    fn with_token(token: &str) -> Credentials {
        Credentials {
            api_key: None,
            auth_token: Some(token.into()),
        }
    }

    #[test]
    fn basic_is_read_by_its_scheme() {
        // "ada:pa:ss" — a password may hold a colon.
        let c = with_token("basic YWRhOnBhOnNz");
        match c.token() {
            Some(AuthToken::Basic(b)) => {
                assert_eq!(b.username, "ada");
                assert_eq!(b.password, "pa:ss");
                assert!(!format!("{b:?}").contains("pa:ss"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.authorization().as_deref(), Some("basic YWRhOnBhOnNz"));
        assert!(matches!(
            with_token("Basic not-base64!").token(),
            Some(AuthToken::BadBasic)
        ));
        // No colon: not user:password.
        assert!(matches!(
            with_token("Basic YWRh").token(),
            Some(AuthToken::BadBasic)
        ));
        let bearer = with_token("eyJ.a.b");
        assert!(matches!(bearer.token(), Some(AuthToken::Bearer("eyJ.a.b"))));
        assert_eq!(bearer.authorization().as_deref(), Some("Bearer eyJ.a.b"));
    }
}
