//! Maintenance reports over whole warehouses: a project's (or the CLI's,
//! with no server) sweep and index health, warehouse by warehouse. Reports
//! only; a warehouse that cannot be opened is logged and left out, as the
//! trash listing does.

use super::{Governance, Route, DEFAULT_WAREHOUSE};
use crate::api::health::{ProjectIndexHealth, WarehouseIndexHealth};
use crate::api::orphans::{ProjectOrphans, WarehouseOrphans};
use crate::api::sweep::{ProjectSweep, WarehouseSweep};
use crate::error::CatalogResult;

impl Governance {
    /// The open catalog of every warehouse of `project` (every project's
    /// when none), or of one `warehouse`; one that cannot be opened is
    /// logged and left out.
    pub async fn warehouse_catalogs(
        &self,
        project: Option<&str>,
        warehouse: Option<&str>,
    ) -> CatalogResult<Vec<(String, std::sync::Arc<crate::Catalog>)>> {
        self.every_catalog(project, warehouse).await
    }

    /// The sweep of every warehouse of `project` (every project's when
    /// none), or of one `warehouse`: each table as the scheduler sees it,
    /// the expired trash, and what the sweep would do about the stale
    /// intents of creates that died.
    pub async fn sweep_report(
        &self,
        project: Option<&str>,
        warehouse: Option<&str>,
    ) -> CatalogResult<ProjectSweep> {
        let trash = self.all_trash(project, warehouse).await?;
        let mut out = ProjectSweep::default();
        for (w, catalog) in self.every_catalog(project, warehouse).await? {
            let route = Route {
                warehouse: w.clone(),
                catalog: catalog.clone(),
            };
            let tables = self
                .sweep_tables(&route, catalog.tables_with_ids().await?)
                .await?;
            let expired_trash = trash
                .iter()
                .filter(|e| e.expired && e.warehouse.as_deref().unwrap_or(DEFAULT_WAREHOUSE) == w)
                .cloned()
                .collect();
            out.warehouses.push(WarehouseSweep {
                warehouse_id: w,
                tables,
                expired_trash,
                create_leftovers: catalog.sweep_intents(false).await?,
            });
        }
        Ok(out)
    }

    /// The index health of every table of every warehouse of `project`
    /// (every project's when none), or of one `warehouse`.
    pub async fn index_health_report(
        &self,
        project: Option<&str>,
        warehouse: Option<&str>,
    ) -> CatalogResult<ProjectIndexHealth> {
        let mut out = ProjectIndexHealth::default();
        for (w, catalog) in self.every_catalog(project, warehouse).await? {
            let mut tables = Vec::new();
            for (id, _) in catalog.tables_with_ids().await? {
                tables.push(catalog.index_health(&id).await?);
            }
            out.warehouses.push(WarehouseIndexHealth {
                warehouse_id: w,
                tables,
            });
        }
        Ok(out)
    }

    /// The orphan scan of every table of every warehouse of `project`
    /// (every project's when none), counting every table's references
    /// across the estate (clones).
    pub async fn orphans_report(&self, project: Option<&str>) -> CatalogResult<ProjectOrphans> {
        let refs = self.foreign_refs().await?;
        let mut out = ProjectOrphans::default();
        for (w, catalog) in self.every_catalog(project, None).await? {
            let mut tables = Vec::new();
            for (id, _) in catalog.tables_with_ids().await? {
                tables.push(catalog.orphan_scan(&id, &refs).await?);
            }
            out.warehouses.push(WarehouseOrphans {
                warehouse_id: w,
                tables,
            });
        }
        Ok(out)
    }
}
