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
        let caller = self.caller(self.call).await?;
        let mut roots = Vec::new();
        if self
            .may(
                &caller,
                &op::DescribeWarehouse,
                Kind::Warehouse,
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
                .may(&caller, &op::DescribeWarehouse, Kind::Warehouse, one(&id))
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

    pub(super) async fn describe_job(
        &self,
        request: DescribeJobRequest,
    ) -> CatalogResult<JobRecord> {
        self.control(self.call, &op::DescribeJob, Kind::Server, vec![])
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

    pub(super) async fn list_events(
        &self,
        request: ListEventsRequest,
    ) -> CatalogResult<ListEventsResponse> {
        self.control(self.call, &op::ListEvents, Kind::Server, vec![])
            .await?;
        self.registry.events(&request).await
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
        self.control(self.call, &op::GetReconciliation, Kind::Server, vec![])
            .await?;
        let drifts = self.reconcile_estate(&Default::default()).await?;
        Ok(ReconciliationReport { drifts })
    }

    pub(super) async fn repair_drift(
        &self,
        request: RepairDriftRequest,
    ) -> CatalogResult<ReconciliationReport> {
        let access = self
            .control(self.call, &op::RepairDrift, Kind::Server, vec![])
            .await?;
        let kinds = crate::governance::drift::repairable(&request.kinds)?;
        let drifts = self.reconcile_estate(&kinds).await?;
        self.succeeded(&access).await;
        Ok(ReconciliationReport { drifts })
    }
}
