//! Which object a request is about. Grants bind to real ids (see
//! `core/object_ids.rs`), so the governance layer mints the id of what a
//! create makes before the core writes it (the creator's ownership then
//! names that very object), looks up the id of what a request names, and
//! binds grants recorded before ids existed to the objects standing under
//! their names.

use crate::api::op;

use crate::api::kind::Kind;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::governance::guard::{Access, ObjectRef};
use crate::governance::models::Grant;
use crate::governance::{Governance, Route, DEFAULT_WAREHOUSE};

impl Governance {
    /// The object standing at an access's id now, looked up once, so that
    /// its authorization, what its write does to grants and its audit
    /// event all name the same object.
    pub(super) async fn standing(
        &self,
        route: &Route,
        access: &Access,
    ) -> CatalogResult<ObjectRef> {
        if !access.kind.in_tree() || access.id.is_empty() {
            return Ok(ObjectRef::Standing);
        }
        let found = route
            .catalog
            .object_ids(&[(access.kind.as_str(), access.id.clone())])
            .await?
            .remove(0);
        Ok(match found {
            Some(real) => ObjectRef::Known(real),
            None => ObjectRef::Standing,
        })
    }

    /// Authorize `access` and know which object it is about: the check
    /// looks it up when it consults grants; without authentication a
    /// write still needs it (what it does to grants, its audit event),
    /// a read does not.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn authorize_object(
        &self,
        route: &Route,
        access: &mut Access,
    ) -> CatalogResult<()> {
        self.authorize_bound(access).await?;
        if access.object == ObjectRef::Standing && !self.auth.required() && !access.action.reads() {
            access.object = self.standing(route, access).await?;
        }
        Ok(())
    }

    /// A missing parent (a namespace, a warehouse or project, or a rename's
    /// missing source) is told
    /// only to a caller who may see where it would be: to anyone else the
    /// answer is the refusal it would get were it there, so that no caller
    /// learns what lies where it may not look.
    pub(super) async fn hidden(
        &self,
        missing: CatalogError,
        access: &Access,
        probe_kind: Kind,
        probe_id: Vec<String>,
    ) -> CatalogError {
        if !self.auth.required() {
            return missing;
        }
        let probe = Access {
            action: match probe_kind {
                Kind::Table => &op::DescribeTable,
                Kind::Warehouse => &op::DescribeWarehouse,
                Kind::Project => &op::DescribeProject,
                _ => &op::DescribeNamespace,
            },
            warehouse: match probe_kind {
                Kind::Warehouse => probe_id.first().cloned(),
                Kind::Project => None,
                _ => access.warehouse.clone(),
            },
            kind: probe_kind,
            id: probe_id,
            object: ObjectRef::Standing,
            ..access.clone()
        };
        if self.allowed(&probe).await.unwrap_or(false) {
            return missing;
        }
        match self.authorize(access).await {
            Err(e) => e,
            Ok(()) => missing,
        }
    }

    /// Bind grants recorded before real ids existed: each namespace or
    /// table grant without one is bound to the object standing under its
    /// name now, or to the newest trashed one of that name. What finds
    /// neither stays unbound and reaches nothing (logged).
    pub(in crate::governance) async fn bind_unbound_grants(&self) -> CatalogResult<()> {
        let unbound: Vec<Grant> = self
            .registry
            .all_grants()
            .await?
            .into_iter()
            .filter(|g| {
                matches!(g.resource.kind.as_str(), "namespace" | "table")
                    && g.resource.object_id.is_none()
            })
            .collect();
        for g in unbound {
            match self.bind_one(&g).await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::warn!(grant = %g.grant_id, kind = %g.resource.kind, id = ?g.resource.id, "a grant made before real ids names nothing that stands or is in trash: it reaches nothing")
                }
                Err(e) => {
                    tracing::warn!(grant = %g.grant_id, error = %e.message, "a grant made before real ids could not be bound now; it reaches nothing until it is")
                }
            }
        }
        self.grants.invalidate().await;
        Ok(())
    }

    async fn bind_one(&self, g: &Grant) -> CatalogResult<bool> {
        let kind: &'static str = match g.resource.kind.as_str() {
            "table" => "table",
            _ => "namespace",
        };
        let warehouse = g
            .resource
            .warehouse
            .clone()
            .unwrap_or_else(|| DEFAULT_WAREHOUSE.to_string());
        let catalog = match self.catalog(&warehouse).await {
            Ok(c) => c,
            Err(e) if e.code == Code::WAREHOUSE_NOT_FOUND => return Ok(false),
            Err(e) => return Err(e),
        };
        let standing = match catalog.assign_object_id(kind, &g.resource.id).await {
            Ok(real) => Some(real),
            Err(e) if matches!(e.code, Code::TABLE_NOT_FOUND | Code::NAMESPACE_NOT_FOUND) => None,
            Err(e) => return Err(e),
        };
        let real = match standing {
            Some(real) => Some(real),
            None => catalog
                .trash_entries()
                .await?
                .into_iter()
                .rev()
                .filter(|e| e.kind == kind && e.id == g.resource.id)
                .find_map(|e| e.object_id().map(str::to_string)),
        };
        let Some(real) = real else { return Ok(false) };
        let mut resource = g.resource.clone();
        resource.warehouse = Some(warehouse);
        resource.object_id = Some(real);
        self.registry.rebind_grant(g, resource).await?;
        Ok(true)
    }
}
