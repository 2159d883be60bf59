//! Authorization over the hierarchy: the chain of a resource (itself and
//! everything above it, up to the server), the relations a principal holds
//! on it through grants, the Cedar decision, and ownership of what a
//! caller creates.

use crate::api::call::Call;
use crate::governance::guard::request::SpecRequest;

use crate::auth::cedar::Chain;
use crate::auth::{unauthenticated, Credentials, Principal};
use crate::error::CatalogResult;
use crate::governance::grants::{key, object_key, relations};
use crate::governance::guard::{Access, Facts, Kind, ObjectRef};
use crate::governance::models::GrantResource;
use crate::governance::{Governance, DEFAULT_PROJECT, DEFAULT_WAREHOUSE};

/// Denials of one principal stored per minute.
const DENIALS_PER_MINUTE: u32 = 60;
/// The window of the audit store's limits on denials and refusals.
pub(in crate::governance) const MINUTE: std::time::Duration = std::time::Duration::from_secs(60);

/// Count one more event of `key` in its current minute (a minute over
/// starts the count again); whether it is within `limit`.
pub(in crate::governance) fn within_minute(
    seen: &mut std::collections::HashMap<String, (std::time::Instant, u32)>,
    key: &str,
    limit: u32,
) -> bool {
    let now = std::time::Instant::now();
    let entry = seen.entry(key.to_string()).or_insert((now, 0));
    if entry.0.elapsed() >= MINUTE {
        *entry = (now, 0);
    }
    entry.1 += 1;
    entry.1 <= limit
}

