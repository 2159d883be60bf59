//! The REST gateway: the spec's routes, served by axum over the core.
//! It parses requests into spec models and renders answers; it decides
//! nothing about what an operation means.

mod console;
pub mod limits;
pub mod openapi;
mod probes;
mod problem;
mod request;
mod streamed;

use std::collections::HashMap;
use std::sync::Arc;

use crate::api::spec::Spec;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter};
use axum::Router;
use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Map, Value};

use crate::api::control::ControlPlane;
pub use crate::api::{AnswerKind, BodyKind, Kind, OpDef, Plane, CONTROL_OPS, OPS};
use crate::error::CatalogError;
use crate::governance::Governance;
use crate::transport::dispatch::{dispatch, dispatch_control, Reply};
pub use problem::Problem;
use request::{
    apply_headers, apply_query, check_arrow_content_type, check_content_md5, content_md5,
    json_body, set_id, split_id, Query,
};

/// Settings of the REST gateway.
#[derive(Debug, Clone)]
pub struct RestConfig {
    /// Also serve the API under this prefix (e.g. `/lance` for
    /// Gravitino-style deployments); the unprefixed routes stay.
    pub prefix: Option<String>,
    /// Largest Arrow IPC body accepted (create, insert, merge-insert).
    pub max_arrow_body: usize,
    /// Largest JSON body accepted.
    pub max_json_body: usize,
    /// A request body that sends nothing for this long is refused (408).
    pub body_idle_timeout: std::time::Duration,
    /// An HTTP/1.1 client that takes longer than this to send a request's
    /// headers is disconnected.
    pub header_read_timeout: std::time::Duration,
    /// Serve the web console at `/console/` (`console.rs`).
    pub console: bool,
}

impl Default for RestConfig {
    fn default() -> Self {
        Self {
            prefix: None,
            max_arrow_body: 2 * 1024 * 1024 * 1024,
            max_json_body: 16 * 1024 * 1024,
            body_idle_timeout: std::time::Duration::from_secs(60),
            header_read_timeout: std::time::Duration::from_secs(30),
            console: true,
        }
    }
}

#[derive(Clone)]
struct AppState {
    ns: Arc<dyn Spec>,
    /// The control plane, when this router serves one.
    control: Option<Arc<dyn ControlPlane>>,
    /// The governance layer, which names the caller before the request's
    /// shape is read (identity is first in the guard order).
    gate: Option<Arc<Governance>>,
    config: Arc<RestConfig>,
}

/// The gateway's router over any namespace implementation: the 54 spec
/// routes only.
pub fn router(ns: Arc<dyn Spec>, config: RestConfig) -> Router {
    let api = routes(ns, None, None, &config);
    finish(api, &config)
}

/// The catalog's full router: the spec routes and the catalog's own
/// control-plane routes, both from the inventory.
///
/// The spec routes are also served under `/warehouses/{warehouse}`: a
/// Lance client whose URI ends there sees that warehouse alone, and its
/// top-level namespaces are created in it.
pub fn catalog_router(gov: Arc<Governance>, config: RestConfig) -> Router {
    let scoped = routes(gov.clone(), None, Some(gov.clone()), &config).fallback(not_found);
    let mut api = routes(gov.clone(), Some(gov.clone()), Some(gov.clone()), &config)
        .nest("/warehouses/{warehouse}", scoped)
        .merge(probes::routes(gov));
    if config.console {
        api = api.merge(console::routes());
    }
    finish(api, &config)
}

/// Run one operation of the inventory by its row, with its request as the
/// REST gateway would build it (a JSON object, and the Arrow body of a data
/// operation), over any namespace and control plane: for tools and tests
/// that sweep every operation over another transport (e.g. gRPC clients).
pub async fn invoke(
    ns: &dyn Spec,
    control: &dyn ControlPlane,
    op: &OpDef,
    obj: Map<String, Value>,
    body: Bytes,
) -> Result<(), CatalogError> {
    match op.plane {
        Plane::Control => dispatch_control(control, None, op, obj).await.map(|_| ()),
        Plane::Spec => dispatch(ns, op, obj, body).await.map(|_| ()),
    }
}

