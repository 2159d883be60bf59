//! Maintenance reports of a table: what they find, never acting on it.
//! Routed and authorized as the table's own metadata reads.

use super::prelude::*;
use crate::api::OpDef;
use crate::governance::guard::request::Named;

impl Plane<'_> {
    /// The route of table `id` for `action`, admitted.
    async fn table_admitted(
        &self,
        action: &'static OpDef,
        id: &[String],
    ) -> CatalogResult<crate::governance::Route> {
        if id.is_empty() {
            return Err(CatalogError::invalid("a table id must not be empty"));
        }
        Ok(self
            .admit(action, &mut Named::called(self.call, id))
            .await?
            .0)
    }

    /// The route of namespace `id` for `action`, admitted, refusing one
    /// that does not exist.
    async fn namespace_admitted(
        &self,
        action: &'static OpDef,
        id: &[String],
    ) -> CatalogResult<crate::governance::Route> {
        let (route, _) = self
            .admit(action, &mut Named::called(self.call, id))
            .await?;
        if !id.is_empty() && !route.catalog.namespace_present(id).await? {
            return Err(crate::core::missing_namespace(id));
        }
        Ok(route)
    }

    pub(super) async fn get_table_index_health(
        &self,
        request: GetIndexHealthRequest,
    ) -> CatalogResult<IndexHealth> {
        let route = self
            .table_admitted(&op::GetTableIndexHealth, &request.id)
            .await?;
        route.catalog.index_health(&request.id).await
    }

    pub(super) async fn get_namespace_index_health(
        &self,
        request: GetIndexHealthRequest,
    ) -> CatalogResult<NamespaceIndexHealth> {
        let route = self
            .namespace_admitted(&op::GetNamespaceIndexHealth, &request.id)
            .await?;
        let mut tables = Vec::new();
        for (id, _) in route.catalog.tables_under(&request.id).await? {
            tables.push(route.catalog.index_health(&id).await?);
        }
        Ok(NamespaceIndexHealth { tables })
    }

    pub(super) async fn get_table_maintenance_sweep(
        &self,
        request: GetSweepRequest,
    ) -> CatalogResult<TableSweep> {
        let route = self
            .table_admitted(&op::GetTableMaintenanceSweep, &request.id)
            .await?;
        let mut table = route.catalog.tables_with_ids().await?;
        table.retain(|(id, _)| *id == request.id);
        let mut tables = self.sweep_tables(&route, table).await?;
        match tables.pop() {
            Some(t) => Ok(t),
            None => Err(crate::core::table_not_found(&request.id)),
        }
    }

    pub(super) async fn get_namespace_maintenance_sweep(
        &self,
        request: GetSweepRequest,
    ) -> CatalogResult<SweepReport> {
        let route = self
            .namespace_admitted(&op::GetNamespaceMaintenanceSweep, &request.id)
            .await?;
        let under = route.catalog.tables_under(&request.id).await?;
        let tables = self.sweep_tables(&route, under).await?;
        let expired_trash = self
            .all_trash(None, Some(&route.warehouse))
            .await?
            .into_iter()
            .filter(|e| e.expired && e.under(&request.id))
            .collect();
        let create_leftovers = route
            .catalog
            .sweep_intents(false)
            .await?
            .into_iter()
            .filter(|l| l.intent.table.starts_with(&request.id))
            .collect();
        Ok(SweepReport {
            tables,
            expired_trash,
            create_leftovers,
        })
    }

    pub(super) async fn get_project_maintenance_sweep(
        &self,
        request: GetProjectReportRequest,
    ) -> CatalogResult<ProjectSweep> {
        let id = request.project_id;
        self.project_target(&op::GetProjectMaintenanceSweep, &id)
            .await?;
        self.sweep_report(Some(&id), None).await
    }

    pub(super) async fn get_project_index_health(
        &self,
        request: GetProjectReportRequest,
    ) -> CatalogResult<ProjectIndexHealth> {
        let id = request.project_id;
        self.project_target(&op::GetProjectIndexHealth, &id).await?;
        self.index_health_report(Some(&id), None).await
    }
}

impl Plane<'_> {
    pub(super) async fn get_table_orphans(
        &self,
        request: GetOrphansRequest,
    ) -> CatalogResult<OrphanReport> {
        let route = self
            .table_admitted(&op::GetTableOrphans, &request.id)
            .await?;
        let refs = self.foreign_refs().await?;
        route.catalog.orphan_scan(&request.id, &refs).await
    }

    pub(super) async fn get_namespace_orphans(
        &self,
        request: GetOrphansRequest,
    ) -> CatalogResult<NamespaceOrphans> {
        let route = self
            .namespace_admitted(&op::GetNamespaceOrphans, &request.id)
            .await?;
        let refs = self.foreign_refs().await?;
        let mut tables = Vec::new();
        for (id, _) in route.catalog.tables_under(&request.id).await? {
            tables.push(route.catalog.orphan_scan(&id, &refs).await?);
        }
        Ok(NamespaceOrphans { tables })
    }

    pub(super) async fn get_project_orphans(
        &self,
        request: GetProjectReportRequest,
    ) -> CatalogResult<ProjectOrphans> {
        let id = request.project_id;
        self.project_target(&op::GetProjectOrphans, &id).await?;
        self.orphans_report(Some(&id)).await
    }

    pub(super) async fn reclaim_table_orphans(
        &self,
        request: ReclaimRequest,
    ) -> CatalogResult<ReclaimResponse> {
        let route = self
            .table_admitted(&op::ReclaimTableOrphans, &request.id)
            .await?;
        let refs = self.foreign_refs().await?;
        route
            .catalog
            .reclaim(&request.id, &request.paths, &refs)
            .await
    }
}
