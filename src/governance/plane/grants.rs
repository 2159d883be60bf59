//! Grants: created, listed and revoked by their rules here (who may
//! grant on what, to whom), bound to real ids.

use crate::api::call::Call;
use crate::api::kind::Kind;
use crate::api::op;
use crate::api::page::{page_items, CONTROL};
use crate::api::OpDef;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::governance::guard::request::Named;
use crate::governance::guard::sight::Sight;
use crate::governance::guard::{Access, ObjectRef};
use crate::governance::models::*;
use crate::governance::{Governance, Route, DEFAULT_PROJECT};

impl Governance {
    /// What a grant is on: its kind as the authorizer names it, its
    /// warehouse (a namespace's or table's: from its binding when the
    /// request leaves it out) and, for a namespace or table, the object
    /// standing under that id now (the grant binds to it). A caller's own
    /// `object_id` is ignored.
    pub(in crate::governance) async fn grant_target(
        &self,
        resource: &mut GrantResource,
    ) -> CatalogResult<(Kind, Option<Route>, ObjectRef)> {
        let kind = grant_kind(&resource.kind)?;
        resource.object_id = None;
        match kind {
            Kind::Server => {
                resource.id.clear();
                Ok((kind, None, ObjectRef::Standing))
            }
            Kind::Project | Kind::Warehouse => {
                resource.warehouse = None;
                Ok((kind, None, ObjectRef::Standing))
            }
            _ => {
                let op = if kind == Kind::Namespace {
                    &op::DescribeNamespace
                } else {
                    &op::DescribeTable
                };
                let named = Named::in_warehouse(&resource.id, resource.warehouse.as_deref());
                let route = self.route(op, &named).await?;
                resource.warehouse = Some(route.warehouse.clone());
                let present = match kind {
                    Kind::Namespace => route.catalog.namespace_present(&resource.id).await?,
                    _ => route.catalog.table_present(&resource.id).await?,
                };
                let object = match present {
                    false => ObjectRef::Absent,
                    true => match route
                        .catalog
                        .object_ids(&[(kind.as_str(), resource.id.clone())])
                        .await?
                        .remove(0)
                    {
                        Some(real) => ObjectRef::Known(real),
                        None => ObjectRef::Standing,
                    },
                };
                Ok((kind, Some(route), object))
            }
        }
    }

    /// Whether a project or warehouse grant's resource stands.
    async fn registry_object_stands(&self, kind: Kind, id: &str) -> bool {
        match kind {
            Kind::Project => id == DEFAULT_PROJECT || self.registry.project(id).await.is_ok(),
            _ => self.warehouse(id).await.is_ok(),
        }
    }

