//! The control plane over the hierarchy: projects, warehouses, the door for
//! top-level namespaces, protection flags, API keys and grants. Each
//! operation runs the guard order: the caller (identity), the request's
//! shape, its parent, authorization, then the registry's own conflict
//! check and write; what it creates is owned by its creator.

use crate::api::op;
use async_trait::async_trait;
use lance_namespace::models::CreateNamespaceRequest;
use lance_namespace::LanceNamespace;

use super::guard::Access;
use super::models::*;
use super::registry::page_items;
use super::router::{Governance, DEFAULT_PROJECT, DEFAULT_WAREHOUSE};
use crate::core::control::{
    ControlPlane, DeleteLanceTaskRequest, DeleteLanceTaskResponse, DescribeJobRequest,
    GetLanceTaskStatusRequest, GetLanceTaskStatusResponse, GetServerInfoRequest, JobRecord,
    ListLanceTasksRequest, ListLanceTasksResponse, ListTasksRequest, ListTasksResponse,
    ListTrashRequest, ListTrashResponse, ProtectionResponse, PurgeTrashRequest, PurgeTrashResponse,
    ServerInfo, SetProtectionRequest, SubmitLanceTaskRequest, SubmitLanceTaskResponse,
    SweepTrashRequest, SweepTrashResponse, UndropNamespaceRequest, UndropNamespaceResponse,
    UndropTableRequest, UndropTableResponse, FEATURES,
};
use crate::error::{CatalogError, CatalogResult, Code};

fn builtin(kind: &str, id: &str) -> CatalogError {
    CatalogError::invalid(format!(
        "{kind} {id:?} is built in: it follows the server's --root and cannot be changed or deleted"
    ))
}

fn one(id: &str) -> Vec<String> {
    vec![id.to_string()]
}

