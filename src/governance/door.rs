//! The door for top-level namespaces and the checks of warehouse roots.

use crate::api::op;
use crate::api::spec::Spec;
use lance_namespace::models::{CreateNamespaceRequest, DropNamespaceRequest};

use super::guard::sight::Sight;
use super::guard::Access;
use super::models::*;
use super::{Governance, DEFAULT_WAREHOUSE};
use crate::api::call::Call;
use crate::api::kind::Kind;
use crate::error::{CatalogError, CatalogResult, Code};

/// How old a binding must be before a door may take it back from a
/// namespace that is gone.
const STALE_BINDING_MS: u64 = 60_000;

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
    /// create it there. A failed create removes the binding it wrote. No
    /// warehouse (a spec create that named none) is the caller's mistake,
    /// told after its identity.
    pub(super) async fn create_bound(
        &self,
        call: &Call,
        warehouse: Option<&str>,
        mut request: CreateNamespaceRequest,
    ) -> CatalogResult<lance_namespace::models::CreateNamespaceResponse> {
        let id = request.id.clone().unwrap_or_default();
        let resolve = async |sight: &Sight<'_>| {
            let Some(warehouse) = warehouse else {
                return Err(CatalogError::invalid(format!(
                    "a top-level namespace is created in its warehouse: POST /v1/warehouses/{{warehouse_id}}/namespaces with {{\"namespace\": {:?}}}, or create_namespace through the warehouse's endpoint /warehouses/{{warehouse_id}}",
                    id.first().map(String::as_str).unwrap_or_default()
                )));
            };
            // Shape.
            if id.len() != 1 {
                return Err(CatalogError::invalid(format!(
                    "a warehouse's door creates one top-level namespace; {id:?} is not one name"
                )));
            }
            crate::core::Catalog::check_namespace_name(&id[0])?;
            // Parent, then authorization. The new namespace's real id is
            // minted here (a caller's is dropped).
            let real = crate::core::object_ids::fresh_object_id();
            let access = Access {
                creates: true,
                action: &op::CreateNamespace,
                warehouse: Some(warehouse.to_string()),
                kind: Kind::Namespace,
                id: id.clone(),
                minted: vec![(id.clone(), real)],
                ..Default::default()
            };
            match self.warehouse(warehouse).await {
                Ok(record) => Ok((access, record)),
                Err(e) => {
                    let w = vec![warehouse.to_string()];
                    Err(sight.hidden(e, &access, Kind::Warehouse, w).await)
                }
            }
        };
        self.call_on(call, resolve, async |access, record, _| {
            let real = access.new_object().unwrap_or_default();
            request
                .context
                .get_or_insert_with(Default::default)
                .insert(crate::core::reserved::OBJECT_ID.to_string(), real);
            self.bind_and_create(access, &record, request).await
        })
        .await
    }

    /// The conflict check and write of a top-level namespace's door: the
    /// binding first (it is what two doors race for), then the namespace.
    async fn bind_and_create(
        &self,
        access: &mut Access,
        record: &crate::api::hierarchy::Warehouse,
        request: CreateNamespaceRequest,
    ) -> CatalogResult<lance_namespace::models::CreateNamespaceResponse> {
        let warehouse = record.warehouse_id.as_str();
        let id = access.id.clone();
        let name = id[0].clone();
        // Conflict.
        let catalog = self.writable(warehouse).await?;
        if let Some(b) = self.registry.binding(&name).await? {
            let plain_create = request
                .mode
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case("create"));
            if b.warehouse_id == warehouse && !plain_create {
                // exist_ok / overwrite: create_namespace's own to answer;
                // what stood gets no new owner.
                access.made_nothing();
                return catalog.create_namespace(request).await;
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
        // An exist_ok create of a namespace already in the root (from
        // before warehouses were on) binds it but makes no owner.
        if catalog.namespace_present(&id).await? {
            access.made_nothing();
        }
        // Write. A failure undoes the binding, unless the namespace stands
        // after all (an exist_ok door made it meanwhile).
        self.registry.bind(&name, warehouse).await?;
        self.forget(&name);
        let created = match catalog.create_namespace(request).await {
            Ok(c) => c,
            Err(e) => {
                if !catalog.namespace_present(&id).await.unwrap_or(true) {
                    let _ = self.registry.unbind(&name, warehouse).await;
                }
                return Err(e);
            }
        };
        // A warehouse deleted meanwhile looked for bindings before this one
        // was written: undo, so nothing is left without its warehouse.
        let gone = match self.registry.warehouse(warehouse).await {
            Ok(w) => w.status == WarehouseStatus::Deleting,
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
                format!("warehouse {warehouse:?} was deleted while the namespace was created"),
            ));
        }
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
    pub(super) async fn check_root(&self, root: &str) -> CatalogResult<String> {
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
            // In any case: a store that folds it would give both
            // warehouses one place.
            if crate::core::location::roots_overlap(mine, other) {
                return Err(CatalogError::invalid(format!(
                    "warehouse root {root:?} overlaps {who} at {other:?} (compared in any case); each warehouse needs a root of its own"
                )));
            }
        }
        Ok(resolved)
    }
}
