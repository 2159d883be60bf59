//! The middleware every request of every transport passes: its id, its
//! metrics, its log line.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use http_body::{Frame, SizeHint};

use super::metrics::{metrics, BytesLabels, ErrorLabels, OpLabels, TransportLabels};
use super::{RequestInfo, REQUEST};

/// How a request came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Rest,
    Grpc,
    Flight,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Rest => "rest",
            Transport::Grpc => "grpc",
            Transport::Flight => "flight",
        }
    }
}

const REQUEST_ID: &str = "x-request-id";

/// Paths that are probes and scrapes: counted, logged only at debug level
/// (a kubelet calls them every few seconds).
const PROBES: [(&str, &str); 3] = [
    ("/healthz", "Healthz"),
    ("/readyz", "Readyz"),
    ("/metrics", "Metrics"),
];

/// gRPC method names a label may carry: every inventory operation, the
/// streaming query, Flight's, health's and reflection's. Any other name
/// is `unknown`, so a client cannot grow the label set.
static GRPC_METHODS: LazyLock<std::collections::HashSet<&'static str>> = LazyLock::new(|| {
    let mut names: std::collections::HashSet<&'static str> = crate::api::OPS
        .iter()
        .chain(crate::api::CONTROL_OPS)
        .map(|op| op.name)
        .collect();
    names.extend([
        "QueryTableStream",
        "Handshake",
        "ListFlights",
        "GetFlightInfo",
        "PollFlightInfo",
        "GetSchema",
        "DoGet",
        "DoPut",
        "DoExchange",
        "DoAction",
        "ListActions",
        "Check",
        "Watch",
        "List",
        "ServerReflectionInfo",
    ]);
    names
});

/// Name, time, count and log one request.
pub async fn observe(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let path = req.uri().path();
    let is_grpc = req
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
    let transport = match is_grpc {
        false => Transport::Rest,
        true if path.starts_with("/arrow.flight.protocol.") => Transport::Flight,
        true => Transport::Grpc,
    };
    let operation = match transport {
        Transport::Rest => PROBES.iter().find(|(p, _)| *p == path).map(|(_, op)| *op),
        _ => {
            let method = path.rsplit('/').next().unwrap_or_default();
            Some(GRPC_METHODS.get(method).copied().unwrap_or("unknown"))
        }
    };
    let probe = transport == Transport::Rest && operation.is_some();
    let path = path.to_string();
    // One id per request: the caller's when it is short and plain (it is
    // logged and echoed), else a fresh one. The REST gateway and the gRPC
    // error statuses read it from here.
    let given = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|id| plain_id(id))
        .map(str::to_string);
    let id = given.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut req = req;
    if let Ok(v) = HeaderValue::from_str(&id) {
        req.headers_mut().insert(REQUEST_ID, v);
    }
    let info = Arc::new(RequestInfo {
        id,
        operation: std::sync::Mutex::new(operation),
        ..Default::default()
    });
    metrics()
        .in_flight
        .get_or_create(&TransportLabels {
            transport: transport.as_str().into(),
        })
        .inc();
    let bytes_in = Arc::new(AtomicU64::new(0));
    let req = req.map(|b| {
        Body::new(Counted {
            inner: b,
            count: bytes_in.clone(),
        })
    });
    // Recorded even when the request is dropped before it has an answer
    // (the client went away, a gRPC deadline passed): as status 499.
    let mut pending = Pending(Some(Finish {
        status: 499,
        grpc_status: None,
        info: info.clone(),
        transport,
        path,
        probe,
        start,
        bytes_in,
        bytes_out: 0,
    }));
    let mut resp = REQUEST.scope(info.clone(), next.run(req)).await;
    if let Ok(v) = HeaderValue::from_str(&info.id) {
        resp.headers_mut().entry(REQUEST_ID).or_insert(v);
    }
    let Some(mut finish) = pending.0.take() else {
        return resp;
    };
    finish.status = resp.status().as_u16();
    finish.grpc_status = resp
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.parse().ok());
    resp.map(|b| {
        Body::new(Observed {
            inner: b,
            finish: Some(finish),
        })
    })
}