fn routes(
    ns: Arc<dyn Spec>,
    control: Option<Arc<dyn ControlPlane>>,
    gate: Option<Arc<Governance>>,
    config: &RestConfig,
) -> Router {
    let ops: Vec<&'static OpDef> = match control {
        Some(_) => OPS.iter().chain(CONTROL_OPS).copied().collect(),
        None => OPS.to_vec(),
    };
    let state = AppState {
        ns,
        control,
        gate,
        config: Arc::new(config.clone()),
    };
    // One method router per path: several operations may share a path
    // with different methods (GET, PATCH and DELETE of one resource).
    let mut by_path: std::collections::BTreeMap<&str, MethodRouter<AppState>> =
        std::collections::BTreeMap::new();
    for op in ops {
        let handler = move |state: State<AppState>, path: PathParams, req: Request| async move {
            handle(op, state, path, req).await
        };
        let filter = match op.method {
            "GET" => MethodFilter::GET,
            "PATCH" => MethodFilter::PATCH,
            "DELETE" => MethodFilter::DELETE,
            "PUT" => MethodFilter::PUT,
            _ => MethodFilter::POST,
        };
        let route = by_path.remove(op.path).unwrap_or_default();
        by_path.insert(op.path, route.on(filter, handler));
    }
    let mut api = Router::new();
    for (path, route) in by_path {
        api = api.route(path, route.fallback(method_not_allowed));
    }
    api.with_state(state)
}

/// Serve `api` at the root and, when configured, under the prefix too.
fn finish(api: Router, config: &RestConfig) -> Router {
    let api = api.fallback(not_found);
    let mut app = Router::new().merge(api.clone());
    if let Some(prefix) = config.prefix.as_deref() {
        let prefix = format!("/{}", prefix.trim_matches('/'));
        if prefix != "/" {
            app = app.nest(&prefix, api);
        }
    }
    let idle = config.body_idle_timeout;
    app.fallback(not_found)
        .layer(axum::middleware::from_fn(move |req, next| {
            limits::limits(idle, req, next)
        }))
}

pub(crate) async fn not_found(req: Request) -> Response {
    let path = req.uri().path().to_string();
    Problem::invalid(
        format!(
            "no operation is served at {} {path}; the API is described in spec/README.md",
            req.method()
        ),
        path,
    )
    .with_status(StatusCode::NOT_FOUND)
    .into_response()
}

pub(crate) async fn method_not_allowed(req: Request) -> Response {
    let path = req.uri().path().to_string();
    Problem::invalid(
        format!("{} is not the method of {path}", req.method()),
        path,
    )
    .with_status(StatusCode::METHOD_NOT_ALLOWED)
    .into_response()
}

/// The route's path parameters, or why they could not be read (an id
/// that is not UTF-8 once percent-decoded).
type PathParams = Result<Option<Path<HashMap<String, String>>>, PathRejection>;

async fn handle(
    op: &'static OpDef,
    State(state): State<AppState>,
    path: PathParams,
    req: Request,
) -> Response {
    crate::telemetry::note_operation(op.name);
    let instance = req.uri().path().to_string();
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let ran = run(op, &state, path, req, &instance, &request_id);
    let mut resp = match ran.await {
        Ok(resp) => resp,
        Err(problem) => problem
            .with_request_id(&request_id)
            .named(op.answer == AnswerKind::Oss)
            .into_response(),
    };
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        resp.headers_mut().insert("x-request-id", v);
    }
    resp
}

