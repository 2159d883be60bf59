//! The control-plane service and client, expanded from the inventory's
//! control rows (`src/api/inventory.rs`): the same message <-> model
//! conversion as the namespace service (`lift/`).

use std::sync::Arc;

use async_trait::async_trait;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

use super::lift::Lift;
use super::pb;
use super::pb::catalog_control_service_client::CatalogControlServiceClient;
use crate::api::control::*;
use crate::error::CatalogResult;
use crate::transport::status::{from_status, to_status};

/// The control plane served over gRPC.
#[derive(Clone)]
pub struct ControlService {
    plane: Arc<dyn ControlPlane>,
    /// Names the caller before the request's shape is read.
    gate: Option<Arc<crate::governance::Governance>>,
}

impl std::fmt::Debug for ControlService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlService").finish_non_exhaustive()
    }
}

impl ControlService {
    pub fn new(plane: Arc<dyn ControlPlane>) -> Self {
        Self { plane, gate: None }
    }

    /// Authenticate every call first (identity leads the guard order).
    pub fn with_gate(mut self, gate: Arc<crate::governance::Governance>) -> Self {
        self.gate = Some(gate);
        self
    }
}

/// A call's metadata from a request's: its credentials, request id and
/// `Idempotency-Key`.
fn call_of<P>(request: &Request<P>) -> Call {
    crate::transport::headers::call(&request.metadata().clone().into_headers())
}

macro_rules! control_service {
    ($( $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; )*) => {
        #[tonic::async_trait]
        impl pb::catalog_control_service_server::CatalogControlService for ControlService {
            $(
                async fn $method(
                    &self,
                    request: Request<pb::$Req>,
                ) -> Result<Response<pb::$Resp>, Status> {
                    let call = call_of(&request);
                    if let Some(gate) = &self.gate {
                        gate.authenticate(&call.credentials).await.map_err(to_status)?;
                    }
                    let model: $Req = request
                        .into_inner()
                        .lift()
                        .map_err(|e| to_status(e.invalid(stringify!($Req))))?;
                    let answer = self.plane.$method(&call, model).await.map_err(to_status)?;
                    Lift::<pb::$Resp>::lift(answer)
                        .map(Response::new)
                        .map_err(|e| to_status(e.internal(stringify!($Resp))))
                }
            )*
        }

        #[async_trait]
        impl ControlPlane for GrpcControl {
            $(
                async fn $method(&self, call: &Call, request: $Req) -> CatalogResult<$Resp> {
                    let message: pb::$Req =
                        request.lift().map_err(|e| e.invalid(stringify!($Req)))?;
                    let answer = self
                        .client
                        .clone()
                        .$method(self.request(call, message))
                        .await
                        .map_err(|s| from_status(&s))?;
                    answer
                        .into_inner()
                        .lift()
                        .map_err(|e| e.internal(stringify!($Resp)))
                }
            )*
        }
    };
}

/// The control plane over gRPC, for Rust callers.
#[derive(Debug, Clone)]
pub struct GrpcControl {
    client: CatalogControlServiceClient<Channel>,
    /// Sent with every call: `x-api-key` or `authorization: Bearer`.
    credentials: Option<(&'static str, String)>,
}

impl GrpcControl {
    /// Connect to `endpoint`, e.g. `http://127.0.0.1:2333`.
    pub async fn connect(endpoint: &str) -> Result<Self, tonic::transport::Error> {
        Ok(Self {
            client: CatalogControlServiceClient::connect(endpoint.to_string()).await?,
            credentials: None,
        })
    }

    /// Call as the holder of an API key.
    pub fn with_api_key(mut self, key: &str) -> Self {
        self.credentials = Some(("x-api-key", key.to_string()));
        self
    }

    /// Call with a bearer token.
    pub fn with_bearer(mut self, token: &str) -> Self {
        self.credentials = Some(("authorization", format!("Bearer {token}")));
        self
    }

    /// A request carrying the call's own credentials when it has any,
    /// else the ones this client was made with, and the call's request id
    /// and `Idempotency-Key`.
    fn request<T>(&self, call: &Call, message: T) -> Request<T> {
        let mut request = Request::new(message);
        let own = [
            ("x-api-key", call.credentials.api_key.clone()),
            ("authorization", call.credentials.authorization()),
        ];
        let sent: Vec<(&'static str, String)> = match call.credentials.is_empty() {
            true => self.credentials.iter().cloned().collect(),
            false => own
                .into_iter()
                .filter_map(|(name, value)| value.map(|v| (name, v)))
                .collect(),
        };
        let ids = call
            .request_id
            .iter()
            .map(|id| ("x-request-id", id.clone()))
            .chain(
                call.idempotency_key
                    .iter()
                    .map(|k| (crate::api::call::IDEMPOTENCY_HEADER, k.clone())),
            );
        for (name, value) in sent.into_iter().chain(ids) {
            if let Ok(v) = tonic::metadata::MetadataValue::try_from(value.as_str()) {
                request.metadata_mut().insert(name, v);
            }
        }
        request
    }
}

crate::api::inventory::for_each_control_op!(control_service);
