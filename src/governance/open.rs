//! Opening the governance layer: the default warehouse's root, the control
//! root's registries, authentication and the Cedar policies, and the real
//! ids of objects from before they existed.

use std::sync::Arc;

use super::guard::{Authorizer, Hooks, LogHooks};
use super::models::DEFAULT_WAREHOUSE;
use super::router::give_object_ids;
use super::{Governance, GovernanceConfig, Registry};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult};

/// Who made the `--bootstrap-admin` name's own grant: the name's, not any
/// user's (a token or key of the name keeps it when the user goes).
const NAME_GRANT: &str = "--bootstrap-admin";

impl Governance {
    /// Open the default warehouse's root and the control root.
    pub async fn open(config: &GovernanceConfig) -> CatalogResult<Self> {
        let home = Catalog::open(&config.storage).await?;
        let (records, control_root) = match config.control_root.as_deref() {
            Some(uri) if !uri.trim().is_empty() => (
                crate::core::open_records(uri, &config.storage.storage_options).await?,
                crate::core::resolve_root(uri)?,
            ),
            _ => (
                home.control_records(),
                format!("{}/_catalog/control", home.root()),
            ),
        };
        let mut gov = Self::single(home);
        gov.registry = Registry::new(records.clone());
        gov.control_root = control_root;
        gov.warehouses = config.warehouses;
        gov.trash = config.trash;
        gov.policy_defaults = config.policy;
        gov.maintenance = config.maintenance.clone();
        gov.idempotency_ttl = config.idempotency_ttl.unwrap_or(super::once::DEFAULT_TTL);
        let auth = &config.auth;
        let jwt = match &auth.jwt {
            Some(j) => Some(crate::auth::JwtVerifier::new(j.clone()).await?),
            None => None,
        };
        gov.auth = Arc::new(crate::auth::Authenticator::new(
            auth.required,
            crate::auth::ApiKeys::new(records.clone()),
            jwt,
            crate::auth::Users::new(records, auth.users.clone()),
        ));
        if auth.required {
            let actions: Vec<&str> = crate::api::OPS
                .iter()
                .chain(crate::api::CONTROL_OPS)
                .map(|op| op.action)
                .chain(crate::api::op::EXTRA.iter().map(|op| op.action))
                .collect();
            let cedar =
                crate::auth::cedar::CedarAuthorizer::new(&actions, auth.policy_dir.as_deref())
                    .map_err(CatalogError::invalid)?;
            gov.authorizers.insert(0, Arc::new(cedar));
        }
        if let Some(admin) = auth.bootstrap_admin.as_deref().filter(|a| !a.is_empty()) {
            gov.registry
                .grant(
                    super::models::GrantResource {
                        kind: "server".into(),
                        ..Default::default()
                    },
                    admin,
                    None,
                    "admin",
                    Some(NAME_GRANT.into()),
                )
                .await?;
        }
        if let Some(file) = &auth.bootstrap_admin_password_file {
            gov.bootstrap_user(auth.bootstrap_admin.as_deref(), file)
                .await?;
        }
        if let Err(e) = gov.bind_user_grants().await {
            tracing::warn!(error = %e.message, "grants from before user binding were not bound to their users; those users hold them again once a start binds them");
        }
        // Objects and grants from before real ids: every standing object
        // gets its id, then old grants are bound to the objects they name.
        give_object_ids(&gov.home, DEFAULT_WAREHOUSE).await;
        match gov.registry.migrate_project_trash().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                projects = n,
                "projects' trash settings moved into their maintenance policy records"
            ),
            Err(e) => {
                tracing::warn!(error = %e.message, "projects' trash settings were not moved into policy records; the next start tries again")
            }
        }
        if let Err(e) = gov.bind_unbound_grants().await {
            tracing::warn!(error = %e.message, "grants from before real ids were not bound");
        }
        Ok(gov)
    }

    /// The bootstrap admin as a local user, when it is not one yet.
    async fn bootstrap_user(
        &self,
        admin: Option<&str>,
        file: &std::path::Path,
    ) -> CatalogResult<()> {
        let Some(admin) = admin.filter(|a| !a.is_empty()) else {
            return Err(CatalogError::invalid(
                "--bootstrap-admin-password-file needs --bootstrap-admin (the user it makes)",
            ));
        };
        if !self.auth.users().enabled() {
            return Err(CatalogError::invalid(
                "--bootstrap-admin-password-file needs --local-users on",
            ));
        }
        let read = std::fs::read_to_string(file).map_err(|e| {
            CatalogError::invalid(format!(
                "--bootstrap-admin-password-file {}: {e}",
                file.display()
            ))
        })?;
        let password = read.trim_end_matches(['\n', '\r']);
        match self.auth.users().bootstrap(admin, password).await {
            Ok(true) => {
                tracing::info!(user = admin, "the bootstrap admin was made a local user");
            }
            // Made before (and maybe deleted since): kept as it is.
            Ok(false) => {}
            Err(e) => {
                return Err(CatalogError::new(
                    e.code,
                    format!("--bootstrap-admin-password-file: {}", e.message),
                ))
            }
        }
        // The one rule: the user this made is server admin, bound to its
        // uid, while it stands. Deleting it retires it for good: the grant
        // goes with it, and neither a restart nor a new user of the name
        // brings it back. The name's own grant (`--bootstrap-admin`, no
        // uid) stays the other principals' of that name (keys, tokens).
        if let Some(uid) = self
            .auth
            .users()
            .bootstrapped()
            .await?
            .as_ref()
            .and_then(|i| i.user_uid().map(str::to_string))
        {
            self.registry
                .grant(
                    super::models::GrantResource {
                        kind: "server".into(),
                        ..Default::default()
                    },
                    admin,
                    Some(&uid),
                    "admin",
                    Some("--bootstrap-admin-password-file".into()),
                )
                .await?;
        }
        Ok(())
    }

    /// Once per control root: grants made to a local user's name before
    /// grants were bound to users, each made while the user it names
    /// stood (at or after its creation), become bound to that user (a
    /// bound grant replaces the unbound one, so no twin is left for a
    /// revoke to miss), and API keys minted for a standing user (after it
    /// was made) carry its uid.
    async fn bind_user_grants(&self) -> CatalogResult<usize> {
        const DONE: (&str, &str) = ("migration", "grants_bound_to_users");
        #[derive(serde::Serialize, serde::Deserialize, Clone)]
        struct Done {
            at_ms: u64,
        }
        if !self.auth.users().enabled()
            || self
                .registry
                .records
                .get::<Done>(DONE.0, DONE.1)
                .await?
                .is_some()
        {
            return Ok(0);
        }
        let users = self.auth.users();
        let mut bound = 0;
        for g in self.registry.all_grants().await? {
            // The name's own grant is never a user's, whenever it was
            // made: it may fall in the very millisecond the bootstrap user
            // was made, and binding it would end it with that user.
            if g.principal_uid.is_some()
                || g.principal.starts_with("group:")
                || g.granted_by.as_deref() == Some(NAME_GRANT)
            {
                continue;
            }
            let Some(crate::auth::Identity::User { uid, created_at_ms }) =
                users.identity_of(&g.principal).await?
            else {
                continue;
            };
            if g.created_at_ms < created_at_ms {
                continue;
            }
            self.registry
                .grant(
                    g.resource.clone(),
                    &g.principal,
                    Some(&uid),
                    &g.relation,
                    g.granted_by.clone(),
                )
                .await?;
            self.registry.revoke_grant(&g.grant_id).await?;
            bound += 1;
        }
        self.auth.keys().bind_to_users(users).await?;
        self.registry
            .records
            .upsert::<Done, _>(DONE.0, DONE.1, |_| {
                Some(Done {
                    at_ms: super::registry::now_ms(),
                })
            })
            .await?;
        Ok(bound)
    }

    /// One root, warehouses off, registries in the root's control directory.
    pub fn single(home: Catalog) -> Self {
        let control_root = format!("{}/_catalog/control", home.root());
        let records = home.control_records();
        let estate = Arc::new(super::clones::EstateHook::default());
        home.set_estate_refs(estate.clone());
        Self {
            estate,
            registry: Registry::new(records.clone()),
            warehouses: false,
            home: Arc::new(home),
            control_root,
            catalogs: Default::default(),
            bound: Default::default(),
            authorizers: Vec::new(),
            hooks: Arc::new(LogHooks),
            auth: Arc::new(crate::auth::Authenticator::new(
                false,
                crate::auth::ApiKeys::new(records.clone()),
                None,
                crate::auth::Users::new(records, Default::default()),
            )),
            grants: Default::default(),
            denials: Default::default(),
            trash: Default::default(),
            policy_defaults: Default::default(),
            maintenance: Default::default(),
            idempotency_ttl: super::once::DEFAULT_TTL,
            ready: tokio::sync::watch::channel(None).0,
        }
    }

    /// Set the trash settings (tests; the server reads its flags).
    pub fn with_trash(mut self, trash: super::TrashConfig) -> Self {
        self.trash = trash;
        self
    }

    /// How long an `Idempotency-Key` is kept (tests; the server reads
    /// `--idempotency-ttl`).
    pub fn with_idempotency_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.idempotency_ttl = ttl;
        self
    }

    /// Set the maintenance-task settings (tests; the server reads flags).
    pub fn with_maintenance(mut self, maintenance: super::MaintenanceConfig) -> Self {
        self.maintenance = maintenance;
        self
    }

    /// Add an authorizer after the policies: an access must pass both
    /// (tests use it to check that a refusal leaves nothing behind).
    pub fn with_authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizers.push(authorizer);
        self
    }

    /// Replace the post-write hooks.
    pub fn with_hooks(mut self, hooks: Arc<dyn Hooks>) -> Self {
        self.hooks = hooks;
        self
    }

    /// Whether warehouses are on.
    pub fn warehouses_on(&self) -> bool {
        self.warehouses
    }

    /// The default warehouse's catalog.
    pub fn home(&self) -> &Arc<Catalog> {
        &self.home
    }

    /// The registries' location.
    pub fn control_root(&self) -> &str {
        &self.control_root
    }
}