async fn run(
    op: &'static OpDef,
    state: &AppState,
    path: PathParams,
    req: Request,
    instance: &str,
    request_id: &str,
) -> Result<Response, Problem> {
    let params = path
        .map_err(|e| path_problem(&e, instance))?
        .map(|Path(p)| p)
        .unwrap_or_default();
    let query = Query::parse(req.uri().query());
    let delimiter = match op.answer {
        AnswerKind::Oss => query.oss_delimiter(instance)?,
        _ => query.delimiter(instance)?,
    };
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    if let Some(gate) = &state.gate {
        let caller = crate::transport::headers::credentials(&headers);
        gate.authenticate(&caller)
            .await
            .map_err(|e| Problem::new(e, instance))?;
    }
    let limit = match op.body {
        BodyKind::Arrow => state.config.max_arrow_body,
        _ => state.config.max_json_body,
    };
    // With the catalog's governance, create and insert stream their body
    // into the core (`streamed.rs`); every other body is read whole.
    let streaming = state
        .gate
        .as_ref()
        .filter(|_| op.flow == crate::api::Flow::Streams);
    let mut body_failure = None;
    let mut chunks = None;
    let (mut obj, data) = match (op.body, streaming) {
        (BodyKind::Arrow, Some(_)) => {
            check_arrow_content_type(&headers, instance)?;
            let md5 = content_md5(&headers, instance)?;
            let (body, failure) = streamed::body_chunks(body, limit, md5, instance);
            chunks = Some(body);
            body_failure = Some(failure);
            (Map::new(), Bytes::new())
        }
        _ => {
            let body = read_body(body, limit, instance).await?;
            check_content_md5(&headers, &body, instance)?;
            whole_body(op, &headers, body, instance)?
        }
    };
    // `{id}` is the object id, split by the delimiter; other path
    // parameters (`{index_name}`, `{job_id}`) are strings.
    let mut scope = None;
    for (name, raw) in &params {
        let value = match name.as_str() {
            // The warehouse of a scoped URL travels in the context.
            "warehouse" => {
                scope = Some(raw.clone());
                continue;
            }
            "id" => Value::from(split_id(raw, &delimiter)),
            _ => Value::from(raw.as_str()),
        };
        set_id(&mut obj, name, value, instance)?;
    }
    apply_query(op.query, &query, &mut obj, instance)?;
    apply_headers(&headers, &mut obj);
    if let Some(w) = scope {
        let ctx = obj
            .entry("context")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(ctx) = ctx {
            ctx.insert(crate::core::reserved::WAREHOUSE.to_string(), Value::from(w));
        }
    }

    let reply = match (op.plane, &state.control) {
        (Plane::Control, Some(control)) => {
            let id = Some(request_id.to_string());
            dispatch_control(control.as_ref(), id, op, obj).await
        }
        _ => match streaming {
            Some(gov) => {
                let body = chunks.unwrap_or_else(|| futures::stream::empty().boxed());
                streamed::run(gov, op, obj, body).await
            }
            None => dispatch(state.ns.as_ref(), op, obj, data).await,
        },
    }
    .map_err(|e: CatalogError| {
        // A body that could not be read explains the core's error, with
        // its own status (408, 413).
        match body_failure.as_ref().and_then(|f| f.take()) {
            Some(problem) => problem,
            None => Problem::new(e, instance),
        }
    })?;
    Ok(render(op, reply, &delimiter))
}

/// A path that could not be read, as a problem document.
fn path_problem(e: &PathRejection, instance: &str) -> Problem {
    Problem::invalid(
        format!(
            "the request path cannot be read: {} (ids must be UTF-8 once percent-decoded)",
            e.body_text()
        ),
        instance,
    )
}

async fn read_body(body: Body, limit: usize, instance: &str) -> Result<Bytes, Problem> {
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|e| body_problem(&e, limit, instance))
}

/// Why a request body could not be read, with its status.
fn body_problem(e: &axum::Error, limit: usize, instance: &str) -> Problem {
    let too_large = std::error::Error::source(e)
        .map(|s| s.is::<http_body_util::LengthLimitError>())
        .unwrap_or(false)
        || e.to_string().contains("length limit");
    if limits::is_idle_timeout(e) {
        return Problem::invalid(
            format!("the request body stalled: {e}; send the whole body without pausing"),
            instance,
        )
        .with_status(StatusCode::REQUEST_TIMEOUT);
    }
    match too_large {
        true => too_large_problem(limit, instance),
        false => Problem::invalid(format!("cannot read the request body: {e}"), instance),
    }
}

fn too_large_problem(limit: usize, instance: &str) -> Problem {
    Problem::invalid(
        format!("the request body exceeds this operation's limit of {limit} bytes"),
        instance,
    )
    .with_status(StatusCode::PAYLOAD_TOO_LARGE)
}

