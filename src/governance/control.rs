//! The control plane over the hierarchy: projects, warehouses, the door
//! for top-level namespaces, and protection flags, each through the guard
//! order (shape, parent, authorization, then the registry's conflict check
//! and write).

use async_trait::async_trait;
use lance_namespace::models::{CreateNamespaceRequest, DropNamespaceRequest};
use lance_namespace::LanceNamespace;

use super::guard::Access;
use super::models::*;
use super::router::{Governance, DEFAULT_PROJECT, DEFAULT_WAREHOUSE};
use crate::core::control::{
    ControlPlane, DescribeJobRequest, GetServerInfoRequest, JobRecord, ProtectionResponse,
    ServerInfo, SetProtectionRequest, FEATURES,
};
use crate::error::{CatalogError, CatalogResult, Code};

fn server_access(action: &'static str, kind: &'static str, id: &str) -> Access {
    Access {
        principal: None,
        action,
        warehouse: None,
        kind,
        id: vec![id.to_string()],
    }
}

/// How old a binding must be before a door may take it back from a
/// namespace that is gone.
const STALE_BINDING_MS: u64 = 60_000;

fn builtin(kind: &str, id: &str) -> CatalogError {
    CatalogError::invalid(format!(
        "{kind} {id:?} is built in: it follows the server's --root and cannot be changed or deleted"
    ))
}

/// Whether two roots overlap: one equals or contains the other.
fn overlaps(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_end_matches('/'), b.trim_end_matches('/'));
    a == b || a.starts_with(&format!("{b}/")) || b.starts_with(&format!("{a}/"))
}

/// A root as it will be opened, without creating it: a local path made
/// absolute (through its symlinks, when it exists), a URI as given, no
/// trailing `/`. `..` is refused: a root names its place plainly.
fn normalize_root(root: &str) -> CatalogResult<String> {
    let root = root.trim();
    if root.split('/').any(|seg| seg == "..") {
        return Err(CatalogError::invalid(format!(
            "warehouse root {root:?} contains '..'; name the directory plainly"
        )));
    }
    let local = match root.strip_prefix("file://") {
        Some(path) => path,
        None if root.contains("://") => return Ok(root.trim_end_matches('/').to_string()),
        None => root,
    };
    let path = std::path::Path::new(local);
    let path = match path.is_absolute() {
        true => path.to_path_buf(),
        false => std::env::current_dir()
            .map_err(|e| CatalogError::internal(format!("no working directory: {e}")))?
            .join(path),
    };
    // Through the symlinks of the nearest part that exists, as opening the
    // root later will resolve them.
    let mut existing = path.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut abs = std::fs::canonicalize(&existing).unwrap_or(existing);
    abs.extend(rest.iter().rev());
    Ok(abs.to_string_lossy().trim_end_matches('/').to_string())
}

