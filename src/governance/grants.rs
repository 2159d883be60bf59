//! Grants: `admin`, `writer` or `reader` on a server, project, warehouse,
//! namespace or table, for a principal or a group (`group:<name>`),
//! inherited downward. Records on the control root, cached briefly in
//! memory (this process's changes take effect at once), and fed to Cedar
//! as the relations a principal holds on a resource's chain.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::models::{Grant, GrantResource};
use super::registry::{now_ms, Registry};
use crate::auth::Principal;
use crate::error::{CatalogError, CatalogResult, Code};

const GRANT: &str = "grant";
pub(super) const RELATIONS: &[&str] = &["admin", "writer", "reader", REGISTRAR];
/// The relation that lets its holder register bytes no table owns (besides
/// admins): see `register.rs`.
pub(super) const REGISTRAR: &str = "registrar";
pub(super) const KINDS: &[&str] = &["server", "project", "warehouse", "namespace", "table"];
const FRESH_FOR: Duration = Duration::from_secs(2);

/// The key of a server, project or warehouse: its kind and id.
pub(super) fn key(kind: &str, id: &[String]) -> String {
    format!("{kind}::{}", id.join("\u{1f}"))
}

/// The key of a namespace or table by its real id: a grant binds to the
/// object itself, never to a name another object can take. (Real ids are
/// unique; the warehouse only keeps keys apart for a reader.)
pub(super) fn object_key(kind: &str, warehouse: Option<&str>, real: &str) -> String {
    let w = warehouse.unwrap_or(super::models::DEFAULT_WAREHOUSE);
    format!("{kind}:{w}:@{real}")
}

/// A grant's resource's key. A namespace or table grant without a real id
/// (recorded before ids existed and bound to nothing since) matches no
/// chain: it fails closed.
pub(super) fn key_of(r: &GrantResource) -> String {
    match r.kind.as_str() {
        "namespace" | "table" => match &r.object_id {
            Some(real) => object_key(&r.kind, r.warehouse.as_deref(), real),
            None => format!("{}:unbound:{}", r.kind, r.id.join("\u{1f}")),
        },
        kind => key(kind, &r.id),
    }
}

/// Grants, cached.
#[derive(Debug, Default)]
pub struct GrantCache {
    all: tokio::sync::Mutex<Option<(Vec<Grant>, Instant)>>,
}

impl GrantCache {
    pub(super) async fn invalidate(&self) {
        *self.all.lock().await = None;
    }
}

fn check(g: &GrantResource, relation: &str, principal: &str) -> CatalogResult<()> {
    if !KINDS.contains(&g.kind.as_str()) {
        return Err(CatalogError::invalid(format!(
            "resource kind {:?} is not one of {KINDS:?}",
            g.kind
        )));
    }
    let want = match g.kind.as_str() {
        "server" => Some(0),
        "project" | "warehouse" => Some(1),
        _ => None,
    };
    let ok = match want {
        Some(n) => g.id.len() == n,
        None => !g.id.is_empty() && g.id.iter().all(|s| !s.is_empty()),
    };
    if !ok {
        return Err(CatalogError::invalid(format!(
            "a {} grant's resource id {:?} has the wrong shape",
            g.kind, g.id
        )));
    }
    if matches!(g.kind.as_str(), "namespace" | "table") && g.object_id.is_none() {
        return Err(CatalogError::internal(format!(
            "a {} grant must name its object's real id",
            g.kind
        )));
    }
    if relation == REGISTRAR && matches!(g.kind.as_str(), "namespace" | "table") {
        return Err(CatalogError::invalid(
            "relation \"registrar\" is held on a server, a project or a warehouse: registering existing bytes is decided there",
        ));
    }
    if !RELATIONS.contains(&relation) {
        return Err(CatalogError::invalid(format!(
            "relation {relation:?} is not one of {RELATIONS:?}"
        )));
    }
    if principal.trim().is_empty() || principal.len() > 256 {
        return Err(CatalogError::invalid(
            "a grant needs a principal of 1-256 characters",
        ));
    }
    Ok(())
}

impl Registry {
    /// Record a grant; the same grant twice is answered as it stands.
    /// `uid`: the local user `principal` names (see [`Grant::principal_uid`]).
    pub async fn grant(
        &self,
        resource: GrantResource,
        principal: &str,
        uid: Option<&str>,
        relation: &str,
        granted_by: Option<String>,
    ) -> CatalogResult<Grant> {
        check(&resource, relation, principal)?;
        let mut h = Sha256::new();
        h.update(key_of(&resource).as_bytes());
        h.update([0u8]);
        h.update(principal.as_bytes());
        h.update([0u8]);
        h.update(relation.as_bytes());
        if let Some(uid) = uid {
            // Another user under the name gets another grant.
            h.update([0u8]);
            h.update(uid.as_bytes());
        }
        let grant_id: String = h.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let grant = Grant {
            grant_id: grant_id.clone(),
            resource,
            principal: principal.to_string(),
            principal_uid: uid.map(str::to_string),
            relation: relation.to_string(),
            created_at_ms: now_ms(),
            granted_by,
        };
        match self
            .records
            .create(GRANT, &grant_id, &grant, Code::CONCURRENT_MODIFICATION)
            .await
        {
            Ok(made) => Ok(made.value),
            Err(e) if e.code == Code::CONCURRENT_MODIFICATION => self.grant_record(&grant_id).await,
            Err(e) => Err(e),
        }
    }