    pub(in crate::governance) async fn create_grant_governed(
        &self,
        call: &Call,
        request: CreateGrantRequest,
    ) -> CatalogResult<Grant> {
        let grantee = (request.principal.clone(), request.relation.clone());
        let resolve = async move |sight: &Sight<'_>| {
            let mut resource = request.resource;
            let (kind, route, object) = self.grant_target(&mut resource).await?;
            let access = on_resource(&op::CreateGrant, kind, &resource, object.clone());
            // A grant names something that stands (one made in advance would
            // reach whatever is created under that name later); whether it
            // stands is told only to whoever could grant on it.
            let stands = match kind {
                Kind::Server => true,
                Kind::Project | Kind::Warehouse => {
                    let id = resource.id.first().cloned().unwrap_or_default();
                    resource.id.len() == 1 && self.registry_object_stands(kind, &id).await
                }
                _ => object != ObjectRef::Absent,
            };
            if !stands {
                let missing = CatalogError::invalid(format!(
                    "a grant's {kind} {:?} does not exist",
                    resource.id
                ));
                return Err(match sight.require(&access).await {
                    Err(e) => e,
                    Ok(()) => missing,
                });
            }
            Ok((access, (resource, route, object)))
        };
        self.call_on(
            call,
            resolve,
            async |access, (resource, route, object), _| {
                self.grant_bound(access, resource, route, object, (&grantee.0, &grantee.1))
                    .await
            },
        )
        .await
    }

    /// Record a grant on what `access` authorized, bound to its object.
    async fn grant_bound(
        &self,
        access: &mut Access,
        mut resource: GrantResource,
        route: Option<crate::governance::Route>,
        object: ObjectRef,
        (principal, relation): (&str, &str),
    ) -> CatalogResult<Grant> {
        let missing = || {
            CatalogError::invalid(format!(
                "a grant's {} {:?} does not exist",
                access.kind, resource.id
            ))
        };
        let kind = access.kind;
        if let Some(route) = route {
            // Bound to the object itself: given its real id now if it has
            // none yet (an object from before real ids).
            let real = match object {
                ObjectRef::Known(real) => real,
                _ => route
                    .catalog
                    .assign_object_id(kind.as_str(), &resource.id)
                    .await
                    .map_err(|e| match e.code {
                        Code::TABLE_NOT_FOUND | Code::NAMESPACE_NOT_FOUND => missing(),
                        _ => e,
                    })?,
            };
            resource.object_id = Some(real);
        }
        // A grant to a local user's name binds to that user (its uid).
        let uid = match principal.starts_with("group:") {
            true => None,
            false => self
                .auth
                .users()
                .identity_of(principal)
                .await?
                .and_then(|i| i.user_uid().map(str::to_string)),
        };
        let made = self
            .registry
            .grant(
                resource,
                principal,
                uid.as_deref(),
                relation,
                access.principal.clone().map(|p| p.id),
            )
            .await?;
        self.grants.invalidate().await;
        access.object = made
            .resource
            .object_id
            .clone()
            .map(ObjectRef::Known)
            .unwrap_or(ObjectRef::Standing);
        Ok(made)
    }

    pub(in crate::governance) async fn list_grants_governed(
        &self,
        call: &Call,
        request: ListGrantsRequest,
    ) -> CatalogResult<ListGrantsResponse> {
        self.call_as(call, async |sight| {
            let own = request.principal.as_deref().is_some_and(|p| sight.is(p));
            let mut wanted = None;
            if let Some(kind) = request.resource_kind.as_deref() {
                let mut resource = GrantResource {
                    kind: kind.to_string(),
                    id: request.resource_id.clone().unwrap_or_default(),
                    ..Default::default()
                };
                let (kind, _, object) = self.grant_target(&mut resource).await?;
                if !own {
                    let access = on_resource(&op::ListGrants, kind, &resource, object.clone());
                    sight.require(&access).await?;
                }
                // The grants on the object standing under that id now.
                resource.object_id = object.known().map(str::to_string);
                wanted = Some(crate::governance::grants::key_of(&resource));
            } else if !own {
                sight
                    .require(&sight.access(&op::ListGrants, Kind::Server, vec![]))
                    .await?;
            }
            let grants: Vec<Grant> = self
                .registry
                .all_grants()
                .await?
                .into_iter()
                .filter(|g| request.principal.as_ref().is_none_or(|p| *p == g.principal))
                .filter(|g| {
                    wanted
                        .as_ref()
                        .is_none_or(|w| *w == crate::governance::grants::key_of(&g.resource))
                })
                .collect();
            let (grants, page_token) = page_items(
                grants,
                |g| g.grant_id.clone(),
                request.page_token.as_deref(),
                request.limit,
                CONTROL,
            )?;
            Ok(ListGrantsResponse { grants, page_token })
        })
        .await
    }

    pub(in crate::governance) async fn revoke_grant_governed(
        &self,
        call: &Call,
        request: RevokeGrantRequest,
    ) -> CatalogResult<RevokeGrantResponse> {
        let resolve = async |sight: &Sight<'_>| {
            let grant = match self.registry.grant_record(&request.grant_id).await {
                Ok(g) => g,
                // Told only to whoever could manage every grant.
                Err(e) => return Err(sight.told_to_admin(e, &op::RevokeGrant).await),
            };
            let kind = grant_kind(&grant.resource.kind)?;
            // Authorized on the object the grant is bound to, wherever (and
            // whatever its name) it is now.
            let object = match (kind, &grant.resource.object_id) {
                (Kind::Namespace | Kind::Table, Some(real)) => ObjectRef::Known(real.clone()),
                (Kind::Namespace | Kind::Table, None) => ObjectRef::Absent,
                _ => ObjectRef::Standing,
            };
            Ok((
                on_resource(&op::RevokeGrant, kind, &grant.resource, object),
                (),
            ))
        };
        self.call_on(call, resolve, async |_, (), _| {
            self.registry.revoke_grant(&request.grant_id).await?;
            self.grants.invalidate().await;
            Ok(RevokeGrantResponse {
                grant_id: request.grant_id.clone(),
            })
        })
        .await
    }
}

/// The access of a grant operation on its resource.
fn on_resource(
    action: &'static OpDef,
    kind: Kind,
    resource: &GrantResource,
    object: ObjectRef,
) -> Access {
    Access {
        action,
        warehouse: match kind {
            Kind::Warehouse => resource.id.first().cloned(),
            _ => resource.warehouse.clone(),
        },
        kind,
        id: resource.id.clone(),
        object,
        ..Default::default()
    }
}

/// The kinds of object a grant may name.
const GRANTABLE: [Kind; 5] = [
    Kind::Server,
    Kind::Project,
    Kind::Warehouse,
    Kind::Namespace,
    Kind::Table,
];

/// A grant resource kind as the authorizer names it.
pub(in crate::governance) fn grant_kind(kind: &str) -> CatalogResult<Kind> {
    GRANTABLE
        .into_iter()
        .find(|k| k.as_str() == kind)
        .ok_or_else(|| {
            CatalogError::invalid(format!(
                "resource kind {kind:?} is not one of {:?}",
                crate::governance::grants::KINDS
            ))
        })
}

impl super::Plane<'_> {
    pub(super) async fn create_grant(&self, request: CreateGrantRequest) -> CatalogResult<Grant> {
        self.create_grant_governed(self.call, request).await
    }

    pub(super) async fn list_grants(
        &self,
        request: ListGrantsRequest,
    ) -> CatalogResult<ListGrantsResponse> {
        self.list_grants_governed(self.call, request).await
    }

    pub(super) async fn revoke_grant(
        &self,
        request: RevokeGrantRequest,
    ) -> CatalogResult<RevokeGrantResponse> {
        self.revoke_grant_governed(self.call, request).await
    }
}
