//! Who makes a call, as request metadata handed explicitly to every
//! control-plane operation (`ControlPlane` methods take a [`Call`]): the
//! credentials a transport read from its headers or metadata, and the
//! request id its caller is shown. Nothing of a caller travels in a
//! task-local or in a request body the caller controls.

/// Credentials as a request carries them. Debug never shows their values.
#[derive(Clone, Default)]
pub struct Credentials {
    pub api_key: Option<String>,
    pub bearer: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: &Option<String>| v.as_ref().map(|_| "<redacted>");
        f.debug_struct("Credentials")
            .field("api_key", &shown(&self.api_key))
            .field("bearer", &shown(&self.bearer))
            .finish()
    }
}

impl Credentials {
    /// From a request's `identity` (`api_key`, `auth_token`), as JSON.
    pub fn from_identity(identity: Option<&serde_json::Value>) -> Self {
        let field = |name: &str| {
            identity
                .and_then(|i| i.get(name))
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        Self {
            api_key: field("api_key"),
            bearer: field("auth_token"),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.api_key.is_none() && self.bearer.is_none()
    }
}

/// One call's metadata: who calls, and the id the request is known by.
#[derive(Debug, Clone, Default)]
pub struct Call {
    pub credentials: Credentials,
    /// The `x-request-id` the caller is shown, named in the audit trail.
    pub request_id: Option<String>,
}

impl Call {
    pub fn new(credentials: Credentials, request_id: Option<String>) -> Self {
        Self {
            credentials,
            request_id,
        }
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
                bearer: Some("eyJ.secret.token".into()),
            },
            Some("r-1".into()),
        );
        let shown = format!("{call:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("r-1"));
    }
}
