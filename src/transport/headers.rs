//! Identity and context from transport headers, the same for every
//! transport: `x-api-key` and `Authorization` (a bearer token's value, or
//! `Basic …` whole, for a local user) become the request's identity; other headers (REST) or metadata entries (gRPC) become context
//! entries `header.<name>`, as the spec's Context schema says.

use std::collections::HashMap;

use http::{header, HeaderMap};
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

/// Identity from `x-api-key` and `Authorization: Bearer`, and context from
/// the other request headers as `header.<name>` (the spec's Context mapping).
/// Body values win over headers only where no header was sent.
pub fn apply_headers(headers: &HeaderMap, obj: &mut Map<String, Value>) {
    let mut identity = match obj.remove("identity") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(key) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        identity.insert("api_key".into(), Value::from(key));
    }
    if let Some(auth) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        let token = auth
            .strip_prefix("Bearer ")
            .or_else(|| auth.strip_prefix("bearer "))
            .unwrap_or(auth)
            .trim();
        identity.insert("auth_token".into(), Value::from(token));
    }
    if !identity.is_empty() {
        obj.insert("identity".into(), Value::Object(identity));
    }
    let mut context: HashMap<String, Value> = HashMap::new();
    for (name, value) in headers {
        if TRANSPORT_HEADERS.contains(&name.as_str()) {
            continue;
        }
        if let Ok(v) = value.to_str() {
            context.insert(format!("header.{}", name.as_str()), Value::from(v));
        }
    }
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

/// Credentials from transport headers (REST, gRPC metadata, Flight).
pub fn credentials(headers: &HeaderMap) -> crate::auth::Credentials {
    let mut obj = Map::new();
    apply_headers(headers, &mut obj);
    crate::auth::Credentials::from_identity(obj.get("identity"))
}
