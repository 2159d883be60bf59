//! The governance layer: one `Catalog` per warehouse root, opened lazily and
//! cached, and the routing of each request to the catalog of its
//! warehouse. A top-level namespace's binding names its warehouse; the root
//! namespace (and any unbound name) belongs to the request's scope, or to
//! the built-in default warehouse, whose root is `--root`.
//!
//! With warehouses off, everything is the default warehouse: the one root,
//! exactly as without this layer.

use crate::api::OpDef;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::guard::request::{top_levels, SpecRequest};
use super::models::{Warehouse, WarehouseStatus};
use super::{Governance, Route};
use crate::core::{Catalog, StorageConfig};
use crate::error::{CatalogError, CatalogResult, Code};

use super::models::{DEFAULT_PROJECT, DEFAULT_WAREHOUSE};

/// How long a binding read from the control root is trusted. Bindings are
/// write-once; this only bounds how long another replica's drop and
/// re-bind of the same name elsewhere takes to be seen here.
const BINDING_TTL: Duration = Duration::from_secs(5);

impl Governance {
    /// The built-in default warehouse's record.
    pub(super) fn default_warehouse(&self) -> Warehouse {
        Warehouse {
            warehouse_id: DEFAULT_WAREHOUSE.to_string(),
            project_id: DEFAULT_PROJECT.to_string(),
            root: self.home.root().to_string(),
            status: WarehouseStatus::Active,
            ..Default::default()
        }
    }

    /// A warehouse's record (the default one is built in).
    pub(super) async fn warehouse(&self, id: &str) -> CatalogResult<Warehouse> {
        match id {
            DEFAULT_WAREHOUSE => Ok(self.default_warehouse()),
            _ => self.registry.warehouse(id).await,
        }
    }

    /// The project a warehouse belongs to.
    pub(super) async fn warehouse_project(&self, warehouse: &str) -> CatalogResult<String> {
        Ok(match warehouse {
            DEFAULT_WAREHOUSE => DEFAULT_PROJECT.to_string(),
            w => self.warehouse(w).await?.project_id,
        })
    }

    /// The catalog of a warehouse, opened on first use.
    pub async fn catalog(&self, warehouse: &str) -> CatalogResult<Arc<Catalog>> {
        if warehouse == DEFAULT_WAREHOUSE {
            return Ok(self.home.clone());
        }
        if let Some((_, c)) = self.catalogs.lock().await.get(warehouse) {
            return Ok(c.clone());
        }
        let record = self.registry.warehouse(warehouse).await?;
        self.catalog_of(&record).await
    }

    /// The catalog of a warehouse's current record: re-opened when the
    /// record names another root than the cached catalog (the warehouse
    /// was deleted and re-created, maybe by another replica).
    pub(super) async fn catalog_of(&self, record: &Warehouse) -> CatalogResult<Arc<Catalog>> {
        let opened_as = opened_as(record);
        if let Some((was, c)) = self.catalogs.lock().await.get(&record.warehouse_id) {
            if *was == opened_as {
                return Ok(c.clone());
            }
        }
        // Opened without the lock held: a slow or unreachable root must not
        // stall every other warehouse.
        let opened = Arc::new(
            Catalog::open(&StorageConfig {
                root: record.root.clone(),
                storage_options: record.storage_options.clone().into(),
                forward_secrets: self.home.forwards_secrets(),
                vending: record.vending.clone(),
                vend_max_seconds: self.home.vend_max_seconds(),
            })
            .await?,
        );
        opened.set_estate_refs(self.estate.clone());
        opened.set_job_executors(&record.warehouse_id, self.maintenance.executors.clone());
        if record.status == WarehouseStatus::Active {
            give_object_ids(&opened, &record.warehouse_id).await;
        }
        let mut open = self.catalogs.lock().await;
        match open.get(&record.warehouse_id) {
            // Another request opened it meanwhile: share that one.
            Some((was, c)) if *was == opened_as => Ok(c.clone()),
            _ => {
                open.insert(record.warehouse_id.clone(), (opened_as, opened.clone()));
                Ok(opened)
            }
        }
    }

    /// Close a deleted warehouse's catalog.
    pub(super) async fn forget_catalog(&self, warehouse: &str) {
        self.catalogs.lock().await.remove(warehouse);
    }

    /// The warehouse a top-level namespace is bound to (cached briefly).
    pub(super) async fn bound_to(&self, namespace: &str) -> CatalogResult<Option<String>> {
        if let Ok(cache) = self.bound.lock() {
            if let Some((w, at)) = cache.get(namespace) {
                if at.elapsed() < BINDING_TTL {
                    return Ok(Some(w.clone()));
                }
            }
        }
        let found = self
            .registry
            .binding(namespace)
            .await?
            .map(|b| b.warehouse_id);
        if let Ok(mut cache) = self.bound.lock() {
            match &found {
                Some(w) => cache.insert(namespace.to_string(), (w.clone(), Instant::now())),
                None => cache.remove(namespace),
            };
        }
        Ok(found)
    }

