//! The project and warehouse registries: records on the control root (see
//! `records.rs`), with the hierarchy's rules. A warehouse needs a project;
//! a project with warehouses refuses deletion (no cascade); a protected
//! object refuses deletion unless forced, and `force` overrides protection
//! and nothing else.

use std::collections::HashMap;

use super::models::*;
use crate::api::page::{page, CONTROL};
use crate::api::vending::VendingSettings;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::Records;

pub(super) const PROJECT: &str = "project";
pub(super) const WAREHOUSE: &str = "warehouse";

pub(super) use crate::records::now_ms;

/// Merge `updates` into `props`; an empty value deletes the key.
fn merge(props: &mut HashMap<String, String>, updates: Option<HashMap<String, String>>) {
    for (k, v) in updates.unwrap_or_default() {
        if v.is_empty() {
            props.remove(&k);
        } else {
            props.insert(k, v);
        }
    }
}

/// A project's trash grace period must read as a duration.
fn check_grace(grace: Option<&str>) -> CatalogResult<()> {
    match grace.map(super::duration::parse_duration) {
        Some(Err(e)) => Err(CatalogError::invalid(format!("trash_grace: {e}"))),
        _ => Ok(()),
    }
}

fn protected_error(kind: &str, id: &str) -> CatalogError {
    CatalogError::new(
        Code::OBJECT_PROTECTED,
        format!(
            "{kind} {id:?} is protected; unset its protection first, or delete with force=true"
        ),
    )
}

/// The registries of one control root.
#[derive(Debug, Clone)]
pub struct Registry {
    pub(super) records: Records,
    /// The audit trail, beside the records (see `audit/store.rs`).
    pub(super) audit: std::sync::Arc<super::AuditStore>,
}

impl Registry {
    pub fn new(records: Records) -> Self {
        let (store, prefix) = records.raw();
        let audit = std::sync::Arc::new(super::AuditStore::new(store, prefix.join("audit")));
        Self { records, audit }
    }

    /// The audit trail's store.
    pub fn audit_store(&self) -> &std::sync::Arc<super::AuditStore> {
        &self.audit
    }

    pub async fn create_project(&self, req: CreateProjectRequest) -> CatalogResult<Project> {
        let now = now_ms();
        check_grace(req.trash_grace.as_deref())?;
        let project = Project {
            project_id: req.project_id.clone(),
            description: req.description,
            properties: req.properties.unwrap_or_default(),
            protected: false,
            // Kept in the project's policy record, below.
            trash_grace: None,
            purge_expired_trash: None,
            created_at_ms: now,
            updated_at_ms: now,
        };
        let made = self
            .records
            .create(
                PROJECT,
                &req.project_id,
                &project,
                Code::PROJECT_ALREADY_EXISTS,
            )
            .await?;
        // A record left by a deleted project of this name (a set that raced
        // its delete) is not this project's.
        let _ = self
            .delete_policy_record(crate::api::policy::PolicyLevel::Project, &req.project_id)
            .await;
        if let Err(e) = self
            .set_project_trash(&req.project_id, req.trash_grace, req.purge_expired_trash)
            .await
        {
            tracing::warn!(project = %req.project_id, error = %e.message, "a new project's trash settings were not recorded; set them again with PATCH");
        }
        self.shown_project(made.value).await
    }

    pub async fn project(&self, id: &str) -> CatalogResult<Project> {
        self.records
            .get::<Project>(PROJECT, id)
            .await?
            .map(|v| v.value)
            .ok_or_else(|| {
                CatalogError::new(
                    Code::PROJECT_NOT_FOUND,
                    format!("project {id:?} does not exist; create it with POST /v1/projects"),
                )
            })
    }

