//! `GET /openapi.json`: an OpenAPI 3.1 document of every route served,
//! built from the operation inventory (paths, methods, parameters, body
//! and answer kinds) and the contract's messages (the schemas: the proto
//! mirrors each spec model field for field, so its descriptors describe
//! the JSON bodies). Nothing in it is kept by hand but the few platform
//! routes and the problem document.
//!
//! proto3 cannot say which fields a model requires, so the schemas require
//! none and let every field be null: they check types and shapes, not
//! presence.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use prost_reflect::{FieldDescriptor, Kind as FieldKind, MessageDescriptor};
use serde_json::{json, Map, Value};

use crate::api::{AnswerKind, BodyKind, Kind, OpDef, Plane, CONTROL_OPS, OPS};

static DOCUMENT: LazyLock<String> = LazyLock::new(|| document().to_string());

/// The document, rendered once.
pub fn served() -> &'static str {
    &DOCUMENT
}

const SPEC_TAG: &str = "Lance Namespace";
const CONTROL_TAG: &str = "Control plane";
const TASKS_TAG: &str = "Maintenance tasks";
const PLATFORM_TAG: &str = "Platform";

/// The whole document.
pub fn document() -> Value {
    let mut schemas = Schemas::default();
    let mut paths: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for op in OPS.iter().chain(CONTROL_OPS) {
        let item = paths.entry(op.path.to_string()).or_default();
        item.insert(op.method.to_ascii_lowercase(), operation(op, &mut schemas));
    }
    for (path, id, summary, media, schema) in PLATFORM {
        let op = json!({
            "tags": [PLATFORM_TAG],
            "operationId": id,
            "summary": summary,
            "responses": {
                "200": {"description": "OK", "content": {*media: {"schema": schema()}}},
                "default": {"$ref": "#/components/responses/Error"},
            },
        });
        paths
            .entry(path.to_string())
            .or_default()
            .insert("get".into(), op);
    }
    json!({
        "openapi": "3.1.1",
        "info": {
            "title": "lance-catalog",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The Lance Namespace REST spec's operations, the catalog's control plane (projects, warehouses, access, trash) and the maintenance-task API, as this server serves them. The spec's routes are also served under /warehouses/{warehouse} (that warehouse alone) and under a configured prefix.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "tags": [
            {"name": SPEC_TAG, "description": "The Lance Namespace spec's operations."},
            {"name": CONTROL_TAG, "description": "Projects, warehouses, API keys, grants, events, protection, trash."},
            {"name": TASKS_TAG, "description": "The asynchronous Lance maintenance-task API."},
            {"name": PLATFORM_TAG, "description": "Probes, metrics and this document."},
        ],
        "paths": paths,
        "components": {
            "schemas": schemas.finish(),
            "responses": {
                "Error": {
                    "description": "An error, as an RFC 9457 problem document with the spec's error code.",
                    "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
                },
            },
        },
    })
}

type SchemaFn = fn() -> Value;

/// Routes for the platform rather than for Lance clients.
const PLATFORM: [(&str, &str, &str, &str, SchemaFn); 4] = [
    (
        "/healthz",
        "Healthz",
        "The process is alive",
        "application/json",
        status_object,
    ),
    (
        "/readyz",
        "Readyz",
        "The storage root and the control root answer",
        "application/json",
        status_object,
    ),
    (
        "/metrics",
        "Metrics",
        "Prometheus metrics (OpenMetrics text)",
        "application/openmetrics-text",
        text,
    ),
    (
        "/openapi.json",
        "OpenApi",
        "This document",
        "application/json",
        object,
    ),
];

fn status_object() -> Value {
    json!({"type": "object", "properties": {"status": {"type": "string"}}})
}

fn text() -> Value {
    json!({"type": "string"})
}

fn object() -> Value {
    json!({"type": "object"})
}

fn tag_of(op: &OpDef) -> &'static str {
    match op.plane {
        Plane::Spec => SPEC_TAG,
        Plane::Control if op.path.starts_with("/lance/oss/") => TASKS_TAG,
        Plane::Control => CONTROL_TAG,
    }
}

