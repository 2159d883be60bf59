//! The spec operations ([`Spec`], and through it `LanceNamespace`) over the
//! catalog's gRPC service, so Rust code (and the
//! conformance suite) can use the catalog through gRPC exactly as through
//! REST or in process. Same conversion as the server (`lift/`), with
//! Arrow payloads as bytes.

use std::future::Future;

use bytes::Bytes;
use lance_namespace::models;

use crate::api::spec::{lance_edge, lance_edge_rows, Spec};
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

use super::lift::{Bare, Lift};
use super::pb::lance_namespace_service_client::LanceNamespaceServiceClient;
use crate::error::CatalogResult;
use crate::transport::status::from_status;

type Client = LanceNamespaceServiceClient<Channel>;

/// Lance's namespace API over gRPC.
#[derive(Debug, Clone)]
pub struct GrpcNamespace {
    client: Client,
    endpoint: String,
}

impl GrpcNamespace {
    /// Connect to `endpoint`, e.g. `http://127.0.0.1:2333`.
    pub async fn connect(endpoint: &str) -> Result<Self, tonic::transport::Error> {
        let client = LanceNamespaceServiceClient::connect(endpoint.to_string())
            .await?
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX);
        Ok(Self {
            client,
            endpoint: endpoint.to_string(),
        })
    }

    /// Send one request message; identity travels in metadata too, as it
    /// does in REST headers.
    async fn call<P, Q, F, Fut>(
        &self,
        identity: Option<&models::Identity>,
        message: P,
        f: F,
    ) -> CatalogResult<Q>
    where
        F: FnOnce(Client, Request<P>) -> Fut,
        Fut: Future<Output = Result<Response<Q>, Status>>,
    {
        let mut request = Request::new(message);
        let meta = request.metadata_mut();
        let credentials = crate::auth::Credentials::of_identity(identity);
        if let Some(key) = credentials.api_key.as_deref() {
            if let Ok(v) = MetadataValue::try_from(key) {
                meta.insert("x-api-key", v);
            }
        }
        if let Some(header) = credentials.authorization() {
            if let Ok(v) = MetadataValue::try_from(header) {
                meta.insert("authorization", v);
            }
        }
        let response = f(self.client.clone(), request)
            .await
            .map_err(|s| from_status(&s))?;
        Ok(response.into_inner())
    }
}

/// A request model as its message: what does not fit is the caller's.
fn message<M: Lift<P>, P>(request: M, name: &str) -> CatalogResult<P> {
    request.lift().map_err(|e| e.invalid(name))
}

/// A response message as its model.
fn model<Q: Lift<T>, T>(answer: Q, name: &str) -> CatalogResult<T> {
    answer.lift().map_err(|e| e.internal(name))
}

/// The trait impl: one method per inventory row (`src/api/inventory.rs`). The
/// rows are munched into finished methods first, so that `async_trait` sees
/// plain `async fn`s.
macro_rules! grpc_namespace {
    // Done: the impl, with every method.
    (@acc [$($done:tt)*]) => {
        #[async_trait::async_trait]
        impl Spec for GrpcNamespace {
            fn namespace_id(&self) -> String {
                format!("GrpcNamespace {{ endpoint: {:?} }}", self.endpoint)
            }
            $($done)*
        }
    };
    // A data operation: the Arrow stream travels in the `data` field, as bytes.
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp> {
                let identity = request.identity.as_deref().cloned();
                let mut message: super::pb::$Req = message(request, stringify!($Req))?;
                message.data = data.to_vec();
                let answer = self.call(identity.as_ref(), message,
                    |mut c, r| async move { c.$method(r).await }).await?;
                model(answer, stringify!($Resp))
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<()> {
                let identity = request.identity.as_deref().cloned();
                let message: super::pb::$Req = message(request, stringify!($Req))?;
                self.call(identity.as_ref(), message,
                    |mut c, r| async move { c.$method(r).await }).await?;
                Ok(())
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<Bytes> {
                let identity = request.identity.as_deref().cloned();
                let message: super::pb::$Req = message(request, stringify!($Req))?;
                let answer = self.call(identity.as_ref(), message,
                    |mut c, r| async move { c.$method(r).await }).await?;
                Ok(Bytes::from(answer.data.unwrap_or_default()))
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<i64> {
                let identity = request.identity.as_deref().cloned();
                let message: super::pb::$Req = message(request, stringify!($Req))?;
                let answer = self.call(identity.as_ref(), message,
                    |mut c, r| async move { c.$method(r).await }).await?;
                answer.into_bare().map_err(|e| e.internal(stringify!($Resp)))
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<String> {
                let identity = request.identity.as_deref().cloned();
                let message: super::pb::$Req = message(request, stringify!($Req))?;
                let answer = self.call(identity.as_ref(), message,
                    |mut c, r| async move { c.$method(r).await }).await?;
                answer.into_bare().map_err(|e| e.internal(stringify!($Resp)))
            }
        ] $($rest)*);
    };
    // json, ids and map answers: the response model.
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<models::$Resp> {
                let identity = request.identity.as_deref().cloned();
                let message: super::pb::$Req = message(request, stringify!($Req))?;
                let answer = self.call(identity.as_ref(), message,
                    |mut c, r| async move { c.$method(r).await }).await?;
                model(answer, stringify!($Resp))
            }
        ] $($rest)*);
    };
    ($($rows:tt)*) => {
        grpc_namespace!(@acc [] $($rows)*);
    };
}

crate::api::inventory::for_each_spec_op!(grpc_namespace);
lance_edge!(GrpcNamespace);
