//! The control-plane service: server facts and job records.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use super::convert::from_json;
use super::pb;
use super::status::to_status;
use crate::core::Catalog;
use crate::error::CatalogError;

pub struct ControlService {
    catalog: Arc<Catalog>,
}

impl ControlService {
    pub fn new(catalog: Arc<Catalog>) -> Self {
        Self { catalog }
    }
}

/// What this build serves.
pub const FEATURES: &[&str] = &[
    "rest",
    "grpc",
    "flight",
    "managed-versioning",
    "materialized-views",
    "jobs",
];

#[tonic::async_trait]
impl pb::catalog_control_service_server::CatalogControlService for ControlService {
    async fn get_server_info(
        &self,
        _request: Request<pb::GetServerInfoRequest>,
    ) -> Result<Response<pb::ServerInfo>, Status> {
        Ok(Response::new(pb::ServerInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            storage_roots: vec![self.catalog.root().to_string()],
            features: FEATURES.iter().map(|f| f.to_string()).collect(),
        }))
    }

    async fn describe_job(
        &self,
        request: Request<pb::DescribeJobRequest>,
    ) -> Result<Response<pb::JobRecord>, Status> {
        let job = self
            .catalog
            .job(&request.into_inner().job_id)
            .await
            .map_err(to_status)?;
        let value = serde_json::to_value(job)
            .map_err(|e| to_status(CatalogError::internal(e.to_string())))?;
        from_json(value, "JobRecord")
            .map(Response::new)
            .map_err(to_status)
    }
}
