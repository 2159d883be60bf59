//! Running the server: REST and gRPC on one port (or gRPC on its own),
//! log where it serves, stop gracefully.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::app::config::ServeArgs;
use crate::core::Catalog;
use crate::governance::Governance;
use crate::grpc;
use crate::rest::{self, RestConfig};

/// Serve until SIGINT or SIGTERM; in-flight requests finish first.
pub async fn serve(args: ServeArgs) -> Result<(), String> {
    crate::core::set_cache_limits(args.storage.cache_limits());
    crate::core::set_intent_expiry(args.drops.create_intent_expiry()?);
    crate::core::set_batch_intent_expiry(args.drops.batch_intent_expiry()?);
    let gov = Governance::open(&args.governance()?)
        .await
        .map_err(|e| e.message.clone())?;
    let listener = TcpListener::bind(&args.serving.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.serving.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    if !args.access.required() && !addr.ip().is_loopback() {
        tracing::warn!(
            "serving on {addr} with --auth none: anyone who reaches this port may read, write and drop every table; use --auth required"
        );
    }
    if args.storage.forward_storage_secrets {
        tracing::warn!(
            "--forward-storage-secrets: secret-like storage options (keys, tokens, passwords) are handed to every caller allowed to describe a table; such a caller reaches every table those credentials reach, past every grant"
        );
    }
    let rest_config = args.serving.rest();
    let header_timeout = rest_config.header_read_timeout;
    let prefix = rest_config.prefix.clone().unwrap_or_default();
    tracing::info!(
        "lance-catalog serving REST on http://{addr} (root {}, control root {}, warehouses {}, prefix {:?})",
        gov.home().root(),
        gov.control_root(),
        if gov.warehouses_on() { "on" } else { "off" },
        prefix
    );
    // Also on stdout, unbuffered by the log filter, for scripts that wait on it.
    println!("lance-catalog listening on http://{addr}");
    // Ray jobs call back here unless --ray-catalog-url says otherwise.
    let host = match addr.ip().is_unspecified() {
        true => std::net::SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), addr.port()),
        false => addr,
    };
    gov.set_callback_url(format!("http://{host}{prefix}"));
    let gov = Arc::new(gov);
    if let Err(reason) = gov.check_ready().await {
        tracing::warn!(%reason, "starting not ready: /readyz answers 503 until storage answers");
    }
    tokio::spawn(refresh_readiness(Arc::downgrade(&gov)));
    let sweep_every = args.drops.sweep_interval()?;
    if sweep_every > 0 {
        tokio::spawn(sweep_trash(gov.clone(), sweep_every));
    }
    let audit = args.audit.settings()?;
    if audit.upkeep_s > 0 {
        tokio::spawn(audit_upkeep(gov.clone(), audit.upkeep_s, audit.retention_s));
    }
    if let Some(sink) = audit.sink {
        let gov = gov.clone();
        tokio::spawn(async move { gov.run_audit_sink(sink).await });
    }
    gov.start_workers();
    gov.start_scheduler(std::time::Duration::from_secs(
        args.maintenance.scheduler_interval()?,
    ));
    let grpc = grpc_router(gov.clone(), rest_config.max_arrow_body);
    let rest = rest::catalog_router(gov, rest_config);
    // One signal stops every listener; each drains its in-flight requests.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    };
    match &args.serving.grpc_listen {
        // gRPC (and Flight) on its own port.
        Some(grpc_addr) => {
            let grpc_listener = TcpListener::bind(grpc_addr)
                .await
                .map_err(|e| format!("cannot listen on {grpc_addr}: {e}"))?;
            let grpc_at = grpc_listener.local_addr().map_err(|e| e.to_string())?;
            println!("lance-catalog gRPC listening on http://{grpc_at}");
            let grpc_server = serve_http(grpc_listener, observed(grpc), header_timeout, stopped());
            let rest_server = serve_http(listener, observed(rest), header_timeout, stopped());
            tokio::join!(rest_server, grpc_server);
        }
        // One port: gRPC paths go to tonic, everything else to REST.
        None => {
            serve_http(
                listener,
                observed(grpc.fallback_service(rest)),
                header_timeout,
                stopped(),
            )
            .await;
        }
    }
    tracing::info!("lance-catalog stopped");
    Ok(())
}

/// `app` behind the middleware that names, times, counts and logs every
/// request, each request one scope for its caller (verified once).
fn observed(app: axum::Router) -> axum::Router {
    app.layer(axum::middleware::from_fn(
        crate::transport::caller::one_caller,
    ))
    .layer(axum::middleware::from_fn(crate::telemetry::observe))
}