    pub async fn list_projects(
        &self,
        req: ListProjectsRequest,
    ) -> CatalogResult<ListProjectsResponse> {
        let ids = self.records.ids::<Project>(PROJECT).await?;
        let (ids, page_token) = page(&ids, req.page_token.as_deref(), req.limit, CONTROL)?;
        let mut projects = Vec::with_capacity(ids.len());
        for id in ids {
            // Deleted between the listing and now: not listed.
            if let Some(p) = self.records.get::<Project>(PROJECT, &id).await? {
                projects.push(self.shown_project(p.value).await?);
            }
        }
        Ok(ListProjectsResponse {
            projects,
            page_token,
        })
    }

    pub async fn update_project(&self, req: UpdateProjectRequest) -> CatalogResult<Project> {
        check_grace(req.trash_grace.as_deref())?;
        let updated = self
            .records
            .update(
                PROJECT,
                &req.project_id,
                Code::PROJECT_NOT_FOUND,
                |mut p: Project| {
                    if let Some(d) = &req.description {
                        p.description = Some(d.clone());
                    }
                    merge(&mut p.properties, req.properties.clone());
                    p.updated_at_ms = now_ms();
                    Ok(p)
                },
            )
            .await?;
        self.set_project_trash(&req.project_id, req.trash_grace, req.purge_expired_trash)
            .await?;
        self.shown_project(updated.value).await
    }

    pub async fn set_project_protection(
        &self,
        req: SetProjectProtectionRequest,
    ) -> CatalogResult<Project> {
        let updated = self
            .records
            .update(
                PROJECT,
                &req.project_id,
                Code::PROJECT_NOT_FOUND,
                |mut p: Project| {
                    p.protected = req.protected;
                    p.updated_at_ms = now_ms();
                    Ok(p)
                },
            )
            .await?;
        self.shown_project(updated.value).await
    }

    /// Delete a project: refused while it has warehouses (naming them), and
    /// while protected unless forced. A warehouse created at the same
    /// instant is caught by the warehouse's own check of its project.
    pub async fn delete_project(
        &self,
        req: DeleteProjectRequest,
    ) -> CatalogResult<DeleteProjectResponse> {
        let id = req.project_id.clone();
        let warehouses = self.warehouses_of(&id).await?;
        if !warehouses.is_empty() {
            return Err(CatalogError::new(
                Code::PROJECT_NOT_EMPTY,
                format!("project {id:?} still has warehouses {warehouses:?}; delete them first (a project delete never cascades)"),
            ));
        }
        let force = req.force.unwrap_or(false);
        let mut removed: Option<Project> = None;
        let deleted = self
            .records
            .delete(PROJECT, &id, |p: &Project| match p.protected && !force {
                true => Err(protected_error("project", &id)),
                false => {
                    removed = Some(p.clone());
                    Ok(())
                }
            })
            .await?;
        if !deleted {
            return Err(CatalogError::new(
                Code::PROJECT_NOT_FOUND,
                format!("project {id:?} does not exist"),
            ));
        }
        // A warehouse created at the same instant may have seen the project
        // still there: check again, and if one stands, restore the project.
        let warehouses = self.warehouses_of(&id).await?;
        if !warehouses.is_empty() {
            if let Some(p) = removed {
                let _ = self
                    .records
                    .create(PROJECT, &id, &p, Code::PROJECT_ALREADY_EXISTS)
                    .await;
            }
            return Err(CatalogError::new(
                Code::PROJECT_NOT_EMPTY,
                format!("project {id:?} got warehouses {warehouses:?} while it was deleted; it was kept"),
            ));
        }
        Ok(DeleteProjectResponse { project_id: id })
    }

    /// The ids of a project's warehouses, sorted.
    async fn warehouses_of(&self, project: &str) -> CatalogResult<Vec<String>> {
        let mut out = Vec::new();
        for id in self.records.ids::<Warehouse>(WAREHOUSE).await? {
            if let Some(w) = self.records.get::<Warehouse>(WAREHOUSE, &id).await? {
                if w.value.project_id == project {
                    out.push(id);
                }
            }
        }
        Ok(out)
    }

