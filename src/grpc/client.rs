//! The spec operations ([`Spec`], and through it `LanceNamespace`) over the
//! catalog's gRPC service, so Rust code (and the
//! conformance suite) can use the catalog through gRPC exactly as through
//! REST or in process. Same conversion as the server: model JSON <-> message,
//! with Arrow payloads as bytes.

use std::future::Future;

use bytes::Bytes;
use lance_namespace::models;

use crate::api::spec::{lance_edge, lance_edge_rows, Spec};
use prost::Message;
use serde::Serialize;
use serde_json::Value;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

use super::convert::{from_json, model_from_value, to_json};
use super::pb::lance_namespace_service_client::LanceNamespaceServiceClient;
use crate::error::{CatalogError, CatalogResult};
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

    /// Send one request (`prepare` sets what JSON does not carry: an
    /// Arrow payload, as bytes); answer the response message.
    async fn call<M, P, Q, F, Fut>(
        &self,
        model: &M,
        prepare: impl FnOnce(&mut P),
        name: &str,
        f: F,
    ) -> CatalogResult<Q>
    where
        M: Serialize,
        P: Message + Default,
        Q: Message,
        F: FnOnce(Client, Request<P>) -> Fut,
        Fut: Future<Output = Result<Response<Q>, Status>>,
    {
        let value = serde_json::to_value(model)
            .map_err(|e| CatalogError::invalid(format!("cannot encode request: {e}")))?;
        let mut message = from_json::<P>(value.clone(), name)?;
        prepare(&mut message);
        let mut request = Request::new(message);
        // Identity travels in metadata, as it does in REST headers.
        let meta = request.metadata_mut();
        if let Some(key) = value.pointer("/identity/api_key").and_then(Value::as_str) {
            if let Ok(v) = MetadataValue::try_from(key) {
                meta.insert("x-api-key", v);
            }
        }
        let credentials = crate::auth::Credentials::from_identity(value.get("identity"));
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

/// A response message as the JSON of its model, and as that model.
fn model<Q: Message, T: serde::de::DeserializeOwned>(answer: &Q, name: &str) -> CatalogResult<T> {
    model_from_value(to_json(answer, name)?, name)
}

/// A bare value under `field` of a response message.
fn field_of<Q: Message, T: serde::de::DeserializeOwned>(
    answer: &Q,
    name: &str,
    field: &str,
) -> CatalogResult<T> {
    let value = to_json(answer, name)?;
    model_from_value(value.get(field).cloned().unwrap_or(Value::Null), name)
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
                let set = |m: &mut super::pb::$Req| m.data = data.to_vec();
                let answer = self.call(&request, set, stringify!($Req),
                    |mut c, r| async move { c.$method(r).await }).await?;
                model(&answer, stringify!($Resp))
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<()> {
                self.call(&request, |_| {}, stringify!($Req),
                    |mut c, r| async move { c.$method(r).await }).await?;
                Ok(())
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<Bytes> {
                let answer = self.call(&request, |_| {}, stringify!($Req),
                    |mut c, r| async move { c.$method(r).await }).await?;
                Ok(Bytes::from(answer.data.unwrap_or_default()))
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<i64> {
                let answer = self.call(&request, |_| {}, stringify!($Req),
                    |mut c, r| async move { c.$method(r).await }).await?;
                field_of(&answer, stringify!($Resp), $field)
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<String> {
                let answer = self.call(&request, |_| {}, stringify!($Req),
                    |mut c, r| async move { c.$method(r).await }).await?;
                field_of(&answer, stringify!($Resp), $field)
            }
        ] $($rest)*);
    };
    // json, ids and map answers: the response model.
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<models::$Resp> {
                let answer = self.call(&request, |_| {}, stringify!($Req),
                    |mut c, r| async move { c.$method(r).await }).await?;
                model(&answer, stringify!($Resp))
            }
        ] $($rest)*);
    };
    ($($rows:tt)*) => {
        grpc_namespace!(@acc [] $($rows)*);
    };
}

crate::api::inventory::for_each_spec_op!(grpc_namespace);
lance_edge!(GrpcNamespace);