/// Check readiness every 2 s: `/readyz` and gRPC health answer from the
/// latest check, so probes cost no storage request. Stops when the server
/// is gone.
async fn refresh_readiness(gov: std::sync::Weak<Governance>) {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        let Some(gov) = gov.upgrade() else { return };
        let _ = gov.check_ready().await;
    }
}

/// Sweep the trash every `every_s` seconds: expired entries are reported,
/// and purged only where a policy says so (see `governance/trash.rs`);
/// then the bytes of creates that died (stale intents, see
/// `governance/leftovers.rs`); then the `Idempotency-Key`s kept past
/// `--idempotency-ttl`.
async fn sweep_trash(gov: Arc<Governance>, every_s: u64) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(every_s));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match gov.sweep_trash().await {
            Ok(r) if !r.expired.is_empty() => tracing::info!(
                expired = r.expired.len(),
                purged = r.purged.len(),
                "trash sweep"
            ),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e.message, "the trash sweep failed; it runs again later")
            }
        }
        if let Err(e) = gov.sweep_create_leftovers(None, true).await {
            tracing::warn!(error = %e.message, "the sweep of create leftovers failed; it runs again later")
        }
        match gov.sweep_idempotency_keys().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(keys = n, "expired idempotency keys removed"),
            Err(e) => {
                tracing::warn!(error = %e.message, "the sweep of idempotency keys failed; it runs again later")
            }
        }
    }
}

/// Keep the audit trail every `every_s` seconds (the first pass at once:
/// it also moves events an older version stored as records).
async fn audit_upkeep(gov: Arc<Governance>, every_s: u64, retention_s: u64) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(every_s));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let retention_ms = (retention_s > 0).then(|| retention_s.saturating_mul(1000));
    loop {
        tick.tick().await;
        match gov.audit_upkeep(retention_ms).await {
            Ok(r) if r.merged_slots + r.expired_slots > 0 => tracing::info!(
                merged = r.merged_slots,
                expired = r.expired_slots,
                "audit upkeep"
            ),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e.message, "the audit upkeep failed; it runs again later")
            }
        }
    }
}

/// Start a server on an ephemeral loopback port in this process (for tests
/// and embedding); returns its address.
pub async fn spawn(catalog: Catalog, config: RestConfig) -> std::io::Result<SocketAddr> {
    spawn_governed(Arc::new(Governance::single(catalog)), config).await
}

/// [`spawn`] over a governance layer (warehouses, another control root).
pub async fn spawn_governed(
    gov: Arc<Governance>,
    config: RestConfig,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let header_timeout = config.header_read_timeout;
    let app = observed(
        grpc_router(gov.clone(), config.max_arrow_body)
            .fallback_service(rest::catalog_router(gov, config)),
    );
    tokio::spawn(serve_http(
        listener,
        app,
        header_timeout,
        std::future::pending::<()>(),
    ));
    Ok(addr)
}

/// Serve HTTP/1.1 and HTTP/2 (cleartext, for gRPC and Flight) until `stop`,
/// then let open connections finish. HTTP/2 uses adaptive flow-control
/// windows: with the protocol's default 64 KiB window, a large upload (a
/// DoPut, a big insert) is throttled to one window per round trip.
async fn serve_http(
    listener: TcpListener,
    app: axum::Router,
    header_timeout: std::time::Duration,
    stop: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto::Builder;
    use hyper_util::server::graceful::GracefulShutdown;
    use hyper_util::service::TowerToHyperService;

    let mut builder = Builder::new(TokioExecutor::new());
    builder.http2().adaptive_window(true);
    // A client that stalls mid-headers is disconnected. hyper's header
    // count limit sits above the gateway's own, which answers 431 with a
    // problem document (hyper could only send an empty body).
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_headers(crate::rest::limits::HYPER_MAX_HEADERS);
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(app.clone());
                let conn = builder
                    .serve_connection_with_upgrades(TokioIo::new(stream), service)
                    .into_owned();
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            _ = &mut stop => break,
        }
    }
    graceful.shutdown().await;
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

/// The gRPC services and Arrow Flight on one router, each transport built
/// by its own module (neither imports the other).
fn grpc_router(gov: Arc<Governance>, max_message: usize) -> axum::Router {
    grpc::routes(gov.clone(), max_message)
        .add_service(crate::flight::service(gov, max_message))
        .into_axum_router()
}
