//! Authentication and access (`--auth`, `--bootstrap-admin`,
//! `--policy-dir`, `--jwt-*`, `--jwks-*`, `--oidc-issuer`): whether a
//! caller must say who it is, how its bearer tokens are checked, and the
//! operator's own Cedar policies. Local users' sign-in is `users.rs`.

use clap::Args;

use crate::app::config::users::UsersArgs;
use crate::auth::JwtConfig;
use crate::governance::AuthConfig;

/// Whether a caller must authenticate (`--auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// Anyone who reaches the port may do anything (a server on loopback).
    None,
    /// Every request needs an API key or a bearer token (or, with local
    /// users on, a user's name and password).
    Required,
}

/// The "Authentication and access" flags. Debug shows whether the JWT
/// secret is set, not its value.
#[derive(Clone, Args)]
pub struct AccessArgs {
    /// `required`: every request needs an API key or a bearer token, and
    /// Cedar policies fed by grants decide what it may do. `none` (the
    /// default, for a server on loopback): anyone who reaches the port may
    /// do anything.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_AUTH",
        default_value = "none"
    )]
    pub auth: AuthMode,

    /// Made server admin at start (a grant `admin` on the server), so a
    /// fresh deployment can be administered.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_BOOTSTRAP_ADMIN"
    )]
    pub bootstrap_admin: Option<String>,

    /// A directory of operators' own Cedar policy files (`*.cedar`),
    /// validated against the catalog's schema at start.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_POLICY_DIR"
    )]
    pub policy_dir: Option<std::path::PathBuf>,

    /// HS256 secret for bearer JWTs.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_SECRET",
        hide_env_values = true
    )]
    pub jwt_secret: Option<String>,

    /// A JWKS file with the keys of RS256 / ES256 bearer JWTs.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWKS_FILE"
    )]
    pub jwks_file: Option<std::path::PathBuf>,

    /// A JWKS URL (fetched, cached, fetched again for an unknown `kid`).
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWKS_URL"
    )]
    pub jwks_url: Option<String>,

    /// An OIDC issuer whose discovery document names the JWKS URL.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_OIDC_ISSUER"
    )]
    pub oidc_issuer: Option<String>,

    /// Required `iss` of bearer JWTs.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_ISSUER"
    )]
    pub jwt_issuer: Option<String>,

    /// Required `aud` of bearer JWTs.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_AUDIENCE"
    )]
    pub jwt_audience: Option<String>,

    /// The JWT claim naming the principal.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_PRINCIPAL_CLAIM",
        default_value = "sub"
    )]
    pub jwt_principal_claim: String,

    /// The JWT claim listing the principal's groups.
    #[arg(
        help_heading = "Authentication and access",
        long,
        env = "LANCE_CATALOG_JWT_GROUPS_CLAIM",
        default_value = "groups"
    )]
    pub jwt_groups_claim: String,
}

impl AccessArgs {
    /// Whether `--auth required` is set.
    pub fn required(&self) -> bool {
        self.auth == AuthMode::Required
    }

    /// How callers are authenticated, local users' settings included.
    pub fn config(&self, users: &UsersArgs) -> Result<AuthConfig, String> {
        let jwt = (self.jwt_secret.is_some()
            || self.jwks_file.is_some()
            || self.jwks_url.is_some()
            || self.oidc_issuer.is_some())
        .then(|| JwtConfig {
            secret: self.jwt_secret.clone(),
            jwks_file: self.jwks_file.clone(),
            jwks_url: self.jwks_url.clone(),
            oidc_issuer: self.oidc_issuer.clone(),
            issuer: self.jwt_issuer.clone(),
            audience: self.jwt_audience.clone(),
            principal_claim: self.jwt_principal_claim.clone(),
            groups_claim: self.jwt_groups_claim.clone(),
        });
        Ok(AuthConfig {
            required: self.required(),
            jwt,
            bootstrap_admin: self.bootstrap_admin.clone(),
            policy_dir: self.policy_dir.clone(),
            users: users.config()?,
            bootstrap_admin_password_file: users.bootstrap_admin_password_file.clone(),
        })
    }
}

impl std::fmt::Debug for AccessArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessArgs")
            .field("auth", &self.auth)
            .field("bootstrap_admin", &self.bootstrap_admin)
            .field("policy_dir", &self.policy_dir)
            .field(
                "jwt_secret",
                &self.jwt_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("jwks_file", &self.jwks_file)
            .field("jwks_url", &self.jwks_url)
            .field("oidc_issuer", &self.oidc_issuer)
            .field("jwt_issuer", &self.jwt_issuer)
            .field("jwt_audience", &self.jwt_audience)
            .field("jwt_principal_claim", &self.jwt_principal_claim)
            .field("jwt_groups_claim", &self.jwt_groups_claim)
            .finish()
    }
}