#[async_trait]
impl ControlPlane for Governance {
    async fn get_server_info(&self, _request: GetServerInfoRequest) -> CatalogResult<ServerInfo> {
        // Any authenticated caller may know what it talks to; a storage
        // root only whoever may describe its warehouse.
        let caller = self.caller().await?;
        let mut roots = Vec::new();
        if self
            .may(
                &caller,
                op::DescribeWarehouse.action,
                "warehouse",
                one(DEFAULT_WAREHOUSE),
            )
            .await
        {
            roots.push(self.home.root().to_string());
        }
        let served = match self.warehouses {
            true => self.registry.warehouse_ids().await?,
            false => Vec::new(),
        };
        for id in served {
            if !self
                .may(&caller, op::DescribeWarehouse.action, "warehouse", one(&id))
                .await
            {
                continue;
            }
            if let Ok(w) = self.registry.warehouse(&id).await {
                roots.push(w.root);
            }
        }
        let mut features: Vec<String> = FEATURES.iter().map(|f| f.to_string()).collect();
        if self.warehouses {
            features.push("warehouses".to_string());
        }
        if self.auth.required() {
            features.push("auth".to_string());
        }
        Ok(ServerInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            storage_roots: roots,
            features,
        })
    }

    async fn describe_job(&self, request: DescribeJobRequest) -> CatalogResult<JobRecord> {
        self.control(op::DescribeJob.action, "server", vec![])
            .await?;
        let first = self.home.job(&request.job_id).await;
        if first.is_ok() || !self.warehouses {
            return first;
        }
        for id in self.registry.warehouse_ids().await? {
            if let Ok(job) = self.catalog(&id).await?.job(&request.job_id).await {
                return Ok(job);
            }
        }
        first
    }

    async fn create_project(&self, request: CreateProjectRequest) -> CatalogResult<Project> {
        let principal = self.caller().await?;
        crate::records::check_id("project", &request.project_id)?;
        if request.project_id == DEFAULT_PROJECT {
            return Err(CatalogError::new(
                Code::PROJECT_ALREADY_EXISTS,
                "project \"default\" is built in",
            ));
        }
        self.control(op::CreateProject.action, "server", vec![])
            .await?;
        let made = self.registry.create_project(request).await?;
        self.created(
            principal,
            op::CreateProject.action,
            "project",
            &made.project_id,
        )
        .await;
        Ok(made)
    }

    async fn list_projects(
        &self,
        request: ListProjectsRequest,
    ) -> CatalogResult<ListProjectsResponse> {
        let caller = self.caller().await?;
        if !self.auth.required()
            || self
                .may(&caller, op::ListProjects.action, "server", vec![])
                .await
        {
            return self.registry.list_projects(request).await;
        }
        // Only what the caller may see, paged over that.
        let mut visible = Vec::new();
        for p in self.registry.all_projects().await? {
            let id = one(&p.project_id);
            if self
                .may(&caller, op::DescribeProject.action, "project", id)
                .await
            {
                visible.push(p);
            }
        }
        let (projects, page_token) = page_items(
            visible,
            |p| p.project_id.clone(),
            request.page_token.as_deref(),
            request.limit,
        )?;
        Ok(ListProjectsResponse {
            projects,
            page_token,
        })
    }

    async fn describe_project(&self, request: DescribeProjectRequest) -> CatalogResult<Project> {
        self.control(
            op::DescribeProject.action,
            "project",
            one(&request.project_id),
        )
        .await?;
        if request.project_id == DEFAULT_PROJECT {
            if let Err(e) = self.registry.project(DEFAULT_PROJECT).await {
                if e.code == Code::PROJECT_NOT_FOUND {
                    return Ok(Project {
                        project_id: DEFAULT_PROJECT.to_string(),
                        description: Some("built in: the server's --root".to_string()),
                        ..Default::default()
                    });
                }
            }
        }
        self.registry.project(&request.project_id).await
    }

    async fn update_project(&self, request: UpdateProjectRequest) -> CatalogResult<Project> {
        let access = self
            .control(
                op::UpdateProject.action,
                "project",
                one(&request.project_id),
            )
            .await?;
        let done = self.registry.update_project(request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    async fn delete_project(
        &self,
        request: DeleteProjectRequest,
    ) -> CatalogResult<DeleteProjectResponse> {
        let access = self
            .control(
                op::DeleteProject.action,
                "project",
                one(&request.project_id),
            )
            .await?;
        if request.project_id == DEFAULT_PROJECT {
            return Err(builtin("project", DEFAULT_PROJECT));
        }
        let done = self.registry.delete_project(request).await?;
        self.grants_follow(&access).await;
        self.succeeded(&access).await;
        Ok(done)
    }

    async fn set_project_protection(
        &self,
        request: SetProjectProtectionRequest,
    ) -> CatalogResult<Project> {
        let access = self
            .control(
                op::SetProjectProtection.action,
                "project",
                one(&request.project_id),
            )
            .await?;
        let done = self.registry.set_project_protection(request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    async fn create_warehouse(
        &self,
        mut request: CreateWarehouseRequest,
    ) -> CatalogResult<Warehouse> {
        let principal = self.caller().await?;
        crate::records::check_id("warehouse", &request.warehouse_id)?;
        if request.warehouse_id == DEFAULT_WAREHOUSE {
            return Err(CatalogError::new(
                Code::WAREHOUSE_ALREADY_EXISTS,
                "warehouse \"default\" is built in: it is the server's --root",
            ));
        }
        if let Err(e) = self.registry.project(&request.project_id).await {
            let access = Access {
                principal: principal.clone(),
                action: op::CreateWarehouse.action,
                kind: "project",
                id: one(&request.project_id),
                ..Default::default()
            };
            return Err(self
                .hidden(e, &access, "project", one(&request.project_id))
                .await);
        }
        self.control(
            op::CreateWarehouse.action,
            "project",
            one(&request.project_id),
        )
        .await?;
        request.root = self.check_root(&request.root).await?;
        let options = request.storage_options.clone().unwrap_or_default();
        crate::core::probe_root(&request.root, &options).await?;
        let made = self.registry.create_warehouse(request).await?;
        self.created(
            principal,
            op::CreateWarehouse.action,
            "warehouse",
            &made.warehouse_id,
        )
        .await;
        Ok(made)
    }

    async fn list_warehouses(
        &self,
        request: ListWarehousesRequest,
    ) -> CatalogResult<ListWarehousesResponse> {
        let caller = self.caller().await?;
        let scope_ok = match request.project_id.as_deref() {
            Some(p) => {
                self.may(&caller, op::ListWarehouses.action, "project", one(p))
                    .await
            }
            None => {
                self.may(&caller, op::ListWarehouses.action, "server", vec![])
                    .await
            }
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
            if self
                .may(&caller, op::DescribeWarehouse.action, "warehouse", id)
                .await
            {
                visible.push(w);
            }
        }
        let (warehouses, page_token) = page_items(
            visible,
            |w| w.warehouse_id.clone(),
            request.page_token.as_deref(),
            request.limit,
        )?;
        Ok(ListWarehousesResponse {
            warehouses,
            page_token,
        })
    }

    async fn describe_warehouse(
        &self,
        request: DescribeWarehouseRequest,
    ) -> CatalogResult<Warehouse> {
        self.control(
            op::DescribeWarehouse.action,
            "warehouse",
            one(&request.warehouse_id),
        )
        .await?;
        Ok(self.warehouse(&request.warehouse_id).await?.redacted())
    }

    async fn update_warehouse(&self, request: UpdateWarehouseRequest) -> CatalogResult<Warehouse> {
        let access = self
            .control(
                op::UpdateWarehouse.action,
                "warehouse",
                one(&request.warehouse_id),
            )
            .await?;
        if request.warehouse_id == DEFAULT_WAREHOUSE {
            return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
        }
        let done = self.registry.update_warehouse(request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    async fn delete_warehouse(
        &self,
        request: DeleteWarehouseRequest,
    ) -> CatalogResult<DeleteWarehouseResponse> {
        let access = self
            .control(
                op::DeleteWarehouse.action,
                "warehouse",
                one(&request.warehouse_id),
            )
            .await?;
        if request.warehouse_id == DEFAULT_WAREHOUSE {
            return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
        }
        // Its trash holds bytes only its catalog can bring back or purge.
        if let Ok(catalog) = self.catalog(&request.warehouse_id).await {
            let held = catalog.trash_entries().await?;
            if !held.is_empty() {
                return Err(CatalogError::new(
                    Code::WAREHOUSE_NOT_EMPTY,
                    format!(
                        "warehouse {:?} holds {} trash entries (GET /v1/trash?warehouse_id={}); undrop or purge them first",
                        request.warehouse_id,
                        held.len(),
                        request.warehouse_id
                    ),
                ));
            }
        }
        let deleted = self.registry.delete_warehouse(request).await?;
        self.forget_catalog(&deleted.warehouse_id).await;
        self.grants_follow(&access).await;
        self.succeeded(&access).await;
        Ok(deleted)
    }

    async fn set_warehouse_protection(
        &self,
        request: SetWarehouseProtectionRequest,
    ) -> CatalogResult<Warehouse> {
        let access = self
            .control(
                op::SetWarehouseProtection.action,
                "warehouse",
                one(&request.warehouse_id),
            )
            .await?;
        if request.warehouse_id == DEFAULT_WAREHOUSE {
            return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
        }
        let done = self.registry.set_warehouse_protection(request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    async fn create_warehouse_namespace(
        &self,
        request: CreateWarehouseNamespaceRequest,
    ) -> CatalogResult<WarehouseNamespace> {
        let principal = self.caller().await?;
        if !self.warehouses && request.warehouse_id != DEFAULT_WAREHOUSE {
            return Err(CatalogError::invalid(
                "warehouses are off on this server (--warehouses on): every namespace lives in the default warehouse",
            ));
        }
        let spec = CreateNamespaceRequest {
            id: Some(vec![request.namespace.clone()]),
            properties: request.properties,
            mode: request.mode,
            ..Default::default()
        };
        let made = if self.warehouses {
            self.create_bound(&request.warehouse_id, spec, principal)
                .await?
        } else {
            let mut spec = spec;
            // The caller's credentials travel with the spec request.
            let creds = super::caller::current();
            spec.identity = Some(Box::new(lance_namespace::models::Identity {
                api_key: creds.api_key,
                auth_token: creds.bearer,
            }));
            self.create_namespace(spec)
                .await
                .map_err(|e| CatalogError::from_lance(&e))?
        };
        Ok(WarehouseNamespace {
            warehouse_id: request.warehouse_id,
            namespace: request.namespace,
            properties: made.properties.unwrap_or_default(),
        })
    }

    async fn list_warehouse_namespaces(
        &self,
        request: ListWarehouseNamespacesRequest,
    ) -> CatalogResult<ListWarehouseNamespacesResponse> {
        self.control(
            op::ListWarehouseNamespaces.action,
            "warehouse",
            one(&request.warehouse_id),
        )
        .await?;
        self.warehouse(&request.warehouse_id).await?;
        let names = match self.warehouses {
            true => self.registry.namespaces_of(&request.warehouse_id).await?,
            false => super::spec::root_namespaces(&self.home).await?,
        };
        let (namespaces, page_token) =
            super::registry::page(names, request.page_token.as_deref(), request.limit)?;
        Ok(ListWarehouseNamespacesResponse {
            namespaces,
            page_token,
        })
    }

    async fn create_api_key(
        &self,
        request: CreateApiKeyRequest,
    ) -> CatalogResult<CreateApiKeyResponse> {
        // Only the server admin mints keys: a key outlives the token of
        // whoever asked for it, so it is never a caller's own to make.
        let caller = self.caller().await?;
        self.control(op::CreateApiKey.action, "server", vec![])
            .await?;
        let (info, key) = self
            .auth
            .keys()
            .mint(
                &request.principal,
                request.description,
                caller.map(|c| c.id),
            )
            .await?;
        Ok(CreateApiKeyResponse {
            key_id: info.key_id,
            key,
            principal: info.principal,
            description: info.description,
            created_at_ms: info.created_at_ms,
        })
    }

    async fn list_api_keys(
        &self,
        request: ListApiKeysRequest,
    ) -> CatalogResult<ListApiKeysResponse> {
        self.own_or_admin(op::ListApiKeys.action, request.principal.as_deref())
            .await?;
        let keys = self.auth.keys().list(request.principal.as_deref()).await?;
        let (api_keys, page_token) = page_items(
            keys,
            |k| k.key_id.clone(),
            request.page_token.as_deref(),
            request.limit,
        )?;
        Ok(ListApiKeysResponse {
            api_keys,
            page_token,
        })
    }

    async fn revoke_api_key(
        &self,
        request: RevokeApiKeyRequest,
    ) -> CatalogResult<RevokeApiKeyResponse> {
        // Whose key it is decides who may revoke it; an unknown key is
        // told only to whoever could revoke any.
        let owner = self
            .auth
            .keys()
            .info(&request.key_id)
            .await
            .ok()
            .map(|k| k.principal);
        self.own_or_admin(op::RevokeApiKey.action, owner.as_deref())
            .await?;
        self.auth.keys().revoke(&request.key_id).await?;
        Ok(RevokeApiKeyResponse {
            key_id: request.key_id,
        })
    }

    async fn create_grant(&self, request: CreateGrantRequest) -> CatalogResult<Grant> {
        self.create_grant_governed(request).await
    }

    async fn list_grants(&self, request: ListGrantsRequest) -> CatalogResult<ListGrantsResponse> {
        self.list_grants_governed(request).await
    }

    async fn revoke_grant(
        &self,
        request: RevokeGrantRequest,
    ) -> CatalogResult<RevokeGrantResponse> {
        self.revoke_grant_governed(request).await
    }

    async fn list_events(&self, request: ListEventsRequest) -> CatalogResult<ListEventsResponse> {
        self.control(op::ListEvents.action, "server", vec![])
            .await?;
        self.registry.events(&request).await
    }

    async fn set_table_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let (route, access) = self
            .object_route(op::SetTableProtection.action, &request.id)
            .await?;
        let done = route.catalog.set_protection("table", request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    async fn set_namespace_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let (route, access) = self
            .object_route(op::SetNamespaceProtection.action, &request.id)
            .await?;
        let done = route.catalog.set_protection("namespace", request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    async fn undrop_table(
        &self,
        request: UndropTableRequest,
    ) -> CatalogResult<UndropTableResponse> {
        self.undrop_table_governed(request).await
    }

    async fn undrop_namespace(
        &self,
        request: UndropNamespaceRequest,
    ) -> CatalogResult<UndropNamespaceResponse> {
        self.undrop_namespace_governed(request).await
    }

    async fn list_table_tasks(
        &self,
        request: ListTasksRequest,
    ) -> CatalogResult<ListTasksResponse> {
        self.table_tasks_governed(request).await
    }

    async fn list_namespace_tasks(
        &self,
        request: ListTasksRequest,
    ) -> CatalogResult<ListTasksResponse> {
        self.namespace_tasks_governed(request).await
    }

    async fn list_trash(&self, request: ListTrashRequest) -> CatalogResult<ListTrashResponse> {
        self.list_trash_governed(request).await
    }

    async fn purge_trash(&self, request: PurgeTrashRequest) -> CatalogResult<PurgeTrashResponse> {
        self.purge_trash_governed(request).await
    }

    async fn sweep_trash(&self, _request: SweepTrashRequest) -> CatalogResult<SweepTrashResponse> {
        self.sweep_trash_governed().await
    }

    async fn submit_lance_table_compact_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(op::SubmitLanceTableCompactTask.action, request)
            .await
    }

    async fn submit_lance_table_scalar_index_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(op::SubmitLanceTableScalarIndexTask.action, request)
            .await
    }

    async fn submit_lance_table_vector_index_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(op::SubmitLanceTableVectorIndexTask.action, request)
            .await
    }

    async fn submit_lance_table_optimize_indices_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(op::SubmitLanceTableOptimizeIndicesTask.action, request)
            .await
    }

    async fn submit_lance_table_cleanup_task(
        &self,
        request: SubmitLanceTaskRequest,
    ) -> CatalogResult<SubmitLanceTaskResponse> {
        self.submit_task_governed(op::SubmitLanceTableCleanupTask.action, request)
            .await
    }

    async fn get_lance_task_status(
        &self,
        request: GetLanceTaskStatusRequest,
    ) -> CatalogResult<GetLanceTaskStatusResponse> {
        self.get_task_governed(request).await
    }

    async fn list_lance_tasks(
        &self,
        request: ListLanceTasksRequest,
    ) -> CatalogResult<ListLanceTasksResponse> {
        self.list_tasks_governed(request).await
    }

    async fn delete_lance_task(
        &self,
        request: DeleteLanceTaskRequest,
    ) -> CatalogResult<DeleteLanceTaskResponse> {
        self.delete_task_governed(request).await
    }
}
