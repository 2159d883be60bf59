//! Local users' settings (`--local-users`, `--login-*`, `--session-ttl`,
//! `--password-*`): whether names and passwords are accepted, how failed
//! sign-ins are held off, how long Flight's session tokens last, and the
//! Argon2id cost of new password hashes.

use std::time::Duration;

use clap::Args;

use crate::auth::UsersConfig;

#[derive(Debug, Clone, Args)]
pub struct UsersArgs {
    /// `on`: with `--auth required`, local users (made through
    /// `/v1/users`) sign in with a name and password (HTTP Basic, Flight's
    /// Handshake). `off`: Basic credentials and session tokens are refused.
    #[arg(
        help_heading = "Local users",
        long,
        env = "LANCE_CATALOG_LOCAL_USERS",
        default_value = "on"
    )]
    pub local_users: crate::app::config::switch::Switch,

    /// Failed sign-ins in a row before a user name is held off (0: never).
    #[arg(
        help_heading = "Local users",
        long,
        env = "LANCE_CATALOG_LOGIN_MAX_FAILURES",
        default_value_t = 5
    )]
    pub login_max_failures: u32,

    /// The first hold-off after `--login-max-failures`; each further
    /// failure doubles it, up to 15 minutes (e.g. 30s, 2m).
    #[arg(
        help_heading = "Local users",
        long,
        env = "LANCE_CATALOG_LOGIN_HOLD_OFF",
        default_value = "30s"
    )]
    pub login_hold_off: String,

    /// How long a session token from Flight's Handshake is good for.
    #[arg(
        help_heading = "Local users",
        long,
        env = "LANCE_CATALOG_SESSION_TTL",
        default_value = "1h"
    )]
    pub session_ttl: String,

    /// Argon2id memory per password hash, in KiB (new hashes; a stored
    /// hash keeps its own).
    #[arg(
        help_heading = "Local users",
        long,
        env = "LANCE_CATALOG_PASSWORD_MEMORY_KIB",
        default_value_t = 19_456
    )]
    pub password_memory_kib: u32,

    /// Argon2id passes per password hash.
    #[arg(
        help_heading = "Local users",
        long,
        env = "LANCE_CATALOG_PASSWORD_PASSES",
        default_value_t = 2
    )]
    pub password_passes: u32,

    /// A file holding the password of the `--bootstrap-admin` as a local
    /// user, made at start when no user of that name exists (an existing
    /// one keeps its password): a fresh deployment without an identity
    /// provider can then sign in and make the rest.
    #[arg(
        help_heading = "Local users",
        long,
        env = "LANCE_CATALOG_BOOTSTRAP_ADMIN_PASSWORD_FILE"
    )]
    pub bootstrap_admin_password_file: Option<std::path::PathBuf>,

    /// Argon2id lanes per password hash.
    #[arg(
        help_heading = "Local users",
        long,
        env = "LANCE_CATALOG_PASSWORD_LANES",
        default_value_t = 1
    )]
    pub password_lanes: u32,
}

impl UsersArgs {
    pub fn config(&self) -> Result<UsersConfig, String> {
        let seconds = |flag: &str, value: &str| {
            crate::governance::parse_duration(value).map_err(|e| format!("{flag}: {e}"))
        };
        let session_ttl = seconds("--session-ttl", &self.session_ttl)?;
        if session_ttl == 0 {
            return Err("--session-ttl must be at least 1s".to_string());
        }
        // Checked here so a bad setting stops the start, not a sign-in.
        argon2::Params::new(
            self.password_memory_kib,
            self.password_passes,
            self.password_lanes,
            None,
        )
        .map_err(|e| format!("the --password-* settings: {e}"))?;
        Ok(UsersConfig {
            enabled: self.local_users.is_on(),
            max_failures: self.login_max_failures,
            hold_off: Duration::from_secs(seconds("--login-hold-off", &self.login_hold_off)?),
            session_ttl: Duration::from_secs(session_ttl),
            memory_kib: self.password_memory_kib,
            passes: self.password_passes,
            lanes: self.password_lanes,
        })
    }
}
