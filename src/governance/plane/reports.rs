//! Maintenance reports of a table: what they find, never acting on it.
//! Routed and authorized as the table's own metadata reads.

use super::prelude::*;
use crate::api::OpDef;
use crate::governance::guard::entry::Admitted;
use crate::governance::guard::request::Named;
use crate::governance::Route;

impl Plane<'_> {
    /// Run `report` on table `id`'s catalog, admitted for `action`.
    async fn on_table<T: 'static>(
        &self,
        action: &'static OpDef,
        id: &[String],
        report: impl AsyncFnOnce(&Route) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        if id.is_empty() {
            return Err(CatalogError::invalid("a table id must not be empty"));
        }
        let named = Named::called(self.call, id);
        self.gov
            .call(action, named, async move |a: &mut Admitted, _| {
                report(&a.route).await
            })
            .await
    }

    /// Run `report` on namespace `id`'s catalog, admitted for `action`,
    /// refusing a namespace that does not exist.
    async fn on_namespace<T: 'static>(
        &self,
        action: &'static OpDef,
        id: &[String],
        report: impl AsyncFnOnce(&Route) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        let named = Named::called(self.call, id);
        self.gov
            .call(action, named, async move |a: &mut Admitted, _| {
                if !id.is_empty() && !a.route.catalog.namespace_present(id).await? {
                    return Err(crate::core::missing_namespace(id));
                }
                report(&a.route).await
            })
            .await
    }

    pub(super) async fn get_table_index_health(
        &self,
        request: GetIndexHealthRequest,
    ) -> CatalogResult<IndexHealth> {
        self.on_table(&op::GetTableIndexHealth, &request.id, async |route| {
            route.catalog.index_health(&request.id).await
        })
        .await
    }

    pub(super) async fn get_namespace_index_health(
        &self,
        request: GetIndexHealthRequest,
    ) -> CatalogResult<NamespaceIndexHealth> {
        self.on_namespace(&op::GetNamespaceIndexHealth, &request.id, async |route| {
            let mut tables = Vec::new();
            for (id, _) in route.catalog.tables_under(&request.id).await? {
                tables.push(route.catalog.index_health(&id).await?);
            }
            Ok(NamespaceIndexHealth { tables })
        })
        .await
    }

    pub(super) async fn get_table_maintenance_sweep(
        &self,
        request: GetSweepRequest,
    ) -> CatalogResult<TableSweep> {
        self.on_table(&op::GetTableMaintenanceSweep, &request.id, async |route| {
            let mut table = route.catalog.tables_with_ids().await?;
            table.retain(|(id, _)| *id == request.id);
            let mut tables = self.sweep_tables(route, table).await?;
            match tables.pop() {
                Some(t) => Ok(t),
                None => Err(crate::core::table_not_found(&request.id)),
            }
        })
        .await
    }

    pub(super) async fn get_namespace_maintenance_sweep(
        &self,
        request: GetSweepRequest,
    ) -> CatalogResult<SweepReport> {
        let id = &request.id;
        self.on_namespace(&op::GetNamespaceMaintenanceSweep, id, async |route| {
            let under = route.catalog.tables_under(id).await?;
            let tables = self.sweep_tables(route, under).await?;
            let expired_trash = self
                .all_trash(None, Some(&route.warehouse))
                .await?
                .into_iter()
                .filter(|e| e.expired && e.under(id))
                .collect();
            let create_leftovers = route
                .catalog
                .sweep_intents(false)
                .await?
                .into_iter()
                .filter(|l| l.intent.table.starts_with(id))
                .collect();
            Ok(SweepReport {
                tables,
                expired_trash,
                create_leftovers,
            })
        })
        .await
    }

    pub(super) async fn get_project_maintenance_sweep(
        &self,
        request: GetProjectReportRequest,
    ) -> CatalogResult<ProjectSweep> {
        let id = request.project_id;
        self.on_project(&op::GetProjectMaintenanceSweep, &id, async |_| {
            self.sweep_report(Some(&id), None).await
        })
        .await
    }

    pub(super) async fn get_project_index_health(
        &self,
        request: GetProjectReportRequest,
    ) -> CatalogResult<ProjectIndexHealth> {
        let id = request.project_id;
        self.on_project(&op::GetProjectIndexHealth, &id, async |_| {
            self.index_health_report(Some(&id), None).await
        })
        .await
    }
}

impl Plane<'_> {
    pub(super) async fn get_table_orphans(
        &self,
        request: GetOrphansRequest,
    ) -> CatalogResult<OrphanReport> {
        self.on_table(&op::GetTableOrphans, &request.id, async |route| {
            let refs = self.foreign_refs().await?;
            route.catalog.orphan_scan(&request.id, &refs).await
        })
        .await
    }

    pub(super) async fn get_namespace_orphans(
        &self,
        request: GetOrphansRequest,
    ) -> CatalogResult<NamespaceOrphans> {
        self.on_namespace(&op::GetNamespaceOrphans, &request.id, async |route| {
            let refs = self.foreign_refs().await?;
            let mut tables = Vec::new();
            for (id, _) in route.catalog.tables_under(&request.id).await? {
                tables.push(route.catalog.orphan_scan(&id, &refs).await?);
            }
            Ok(NamespaceOrphans { tables })
        })
        .await
    }

    pub(super) async fn get_project_orphans(
        &self,
        request: GetProjectReportRequest,
    ) -> CatalogResult<ProjectOrphans> {
        let id = request.project_id;
        self.on_project(&op::GetProjectOrphans, &id, async |_| {
            self.orphans_report(Some(&id)).await
        })
        .await
    }

    pub(super) async fn reclaim_table_orphans(
        &self,
        request: ReclaimRequest,
    ) -> CatalogResult<ReclaimResponse> {
        self.on_table(&op::ReclaimTableOrphans, &request.id, async |route| {
            let refs = self.foreign_refs().await?;
            route
                .catalog
                .reclaim(&request.id, &request.paths, &refs)
                .await
        })
        .await
    }
}
