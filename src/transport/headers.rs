//! Identity and context from transport headers, the same for every
//! transport: `x-api-key` and `Authorization` (a bearer token's value, or
//! `Basic …` whole, for a local user) become the request's identity; other headers (REST) or metadata entries (gRPC) become context
//! entries `header.<name>`, as the spec's Context schema says.

use std::collections::HashMap;

use http::{header, HeaderMap};
use lance_namespace::models::Identity;
use serde_json::{Map, Value};

/// Headers the caller's transport adds that are not caller context.
const TRANSPORT_HEADERS: &[&str] = &[
    "grpc-accept-encoding",
    "grpc-encoding",
    "grpc-timeout",
    "host",
    "content-length",
    "content-type",
    "connection",
    "accept",
    "accept-encoding",
    "transfer-encoding",
    "te",
    "user-agent",
    "authorization",
    "x-api-key",
];

/// What a request's transport headers say: the identity (`x-api-key`,
/// `Authorization`) and the context (`header.<name>`). Every transport
/// reads its headers here; each lays them over its own body form.
struct Said {
    api_key: Option<String>,
    auth_token: Option<String>,
    context: Vec<(String, String)>,
}

fn said(headers: &HeaderMap) -> Said {
    let api_key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let auth_token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|auth| {
            auth.strip_prefix("Bearer ")
                .or_else(|| auth.strip_prefix("bearer "))
                .unwrap_or(auth)
                .trim()
                .to_string()
        });
    let context = headers
        .iter()
        .filter(|(name, _)| !TRANSPORT_HEADERS.contains(&name.as_str()))
        .filter_map(|(name, value)| {
            let value = value.to_str().ok()?;
            Some((format!("header.{}", name.as_str()), value.to_string()))
        })
        .collect();
    Said {
        api_key,
        auth_token,
        context,
    }
}

/// Identity from `x-api-key` and `Authorization: Bearer`, and context from
/// the other request headers as `header.<name>` (the spec's Context mapping),
/// laid over a request's JSON (REST). Body values win over headers only
/// where no header was sent.
pub fn apply_headers(headers: &HeaderMap, obj: &mut Map<String, Value>) {
    let said = said(headers);
    let mut identity = match obj.remove("identity") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for (key, value) in [("api_key", said.api_key), ("auth_token", said.auth_token)] {
        if let Some(v) = value {
            identity.insert(key.into(), Value::from(v));
        }
    }
    if !identity.is_empty() {
        obj.insert("identity".into(), Value::Object(identity));
    }
    let mut context: HashMap<String, Value> = said
        .context
        .into_iter()
        .map(|(k, v)| (k, Value::from(v)))
        .collect();
    if let Some(Value::Object(body_ctx)) = obj.remove("context") {
        for (k, v) in body_ctx {
            context.entry(k).or_insert(v);
        }
    }
    if !context.is_empty() {
        obj.insert(
            "context".into(),
            Value::Object(context.into_iter().collect()),
        );
    }
}

/// The same, laid over a spec request's typed identity and context (gRPC).
pub fn apply_to(
    headers: &HeaderMap,
    identity: &mut Option<Box<Identity>>,
    context: &mut Option<HashMap<String, String>>,
) {
    let said = said(headers);
    let mut merged = identity.take().map(|i| *i).unwrap_or_default();
    merged.api_key = said.api_key.or(merged.api_key);
    merged.auth_token = said.auth_token.or(merged.auth_token);
    if merged.api_key.is_some() || merged.auth_token.is_some() {
        *identity = Some(Box::new(merged));
    }
    let mut all: HashMap<String, String> = said.context.into_iter().collect();
    for (k, v) in context.take().unwrap_or_default() {
        all.entry(k).or_insert(v);
    }
    if !all.is_empty() {
        *context = Some(all);
    }
}

/// Credentials from transport headers (REST, gRPC metadata, Flight).
pub fn credentials(headers: &HeaderMap) -> crate::auth::Credentials {
    let said = said(headers);
    crate::auth::Credentials::of_identity(Some(&Identity {
        api_key: said.api_key,
        auth_token: said.auth_token,
    }))
}

/// A call's metadata from its headers (gRPC metadata, Flight): its
/// credentials, request id and `Idempotency-Key`.
pub fn call(headers: &HeaderMap) -> crate::api::call::Call {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    crate::api::call::Call::new(credentials(headers), text("x-request-id"))
        .keyed(text(crate::api::call::IDEMPOTENCY_HEADER))
}
