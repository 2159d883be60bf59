//! The spec operations ([`Spec`], and through it `LanceNamespace`) over the
//! catalog's gRPC service, so Rust code (and the
//! conformance suite) can use the catalog through gRPC exactly as through
//! REST or in process. Same conversion as the server: model JSON <-> message.

use std::future::Future;

use base64::Engine;
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

    /// Send one request; answer the response message as model JSON.
    async fn call<M, P, Q, F, Fut>(
        &self,
        model: &M,
        data: Option<Bytes>,
        names: (&str, &str),
        f: F,
    ) -> CatalogResult<Value>
    where
        M: Serialize,
        P: Message + Default,
        Q: Message,
        F: FnOnce(Client, Request<P>) -> Fut,
        Fut: Future<Output = Result<Response<Q>, Status>>,
    {
        let mut value = serde_json::to_value(model)
            .map_err(|e| CatalogError::invalid(format!("cannot encode request: {e}")))?;
        if let (Some(data), Value::Object(obj)) = (data, &mut value) {
            let b64 = base64::engine::general_purpose::STANDARD.encode(&data);
            obj.insert("data".into(), Value::from(b64));
        }
        let mut request = Request::new(from_json::<P>(value.clone(), names.0)?);
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
        to_json(&response.into_inner(), names.1)
    }
}

fn model<T: serde::de::DeserializeOwned>(value: Value, name: &str) -> CatalogResult<T> {
    model_from_value(value, name)
}

fn field(value: &Value, field: &str) -> Value {
    value.get(field).cloned().unwrap_or(Value::Null)
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
    // A data operation: the Arrow stream travels in the `data` field.
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp> {
                let value = self.call(&request, Some(data), (stringify!($Req), stringify!($Resp)),
                    |mut c, r| async move { c.$method(r).await }).await?;
                model(value, stringify!($Resp))
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<()> {
                self.call(&request, None, (stringify!($Req), stringify!($Resp)),
                    |mut c, r| async move { c.$method(r).await }).await?;
                Ok(())
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<Bytes> {
                let value = self.call(&request, None, (stringify!($Req), stringify!($Resp)),
                    |mut c, r| async move { c.$method(r).await }).await?;
                bytes_field(&value, $field)
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<i64> {
                let value = self.call(&request, None, (stringify!($Req), stringify!($Resp)),
                    |mut c, r| async move { c.$method(r).await }).await?;
                model(field(&value, $field), stringify!($Resp))
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal],
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<String> {
                let value = self.call(&request, None, (stringify!($Req), stringify!($Resp)),
                    |mut c, r| async move { c.$method(r).await }).await?;
                model(field(&value, $field), stringify!($Resp))
            }
        ] $($rest)*);
    };
    // json, ids and map answers: the response model.
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        grpc_namespace!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<models::$Resp> {
                let value = self.call(&request, None, (stringify!($Req), stringify!($Resp)),
                    |mut c, r| async move { c.$method(r).await }).await?;
                model(value, stringify!($Resp))
            }
        ] $($rest)*);
    };
    ($($rows:tt)*) => {
        grpc_namespace!(@acc [] $($rows)*);
    };
}

/// The base64 `field` of an answer, as bytes.
fn bytes_field(value: &Value, name: &str) -> CatalogResult<Bytes> {
    field(value, name)
        .as_str()
        .map(|s| base64::engine::general_purpose::STANDARD.decode(s))
        .transpose()
        .map_err(|e| CatalogError::internal(format!("query answer: {e}")))
        .map(|b| Bytes::from(b.unwrap_or_default()))
}

crate::api::inventory::for_each_spec_op!(grpc_namespace);
lance_edge!(GrpcNamespace);