    /// Forget a cached binding (this process unbound or re-bound it).
    pub(super) fn forget(&self, namespace: &str) {
        if let Ok(mut cache) = self.bound.lock() {
            cache.remove(namespace);
        }
    }

    /// The scope a request names (its `lance-catalog.warehouse` context).
    pub(super) fn scope_of<'r>(
        &self,
        request: &'r dyn SpecRequest,
    ) -> CatalogResult<Option<&'r str>> {
        match request.scope() {
            Some(w) if !self.warehouses && w != DEFAULT_WAREHOUSE => {
                Err(CatalogError::invalid(format!(
                    "warehouse {w:?} cannot serve requests: warehouses are off on this server (--warehouses on)"
                )))
            }
            other => Ok(other),
        }
    }

    /// The warehouse of one top-level name (`None`: the root namespace).
    /// Through a warehouse's scope, a name bound to another warehouse is
    /// not there at all.
    async fn warehouse_of(
        &self,
        op: &OpDef,
        top: Option<&str>,
        scope: Option<&str>,
    ) -> CatalogResult<String> {
        let fallback = scope.unwrap_or(DEFAULT_WAREHOUSE).to_string();
        if !self.warehouses {
            return Ok(fallback);
        }
        let Some(top) = top else { return Ok(fallback) };
        match (self.bound_to(top).await?, scope) {
            (Some(w), Some(s)) if w != s => {
                let (code, what) = match op.names_namespace() || op.is_door() {
                    true => (Code::NAMESPACE_NOT_FOUND, "namespace"),
                    false => (Code::TABLE_NOT_FOUND, "table's namespace"),
                };
                Err(CatalogError::new(
                    code,
                    format!("{what} {top:?} is not in warehouse {s:?}"),
                ))
            }
            (Some(w), _) => Ok(w),
            (None, _) => Ok(fallback),
        }
    }

    /// Route a request of operation `op`: every id it names must lie in
    /// one warehouse. A write to a quarantined warehouse is refused.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn route(
        &self,
        op: &OpDef,
        request: &dyn SpecRequest,
    ) -> CatalogResult<Route> {
        let scope = self.scope_of(request)?.map(str::to_string);
        let warehouse = if self.warehouses {
            let mut found: Option<String> = None;
            for top in top_levels(op, request) {
                let w = self
                    .warehouse_of(op, top.as_deref(), scope.as_deref())
                    .await?;
                match &found {
                    Some(f) if *f != w => {
                        return Err(CatalogError::invalid(format!(
                            "{op} names objects in warehouses {f:?} and {w:?}; an operation acts within one warehouse"
                        )))
                    }
                    _ => found = Some(w),
                }
            }
            found.unwrap_or_else(|| scope.clone().unwrap_or(DEFAULT_WAREHOUSE.to_string()))
        } else {
            scope.unwrap_or(DEFAULT_WAREHOUSE.to_string())
        };
        Ok(Route {
            catalog: self.catalog(&warehouse).await?,
            warehouse,
        })
    }

    /// After authorization: a write reads its warehouse's record fresh
    /// (quarantine, a root changed by another replica).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn for_write(&self, op: &OpDef, route: Route) -> CatalogResult<Route> {
        match op.reads() {
            true => Ok(route),
            false => Ok(Route {
                catalog: self.writable(&route.warehouse).await?,
                warehouse: route.warehouse,
            }),
        }
    }

    /// The catalog of a warehouse that takes writes; a quarantined one
    /// refuses them.
    pub(super) async fn writable(&self, warehouse: &str) -> CatalogResult<Arc<Catalog>> {
        if warehouse == DEFAULT_WAREHOUSE {
            return Ok(self.home.clone());
        }
        let w = self.registry.warehouse(warehouse).await?;
        if w.status == WarehouseStatus::Deleting {
            return Err(CatalogError::new(
                Code::WAREHOUSE_NOT_FOUND,
                format!("warehouse {warehouse:?} is being deleted"),
            ));
        }
        if w.status == WarehouseStatus::Quarantined {
            return Err(CatalogError::new(
                Code::WAREHOUSE_QUARANTINED,
                format!("warehouse {warehouse:?} is quarantined: it serves reads and refuses writes until its status is set back to \"active\""),
            ));
        }
        self.catalog_of(&w).await
    }
}

/// Give a warehouse's objects from before real ids theirs (best effort:
/// a grant names an object's id, and one without gets it then).
pub(super) async fn give_object_ids(catalog: &Catalog, warehouse: &str) {
    match catalog.ensure_object_ids().await {
        Ok(0) => {}
        Ok(n) => tracing::info!(
            warehouse,
            objects = n,
            "gave objects from before real ids theirs"
        ),
        Err(e) => {
            tracing::warn!(warehouse, error = %e.message, "objects from before real ids were not given theirs")
        }
    }
}

/// What a warehouse's catalog is opened from: a record naming another root
/// or other vending settings (deleted and re-created, or updated, maybe by
/// another replica) opens it again.
fn opened_as(record: &Warehouse) -> String {
    let vending = serde_json::to_string(&record.vending).unwrap_or_default();
    format!("{}\n{vending}", record.root)
}