impl Governance {
    /// The door for a top-level namespace: bind it to `warehouse`, then
    /// create it there. A failed create removes the binding it wrote.
    pub(super) async fn create_bound(
        &self,
        warehouse: &str,
        request: CreateNamespaceRequest,
    ) -> CatalogResult<lance_namespace::models::CreateNamespaceResponse> {
        // Shape.
        let id = request.id.clone().unwrap_or_default();
        if id.len() != 1 {
            return Err(CatalogError::invalid(format!(
                "a warehouse's door creates one top-level namespace; {id:?} is not one name"
            )));
        }
        let name = id[0].clone();
        crate::core::Catalog::check_namespace_name(&name)?;
        // Parent.
        let record = self.warehouse(warehouse).await?;
        // Authorization.
        let access = Access {
            principal: None,
            action: "create_namespace",
            warehouse: Some(warehouse.to_string()),
            kind: "namespace",
            id: id.clone(),
        };
        self.authorize(&access).await?;
        // Conflict.
        let catalog = self.writable(warehouse).await?;
        if let Some(b) = self.registry.binding(&name).await? {
            let plain_create = request
                .mode
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case("create"));
            if b.warehouse_id == warehouse && !plain_create {
                // exist_ok / overwrite: create_namespace's own to answer.
                return Ok(catalog.create_namespace(request).await?);
            }
            if !self.reclaim_stale(&b, &id).await? {
                // A plain create conflicts, even while the winner's create
                // is still in flight.
                return Err(CatalogError::new(
                    Code::NAMESPACE_ALREADY_EXISTS,
                    format!(
                        "namespace {name:?} already exists (in warehouse {:?})",
                        b.warehouse_id
                    ),
                ));
            }
        }
        if warehouse != DEFAULT_WAREHOUSE && self.home.namespace_present(&id).await? {
            return Err(CatalogError::new(
                Code::NAMESPACE_ALREADY_EXISTS,
                format!("namespace {name:?} already exists (in the default warehouse)"),
            ));
        }
        // Write: the binding first (it is what two doors race for), then
        // the namespace. A failure undoes the binding, unless the namespace
        // stands after all (an exist_ok door made it meanwhile).
        self.registry.bind(&name, warehouse).await?;
        self.forget(&name);
        let created = match catalog.create_namespace(request).await {
            Ok(c) => c,
            Err(e) => {
                if !catalog.namespace_present(&id).await.unwrap_or(true) {
                    let _ = self.registry.unbind(&name, warehouse).await;
                }
                return Err(CatalogError::from_lance(&e));
            }
        };
        // A warehouse deleted meanwhile looked for bindings before this one
        // was written: undo, so nothing is left without its warehouse.
        let gone = match self.registry.warehouse(warehouse).await {
            Ok(w) => w.status == DELETING,
            Err(e) => e.code == Code::WAREHOUSE_NOT_FOUND,
        };
        if warehouse != DEFAULT_WAREHOUSE && gone {
            let _ = catalog
                .drop_namespace(DropNamespaceRequest {
                    id: Some(id.clone()),
                    ..Default::default()
                })
                .await;
            let _ = self.registry.unbind(&name, warehouse).await;
            return Err(CatalogError::new(
                Code::WAREHOUSE_NOT_FOUND,
                format!(
                    "warehouse {:?} was deleted while the namespace was created",
                    record.warehouse_id
                ),
            ));
        }
        self.hooks.created(&access).await;
        self.hooks.event(&access).await;
        Ok(created)
    }

    /// A binding whose namespace is gone (a drop whose unbind failed) is
    /// removed so the name can be created again. A young binding is left
    /// alone: its door may still be creating the namespace.
    async fn reclaim_stale(&self, b: &super::Binding, id: &[String]) -> CatalogResult<bool> {
        let age_ms = super::registry::now_ms().saturating_sub(b.created_at_ms);
        if age_ms < STALE_BINDING_MS {
            return Ok(false);
        }
        let present = match self.catalog(&b.warehouse_id).await {
            Ok(c) => c.namespace_present(id).await?,
            Err(e) if e.code == Code::WAREHOUSE_NOT_FOUND => false,
            Err(e) => return Err(e),
        };
        if present {
            return Ok(false);
        }
        tracing::warn!(namespace = %b.namespace, warehouse = %b.warehouse_id, "removing a binding whose namespace is gone");
        self.registry.unbind(&b.namespace, &b.warehouse_id).await?;
        self.forget(&b.namespace);
        Ok(true)
    }

    /// Refuse a warehouse root that overlaps another's, the default root
    /// or the control root: a root holds one warehouse's tables only.
    async fn check_root(&self, root: &str) -> CatalogResult<String> {
        let resolved = normalize_root(root)?;
        let mut taken = vec![
            (
                "the default warehouse".to_string(),
                self.home.root().to_string(),
            ),
            (
                "the control root".to_string(),
                self.control_root().to_string(),
            ),
        ];
        for id in self.registry.warehouse_ids().await? {
            if let Ok(w) = self.registry.warehouse(&id).await {
                taken.push((format!("warehouse {id:?}"), w.root));
            }
        }
        for (who, other) in taken {
            let other = other.strip_prefix("file://").unwrap_or(&other);
            let mine = resolved.strip_prefix("file://").unwrap_or(&resolved);
            if overlaps(mine, other) {
                return Err(CatalogError::invalid(format!(
                    "warehouse root {root:?} overlaps {who} at {other:?}; each warehouse needs a root of its own"
                )));
            }
        }
        Ok(resolved)
    }
}

