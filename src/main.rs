#![forbid(unsafe_code)]
//! The `lance-catalog` command.

use std::ffi::OsString;

use clap::{Parser, Subcommand};
use lance_catalog::app::config::ServeArgs;

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
    /// JSON, what no table owns and which tables hold no data, and every
    /// drift between registries, manifests and storage. Reports only,
    /// unless --repair names a kind.
    Reconcile(ReconcileArgs),
    /// Maintenance reports against a storage root, with no server: JSON on
    /// stdout, progress on stderr. They change nothing.
    Maintenance {
        #[command(subcommand)]
        report: Report,
    },
    /// Print the configuration reference (docs/configuration.md): every
    /// setting of `serve`, its environment variable, default and meaning.
    #[command(hide = true)]
    ConfigurationReference,
    /// Benchmarks only: add a synthetic audit trail to a control root.
    #[command(hide = true)]
    AuditFill(lance_catalog::app::audit_fill::FillArgs),
}

#[derive(Subcommand)]
enum Report {
    /// Per table and index: the segments, the fragments and rows no
    /// segment covers, and whether an optimize is due.
    IndexHealth {
        /// One table, its id joined by `$` as in REST paths (quote it in a
        /// shell); default: every table of every warehouse, by warehouse.
        #[arg(long)]
        table: Option<String>,
        /// (With --table, --warehouse is the table's; default: the
        /// built-in one on --root.)
        #[command(flatten)]
        scope: Scope,
        #[command(flatten)]
        settings: ServeArgs,
    },
    /// What no table owns, which tables hold no data, and every drift (as
    /// `reconcile`).
    Reconcile(ReconcileArgs),
    /// By warehouse: each table as the scheduler sees it (its policy's
    /// winner, fragments, versions past retention, what a round would
    /// submit), the expired trash, and the stale intents of creates that
    /// died, with what the server's sweep would do. Changes nothing.
    Sweep {
        #[command(flatten)]
        scope: Scope,
        #[command(flatten)]
        settings: ServeArgs,
    },
    /// Per table: files under its location that no manifest of any
    /// retained version of any branch references, nor any other table's
    /// (shallow clones); transaction files apart; `_blobs/` and unknown
    /// files as unverifiable. Deletes nothing.
    Orphans {
        /// One table, its id joined by `$` (quote it in a shell); default:
        /// every table of the warehouse.
        #[arg(long)]
        table: Option<String>,
        /// The warehouse (default: the built-in one on --root).
        #[arg(long)]
        warehouse: Option<String>,
        #[command(flatten)]
        settings: ServeArgs,
    },
    /// Delete files of one table that a fresh scan still names as orphans
    /// and that are older than Lance's 7 days; prints what it deleted and
    /// what it kept, and why.
    Reclaim {
        /// The table, its id joined by `$`.
        #[arg(long)]
        table: String,
        #[arg(long)]
        warehouse: Option<String>,
        /// A path relative to the table's location, as the scan names it
        /// (repeat for more).
        #[arg(long = "path")]
        paths: Vec<String>,
        /// A saved `orphans` report: reclaim every orphan and transaction
        /// file it names for the table.
        #[arg(long)]
        from: Option<std::path::PathBuf>,
        #[command(flatten)]
        settings: ServeArgs,
    },
}

/// The reconciler's own flags.
#[derive(clap::Args)]
struct ReconcileArgs {
    /// Run the repair of every finding of this kind (repeat for more):
    /// binding_to_missing_warehouse, table_without_data,
    /// unowned_directory, trash_without_bytes, tasks_of_missing_table,
    /// policy_of_missing_object.
    #[arg(long)]
    repair: Vec<String>,
    #[command(flatten)]
    settings: ServeArgs,
}

/// Which warehouses a report reads.
#[derive(clap::Args)]
struct Scope {
    /// Only the warehouses of this project.
    #[arg(long)]
    project: Option<String>,
    /// Only this warehouse.
    #[arg(long)]
    warehouse: Option<String>,
}

/// Flags of a report's own, which the server's settings do not know.
const REPORT_FLAGS: &[&str] = &[
    "--table",
    "--project",
    "--warehouse",
    "--path",
    "--from",
    "--repair",
];

/// `argv` without the report flags (and their values).
fn without_report_flags(argv: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in argv {
        if std::mem::take(&mut skip) {
            continue;
        }
        let text = a.to_string_lossy();
        let name = text.split('=').next().unwrap_or_default();
        if REPORT_FLAGS.contains(&name) {
            skip = !text.contains('=');
            continue;
        }
        out.push(a.clone());
    }
    out
}

fn main() {
    let argv: Vec<OsString> = std::env::args_os().collect();
    // The subcommand is checked (and help printed) first; its settings are
    // then read again with the config file beneath flags and environment.
    let cli = Cli::parse();
    if let Some(Command::ConfigurationReference) = cli.command {
        print!(
            "{}",
            lance_catalog::app::config::doc::configuration_markdown()
        );
        return;
    }
    if let Some(Command::AuditFill(fill)) = cli.command {
        let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
        if let Err(e) = runtime.block_on(lance_catalog::app::audit_fill::fill(fill)) {
            eprintln!("lance-catalog: {e}");
            std::process::exit(1);
        }
        return;
    }
    let settings = match cli.command {
        Some(Command::Maintenance { .. }) => without_report_flags(&argv[3..]),
        Some(Command::Reconcile(_)) => without_report_flags(&argv[2..]),
        Some(_) => argv[2..].to_vec(),
        None => argv[argv.len().min(1)..].to_vec(),
    };
    let resolved = match lance_catalog::app::config::file::resolve(&settings) {
        Ok(r) => r,
        Err(e) => e.exit(),
    };
    lance_catalog::telemetry::logging::init(&resolved.args.serving.log_format);
    tracing::info!(config = %resolved.effective, "effective configuration");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let args = resolved.args;
    let result = match cli.command {
        Some(Command::Reconcile(ReconcileArgs { repair, .. }))
        | Some(Command::Maintenance {
            report: Report::Reconcile(ReconcileArgs { repair, .. }),
        }) => runtime.block_on(lance_catalog::app::reports::reconcile(args, repair)),
        Some(Command::Maintenance {
            report:
                Report::IndexHealth {
                    table,
                    scope: Scope { project, warehouse },
                    ..
                },
        }) => runtime.block_on(lance_catalog::app::reports::index_health(
            args, project, warehouse, table,
        )),
        Some(Command::Maintenance {
            report:
                Report::Sweep {
                    scope: Scope { project, warehouse },
                    ..
                },
        }) => runtime.block_on(lance_catalog::app::reports::sweep(args, project, warehouse)),
        Some(Command::Maintenance {
            report: Report::Orphans {
                table, warehouse, ..
            },
        }) => runtime.block_on(lance_catalog::app::reports::orphans(args, warehouse, table)),
        Some(Command::Maintenance {
            report:
                Report::Reclaim {
                    table,
                    warehouse,
                    paths,
                    from,
                    ..
                },
        }) => runtime.block_on(lance_catalog::app::reports::reclaim(
            args, warehouse, table, paths, from,
        )),
        _ => runtime.block_on(lance_catalog::app::server::serve(args)),
    };
    if let Err(e) = result {
        eprintln!("lance-catalog: {e}");
        std::process::exit(1);
    }
}