    pub async fn grant_record(&self, grant_id: &str) -> CatalogResult<Grant> {
        self.records
            .get::<Grant>(GRANT, grant_id)
            .await?
            .map(|v| v.value)
            .ok_or_else(|| {
                CatalogError::new(
                    Code::GRANT_NOT_FOUND,
                    format!("grant {grant_id:?} does not exist"),
                )
            })
    }

    pub async fn revoke_grant(&self, grant_id: &str) -> CatalogResult<()> {
        match self
            .records
            .delete(GRANT, grant_id, |_: &Grant| Ok(()))
            .await?
        {
            true => Ok(()),
            false => Err(CatalogError::new(
                Code::GRANT_NOT_FOUND,
                format!("grant {grant_id:?} does not exist"),
            )),
        }
    }

    pub async fn all_grants(&self) -> CatalogResult<Vec<Grant>> {
        let mut out = Vec::new();
        for id in self.records.ids::<Grant>(GRANT).await? {
            if let Some(g) = self.records.get::<Grant>(GRANT, &id).await? {
                out.push(g.value);
            }
        }
        Ok(out)
    }

    /// Every grant, from the cache when it is fresh.
    pub async fn grants_cached(&self, cache: &GrantCache) -> CatalogResult<Vec<Grant>> {
        let mut all = cache.all.lock().await;
        if let Some((grants, at)) = all.as_ref() {
            if at.elapsed() < FRESH_FOR {
                return Ok(grants.clone());
            }
        }
        let grants = self.all_grants().await?;
        *all = Some((grants.clone(), Instant::now()));
        Ok(grants)
    }
}

impl Registry {
    /// Grants die with what they are on: every grant on one of the
    /// objects `reals` (real ids of destroyed namespaces and tables).
    pub(super) async fn forget_object_grants(&self, reals: &[String]) -> CatalogResult<usize> {
        if reals.is_empty() {
            return Ok(0);
        }
        let mut n = 0;
        for g in self.all_grants().await? {
            let hit = g
                .resource
                .object_id
                .as_ref()
                .is_some_and(|r| reals.contains(r));
            if hit && self.revoke_grant(&g.grant_id).await.is_ok() {
                n += 1;
            }
        }
        Ok(n)
    }

    /// A deleted local user's grants: those bound to it (its groups'
    /// stay theirs, and grants to the name without a uid are the other
    /// principals' of that name). A user made later under the name holds
    /// none of them in any case: it has another uid.
    pub(super) async fn forget_grants_to(
        &self,
        principal: &str,
        uid: &str,
    ) -> CatalogResult<usize> {
        let mut n = 0;
        for g in self.all_grants().await? {
            if g.principal == principal
                && g.principal_uid.as_deref() == Some(uid)
                && self.revoke_grant(&g.grant_id).await.is_ok()
            {
                n += 1;
            }
        }
        Ok(n)
    }

    /// A deleted project's or warehouse's own grants.
    pub(super) async fn forget_grants_of(&self, kind: &str, id: &[String]) -> CatalogResult<usize> {
        let mut n = 0;
        for g in self.all_grants().await? {
            if g.resource.kind == kind
                && g.resource.id == id
                && self.revoke_grant(&g.grant_id).await.is_ok()
            {
                n += 1;
            }
        }
        Ok(n)
    }

    /// A renamed table's grants name it by its new id (they are bound to
    /// its real id, so they applied already; this keeps answers readable).
    pub(super) async fn rename_grants(&self, real: &str, to: &[String]) -> CatalogResult<()> {
        for g in self.all_grants().await? {
            if g.resource.object_id.as_deref() != Some(real) || g.resource.id == to {
                continue;
            }
            let to = to.to_vec();
            let renamed = self
                .records
                .update(GRANT, &g.grant_id, Code::GRANT_NOT_FOUND, |mut g: Grant| {
                    g.resource.id = to.clone();
                    Ok(g)
                })
                .await;
            match renamed {
                Ok(_) => {}
                Err(e) if e.code == Code::GRANT_NOT_FOUND => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Replace a grant recorded under another id by the same grant under
    /// `resource` (binding a grant made before real ids existed).
    pub(super) async fn rebind_grant(
        &self,
        old: &Grant,
        resource: GrantResource,
    ) -> CatalogResult<Grant> {
        let made = self
            .grant(
                resource,
                &old.principal,
                old.principal_uid.as_deref(),
                &old.relation,
                old.granted_by.clone(),
            )
            .await?;
        if made.grant_id != old.grant_id {
            self.revoke_grant(&old.grant_id).await?;
        }
        Ok(made)
    }
}

/// The relations `principal` holds on any of `keys` (a resource's chain).
pub(super) fn relations(
    grants: &[Grant],
    principal: &Principal,
    keys: &[String],
) -> HashSet<String> {
    let groups: HashSet<String> = principal
        .groups
        .iter()
        .map(|g| format!("group:{g}"))
        .collect();
    grants
        .iter()
        .filter(|g| groups.contains(&g.principal) || holds(g, principal))
        .filter(|g| keys.contains(&key_of(&g.resource)))
        .map(|g| g.relation.clone())
        .collect()
}

/// Whether `principal` itself holds grant `g`: by name, and by identity
/// where the grant is bound to a local user. A local user holds only the
/// grants bound to its own uid; the other principals of a name (keys,
/// tokens) only those bound to no user. So a user deleted and made again
/// holds nothing of the old one's, on any replica, however old its cache.
pub(super) fn holds(g: &Grant, principal: &Principal) -> bool {
    g.principal == principal.id && g.principal_uid.as_deref() == principal.identity.user_uid()
}
