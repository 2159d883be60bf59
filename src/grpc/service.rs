//! The gRPC spec service over the governance layer. Every rpc takes its
//! Arrow payload out as bytes, converts the rest of its message to the
//! spec model (`lift/`), adds identity and context from the metadata,
//! calls governance (the one entry), and converts the answer back: one
//! mechanism for all 54 operations.

use std::sync::Arc;

use crate::api::spec::Spec;
use bytes::Bytes;
use lance_namespace::models;
use tonic::{Request, Response, Status};

use super::lift::{Bare, Lift};
use super::pb;
use crate::core::data::ipc_out::Framing;
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
    /// the guard order): the metadata's credentials, else the body's.
    async fn authenticate(
        &self,
        headers: &http::HeaderMap,
        identity: Option<&pb::Identity>,
    ) -> Result<(), Status> {
        let mut merged = identity.map(|i| {
            Box::new(models::Identity {
                api_key: i.api_key.clone(),
                auth_token: i.auth_token.clone(),
            })
        });
        crate::transport::headers::apply_to(headers, &mut merged, &mut None);
        let caller = crate::auth::Credentials::of_identity(merged.as_deref());
        self.gov.authenticate(&caller).await.map_err(to_status)?;
        Ok(())
    }
}

/// A request message as its model, with identity and context from the
/// metadata (a macro, since every spec request has both fields).
macro_rules! model_of {
    ($self:ident, $headers:ident, $msg:ident : $Req:ident) => {{
        $self
            .authenticate(&$headers, $msg.identity.as_ref())
            .await?;
        let mut model: models::$Req = $msg
            .lift()
            .map_err(|e| to_status(e.invalid(stringify!($Req))))?;
        crate::transport::headers::apply_to(&$headers, &mut model.identity, &mut model.context);
        model
    }};
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
                    let headers = meta.into_headers();
                    let (msg, _data) = namespace_service!(@data $body msg);
                    let model = model_of!(self, headers, msg: $Req);
                    let ns = self.gov.clone();
                    let answer = namespace_service!(@call $body $answer ns $method model _data)
                        .map_err(to_status)?;
                    namespace_service!(@answer $answer $Resp answer)
                        .map(Response::new)
                        .map_err(to_status)
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
                let headers = meta.into_headers();
                let model = model_of!(self, headers, msg: QueryTableRequest);
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
        Ok::<_, crate::error::CatalogError>(pb::$Resp { data: Some($v.to_vec()), ..Default::default() })
    };
    (@answer unit $Resp:ident $v:ident) => {{
        let () = $v;
        Ok::<_, crate::error::CatalogError>(pb::$Resp::default())
    }};
    (@answer count $Resp:ident $v:ident) => {
        Ok::<_, crate::error::CatalogError>(pb::$Resp::wrap($v))
    };
    (@answer text $Resp:ident $v:ident) => {
        Ok::<_, crate::error::CatalogError>(pb::$Resp::wrap($v))
    };
    (@answer $answer:ident $Resp:ident $v:ident) => {
        Lift::<pb::$Resp>::lift($v).map_err(|e| e.internal(stringify!($Resp)))
    };
    (@call arrow $answer:ident $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model, $data).await
    };
    (@call $body:ident $answer:ident $ns:ident $method:ident $model:ident $data:ident) => {
        $ns.$method($model).await
    };
}

crate::api::inventory::for_each_spec_op!(namespace_service);