    pub async fn create_warehouse(&self, req: CreateWarehouseRequest) -> CatalogResult<Warehouse> {
        let root = req.root.trim().trim_end_matches('/').to_string();
        if root.is_empty() || root.contains(['?', '#']) {
            return Err(CatalogError::invalid(format!(
                "warehouse root {:?} must be a path or a URI without query or fragment",
                req.root
            )));
        }
        self.project(&req.project_id).await?;
        let vending = VendingSettings::checked(req.vending)?;
        let now = now_ms();
        let warehouse = Warehouse {
            warehouse_id: req.warehouse_id.clone(),
            project_id: req.project_id.clone(),
            root,
            storage_options: req.storage_options.unwrap_or_default(),
            properties: req.properties.unwrap_or_default(),
            status: WarehouseStatus::Active,
            protected: false,
            created_at_ms: now,
            updated_at_ms: now,
            vending,
        };
        let made = self
            .records
            .create(
                WAREHOUSE,
                &req.warehouse_id,
                &warehouse,
                Code::WAREHOUSE_ALREADY_EXISTS,
            )
            .await?;
        // The project was deleted while this was recorded: undo, so no
        // warehouse is left without its project.
        if self.project(&req.project_id).await.is_err() {
            let _ = self
                .records
                .delete::<Warehouse, _>(WAREHOUSE, &req.warehouse_id, |_| Ok(()))
                .await;
            return Err(CatalogError::new(
                Code::PROJECT_NOT_FOUND,
                format!(
                    "project {:?} was deleted while the warehouse was created",
                    req.project_id
                ),
            ));
        }
        Ok(made.value.redacted())
    }

    /// Every project, sorted by id.
    pub async fn all_projects(&self) -> CatalogResult<Vec<Project>> {
        let mut out = Vec::new();
        for id in self.records.ids::<Project>(PROJECT).await? {
            if let Some(p) = self.records.get::<Project>(PROJECT, &id).await? {
                out.push(p.value);
            }
        }
        Ok(out)
    }

    /// Every warehouse (of one project), sorted by id, secrets hidden.
    pub async fn all_warehouses(&self, project: Option<&str>) -> CatalogResult<Vec<Warehouse>> {
        let mut out = Vec::new();
        for id in self.records.ids::<Warehouse>(WAREHOUSE).await? {
            if let Some(w) = self.records.get::<Warehouse>(WAREHOUSE, &id).await? {
                if project.is_none_or(|p| p == w.value.project_id) {
                    out.push(w.value.redacted());
                }
            }
        }
        Ok(out)
    }

    /// Every warehouse's id, sorted.
    pub async fn warehouse_ids(&self) -> CatalogResult<Vec<String>> {
        self.records.ids::<Warehouse>(WAREHOUSE).await
    }

    /// A warehouse, with its secrets (for opening its root).
    pub async fn warehouse(&self, id: &str) -> CatalogResult<Warehouse> {
        self.records
            .get::<Warehouse>(WAREHOUSE, id)
            .await?
            .map(|v| v.value)
            .ok_or_else(|| {
                CatalogError::new(
                    Code::WAREHOUSE_NOT_FOUND,
                    format!("warehouse {id:?} does not exist; create it with POST /v1/warehouses"),
                )
            })
    }

