//! The catalog's own operations beside the spec's: the control plane. Its
//! requests and answers are plain models (named as their proto messages),
//! its operations rows of the inventory (`inventory.rs`), served over REST
//! and gRPC like the spec's.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use super::access::*;
pub use super::audit::*;
pub use super::call::{Call, Credentials};
pub use super::health::*;
pub use super::hierarchy::*;
pub use super::jobs::{Job, JobState};
pub use super::maintenance::*;
pub use super::orphans::*;
pub use super::policy::*;
pub use super::protection::*;
pub use super::reconcile::*;
pub use super::sweep::*;
pub use super::trash::*;
pub use super::users::*;
pub use super::vending::VendingSettings;
use crate::error::CatalogResult;

/// What this build serves.
pub const FEATURES: &[&str] = &[
    "rest",
    "grpc",
    "flight",
    "managed-versioning",
    "materialized-views",
    "jobs",
    "trash",
    "maintenance-tasks",
    "maintenance-policies",
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
pub type JobRecord = Job;

macro_rules! control_plane_trait {
    ($( $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; )*) => {
        /// The control plane's operations, one per control row of the
        /// inventory (so a row without its method does not compile). Each
        /// takes its call's metadata explicitly: who calls, and the
        /// request's id.
        #[async_trait]
        pub trait ControlPlane: Send + Sync {
            $( async fn $method(&self, call: &Call, request: $Req) -> CatalogResult<$Resp>; )*
        }
    };
}

super::inventory::for_each_control_op!(control_plane_trait);