/// A request's record until its answer takes it over.
struct Pending(Option<Finish>);

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f.record();
        }
    }
}

/// A caller's request id is kept only when it is short and plain: it is
/// logged and echoed.
pub fn plain_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// A request body that counts the bytes it passes.
struct Counted {
    inner: Body,
    count: Arc<AtomicU64>,
}

impl http_body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            if let Some(data) = frame.data_ref() {
                self.count.fetch_add(data.len() as u64, Ordering::Relaxed);
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// What is recorded when the answer has been sent (or dropped).
struct Finish {
    info: Arc<RequestInfo>,
    transport: Transport,
    path: String,
    probe: bool,
    start: Instant,
    status: u16,
    grpc_status: Option<i32>,
    bytes_in: Arc<AtomicU64>,
    bytes_out: u64,
}

impl Finish {
    fn record(self) {
        let m = metrics();
        let transport = self.transport.as_str();
        let operation = self.info.operation().unwrap_or("unmatched");
        let elapsed = self.start.elapsed();
        let labels = OpLabels {
            operation: operation.into(),
            transport: transport.into(),
        };
        m.requests.get_or_create(&labels).inc();
        m.latency
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
        m.in_flight
            .get_or_create(&TransportLabels {
                transport: transport.into(),
            })
            .dec();
        let bytes_in = self.bytes_in.load(Ordering::Relaxed);
        for (direction, n) in [("in", bytes_in), ("out", self.bytes_out)] {
            if n > 0 {
                m.bytes
                    .get_or_create(&BytesLabels {
                        operation: operation.into(),
                        transport: transport.into(),
                        direction: direction.into(),
                    })
                    .inc_by(n);
            }
        }
        let code = self.info.code();
        if let Some(code) = code {
            m.errors
                .get_or_create(&ErrorLabels {
                    operation: operation.into(),
                    transport: transport.into(),
                    code: code.0.to_string(),
                    error: code.name().into(),
                })
                .inc();
        }
        let principal = self.info.principal();
        let duration_ms = (elapsed.as_secs_f64() * 1e6).round() / 1e3;
        macro_rules! line {
            ($level:ident) => {
                tracing::$level!(
                    target: "lance_catalog::request",
                    request_id = %self.info.id,
                    transport,
                    operation,
                    path = %self.path,
                    principal = principal.as_deref().unwrap_or("-"),
                    status = self.status,
                    grpc_status = self.grpc_status,
                    code = code.map(|c| c.0),
                    error = code.map(|c| c.name()),
                    duration_ms,
                    bytes_in,
                    bytes_out = self.bytes_out,
                    "request"
                )
            };
        }
        if self.probe {
            line!(debug);
        } else {
            line!(info);
        }
    }
}

/// An answer body that counts what it sends, reads a gRPC status from
/// trailers, and records the request when it ends or is dropped (a
/// streamed answer is timed to its last byte).
struct Observed {
    inner: Body,
    finish: Option<Finish>,
}

impl http_body::Body for Observed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        // A streamed answer's errors are made while it is polled, outside
        // the handler: they are noted on this request all the same.
        let this = &mut *self;
        let polled = match this.finish.as_ref() {
            Some(f) => {
                REQUEST.sync_scope(f.info.clone(), || Pin::new(&mut this.inner).poll_frame(cx))
            }
            None => Pin::new(&mut this.inner).poll_frame(cx),
        };
        if let Some(f) = self.finish.as_mut() {
            match &polled {
                Poll::Ready(Some(Ok(frame))) => {
                    if let Some(data) = frame.data_ref() {
                        f.bytes_out += data.len() as u64;
                    } else if let Some(trailers) = frame.trailers_ref() {
                        f.grpc_status = trailers
                            .get("grpc-status")
                            .and_then(|v| v.to_str().ok())
                            .and_then(|s| s.parse().ok())
                            .or(f.grpc_status);
                    }
                }
                Poll::Ready(None) | Poll::Ready(Some(Err(_))) => {
                    if let Some(f) = self.finish.take() {
                        f.record();
                    }
                }
                Poll::Pending => {}
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        if let Some(f) = self.finish.take() {
            f.record();
        }
    }
}
