//! The log: plain text for a terminal (the default), or one JSON object
//! per line (`--log-format json`) for a log pipeline.

use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

/// Start logging to stderr in `format` (`text` or `json`). The filter is
/// `LANCE_CATALOG_LOG` (tracing's directive syntax), by default this
/// crate's info lines and everyone else's warnings.
pub fn init(format: &str) {
    let filter = EnvFilter::try_from_env("LANCE_CATALOG_LOG").unwrap_or_else(|_| {
        // Targets match by prefix: `lance=` would also cover `lance_catalog`.
        "warn,lance_catalog=info".into()
    });
    // `LANCE_CATALOG_LOG_SPANS=close`: a line as each enabled span ends,
    // with its busy and idle time (where a request's time goes; the
    // catalog's phases are spans at debug level).
    let spans = match std::env::var("LANCE_CATALOG_LOG_SPANS").as_deref() {
        Ok("close") => FmtSpan::CLOSE,
        _ => FmtSpan::NONE,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(spans)
        .with_writer(std::io::stderr);
    if format == "json" {
        // Each event one object: its fields at the top level, beside
        // `timestamp`, `level`, `target` and `message`.
        builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .init();
    } else {
        builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
}
