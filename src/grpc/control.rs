//! The control-plane service and client, expanded from the inventory's
//! control rows (`src/api/inventory.rs`): the same model JSON <-> message
//! conversion as the namespace service.

use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

use super::convert::{
    from_json, model_from_value, request_json, request_model as model_of, to_json,
};
use super::pb;
use super::pb::catalog_control_service_client::CatalogControlServiceClient;
use crate::api::control::*;
use crate::error::{CatalogError, CatalogResult};
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

/// A call's metadata from a request's: its credentials and request id.
fn call_of<P>(request: &Request<P>) -> Call {
    let headers = request.metadata().clone().into_headers();
    let request_id = headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    Call::new(crate::transport::headers::credentials(&headers), request_id)
}

/// A request message as its model.
fn request_model<P: prost::Message, M: DeserializeOwned + Serialize + Default>(
    request: Request<P>,
    name: &str,
) -> Result<M, Status> {
    let value = request_json(&request.into_inner(), name).map_err(to_status)?;
    model_of(value, name).map_err(to_status)
}

/// A model answer as its response message.
fn response<T: Serialize, Q: prost::Message + Default>(
    answer: CatalogResult<T>,
    name: &str,
) -> Result<Response<Q>, Status> {
    let value = serde_json::to_value(answer.map_err(to_status)?)
        .map_err(|e| to_status(CatalogError::internal(format!("cannot render answer: {e}"))))?;
    from_json(value, name).map(Response::new).map_err(to_status)
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
                    let model: $Req = request_model(request, stringify!($Req))?;
                    let answer = self.plane.$method(&call, model).await;
                    response(answer, stringify!($Resp))
                }
            )*
        }

        #[async_trait]
        impl ControlPlane for GrpcControl {
            $(
                async fn $method(&self, call: &Call, request: $Req) -> CatalogResult<$Resp> {
                    let value = serde_json::to_value(&request).map_err(|e| {
                        CatalogError::invalid(format!("cannot encode request: {e}"))
                    })?;
                    let message: pb::$Req = from_json(value, stringify!($Req))?;
                    let answer = self
                        .client
                        .clone()
                        .$method(self.request(call, message))
                        .await
                        .map_err(|s| from_status(&s))?;
                    let value = to_json(&answer.into_inner(), stringify!($Resp))?;
                    model_from_value(value, stringify!($Resp))
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
    /// else the ones this client was made with, and the call's request id.
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
            .map(|id| ("x-request-id", id.clone()));
        for (name, value) in sent.into_iter().chain(ids) {
            if let Ok(v) = tonic::metadata::MetadataValue::try_from(value.as_str()) {
                request.metadata_mut().insert(name, v);
            }
        }
        request
    }
}

crate::api::inventory::for_each_control_op!(control_service);
