#![forbid(unsafe_code)]
//! The `lance-catalog` command.

use clap::{Parser, Subcommand};
use lance_catalog::config::ServeArgs;

#[derive(Parser)]
#[command(
    name = "lance-catalog",
    version,
    about = "Catalog and governance for Lance tables"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the catalog (the default when no command is given).
    Serve(ServeArgs),
    /// Compare the storage root with the catalog's records and print, as
    /// JSON, what no table owns and which tables hold no data. Reports
    /// only; deletes nothing.
    Reconcile(ServeArgs),
}

/// `lance-catalog` alone serves with the defaults and environment.
#[derive(Parser)]
struct DefaultServe {
    #[command(flatten)]
    args: ServeArgs,
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LANCE_CATALOG_LOG").unwrap_or_else(|_| {
                // Targets match by prefix: `lance=` would also cover `lance_catalog`.
                "warn,lance_catalog=info".into()
            }),
        )
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = match cli.command {
        Some(Command::Serve(a)) => runtime.block_on(lance_catalog::server::serve(a)),
        Some(Command::Reconcile(a)) => runtime.block_on(lance_catalog::server::reconcile(a)),
        None => runtime.block_on(lance_catalog::server::serve(
            DefaultServe::parse_from(["lance-catalog"]).args,
        )),
    };
    if let Err(e) = result {
        eprintln!("lance-catalog: {e}");
        std::process::exit(1);
    }
}
