//! The gRPC spec service over the governance layer. Every rpc takes its
//! Arrow payload out as bytes, converts the rest of its message to the
//! spec model (`convert.rs`), adds identity and context from the metadata,
//! calls governance (the one entry), and converts the answer back: one
//! mechanism for all 54 operations.

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
use crate::core::data::ipc_out::Framing;
use crate::error::CatalogError;
use crate::governance::Governance;
use crate::transport::status::to_status;
use futures::StreamExt;

/// The spec operations over gRPC, served by the governance layer.
#[derive(Clone)]
pub struct NamespaceService {
    gov: Arc<Governance>,
}

impl std::fmt::Debug for NamespaceService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceService")
            .field("ns", &self.gov.namespace_id())
            .finish()
    }
}

impl NamespaceService {
    pub fn new(gov: Arc<Governance>) -> Self {
        Self { gov }
    }

    /// Name the caller before the request's shape is read (identity leads
    /// the guard order).
    async fn authenticate(&self, value: &Value) -> Result<(), Status> {
        let caller = crate::auth::Credentials::from_identity(value.get("identity"));
        self.gov.authenticate(&caller).await.map_err(to_status)?;
        Ok(())
    }

    /// The request as its spec model's JSON, with identity and context
    /// from the metadata. Its Arrow payload was taken out as bytes first.
    fn request_json<P: Message>(
        meta: tonic::metadata::MetadataMap,
        msg: &P,
        name: &str,
    ) -> Result<Value, Status> {
        let mut value = request_json(msg, name).map_err(to_status)?;
        if let Value::Object(obj) = &mut value {
            obj.remove("data");
            crate::transport::headers::apply_headers(&meta.into_headers(), obj);
        }
        Ok(value)
    }

    /// Run one operation: request message -> model -> governance ->
    /// answer -> message (`answer` converts, see the service impl).
    async fn call<P, Q, M, R, F>(
        &self,
        (meta, msg, data): (tonic::metadata::MetadataMap, P, Bytes),
        name: &str,
        f: F,
        answer: fn(R) -> crate::error::CatalogResult<Q>,
    ) -> Result<Response<Q>, Status>
    where
        P: Message,
        Q: Message + Default,
        M: DeserializeOwned + Serialize + Default,
        F: FnOnce(Arc<Governance>, M, Bytes) -> BoxFuture<'static, crate::error::CatalogResult<R>>,
    {
        let value = Self::request_json(meta, &msg, name)?;
        self.authenticate(&value).await?;
        let model: M = request_model(value, name).map_err(to_status)?;
        let answered = f(self.gov.clone(), model, data).await.map_err(to_status)?;
        answer(answered).map(Response::new).map_err(to_status)
    }
}

/// A spec model's answer as its message, through their shared JSON form.
fn message<R: Serialize, Q: Message + Default>(
    answer: R,
    name: &str,
) -> crate::error::CatalogResult<Q> {
    let value = serde_json::to_value(answer)
        .map_err(|e| CatalogError::internal(format!("cannot render answer: {e}")))?;
    from_json(value, name)
}

/// The service impl: one line per operation. An Arrow body (`data`) and an
/// Arrow answer travel as bytes, never through JSON; `json` answers convert
/// the model; `count` and `text` answers put a bare value under the named
/// field; `unit` answers are empty messages.
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
                    let (meta, _, msg) = request.into_parts();
                    let (msg, data) = namespace_service!(@data $body msg);
                    self.call(
                        (meta, msg, data),
                        stringify!($Req),
                        |ns, model, _data| {
                            Box::pin(async move {
                                namespace_service!(@call $body $answer ns $method model _data $($field)?)
                            })
                        },
                        |answer| namespace_service!(@answer $answer $Resp answer),
                    )
                    .await
                }
            )*

            type QueryTableStreamStream = futures::stream::BoxStream<'static, Result<pb::ArrowChunk, Status>>;

            /// The answer as IPC stream chunks, sent as the scan yields
            /// its batches (nothing is gathered first).
            async fn query_table_stream(
                &self,
                request: Request<pb::QueryTableRequest>,
            ) -> Result<Response<Self::QueryTableStreamStream>, Status> {
                let (meta, _, msg) = request.into_parts();
                let value = Self::request_json(meta, &msg, "QueryTableRequest")?;
                self.authenticate(&value).await?;
                let model = request_model(value, "QueryTableRequest").map_err(to_status)?;
                let chunks = self
                    .gov
                    .query_streamed(model, Framing::Stream)
                    .await
                    .map_err(to_status)?;
                let stream = chunks.map(|chunk| {
                    chunk
                        .map(|data| pb::ArrowChunk { data: data.to_vec() })
                        .map_err(to_status)
                });
                Ok(Response::new(Box::pin(stream)))
            }
        }
    };
    (@data arrow $msg:ident) => {{
        let mut msg = $msg;
        let data = Bytes::from(std::mem::take(&mut msg.data));
        (msg, data)
    }};
    (@data $body:ident $msg:ident) => {
        ($msg, Bytes::new())
    };
    (@answer bytes $Resp:ident $v:ident) => {
        Ok(pb::$Resp { data: Some($v.to_vec()), ..Default::default() })
    };
    (@answer $answer:ident $Resp:ident $v:ident) => {
        message($v, stringify!($Resp))
    };
    (@call arrow $answer:ident $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model, $data).await
    };
    (@call $body:ident unit $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model).await.map(|()| json!({}))
    };
    (@call $body:ident count $ns:ident $method:ident $model:ident $data:ident $field:literal) => {
        $ns.$method($model).await.map(|v| json!({ $field: v }))
    };
    (@call $body:ident text $ns:ident $method:ident $model:ident $data:ident $field:literal) => {
        $ns.$method($model).await.map(|v| json!({ $field: v }))
    };
    (@call $body:ident $answer:ident $ns:ident $method:ident $model:ident $data:ident $($field:literal)?) => {
        $ns.$method($model).await
    };
}

crate::api::inventory::for_each_spec_op!(namespace_service);