    pub async fn list_warehouses(
        &self,
        req: ListWarehousesRequest,
    ) -> CatalogResult<ListWarehousesResponse> {
        let ids = match req.project_id.as_deref() {
            Some(p) => {
                self.project(p).await?;
                self.warehouses_of(p).await?
            }
            None => self.records.ids::<Warehouse>(WAREHOUSE).await?,
        };
        let (ids, page_token) = page(&ids, req.page_token.as_deref(), req.limit, CONTROL)?;
        let mut warehouses = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(w) = self.records.get::<Warehouse>(WAREHOUSE, &id).await? {
                warehouses.push(w.value.redacted());
            }
        }
        Ok(ListWarehousesResponse {
            warehouses,
            page_token,
        })
    }

    pub async fn update_warehouse(&self, req: UpdateWarehouseRequest) -> CatalogResult<Warehouse> {
        let status = match req.status.as_deref() {
            None => None,
            Some(s) => Some(WarehouseStatus::settable(s).ok_or_else(|| {
                CatalogError::invalid(format!(
                    "warehouse status {s:?} is not one of \"active\", \"quarantined\""
                ))
            })?),
        };
        let vending = req
            .vending
            .clone()
            .map(|v| VendingSettings::checked(Some(v)))
            .transpose()?;
        let updated = self
            .records
            .update(
                WAREHOUSE,
                &req.warehouse_id,
                Code::WAREHOUSE_NOT_FOUND,
                |mut w: Warehouse| {
                    if w.status == WarehouseStatus::Deleting {
                        return Err(CatalogError::new(
                            Code::WAREHOUSE_NOT_FOUND,
                            format!("warehouse {:?} is being deleted", w.warehouse_id),
                        ));
                    }
                    if let Some(s) = &status {
                        w.status = *s;
                    }
                    merge(&mut w.properties, req.properties.clone());
                    if let Some(v) = &vending {
                        w.vending = v.clone();
                    }
                    w.updated_at_ms = now_ms();
                    Ok(w)
                },
            )
            .await?;
        Ok(updated.value.redacted())
    }

    pub async fn set_warehouse_protection(
        &self,
        req: SetWarehouseProtectionRequest,
    ) -> CatalogResult<Warehouse> {
        let updated = self
            .records
            .update(
                WAREHOUSE,
                &req.warehouse_id,
                Code::WAREHOUSE_NOT_FOUND,
                |mut w: Warehouse| {
                    w.protected = req.protected;
                    w.updated_at_ms = now_ms();
                    Ok(w)
                },
            )
            .await?;
        Ok(updated.value.redacted())
    }

    /// Delete a warehouse's record. Its bytes stay: emptying a bucket is a
    /// separate, explicit act. In two steps, so a door binding a namespace
    /// at the same instant cannot slip in between: the warehouse is marked
    /// `deleting` (doors and writes refuse it), its bindings are looked for
    /// again, and only then is the record removed.
    pub async fn delete_warehouse(
        &self,
        req: DeleteWarehouseRequest,
    ) -> CatalogResult<DeleteWarehouseResponse> {
        let id = req.warehouse_id.clone();
        let force = req.force.unwrap_or(false);
        let holding = |held: Vec<String>| {
            CatalogError::new(
                Code::WAREHOUSE_NOT_EMPTY,
                format!("warehouse {id:?} still holds namespaces {held:?}; drop them first"),
            )
        };
        // Never a cascade: a warehouse that holds namespaces names them.
        let held = self.namespaces_of(&id).await?;
        if !held.is_empty() {
            return Err(holding(held));
        }
        let mut before = WarehouseStatus::Active;
        self.records
            .update(
                WAREHOUSE,
                &id,
                Code::WAREHOUSE_NOT_FOUND,
                |mut w: Warehouse| {
                    if w.protected && !force {
                        return Err(protected_error("warehouse", &id));
                    }
                    if w.status != WarehouseStatus::Deleting {
                        before = w.status;
                    }
                    w.status = WarehouseStatus::Deleting;
                    Ok(w)
                },
            )
            .await?;
        let held = self.namespaces_of(&id).await?;
        if !held.is_empty() {
            let _ = self
                .records
                .update(
                    WAREHOUSE,
                    &id,
                    Code::WAREHOUSE_NOT_FOUND,
                    |mut w: Warehouse| {
                        w.status = before;
                        Ok(w)
                    },
                )
                .await;
            return Err(holding(held));
        }
        let deleted = self
            .records
            .delete(WAREHOUSE, &id, |_: &Warehouse| Ok(()))
            .await?;
        if !deleted {
            return Err(CatalogError::new(
                Code::WAREHOUSE_NOT_FOUND,
                format!("warehouse {id:?} does not exist"),
            ));
        }
        Ok(DeleteWarehouseResponse { warehouse_id: id })
    }
}