fn operation(op: &OpDef, schemas: &mut Schemas) -> Value {
    let mut out = Map::new();
    out.insert("tags".into(), json!([tag_of(op)]));
    out.insert("operationId".into(), json!(op.name));
    out.insert("summary".into(), json!(op.action.replace('_', " ")));
    out.insert("parameters".into(), Value::Array(parameters(op)));
    if let Some(body) = request_body(op, schemas) {
        out.insert("requestBody".into(), body);
    }
    let mut responses = Map::new();
    responses.insert(op.status.to_string(), answer(op, schemas));
    responses.insert(
        "default".into(),
        json!({"$ref": "#/components/responses/Error"}),
    );
    out.insert("responses".into(), Value::Object(responses));
    Value::Object(out)
}

fn parameters(op: &OpDef) -> Vec<Value> {
    let mut out = Vec::new();
    for name in op
        .path
        .split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(n, _)| n))
    {
        let description = match name {
            "id" => "The object's id: its parts joined by the delimiter (`$` unless `delimiter` says otherwise).",
            _ => "",
        };
        out.push(json!({
            "name": name, "in": "path", "required": true,
            "description": description, "schema": {"type": "string"},
        }));
    }
    if op.path.contains("{id}") || op.plane == Plane::Spec {
        out.push(json!({
            "name": "delimiter", "in": "query", "required": false,
            "description": "The delimiter of the id's parts.",
            "schema": {"type": "string"},
        }));
    }
    for (name, kind) in op.query {
        let schema = match kind {
            Kind::Str | Kind::Context => json!({"type": "string"}),
            Kind::Bool => json!({"type": "boolean"}),
            Kind::Int => json!({"type": "integer"}),
            Kind::JsonMap => json!({"type": "string", "description": "A JSON object of strings."}),
            Kind::List => json!({"type": "array", "items": {"type": "string"}}),
        };
        let mut p = json!({"name": name, "in": "query", "required": false, "schema": schema});
        if *kind == Kind::List {
            p["style"] = json!("form");
            p["explode"] = json!(true);
        }
        out.push(p);
    }
    if op.replayable() {
        out.push(json!({
            "name": "Idempotency-Key", "in": "header", "required": false,
            "description": "Names this change: a retry with the same key gets the first answer and does nothing again (kept for --idempotency-ttl); the same key with another request is refused (code 13).",
            "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
        }));
    }
    out
}

fn request_body(op: &OpDef, schemas: &mut Schemas) -> Option<Value> {
    let (media, schema, required) = match op.body {
        BodyKind::Json => ("application/json", schemas.named(op.request), true),
        BodyKind::Map => (
            "application/json",
            json!({"type": "object", "additionalProperties": {"type": ["string", "null"]}}),
            true,
        ),
        BodyKind::Params => ("application/json", object(), true),
        BodyKind::Arrow => (
            "application/vnd.apache.arrow.stream",
            json!({"type": "string", "contentMediaType": "application/vnd.apache.arrow.stream"}),
            true,
        ),
        // Clients send bodiless POSTs, or `{}`: both are taken.
        BodyKind::None if op.method == "POST" => ("application/json", object(), false),
        BodyKind::None => return None,
    };
    Some(json!({"required": required, "content": {media: {"schema": schema}}}))
}

fn answer(op: &OpDef, schemas: &mut Schemas) -> Value {
    let json_of = |schema: Value| json!({"application/json": {"schema": schema}});
    let content = match op.answer {
        AnswerKind::Json | AnswerKind::FullIds => Some(json_of(schemas.named(op.response))),
        AnswerKind::Oss if op.status == 204 => None,
        AnswerKind::Oss => Some(json_of(schemas.named(op.response))),
        AnswerKind::Empty => None,
        AnswerKind::ArrowFile => Some(json!({"application/vnd.apache.arrow.file": {
            "schema": {"type": "string", "contentMediaType": "application/vnd.apache.arrow.file"}}})),
        AnswerKind::Integer => Some(json_of(json!({"type": "integer"}))),
        AnswerKind::Text => Some(json_of(text())),
        AnswerKind::Map => Some(json_of(
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
        )),
    };
    let mut out = json!({"description": op.action.replace('_', " ")});
    if let Some(c) = content {
        out["content"] = c;
    }
    if op.answer == AnswerKind::Oss {
        out["headers"] = json!({"x-oss-table-id": {
            "description": "The table's real id.", "schema": {"type": "string"}}});
    }
    out
}

