//! The server itself: what it serves, job records, the audit trail, the trash sweep.

use super::prelude::*;
use crate::api::kind::Kind;

impl Plane<'_> {
    pub(super) async fn get_server_info(
        &self,
        _request: GetServerInfoRequest,
    ) -> CatalogResult<ServerInfo> {
        // Any authenticated caller may know what it talks to; a storage
        // root only whoever may describe its warehouse.
        let roots = self
            .call_as(self.call, async |sight| {
                let mut roots = Vec::new();
                let describe = &op::DescribeWarehouse;
                if sight
                    .may(describe, Kind::Warehouse, one(DEFAULT_WAREHOUSE))
                    .await
                {
                    roots.push(self.home.root().to_string());
                }
                let served = match self.warehouses {
                    true => self.registry.warehouse_ids().await?,
                    false => Vec::new(),
                };
                for id in served {
                    if !sight.may(describe, Kind::Warehouse, one(&id)).await {
                        continue;
                    }
                    if let Ok(w) = self.registry.warehouse(&id).await {
                        roots.push(w.root);
                    }
                }
                Ok(roots)
            })
            .await?;
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

    pub(super) async fn describe_job(
        &self,
        request: DescribeJobRequest,
    ) -> CatalogResult<JobRecord> {
        self.on_server(&op::DescribeJob, async |_| {
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
        })
        .await
    }

    pub(super) async fn list_events(
        &self,
        request: ListEventsRequest,
    ) -> CatalogResult<ListEventsResponse> {
        self.on_server(&op::ListEvents, async |_| {
            self.registry.events(&request).await
        })
        .await
    }

    pub(super) async fn sweep_trash(
        &self,
        _request: SweepTrashRequest,
    ) -> CatalogResult<SweepTrashResponse> {
        self.sweep_trash_governed(self.call).await
    }

    pub(super) async fn get_reconciliation(
        &self,
        _request: GetReconciliationRequest,
    ) -> CatalogResult<ReconciliationReport> {
        self.on_server(&op::GetReconciliation, async |_| {
            let drifts = self.reconcile_estate(&Default::default()).await?;
            Ok(ReconciliationReport { drifts })
        })
        .await
    }

    pub(super) async fn repair_drift(
        &self,
        request: RepairDriftRequest,
    ) -> CatalogResult<ReconciliationReport> {
        self.on_server(&op::RepairDrift, async |_| {
            let kinds = crate::governance::drift::repairable(&request.kinds)?;
            let drifts = self.reconcile_estate(&kinds).await?;
            Ok(ReconciliationReport { drifts })
        })
        .await
    }

    /// Run `run` admitted for `action` on the server itself.
    pub(super) async fn on_server<T>(
        &self,
        action: &'static crate::api::OpDef,
        run: impl AsyncFnOnce(&mut Access) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        self.gov
            .call_control(self.call, action, Kind::Server, vec![], run)
            .await
    }
}
