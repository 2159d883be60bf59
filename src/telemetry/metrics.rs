//! The server's Prometheus metrics (`GET /metrics`, OpenMetrics text).
//!
//! One process-wide set: every server in a process (tests start several)
//! adds to it, as one process is one scrape target.

use std::sync::LazyLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OpLabels {
    pub operation: String,
    pub transport: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub operation: String,
    pub transport: String,
    /// The spec's numeric error code, and its name.
    pub code: String,
    pub error: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BytesLabels {
    pub operation: String,
    pub transport: String,
    /// `in` (request bodies) or `out` (answers).
    pub direction: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TransportLabels {
    pub transport: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TaskLabels {
    pub task_type: String,
    /// `submitted`, `started`, `completed`, `failed`, `abandoned`, `deleted`.
    pub event: String,
}

#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub requests: Family<OpLabels, Counter>,
    pub latency: Family<OpLabels, Histogram>,
    pub errors: Family<ErrorLabels, Counter>,
    pub in_flight: Family<TransportLabels, Gauge>,
    pub bytes: Family<BytesLabels, Counter>,
    pub registry_conflicts: Family<KindLabels, Counter>,
    pub registry_retries: Family<KindLabels, Counter>,
    pub tasks: Family<TaskLabels, Counter>,
    pub tasks_running: Gauge,
}

/// Request latency buckets: 0.25 ms to about 8 s, doubling.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.00025, 2.0, 16))
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    &METRICS
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::with_prefix("lance_catalog");
        let m = Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            errors: Family::default(),
            in_flight: Family::default(),
            bytes: Family::default(),
            registry_conflicts: Family::default(),
            registry_retries: Family::default(),
            tasks: Family::default(),
            tasks_running: Gauge::default(),
            registry: Registry::default(),
        };
        registry.register(
            "requests",
            "Requests answered, by operation and transport (rest, grpc, flight)",
            m.requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time from a request's arrival to the end of its answer",
            m.latency.clone(),
        );
        registry.register(
            "errors",
            "Requests answered with a spec error, by its code",
            m.errors.clone(),
        );
        registry.register(
            "requests_in_flight",
            "Requests being served now",
            m.in_flight.clone(),
        );
        registry.register(
            "bytes",
            "Body bytes received (in) and sent (out), by operation",
            m.bytes.clone(),
        );
        registry.register(
            "registry_conflicts",
            "Conditional registry writes that lost to another writer",
            m.registry_conflicts.clone(),
        );
        registry.register(
            "registry_retries",
            "Registry changes re-read and tried again after a conflict or a stale read",
            m.registry_retries.clone(),
        );
        registry.register(
            "maintenance_tasks",
            "Maintenance-task events on this replica: submitted, started, completed, failed, abandoned, deleted",
            m.tasks.clone(),
        );
        registry.register(
            "maintenance_tasks_running",
            "Maintenance tasks this replica is running now",
            m.tasks_running.clone(),
        );
        Self { registry, ..m }
    }

    /// The metrics in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    pub fn registry_conflict(&self, kind: &str) {
        self.registry_conflicts
            .get_or_create(&KindLabels { kind: kind.into() })
            .inc();
    }

    pub fn registry_retry(&self, kind: &str) {
        self.registry_retries
            .get_or_create(&KindLabels { kind: kind.into() })
            .inc();
    }

    pub fn task_event(&self, task_type: &str, event: &str) {
        self.tasks
            .get_or_create(&TaskLabels {
                task_type: task_type.into(),
                event: event.into(),
            })
            .inc();
    }
}
