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
pub(super) const RELATIONS: &[&str] = &["admin", "writer", "reader"];
pub(super) const KINDS: &[&str] = &["server", "project", "warehouse", "namespace", "table"];
const FRESH_FOR: Duration = Duration::from_secs(2);

/// A resource's key: its kind, its warehouse (namespaces and tables: the
/// same id names different objects in different warehouses) and its id.
pub(super) fn key(kind: &str, warehouse: Option<&str>, id: &[String]) -> String {
    let w = match kind {
        "namespace" | "table" => warehouse.unwrap_or(super::router::DEFAULT_WAREHOUSE),
        _ => "",
    };
    format!("{kind}:{w}:{}", id.join("\u{1f}"))
}

/// A grant's resource's key.
pub(super) fn key_of(r: &GrantResource) -> String {
    key(&r.kind, r.warehouse.as_deref(), &r.id)
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
    pub async fn grant(
        &self,
        resource: GrantResource,
        principal: &str,
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
        let grant_id: String = h.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let grant = Grant {
            grant_id: grant_id.clone(),
            resource,
            principal: principal.to_string(),
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
    /// Grants die with what they are on: a dropped table's, or everything
    /// under a dropped namespace. A table made later under the same name
    /// starts with none of them.
    pub(super) async fn forget_grants(
        &self,
        kind: &str,
        warehouse: Option<&str>,
        id: &[String],
    ) -> CatalogResult<usize> {
        let mut n = 0;
        let here = |r: &GrantResource| {
            r.warehouse
                .as_deref()
                .unwrap_or(super::router::DEFAULT_WAREHOUSE)
                == warehouse.unwrap_or(super::router::DEFAULT_WAREHOUSE)
        };
        for g in self.all_grants().await? {
            let r = &g.resource;
            let hit = match kind {
                "table" => r.kind == "table" && r.id == id && here(r),
                "namespace" => {
                    matches!(r.kind.as_str(), "namespace" | "table")
                        && !id.is_empty()
                        && r.id.starts_with(id)
                        && here(r)
                }
                // A project or warehouse: its own grants.
                other => r.kind == other && r.id == id,
            };
            if hit && self.revoke_grant(&g.grant_id).await.is_ok() {
                n += 1;
            }
        }
        Ok(n)
    }

    /// A renamed table keeps its grants under its new id.
    pub(super) async fn move_grants(
        &self,
        warehouse: Option<&str>,
        from: &[String],
        to: &[String],
    ) -> CatalogResult<()> {
        let key_from = key("table", warehouse, from);
        for g in self.all_grants().await? {
            if key_of(&g.resource) == key_from {
                let resource = GrantResource {
                    kind: "table".into(),
                    id: to.to_vec(),
                    warehouse: g.resource.warehouse.clone(),
                };
                self.grant(resource, &g.principal, &g.relation, g.granted_by.clone())
                    .await?;
                self.revoke_grant(&g.grant_id).await?;
            }
        }
        Ok(())
    }
}

/// The relations `principal` holds on any of `keys` (a resource's chain).
pub(super) fn relations(
    grants: &[Grant],
    principal: &Principal,
    keys: &[String],
) -> HashSet<String> {
    let holders: HashSet<String> = std::iter::once(principal.id.clone())
        .chain(principal.groups.iter().map(|g| format!("group:{g}")))
        .collect();
    grants
        .iter()
        .filter(|g| holders.contains(&g.principal))
        .filter(|g| keys.contains(&key_of(&g.resource)))
        .map(|g| g.relation.clone())
        .collect()
}
