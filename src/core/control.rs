//! The catalog's own operations beside the spec's: the control plane. Its
//! requests and answers are plain models (named as their proto messages),
//! its operations rows of the inventory (`src/inventory.rs`), served over
//! REST and gRPC like the spec's.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::Catalog;
use crate::error::CatalogResult;

/// What this build serves.
pub const FEATURES: &[&str] = &[
    "rest",
    "grpc",
    "flight",
    "managed-versioning",
    "materialized-views",
    "jobs",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetServerInfoRequest {}

/// Facts about the server: its version, storage roots and features.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub version: String,
    pub storage_roots: Vec<String>,
    pub features: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DescribeJobRequest {
    pub job_id: String,
}

/// A job's record, as the control plane answers it.
pub type JobRecord = super::Job;

/// The control plane's operations, one per control row of the inventory.
#[async_trait]
pub trait ControlPlane: Send + Sync {
    async fn get_server_info(&self, request: GetServerInfoRequest) -> CatalogResult<ServerInfo>;
    async fn describe_job(&self, request: DescribeJobRequest) -> CatalogResult<JobRecord>;
}

#[async_trait]
impl ControlPlane for Catalog {
    async fn get_server_info(&self, _request: GetServerInfoRequest) -> CatalogResult<ServerInfo> {
        Ok(ServerInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            storage_roots: vec![self.root().to_string()],
            features: FEATURES.iter().map(|f| f.to_string()).collect(),
        })
    }

    async fn describe_job(&self, request: DescribeJobRequest) -> CatalogResult<JobRecord> {
        self.job(&request.job_id).await
    }
}
