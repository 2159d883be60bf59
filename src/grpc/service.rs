//! The gRPC services over any [`Spec`] (normally the governance layer).
//! Every rpc converts its message to the spec model (`convert.rs`), adds
//! identity and context from the metadata, calls the core, and converts the
//! answer back: one mechanism for all 54 operations.

use std::sync::Arc;

use crate::api::spec::Spec;
use bytes::Bytes;
use futures::future::BoxFuture;
use prost::Message;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tonic::{Request, Response, Status};

use super::convert::{from_json, request_json, request_model};
use super::pb;
use crate::error::CatalogError;
use crate::transport::status::to_status;

/// The spec operations over gRPC.
#[derive(Clone)]
pub struct NamespaceService {
    ns: Arc<dyn Spec>,
    /// Names the caller before the request's shape is read.
    gate: Option<Arc<crate::governance::Governance>>,
}

impl std::fmt::Debug for NamespaceService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceService")
            .field("ns", &self.ns.namespace_id())
            .finish()
    }
}

impl NamespaceService {
    pub fn new(ns: Arc<dyn Spec>) -> Self {
        Self { ns, gate: None }
    }

    /// Authenticate every call first (identity leads the guard order).
    pub fn with_gate(mut self, gate: Arc<crate::governance::Governance>) -> Self {
        self.gate = Some(gate);
        self
    }

    async fn authenticate(&self, value: &Value) -> Result<(), Status> {
        if let Some(gate) = &self.gate {
            let caller = crate::auth::Credentials::from_identity(value.get("identity"));
            gate.authenticate(&caller).await.map_err(to_status)?;
        }
        Ok(())
    }

    /// The request as its spec model's JSON, with identity and context from
    /// the metadata, and the Arrow payload (`data`) taken out.
    fn request_json<P: Message>(request: Request<P>, name: &str) -> Result<(Value, Bytes), Status> {
        let (meta, _, msg) = request.into_parts();
        let mut value = request_json(&msg, name).map_err(to_status)?;
        let mut data = Bytes::new();
        if let Value::Object(obj) = &mut value {
            if let Some(Value::String(b64)) = obj.remove("data") {
                use base64::Engine;
                data = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map(Bytes::from)
                    .map_err(|e| to_status(CatalogError::internal(format!("data field: {e}"))))?;
            }
            crate::transport::headers::apply_headers(&meta.into_headers(), obj);
        }
        Ok((value, data))
    }

    /// Run one operation: request message -> model -> core -> model -> message.
    async fn call<P, Q, M, R, F>(
        &self,
        request: Request<P>,
        names: (&str, &str),
        f: F,
    ) -> Result<Response<Q>, Status>
    where
        P: Message,
        Q: Message + Default,
        M: DeserializeOwned + Serialize + Default,
        R: Serialize,
        F: FnOnce(Arc<dyn Spec>, M, Bytes) -> BoxFuture<'static, crate::error::CatalogResult<R>>,
    {
        let (value, data) = Self::request_json(request, names.0)?;
        self.authenticate(&value).await?;
        let model: M = request_model(value, names.0).map_err(to_status)?;
        let answer = f(self.ns.clone(), model, data).await.map_err(to_status)?;
        let value = serde_json::to_value(answer)
            .map_err(|e| to_status(CatalogError::internal(format!("cannot render answer: {e}"))))?;
        from_json(value, names.1)
            .map(Response::new)
            .map_err(to_status)
    }
}

/// The service impl: one line per operation. `json` answers convert the
/// model as is; `wrap` answers put a bare value under the named field
/// (count, plan, analysis, data); `unit` answers are empty messages.
macro_rules! namespace_service {
    ($( $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $([$field:literal])?,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; )*) => {
        #[tonic::async_trait]
        impl pb::lance_namespace_service_server::LanceNamespaceService for NamespaceService {
            $(
                async fn $method(
                    &self,
                    request: Request<pb::$Req>,
                ) -> Result<Response<pb::$Resp>, Status> {
                    self.call(request, (stringify!($Req), stringify!($Resp)), |ns, model, _data| {
                        Box::pin(async move {
                            namespace_service!(@call $body $answer ns $method model _data $($field)?)
                        })
                    })
                    .await
                }
            )*

            type QueryTableStreamStream = futures::stream::BoxStream<'static, Result<pb::ArrowChunk, Status>>;

            async fn query_table_stream(
                &self,
                request: Request<pb::QueryTableRequest>,
            ) -> Result<Response<Self::QueryTableStreamStream>, Status> {
                let (value, _) = Self::request_json(request, "QueryTableRequest")?;
                self.authenticate(&value).await?;
                let model = request_model(value, "QueryTableRequest").map_err(to_status)?;
                let file = self
                    .ns
                    .query_table(model)
                    .await
                    .map_err(to_status)?;
                let chunks = super::stream::file_to_stream_chunks(&file).map_err(to_status)?;
                let stream = futures::stream::iter(
                    chunks.into_iter().map(|data| Ok(pb::ArrowChunk { data: data.to_vec() })),
                );
                Ok(Response::new(Box::pin(stream)))
            }
        }
    };
    (@call arrow $answer:ident $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model, $data).await
    };
    (@call $body:ident unit $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model).await.map(|()| json!({}))
    };
    (@call $body:ident bytes $ns:ident $method:ident $model:ident $data:ident $field:literal) => {
        $ns.$method($model).await.map(|v| {
            use base64::Engine;
            json!({ $field: base64::engine::general_purpose::STANDARD.encode(&v) })
        })
    };
    (@call $body:ident count $ns:ident $method:ident $model:ident $data:ident $field:literal) => {
        $ns.$method($model).await.map(|v| json!({ $field: v }))
    };
    (@call $body:ident text $ns:ident $method:ident $model:ident $data:ident $field:literal) => {
        $ns.$method($model).await.map(|v| json!({ $field: v }))
    };
    (@call $body:ident $answer:ident $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model).await
    };
}

crate::api::inventory::for_each_spec_op!(namespace_service);