#[async_trait]
impl ControlPlane for Governance {
    async fn get_server_info(&self, _request: GetServerInfoRequest) -> CatalogResult<ServerInfo> {
        let mut roots = vec![self.home.root().to_string()];
        let served = match self.warehouses {
            true => self.registry.warehouse_ids().await?,
            false => Vec::new(),
        };
        for id in served {
            if let Ok(w) = self.registry.warehouse(&id).await {
                roots.push(w.root);
            }
        }
        let mut features: Vec<String> = FEATURES.iter().map(|f| f.to_string()).collect();
        if self.warehouses {
            features.push("warehouses".to_string());
        }
        Ok(ServerInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            storage_roots: roots,
            features,
        })
    }

    async fn describe_job(&self, request: DescribeJobRequest) -> CatalogResult<JobRecord> {
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
        crate::records::check_id("project", &request.project_id)?;
        if request.project_id == DEFAULT_PROJECT {
            return Err(CatalogError::new(
                Code::PROJECT_ALREADY_EXISTS,
                "project \"default\" is built in",
            ));
        }
        self.authorize(&server_access("create_project", "server", ""))
            .await?;
        let made = self.registry.create_project(request).await?;
        let access = server_access("create_project", "project", &made.project_id);
        self.hooks.created(&access).await;
        self.hooks.event(&access).await;
        Ok(made)
    }

    async fn list_projects(
        &self,
        request: ListProjectsRequest,
    ) -> CatalogResult<ListProjectsResponse> {
        self.registry.list_projects(request).await
    }

    async fn describe_project(&self, request: DescribeProjectRequest) -> CatalogResult<Project> {
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
        self.authorize(&server_access(
            "update_project",
            "project",
            &request.project_id,
        ))
        .await?;
        self.registry.update_project(request).await
    }

    async fn delete_project(
        &self,
        request: DeleteProjectRequest,
    ) -> CatalogResult<DeleteProjectResponse> {
        if request.project_id == DEFAULT_PROJECT {
            return Err(builtin("project", DEFAULT_PROJECT));
        }
        self.authorize(&server_access(
            "delete_project",
            "project",
            &request.project_id,
        ))
        .await?;
        self.registry.delete_project(request).await
    }

    async fn set_project_protection(
        &self,
        request: SetProjectProtectionRequest,
    ) -> CatalogResult<Project> {
        self.authorize(&server_access(
            "set_project_protection",
            "project",
            &request.project_id,
        ))
        .await?;
        self.registry.set_project_protection(request).await
    }

    async fn create_warehouse(
        &self,
        mut request: CreateWarehouseRequest,
    ) -> CatalogResult<Warehouse> {
        crate::records::check_id("warehouse", &request.warehouse_id)?;
        if request.warehouse_id == DEFAULT_WAREHOUSE {
            return Err(CatalogError::new(
                Code::WAREHOUSE_ALREADY_EXISTS,
                "warehouse \"default\" is built in: it is the server's --root",
            ));
        }
        self.registry.project(&request.project_id).await?;
        self.authorize(&server_access(
            "create_warehouse",
            "project",
            &request.project_id,
        ))
        .await?;
        request.root = self.check_root(&request.root).await?;
        let options = request.storage_options.clone().unwrap_or_default();
        crate::core::probe_root(&request.root, &options).await?;
        let made = self.registry.create_warehouse(request).await?;
        let access = server_access("create_warehouse", "warehouse", &made.warehouse_id);
        self.hooks.created(&access).await;
        self.hooks.event(&access).await;
        Ok(made)
    }

    async fn list_warehouses(
        &self,
        request: ListWarehousesRequest,
    ) -> CatalogResult<ListWarehousesResponse> {
        self.registry.list_warehouses(request).await
    }

    async fn describe_warehouse(
        &self,
        request: DescribeWarehouseRequest,
    ) -> CatalogResult<Warehouse> {
        Ok(self.warehouse(&request.warehouse_id).await?.redacted())
    }

    async fn update_warehouse(&self, request: UpdateWarehouseRequest) -> CatalogResult<Warehouse> {
        if request.warehouse_id == DEFAULT_WAREHOUSE {
            return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
        }
        self.authorize(&server_access(
            "update_warehouse",
            "warehouse",
            &request.warehouse_id,
        ))
        .await?;
        self.registry.update_warehouse(request).await
    }

    async fn delete_warehouse(
        &self,
        request: DeleteWarehouseRequest,
    ) -> CatalogResult<DeleteWarehouseResponse> {
        if request.warehouse_id == DEFAULT_WAREHOUSE {
            return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
        }
        self.authorize(&server_access(
            "delete_warehouse",
            "warehouse",
            &request.warehouse_id,
        ))
        .await?;
        let deleted = self.registry.delete_warehouse(request).await?;
        self.forget_catalog(&deleted.warehouse_id).await;
        Ok(deleted)
    }

    async fn set_warehouse_protection(
        &self,
        request: SetWarehouseProtectionRequest,
    ) -> CatalogResult<Warehouse> {
        if request.warehouse_id == DEFAULT_WAREHOUSE {
            return Err(builtin("warehouse", DEFAULT_WAREHOUSE));
        }
        self.authorize(&server_access(
            "set_warehouse_protection",
            "warehouse",
            &request.warehouse_id,
        ))
        .await?;
        self.registry.set_warehouse_protection(request).await
    }

    async fn create_warehouse_namespace(
        &self,
        request: CreateWarehouseNamespaceRequest,
    ) -> CatalogResult<WarehouseNamespace> {
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
            self.create_bound(&request.warehouse_id, spec).await?
        } else {
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

    async fn set_table_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let value = serde_json::json!({ "id": request.id });
        let route = self.route("set_table_protection", &value).await?;
        self.authorize(&super::router::access(
            "set_table_protection",
            &route.warehouse,
            &value,
        ))
        .await?;
        route.catalog.set_protection("table", request).await
    }

    async fn set_namespace_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let value = serde_json::json!({ "id": request.id });
        let route = self.route("set_namespace_protection", &value).await?;
        self.authorize(&super::router::access(
            "set_namespace_protection",
            &route.warehouse,
            &value,
        ))
        .await?;
        let route = self.for_write("set_namespace_protection", route).await?;
        route.catalog.set_protection("namespace", request).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn roots_overlap_by_whole_segments() {
        assert!(super::overlaps("/a/b", "/a/b/"));
        assert!(super::overlaps("/a/b", "/a/b/c"));
        assert!(super::overlaps("s3://x/a/b", "s3://x/a"));
        assert!(!super::overlaps("/a/b", "/a/bc"));
        assert!(!super::overlaps("s3://x/a", "s3://y/a"));
    }
}
