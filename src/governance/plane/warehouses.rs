//! Warehouses: a storage root each, in a project; the built-in default follows `--root`.

use super::prelude::*;
use crate::api::kind::Kind;

impl Plane<'_> {
    pub(super) async fn create_warehouse(
        &self,
        request: CreateWarehouseRequest,
    ) -> CatalogResult<Warehouse> {
        let project = one(&request.project_id);
        let resolve = async |sight: &Sight<'_>| {
            crate::records::check_id("warehouse", &request.warehouse_id)?;
            if request.warehouse_id == DEFAULT_WAREHOUSE {
                return Err(CatalogError::new(
                    Code::WAREHOUSE_ALREADY_EXISTS,
                    "warehouse \"default\" is built in: it is the server's --root",
                ));
            }
            let access = sight.access(&op::CreateWarehouse, Kind::Project, project.clone());
            match self.registry.project(&request.project_id).await {
                Ok(_) => Ok((access, ())),
                Err(e) => Err(sight
                    .hidden(e, &access, Kind::Project, project.clone())
                    .await),
            }
        };
        self.gov
            .call_on(self.call, resolve, async |access, (), _| {
                let mut request = request.clone();
                request.root = self.check_root(&request.root).await?;
                let options = request.storage_options.clone().unwrap_or_default().into();
                crate::core::probe_root(&request.root, &options).await?;
                let made = self.registry.create_warehouse(request).await?;
                access.made(Kind::Warehouse, &made.warehouse_id);
                Ok(made)
            })
            .await
    }

    pub(super) async fn list_warehouses(
        &self,
        request: ListWarehousesRequest,
    ) -> CatalogResult<ListWarehousesResponse> {
        self.call_as(self.call, async |sight| {
            let scope_ok = match request.project_id.as_deref() {
                Some(p) => sight.may(&op::ListWarehouses, Kind::Project, one(p)).await,
                None => sight.may(&op::ListWarehouses, Kind::Server, vec![]).await,
            };
            if !self.auth.required() || scope_ok {
                return self.registry.list_warehouses(request).await;
            }
            let mut visible = Vec::new();
            for w in self
                .registry
                .all_warehouses(request.project_id.as_deref())
                .await?
            {
                let id = one(&w.warehouse_id);
                if sight.may(&op::DescribeWarehouse, Kind::Warehouse, id).await {
                    visible.push(w);
                }
            }
            let (warehouses, page_token) = page_items(
                visible,
                |w| w.warehouse_id.clone(),
                request.page_token.as_deref(),
                request.limit,
                CONTROL,
            )?;
            Ok(ListWarehousesResponse {
                warehouses,
                page_token,
            })
        })
        .await
    }

    pub(super) async fn describe_warehouse(
        &self,
        request: DescribeWarehouseRequest,
    ) -> CatalogResult<Warehouse> {
        let id = one(&request.warehouse_id);
        self.gov
            .call_control(
                self.call,
                &op::DescribeWarehouse,
                Kind::Warehouse,
                id,
                async |_| Ok(self.warehouse(&request.warehouse_id).await?.redacted()),
            )
            .await
    }

    pub(super) async fn update_warehouse(
        &self,
        request: UpdateWarehouseRequest,
    ) -> CatalogResult<Warehouse> {
        let id = one(&request.warehouse_id);
        self.gov
            .call_control(
                self.call,
                &op::UpdateWarehouse,
                Kind::Warehouse,
                id,
                async |_| {
                    if request.warehouse_id == DEFAULT_WAREHOUSE {
                        return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
                    }
                    let vending_changed = request.vending.is_some();
                    let done = self.registry.update_warehouse(request).await?;
                    if vending_changed {
                        // Served reads keep an open catalog; its vendor must follow.
                        self.forget_catalog(&done.warehouse_id).await;
                    }
                    Ok(done)
                },
            )
            .await
    }

    pub(super) async fn delete_warehouse(
        &self,
        request: DeleteWarehouseRequest,
    ) -> CatalogResult<DeleteWarehouseResponse> {
        let id = one(&request.warehouse_id);
        self.gov
            .call_control(
                self.call,
                &op::DeleteWarehouse,
                Kind::Warehouse,
                id,
                async |_| {
                    if request.warehouse_id == DEFAULT_WAREHOUSE {
                        return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
                    }
                    self.refuse_held_trash(&request.warehouse_id).await?;
                    let deleted = self.registry.delete_warehouse(request).await?;
                    self.forget_catalog(&deleted.warehouse_id).await;
                    Ok(deleted)
                },
            )
            .await
    }

    /// A warehouse's trash holds bytes only its catalog can bring back or
    /// purge: it is not deleted while it holds any.
    async fn refuse_held_trash(&self, warehouse: &str) -> CatalogResult<()> {
        if let Ok(catalog) = self.catalog(warehouse).await {
            let held = catalog.trash_entries().await?;
            if !held.is_empty() {
                return Err(CatalogError::new(
                    Code::WAREHOUSE_NOT_EMPTY,
                    format!(
                        "warehouse {warehouse:?} holds {} trash entries (GET /v1/trash?warehouse_id={warehouse}); undrop or purge them first",
                        held.len(),
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(super) async fn set_warehouse_protection(
        &self,
        request: SetWarehouseProtectionRequest,
    ) -> CatalogResult<Warehouse> {
        let id = one(&request.warehouse_id);
        self.gov
            .call_control(
                self.call,
                &op::SetWarehouseProtection,
                Kind::Warehouse,
                id,
                async |_| {
                    if request.warehouse_id == DEFAULT_WAREHOUSE {
                        return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
                    }
                    self.registry.set_warehouse_protection(request).await
                },
            )
            .await
    }
}
