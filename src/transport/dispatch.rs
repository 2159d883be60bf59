//! From a request object to the core call and back, for every operation in
//! the inventory (REST's routes and Flight's actions): convert the object into the request model, call the
//! namespace, turn the answer into a reply of the row's answer kind.

use crate::api::spec::Spec;
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::api::call::IDEMPOTENCY_CONTEXT;
use crate::api::control::*;
use crate::api::inventory::{for_each_control_op, for_each_spec_op};
use crate::api::OpDef;
use crate::error::CatalogError;

/// What a successful operation answers.
pub(crate) enum Reply {
    /// A JSON value (an object for model answers; a bare integer or string
    /// for count and plan answers).
    Json(Value),
    /// A JSON object whose `tables` are `$`-joined full ids.
    FullIds(Value),
    /// An empty 200 (the exists operations).
    Empty,
    /// An Arrow IPC file (query).
    ArrowFile(Bytes),
    /// An Arrow IPC file, chunk by chunk (a streamed query).
    ArrowStream(crate::core::data::rows::Chunks),
}

/// The request model of a JSON body; a mistake names the field it is in.
pub(crate) fn model<T: DeserializeOwned>(obj: Map<String, Value>) -> Result<T, CatalogError> {
    serde_path_to_error::deserialize(Value::Object(obj)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        CatalogError::invalid(match path.as_str() {
            "." => format!("invalid request: {inner}"),
            _ => format!("invalid request: {path}: {inner}"),
        })
    })
}

pub(crate) fn json<T: Serialize>(v: T) -> Result<Value, CatalogError> {
    serde_json::to_value(v)
        .map_err(|e| CatalogError::internal(format!("cannot render answer: {e}")))
}

/// A bare `{key: value}` map body as the request model's `metadata`; keys
/// given as `null` ask for deletion, which the model cannot carry, so they
/// travel in the context (see `core::UNSET_KEYS`).
fn map_body(obj: Map<String, Value>) -> Map<String, Value> {
    let mut req = Map::new();
    let mut metadata = Map::new();
    let mut unset = Vec::new();
    for (k, v) in obj {
        match k.as_str() {
            "id" | "branch" | "identity" | "context" => {
                req.insert(k, v);
            }
            _ if v.is_null() => unset.push(k),
            _ => {
                metadata.insert(k, v);
            }
        }
    }
    req.insert("metadata".into(), Value::Object(metadata));
    if !unset.is_empty() {
        let ctx = req
            .entry("context")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(ctx) = ctx {
            ctx.insert(
                crate::core::UNSET_KEYS.into(),
                Value::from(Value::from(unset).to_string()),
            );
        }
    }
    req
}

macro_rules! call {
    (arrow, $ns:ident . $method:ident, $obj:ident, $body:ident) => {
        $ns.$method(model($obj)?, $body).await?
    };
    (map, $ns:ident . $method:ident, $obj:ident, $body:ident) => {
        $ns.$method(model(map_body($obj))?).await?
    };
    ($other:ident, $ns:ident . $method:ident, $obj:ident, $body:ident) => {
        $ns.$method(model($obj)?).await?
    };
}

macro_rules! reply {
    (json, $v:expr) => {
        Reply::Json(json($v)?)
    };
    (ids, $v:expr) => {
        Reply::FullIds(json($v)?)
    };
    (unit, $v:expr) => {{
        $v;
        Reply::Empty
    }};
    (bytes, $v:expr) => {
        Reply::ArrowFile($v)
    };
    (count, $v:expr) => {
        Reply::Json(Value::from($v))
    };
    (text, $v:expr) => {
        Reply::Json(Value::from($v))
    };
    (map, $v:expr) => {
        Reply::Json(json($v.metadata.unwrap_or_default())?)
    };
}

macro_rules! dispatch_fn {
    ($( $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $([$field:literal])?,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; )*) => {
        /// Run operation `op` with its request object (and Arrow body, for
        /// the data operations).
        pub(crate) async fn dispatch(
            ns: &dyn Spec,
            op: &OpDef,
            obj: Map<String, Value>,
            body: Bytes,
        ) -> Result<Reply, CatalogError> {
            let _ = &body;
            Ok(match op.name {
                $( stringify!($Name) => reply!($answer, call!($body, ns.$method, obj, body)), )*
                other => {
                    return Err(CatalogError::unsupported(format!(
                        "operation {other} is not served"
                    )))
                }
            })
        }
    };
}

for_each_spec_op!(dispatch_fn);

macro_rules! dispatch_control_fn {
    ($( $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; )*) => {
        /// Run control-plane operation `op` with its request object. The
        /// control plane's models carry no identity: the caller the
        /// transport put in `identity` travels as the call's metadata.
        pub(crate) async fn dispatch_control(
            plane: &dyn ControlPlane,
            request_id: Option<String>,
            op: &OpDef,
            obj: Map<String, Value>,
        ) -> Result<Reply, CatalogError> {
            // The key arrives as every header does, in the context (REST).
            let key = obj
                .get("context")
                .and_then(|c| c.get(IDEMPOTENCY_CONTEXT))
                .and_then(Value::as_str)
                .map(str::to_string);
            let call = &Call::new(Credentials::from_identity(obj.get("identity")), request_id)
                .keyed(key);
            match op.name {
                $( stringify!($Name) => {
                    let answer: $Resp = plane.$method(call, model::<$Req>(obj)?).await?;
                    Ok(Reply::Json(json(answer)?))
                } )*
                other => Err(CatalogError::unsupported(format!(
                    "operation {other} is not served"
                ))),
            }
        }
    };
}

for_each_control_op!(dispatch_control_fn);
