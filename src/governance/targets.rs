//! What a control-plane operation acts on: the resource a grant names
//! (and its warehouse), and the table or namespace whose protection
//! changes, each routed and authorized as the spec's operations are.

use lance_namespace::LanceNamespace;

use super::guard::Access;
use super::models::GrantResource;
use super::router::{Governance, DEFAULT_PROJECT};
use crate::auth::Principal;
use crate::error::{CatalogError, CatalogResult};

impl Governance {
    /// Authorize the caller for `action` on a control-plane resource.
    pub(super) async fn control(
        &self,
        action: &'static str,
        kind: &'static str,
        id: Vec<String>,
    ) -> CatalogResult<Access> {
        self.control_at(action, kind, id, None).await
    }

    /// The same, for a namespace or table of `warehouse`.
    pub(super) async fn control_at(
        &self,
        action: &'static str,
        kind: &'static str,
        id: Vec<String>,
        warehouse: Option<String>,
    ) -> CatalogResult<Access> {
        let principal = self.caller().await?;
        let warehouse = match kind {
            "warehouse" => id.first().cloned(),
            _ => warehouse,
        };
        let access = Access {
            principal,
            action,
            warehouse,
            kind,
            id,
            creates: false,
            moved_to: None,
        };
        self.authorize(&access).await?;
        Ok(access)
    }

    /// Whether the caller could do `action` on a resource (for filtering
    /// lists), without failing.
    pub(super) async fn may(
        &self,
        principal: &Option<Principal>,
        action: &'static str,
        kind: &'static str,
        id: Vec<String>,
    ) -> bool {
        let warehouse = (kind == "warehouse").then(|| id.first().cloned().unwrap_or_default());
        let access = Access {
            principal: principal.clone(),
            action,
            warehouse,
            kind,
            id,
            creates: false,
            moved_to: None,
        };
        self.allowed(&access).await.unwrap_or(false)
    }

    /// After a control-plane create: its creator owns it.
    pub(super) async fn created(
        &self,
        principal: Option<Principal>,
        action: &'static str,
        kind: &'static str,
        id: &str,
    ) {
        let access = Access {
            principal,
            action,
            warehouse: (kind == "warehouse").then(|| id.to_string()),
            kind,
            id: vec![id.to_string()],
            creates: true,
            moved_to: None,
        };
        self.own(&access).await;
        self.hooks.created(&access).await;
        self.succeeded(&access).await;
    }

    /// A principal may act on its own keys; anything else is the server
    /// admin's.
    pub(super) async fn own_or_admin(
        &self,
        action: &'static str,
        owner: Option<&str>,
    ) -> CatalogResult<Option<Principal>> {
        let caller = self.caller().await?;
        let own = match (&caller, owner) {
            (Some(c), Some(o)) => c.id == o,
            _ => false,
        };
        if !own {
            self.control(action, "server", vec![]).await?;
        }
        Ok(caller)
    }
}

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

    /// Route and authorize a protection change of a table or namespace.
    pub(super) async fn protection_route(
        &self,
        op: &'static str,
        id: &[String],
    ) -> CatalogResult<(super::Route, Access)> {
        let principal = self.caller().await?;
        let value = serde_json::json!({ "id": id });
        let route = self.route(op, &value).await?;
        let mut access = super::router::access(op, &route.warehouse, &value);
        access.principal = principal;
        self.authorize(&access).await?;
        Ok((self.for_write(op, route).await?, access))
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