/// Component schemas, each written once from its message.
#[derive(Default)]
struct Schemas {
    done: BTreeMap<String, Value>,
}

impl Schemas {
    /// A reference to message `name`'s schema (any object when the
    /// contract has no such message).
    fn named(&mut self, name: &str) -> Value {
        match crate::grpc::descriptors::message(name) {
            Some(m) => self.reference(&m),
            None => object(),
        }
    }

    fn reference(&mut self, m: &MessageDescriptor) -> Value {
        match m.full_name() {
            "google.protobuf.Struct" => return object(),
            "google.protobuf.Value" => return json!({}),
            "google.protobuf.ListValue" => return json!({"type": "array"}),
            _ => {}
        }
        let name = m
            .full_name()
            .trim_start_matches(crate::grpc::descriptors::PACKAGE)
            .trim_start_matches('.')
            .replace('.', "_");
        if !self.done.contains_key(&name) {
            // Placed first, so a message that contains itself ends.
            self.done.insert(name.clone(), Value::Null);
            let schema = self.object(m);
            self.done.insert(name.clone(), schema);
        }
        json!({"$ref": format!("#/components/schemas/{name}")})
    }

    fn object(&mut self, m: &MessageDescriptor) -> Value {
        let mut properties = Map::new();
        for f in m.fields() {
            properties.insert(f.name().to_string(), self.field(&f));
        }
        json!({"type": "object", "properties": properties})
    }

    fn field(&mut self, f: &FieldDescriptor) -> Value {
        if f.is_map() {
            let value = match f.kind() {
                FieldKind::Message(entry) => self.kind(&entry.map_entry_value_field()),
                _ => json!({}),
            };
            return nullable(json!({"type": "object", "additionalProperties": value}));
        }
        let item = self.kind(f);
        if f.is_list() {
            return nullable(json!({"type": "array", "items": item}));
        }
        nullable(item)
    }

    fn kind(&mut self, f: &FieldDescriptor) -> Value {
        match f.kind() {
            FieldKind::Double | FieldKind::Float => json!({"type": "number"}),
            FieldKind::Int32
            | FieldKind::Int64
            | FieldKind::Sint32
            | FieldKind::Sint64
            | FieldKind::Sfixed32
            | FieldKind::Sfixed64 => json!({"type": "integer"}),
            FieldKind::Uint32 | FieldKind::Uint64 | FieldKind::Fixed32 | FieldKind::Fixed64 => {
                json!({"type": "integer", "minimum": 0})
            }
            FieldKind::Bool => json!({"type": "boolean"}),
            FieldKind::String => json!({"type": "string"}),
            FieldKind::Bytes => json!({"type": "string", "contentEncoding": "base64"}),
            FieldKind::Message(m) => self.reference(&m),
            FieldKind::Enum(_) => json!({"type": ["string", "integer"]}),
        }
    }

    fn finish(mut self) -> Value {
        self.done.insert(
            "ErrorResponse".into(),
            json!({
                "type": "object",
                "description": "An RFC 9457 problem document; `code` is the spec's error code.",
                "properties": {
                    "type": {"type": "string"},
                    "title": {"type": "string"},
                    "status": {"type": "integer"},
                    "detail": {"type": "string"},
                    "instance": {"type": "string"},
                    "error": {"type": "string"},
                    "code": {"type": "integer"},
                },
                "required": ["code", "error"],
            }),
        );
        json!(self.done)
    }
}

/// A schema that also admits null (proto3 cannot say a field is required).
fn nullable(schema: Value) -> Value {
    match schema.get("type") {
        _ if schema.get("$ref").is_some() => json!({"anyOf": [schema, {"type": "null"}]}),
        Some(Value::String(t)) => {
            let mut s = schema.clone();
            s["type"] = json!([t, "null"]);
            s
        }
        _ => schema,
    }
}
