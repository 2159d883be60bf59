//! A warehouse's top-level namespaces: the door that creates one bound to its warehouse, and their listing.

use super::prelude::*;
use crate::api::kind::Kind;

impl Plane<'_> {
    pub(super) async fn create_warehouse_namespace(
        &self,
        request: CreateWarehouseNamespaceRequest,
    ) -> CatalogResult<WarehouseNamespace> {
        self.call_as(self.call, async |_| {
            if !self.warehouses && request.warehouse_id != DEFAULT_WAREHOUSE {
                return Err(CatalogError::invalid(
                    "warehouses are off on this server (--warehouses on): every namespace lives in the default warehouse",
                ));
            }
            let spec = CreateNamespaceRequest {
                id: Some(vec![request.namespace.clone()]),
                properties: request.properties.clone(),
                mode: request.mode.clone(),
                ..Default::default()
            };
            let made = if self.warehouses {
                self.create_bound(self.call, Some(&request.warehouse_id), spec)
                    .await?
            } else {
                let mut spec = spec;
                // The caller's credentials travel with the spec request.
                let creds = self.call.credentials.clone();
                spec.identity = Some(Box::new(lance_namespace::models::Identity {
                    api_key: creds.api_key,
                    auth_token: creds.auth_token,
                }));
                self.create_namespace(spec).await?
            };
            Ok(WarehouseNamespace {
                warehouse_id: request.warehouse_id.clone(),
                namespace: request.namespace.clone(),
                properties: made.properties.unwrap_or_default(),
            })
        })
        .await
    }

    pub(super) async fn list_warehouse_namespaces(
        &self,
        request: ListWarehouseNamespacesRequest,
    ) -> CatalogResult<ListWarehouseNamespacesResponse> {
        let id = one(&request.warehouse_id);
        let action = &op::ListWarehouseNamespaces;
        self.gov
            .call_control(self.call, action, Kind::Warehouse, id, async |_| {
                self.warehouse(&request.warehouse_id).await?;
                let names = match self.warehouses {
                    true => self.registry.namespaces_of(&request.warehouse_id).await?,
                    false => crate::governance::spec::root_namespaces(&self.home).await?,
                };
                let (namespaces, page_token) = crate::api::page::page(
                    &names,
                    request.page_token.as_deref(),
                    request.limit,
                    CONTROL,
                )?;
                Ok(ListWarehouseNamespacesResponse {
                    namespaces,
                    page_token,
                })
            })
            .await
    }
}