/// A body read whole, as the request object (JSON bodies) and the Arrow
/// payload (data bodies).
fn whole_body(
    op: &OpDef,
    headers: &HeaderMap,
    body: Bytes,
    instance: &str,
) -> Result<(Map<String, Value>, Bytes), Problem> {
    Ok(match op.body {
        BodyKind::Json | BodyKind::Map => (json_body(headers, &body, instance)?, Bytes::new()),
        BodyKind::None => {
            // Clients send bodiless POSTs, or `{}`; accept both.
            let obj = if op.method == "POST" {
                json_body(headers, &body, instance)?
            } else {
                Map::new()
            };
            (obj, Bytes::new())
        }
        BodyKind::Arrow => {
            check_arrow_content_type(headers, instance)?;
            (Map::new(), body)
        }
        BodyKind::Params => {
            let params = json_body(headers, &body, instance)?;
            let mut obj = Map::new();
            obj.insert("params".into(), Value::Object(params));
            (obj, Bytes::new())
        }
    })
}

fn render(op: &OpDef, reply: Reply, delimiter: &str) -> Response {
    let status = StatusCode::from_u16(op.status).unwrap_or(StatusCode::OK);
    match (op.answer, reply) {
        (AnswerKind::Oss, Reply::Json(value)) => oss_answer(status, value),
        (_, reply) => render_reply(op, status, reply, delimiter),
    }
}

fn render_reply(op: &OpDef, status: StatusCode, reply: Reply, delimiter: &str) -> Response {
    match reply {
        Reply::Empty => (status, Body::empty()).into_response(),
        Reply::ArrowFile(bytes) => arrow_file(status, Body::from(bytes)),
        Reply::ArrowStream(chunks) => arrow_file(status, streamed::answer_body(chunks)),
        Reply::FullIds(mut value) => {
            // The core names tables by `$`-joined ids; answer in the
            // caller's delimiter.
            if let Some(Value::Array(tables)) = value.get_mut("tables") {
                for t in tables.iter_mut() {
                    if let Value::String(s) = t {
                        *s = crate::core::manifest_id(s).join(delimiter);
                    }
                }
            }
            render(op, Reply::Json(value), delimiter)
        }
        Reply::Json(value) => {
            let headers = context_headers(&value);
            let mut resp = (
                status,
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                value.to_string(),
            )
                .into_response();
            resp.headers_mut().extend(headers);
            resp
        }
    }
}

fn arrow_file(status: StatusCode, body: Body) -> Response {
    let content_type = (
        axum::http::header::CONTENT_TYPE,
        "application/vnd.apache.arrow.file",
    );
    (status, [content_type], body).into_response()
}

/// A maintenance-API answer: the table's real id in `x-oss-table-id`, the
/// rest of the model as the body (a 204 has none).
fn oss_answer(status: StatusCode, mut value: Value) -> Response {
    let table_id = match value.as_object_mut().and_then(|m| m.remove("table_id")) {
        Some(Value::String(t)) => Some(t),
        _ => None,
    };
    let mut resp = if status == StatusCode::NO_CONTENT {
        status.into_response()
    } else {
        (
            status,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            value.to_string(),
        )
            .into_response()
    };
    if let Some(v) = table_id
        .filter(|t| !t.is_empty())
        .and_then(|t| HeaderValue::from_str(&t).ok())
    {
        resp.headers_mut().insert("x-oss-table-id", v);
    }
    resp
}

/// Context entries `header.<name>` of an answer become response headers.
fn context_headers(value: &Value) -> HeaderMap {
    let mut out = HeaderMap::new();
    if let Some(Value::Object(ctx)) = value.get("context") {
        for (k, v) in ctx {
            let (Some(name), Some(v)) = (k.strip_prefix("header."), v.as_str()) else {
                continue;
            };
            if let (Ok(n), Ok(v)) = (HeaderName::try_from(name), HeaderValue::from_str(v)) {
                out.insert(n, v);
            }
        }
    }
    out
}
