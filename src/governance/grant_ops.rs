//! Grant management (create, list, revoke), each authorized on the
//! resource the grant names, in that resource's own warehouse.

use lance_namespace::LanceNamespace;

use super::models::*;
use super::registry::page_items;
use super::router::{Governance, DEFAULT_PROJECT};
use crate::error::{CatalogError, CatalogResult};

impl Governance {
    /// What a grant is on: its kind as the authorizer names it and, for a
    /// namespace or table, its warehouse (from its binding when the
    /// request leaves it out). `must_exist`: a grant names something that
    /// stands (a grant made in advance would reach whatever is created
    /// under that name later).
    pub(super) async fn grant_target(
        &self,
        resource: &mut GrantResource,
        must_exist: bool,
    ) -> CatalogResult<(&'static str, Option<String>)> {
        let kind = grant_kind(&resource.kind)?;
        let missing =
            |what: String| CatalogError::invalid(format!("a grant's {what} does not exist"));
        match kind {
            "server" => {
                resource.id.clear();
                Ok((kind, None))
            }
            "project" | "warehouse" => {
                let id = resource.id.first().cloned().unwrap_or_default();
                if must_exist {
                    let found = match kind {
                        "project" => match id.as_str() {
                            DEFAULT_PROJECT => true,
                            _ => self.registry.project(&id).await.is_ok(),
                        },
                        _ => self.warehouse(&id).await.is_ok(),
                    };
                    if !found {
                        return Err(missing(format!("{kind} {id:?}")));
                    }
                }
                resource.warehouse = None;
                Ok((kind, None))
            }
            _ => {
                let op = if kind == "namespace" {
                    "describe_namespace"
                } else {
                    "describe_table"
                };
                let mut value = serde_json::json!({ "id": resource.id });
                if let Some(w) = &resource.warehouse {
                    value["context"] = serde_json::json!({ crate::core::reserved::WAREHOUSE: w });
                }
                let route = self.route(op, &value).await?;
                if must_exist {
                    let found = match kind {
                        "namespace" => route.catalog.namespace_present(&resource.id).await?,
                        _ => route
                            .catalog
                            .table_exists(lance_namespace::models::TableExistsRequest {
                                id: Some(resource.id.clone()),
                                ..Default::default()
                            })
                            .await
                            .is_ok(),
                    };
                    if !found {
                        return Err(missing(format!("{kind} {:?}", resource.id)));
                    }
                }
                resource.warehouse = Some(route.warehouse.clone());
                Ok((kind, Some(route.warehouse)))
            }
        }
    }

    pub(super) async fn create_grant_governed(
        &self,
        request: CreateGrantRequest,
    ) -> CatalogResult<Grant> {
        self.caller().await?;
        let mut resource = request.resource;
        let (kind, warehouse) = self.grant_target(&mut resource, true).await?;
        let access = self
            .control_at("create_grant", kind, resource.id.clone(), warehouse)
            .await?;
        let made = self
            .registry
            .grant(
                resource,
                &request.principal,
                &request.relation,
                access.principal.clone().map(|p| p.id),
            )
            .await?;
        self.grants.invalidate().await;
        self.succeeded(&access).await;
        Ok(made)
    }

    pub(super) async fn list_grants_governed(
        &self,
        request: ListGrantsRequest,
    ) -> CatalogResult<ListGrantsResponse> {
        let caller = self.caller().await?;
        let own = matches!((&caller, &request.principal), (Some(c), Some(p)) if c.id == *p);
        let mut wanted = None;
        if let Some(kind) = request.resource_kind.as_deref() {
            let mut resource = GrantResource {
                kind: kind.to_string(),
                id: request.resource_id.clone().unwrap_or_default(),
                warehouse: None,
            };
            let (kind, warehouse) = self.grant_target(&mut resource, false).await?;
            if !own {
                self.control_at("list_grants", kind, resource.id.clone(), warehouse)
                    .await?;
            }
            wanted = Some(super::grants::key_of(&resource));
        } else if !own {
            self.control("list_grants", "server", vec![]).await?;
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
                    .is_none_or(|w| *w == super::grants::key_of(&g.resource))
            })
            .collect();
        let (grants, page_token) = page_items(
            grants,
            |g| g.grant_id.clone(),
            request.page_token.as_deref(),
            request.limit,
        )?;
        Ok(ListGrantsResponse { grants, page_token })
    }

    pub(super) async fn revoke_grant_governed(
        &self,
        request: RevokeGrantRequest,
    ) -> CatalogResult<RevokeGrantResponse> {
        let caller = self.caller().await?;
        let grant = match self.registry.grant_record(&request.grant_id).await {
            Ok(g) => g,
            // Told only to whoever could manage every grant.
            Err(e) => {
                self.control("revoke_grant", "server", vec![]).await?;
                return Err(e);
            }
        };
        let _ = caller;
        let kind = grant_kind(&grant.resource.kind)?;
        let access = self
            .control_at(
                "revoke_grant",
                kind,
                grant.resource.id.clone(),
                grant.resource.warehouse.clone(),
            )
            .await?;
        self.registry.revoke_grant(&request.grant_id).await?;
        self.grants.invalidate().await;
        self.succeeded(&access).await;
        Ok(RevokeGrantResponse {
            grant_id: request.grant_id,
        })
    }
}

/// A grant resource kind as the authorizer names it.
pub(super) fn grant_kind(kind: &str) -> CatalogResult<&'static str> {
    super::grants::KINDS
        .iter()
        .find(|k| **k == kind)
        .copied()
        .ok_or_else(|| {
            CatalogError::invalid(format!(
                "resource kind {kind:?} is not one of {:?}",
                super::grants::KINDS
            ))
        })
}