impl Governance {
    /// The caller of a spec request (its `identity`): first in the guard
    /// order, before the request's shape is looked at.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn principal_of(
        &self,
        request: &dyn SpecRequest,
    ) -> CatalogResult<Option<Principal>> {
        self.authenticate(&Credentials::of_identity(request.identity()))
            .await
    }

    /// How many times this server verified credentials (each request's
    /// once, however many of its steps ask who is calling).
    pub fn credentials_verified(&self) -> u64 {
        self.auth.verifications()
    }

    /// The caller of a control-plane operation, from its call's metadata.
    pub(super) async fn caller(&self, call: &Call) -> CatalogResult<Option<Principal>> {
        self.authenticate(&call.credentials).await
    }

    /// A warehouse's project.
    async fn project_of(&self, warehouse: &str) -> CatalogResult<String> {
        // A warehouse being created: its project is the resource asked about.
        Ok(self
            .warehouse_project(warehouse)
            .await
            .unwrap_or_else(|_| DEFAULT_PROJECT.to_string()))
    }

    /// The resource of `access` and everything above it, nearest first, as
    /// Cedar entities and as grant keys. Namespaces and tables are keyed by
    /// their real ids (the object the access is about, see [`ObjectRef`],
    /// and the namespaces standing above it now): a level with no object,
    /// or one not given an id yet, holds no grants.
    pub(super) async fn chain(
        &self,
        access: &Access,
    ) -> CatalogResult<(Chain, Vec<String>, Option<String>)> {
        let mut head = None;
        let mut chain: Vec<(&'static str, String)> = Vec::new();
        let mut keys = Vec::new();
        let id = &access.id;
        let warehouse = access
            .warehouse
            .clone()
            .unwrap_or_else(|| DEFAULT_WAREHOUSE.to_string());
        let warehouse_level =
            |chain: &mut Vec<(&'static str, String)>, keys: &mut Vec<String>, w: &str, p: &str| {
                chain.push(("Warehouse", w.to_string()));
                keys.push(key("warehouse", &[w.to_string()]));
                chain.push(("Project", p.to_string()));
                keys.push(key("project", &[p.to_string()]));
            };
        match access.kind {
            // A user, a key, a session or a task key is the server's: only
            // the server level above it holds grants on it.
            Kind::Server | Kind::User | Kind::ApiKey | Kind::Session | Kind::Task => {}
            Kind::Project => {
                let p = id.first().cloned().unwrap_or_default();
                chain.push(("Project", p.clone()));
                keys.push(key("project", &[p]));
            }
            Kind::Warehouse => {
                let w = id.first().cloned().unwrap_or_default();
                let p = self.project_of(&w).await?;
                warehouse_level(&mut chain, &mut keys, &w, &p);
            }
            kind @ (Kind::Namespace | Kind::Table) => {
                // Nearest first: the object itself, then each namespace.
                let mut levels: Vec<(&'static str, Vec<String>)> = Vec::new();
                let namespaces = match kind {
                    Kind::Table => {
                        levels.push((Kind::Table.as_str(), id.clone()));
                        &id[..id.len().saturating_sub(1)]
                    }
                    _ => &id[..],
                };
                for n in (1..=namespaces.len()).rev() {
                    levels.push(("namespace", namespaces[..n].to_vec()));
                }
                let reals = self.reals(&warehouse, access, &levels).await?;
                head = reals.first().cloned().flatten();
                for ((level_kind, level_id), real) in levels.iter().zip(reals) {
                    let entity = match *level_kind {
                        "table" => "Table",
                        _ => "Namespace",
                    };
                    chain.push((entity, level_id.join("/")));
                    if let Some(real) = real {
                        keys.push(object_key(level_kind, Some(&warehouse), &real));
                    }
                }
                let p = self.project_of(&warehouse).await?;
                warehouse_level(&mut chain, &mut keys, &warehouse, &p);
            }
        }
        chain.push(("Server", "server".to_string()));
        keys.push(key("server", &[]));
        Ok((Chain(chain), keys, head))
    }

    /// The real ids of a chain's levels (the access's own object first):
    /// what the access names for its own object, the namespaces standing
    /// now for the rest.
    async fn reals(
        &self,
        warehouse: &str,
        access: &Access,
        levels: &[(&'static str, Vec<String>)],
    ) -> CatalogResult<Vec<Option<String>>> {
        let own = match &access.object {
            ObjectRef::Known(real) => Some(Some(real.clone())),
            ObjectRef::Absent => Some(None),
            ObjectRef::Standing => None,
        };
        let lookup: Vec<(&str, Vec<String>)> = levels
            .iter()
            .skip(usize::from(own.is_some()))
            .map(|(k, id)| (*k, id.clone()))
            .collect();
        let mut found = match lookup.is_empty() {
            true => Vec::new(),
            false => self.catalog(warehouse).await?.object_ids(&lookup).await?,
        };
        if let Some(own) = own {
            if !levels.is_empty() {
                found.insert(0, own);
            }
        }
        Ok(found)
    }

    /// Whether the caller may: Cedar decides when authentication is
    /// required (from the grants on the resource's chain and the policy
    /// files), then the pluggable authorizer. A refusal is audited.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn authorize(&self, access: &Access) -> CatalogResult<()> {
        self.check(access).await.map(|_| ())
    }

    /// Authorize, and keep the real id of the object the access is about
    /// as the check found it (one lookup for both).
    pub(super) async fn authorize_bound(&self, access: &mut Access) -> CatalogResult<()> {
        if let Some(real) = self.check(access).await? {
            if access.object == ObjectRef::Standing {
                access.object = ObjectRef::Known(real);
            }
        }
        Ok(())
    }

    /// [`authorize`](Self::authorize), answering the real id of the
    /// access's own object when the check looked it up.
    async fn check(&self, access: &Access) -> CatalogResult<Option<String>> {
        if self.auth.required() && access.principal.is_none() {
            return Err(unauthenticated("authentication required"));
        }
        let (decided, real) = self.decide(access).await;
        if let Err(e) = decided {
            if e.code == crate::error::Code::PERMISSION_DENIED {
                let mut audited = access.clone();
                if let (ObjectRef::Standing, Some(real)) = (&access.object, &real) {
                    audited.object = ObjectRef::Known(real.clone());
                }
                match self.store_denial(access) {
                    true => {
                        self.registry
                            .audit(
                                &audited,
                                "denied",
                                Some(crate::error::Code::PERMISSION_DENIED),
                            )
                            .await
                    }
                    false => tracing::info!(
                        target: "lance_catalog::audit",
                        principal = access.principal.as_ref().map(|p| p.id.as_str()).unwrap_or(""),
                        action = access.action.action,
                        "denied (not stored: this principal's denials are over the minute's limit)"
                    ),
                }
            }
            return Err(e);
        }
        Ok(real)
    }

    /// Whether this denial goes to the event store: at most
    /// `DENIALS_PER_MINUTE` a principal, so a caller cannot fill the
    /// control root with its own refusals.
    fn store_denial(&self, access: &Access) -> bool {
        let who = access
            .principal
            .as_ref()
            .map(|p| p.id.clone())
            .unwrap_or_default();
        let Ok(mut seen) = self.denials.lock() else {
            return false;
        };
        if seen.len() > 10_000 {
            seen.retain(|_, (at, _)| at.elapsed() < MINUTE);
        }
        within_minute(&mut seen, &who, DENIALS_PER_MINUTE)
    }

    /// Whether an access would be allowed, unaudited (for filtering what
    /// a list shows).
    pub(super) async fn allowed(&self, access: &Access) -> CatalogResult<bool> {
        match self.decide(access).await.0 {
            Ok(()) => Ok(true),
            Err(e) if e.code == crate::error::Code::PERMISSION_DENIED => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Every authorizer's decision (the first refusal wins), and the real
    /// id of the access's own object when its chain was looked up.
    async fn decide(&self, access: &Access) -> (CatalogResult<()>, Option<String>) {
        let mut real = None;
        let mut facts = None;
        // A task key's scope is checked whatever the authorizers are.
        let scoped = access.principal.as_ref().is_some_and(|p| p.task.is_some());
        let wanted = scoped || self.authorizers.iter().any(|a| a.needs_facts());
        if let Some(p) = access.principal.as_ref().filter(|_| wanted) {
            let (chain, keys, head) = match self.chain(access).await {
                Ok(found) => found,
                Err(e) => return (Err(e), None),
            };
            real = head;
            let grants = match self.registry.grants_cached(&self.grants).await {
                Ok(g) => g,
                Err(e) => return (Err(e), real),
            };
            let relations = match &p.task {
                Some(scope) => match self.task_relations(scope, access, &keys).await {
                    Ok(r) => r,
                    Err(e) => return (Err(e), real),
                },
                None => relations(&grants, p, &keys),
            };
            facts = Some(Facts { chain, relations });
        }
        for authorizer in &self.authorizers {
            if let Err(e) = authorizer.authorize(access, facts.as_ref()).await {
                return (Err(e), real);
            }
        }
        (Ok(()), real)
    }

    /// Record a mutation that succeeded.
    pub(in crate::governance) async fn succeeded(&self, access: &Access) {
        self.registry.audit(access, "succeeded", None).await;
        self.hooks.event(access).await;
    }

    /// Grants follow what a write did to their object: a drop that
    /// destroys it (no trash) ends them, a rename renames them. A drop
    /// into trash keeps them bound to the trashed object, for its undrop.
    pub(super) async fn grants_follow(&self, access: &Access) {
        self.forget_objects(&access.ended).await;
        let a = access.action;
        // A table's end is in `ended` (its real id); a project or a
        // warehouse is named by its id.
        let done = if a.ends_object && matches!(access.kind, Kind::Project | Kind::Warehouse) {
            self.registry
                .forget_grants_of(access.kind.as_str(), &access.id)
                .await
                .map(|_| ())
        } else if let (true, Some(to), Some(real)) =
            (a.moves(), &access.moved_to, access.object.known())
        {
            self.registry.rename_grants(real, to).await
        } else {
            return;
        };
        if let Err(e) = done {
            tracing::warn!(action = access.action.action, id = ?access.id, error = %e.message, "grants did not follow the write");
        }
        self.grants.invalidate().await;
    }

    /// The grants of destroyed objects (a namespace dropped with what was
    /// in it, purged trash) end.
    pub(in crate::governance) async fn forget_objects(&self, reals: &[String]) {
        if reals.is_empty() {
            return;
        }
        if let Err(e) = self.registry.forget_object_policies(reals).await {
            tracing::warn!(error = %e.message, "maintenance policy records of destroyed objects stay (they reach nothing)");
        }
        if let Err(e) = self.registry.forget_object_grants(reals).await {
            tracing::warn!(error = %e.message, "grants of destroyed objects stay (they reach nothing)");
        }
        self.grants.invalidate().await;
    }

    /// Ownership on create: the creator becomes admin of what it created
    /// (and of nothing above it). A namespace's or table's grant names the
    /// real id minted for it, so it reaches that object and no other.
    pub(super) async fn own(&self, access: &Access) {
        let Some(p) = access.principal.as_ref().filter(|_| self.auth.required()) else {
            return;
        };
        let resources: Vec<GrantResource> = match access.kind {
            Kind::Namespace | Kind::Table => access
                .minted
                .iter()
                .map(|(id, real)| GrantResource {
                    kind: access.kind.to_string(),
                    id: id.clone(),
                    warehouse: access.warehouse.clone(),
                    object_id: Some(real.clone()),
                })
                .collect(),
            kind => vec![GrantResource {
                kind: kind.as_str().to_string(),
                id: access.id.clone(),
                ..Default::default()
            }],
        };
        for resource in resources {
            match self
                .registry
                .grant(
                    resource,
                    &p.id,
                    p.identity.user_uid(),
                    "admin",
                    Some(p.id.clone()),
                )
                .await
            {
                Ok(_) => self.grants.invalidate().await,
                Err(e) => {
                    tracing::warn!(principal = %p.id, error = %e.message, "the creator's ownership grant was not recorded")
                }
            }
        }
    }
}
