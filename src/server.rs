//! Running the server: bind, log where it serves, stop gracefully.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::config::ServeArgs;
use crate::core::Catalog;
use crate::rest::{self, RestConfig};

/// Serve until SIGINT or SIGTERM; in-flight requests finish first.
pub async fn serve(args: ServeArgs) -> Result<(), String> {
    let storage = args.storage()?;
    let catalog = Catalog::open(&storage)
        .await
        .map_err(|e| e.message.clone())?;
    let listener = TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let rest_config = args.rest();
    let prefix = rest_config.prefix.clone().unwrap_or_default();
    tracing::info!(
        "lance-catalog serving REST on http://{addr} (root {}, prefix {:?})",
        catalog.root(),
        prefix
    );
    // Also on stdout, unbuffered by the log filter, for scripts that wait on it.
    println!("lance-catalog listening on http://{addr}");
    let app = rest::catalog_router(Arc::new(catalog), rest_config);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!("lance-catalog stopped");
    Ok(())
}

/// Start a server on an ephemeral loopback port in this process (for tests
/// and embedding); returns its address.
pub async fn spawn(catalog: Catalog, config: RestConfig) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = rest::catalog_router(Arc::new(catalog), config);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(addr)
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
