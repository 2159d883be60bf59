//! The maintenance reports as commands against a storage root, with no
//! server: JSON on stdout, progress on stderr. Reports change nothing;
//! `reclaim` deletes only what a fresh scan still names (see
//! `core/maintenance/orphans.rs`).

use crate::api::health::{ProjectIndexHealth, WarehouseIndexHealth};
use crate::api::reconcile::DriftKind;
use crate::app::config::ServeArgs;
use crate::core::Catalog;
use crate::governance::Governance;

/// Print the reconciler's report: the built-in warehouse's unowned paths
/// and tables without data (`orphans`, `without_data`, see
/// `core/maintenance/reconcile.rs`), and every drift across the estate
/// (`drifts`, see `governance/drift.rs`), running the repair of each kind
/// named in `repair` (`binding_to_missing_warehouse`, …).
pub async fn reconcile(args: ServeArgs, repair: Vec<String>) -> Result<(), String> {
    // An intent fresher than the expiry is a create in flight: live.
    crate::core::set_intent_expiry(args.drops.create_intent_expiry()?);
    crate::core::set_batch_intent_expiry(args.drops.batch_intent_expiry()?);
    let mut named = Vec::new();
    for name in repair {
        let kind: DriftKind = serde_json::from_value(serde_json::Value::String(name.clone()))
            .map_err(|_| {
                format!("--repair {name:?} is not a drift kind: binding_to_missing_warehouse, table_without_data, unowned_directory, trash_without_bytes, tasks_of_missing_table, policy_of_missing_object or symbolic_link")
            })?;
        named.push(kind);
    }
    let kinds = match named.is_empty() {
        true => Default::default(),
        false => crate::governance::drift::repairable(&named).map_err(|e| e.message)?,
    };
    let (gov, catalog) = opened(&args, None).await?;
    let report = catalog.reconcile().await.map_err(|e| e.message)?;
    let drifts = gov.reconcile_estate(&kinds).await.map_err(|e| e.message)?;
    print_json(&serde_json::json!({
        "orphans": report.orphans,
        "without_data": report.without_data,
        "drifts": drifts,
    }))
}

/// `lance-catalog maintenance index-health`: the index health of one table
/// (`ns$t`, a list of one) or, by warehouse, of every table of every
/// warehouse (of `project`, or only `warehouse`), as JSON; progress on
/// stderr.
pub async fn index_health(
    args: ServeArgs,
    project: Option<String>,
    warehouse: Option<String>,
    table: Option<String>,
) -> Result<(), String> {
    crate::core::set_intent_expiry(args.drops.create_intent_expiry()?);
    crate::core::set_batch_intent_expiry(args.drops.batch_intent_expiry()?);
    let (gov, catalog) = opened(&args, warehouse.as_deref()).await?;
    if table.is_some() {
        let tables = chosen_tables(&catalog, table).await?;
        return print_each(&tables, |id| catalog.index_health(id)).await;
    }
    let mut out = ProjectIndexHealth::default();
    let catalogs = gov
        .warehouse_catalogs(project.as_deref(), warehouse.as_deref())
        .await
        .map_err(|e| e.message)?;
    for (warehouse_id, catalog) in catalogs {
        let tables = chosen_tables(&catalog, None).await?;
        let progress = indicatif::ProgressBar::new(tables.len() as u64);
        let mut healths = Vec::new();
        for id in &tables {
            progress.set_message(format!("{warehouse_id}: {}", id.join("$")));
            healths.push(catalog.index_health(id).await.map_err(|e| e.message)?);
            progress.inc(1);
        }
        progress.finish_and_clear();
        out.warehouses.push(WarehouseIndexHealth {
            warehouse_id,
            tables: healths,
        });
    }
    print_json(&out)
}

/// `lance-catalog maintenance sweep`: by warehouse (of `project`, or only
/// `warehouse`), each table as the scheduler sees it, the expired trash,
/// and the stale intents of creates that died, with what the server's
/// sweep would do about each. Changes nothing.
pub async fn sweep(
    args: ServeArgs,
    project: Option<String>,
    warehouse: Option<String>,
) -> Result<(), String> {
    crate::core::set_intent_expiry(args.drops.create_intent_expiry()?);
    crate::core::set_batch_intent_expiry(args.drops.batch_intent_expiry()?);
    let (gov, _) = opened(&args, None).await?;
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.enable_steady_tick(std::time::Duration::from_millis(200));
    spinner.set_message("sweeping");
    let report = gov
        .sweep_report(project.as_deref(), warehouse.as_deref())
        .await
        .map_err(|e| e.message);
    spinner.finish_and_clear();
    print_json(&report?)
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<(), String> {
    let json = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    println!("{json}");
    Ok(())
}

/// One table (`ns$t`), or every table of `catalog`.
async fn chosen_tables(
    catalog: &Catalog,
    table: Option<String>,
) -> Result<Vec<Vec<String>>, String> {
    Ok(match table {
        Some(t) => vec![table_id(&t)],
        None => catalog
            .tables_with_ids()
            .await
            .map_err(|e| e.message)?
            .into_iter()
            .map(|(id, _)| id)
            .collect(),
    })
}

/// Print, as one JSON list, `report` of each of `tables`, with a progress
/// bar on stderr. Over many tables one table's trouble is its entry, not
/// the end of the run.
async fn print_each<'a, T, F, Fut>(tables: &'a [Vec<String>], report: F) -> Result<(), String>
where
    T: serde::Serialize,
    F: Fn(&'a [String]) -> Fut,
    Fut: std::future::Future<Output = crate::error::CatalogResult<T>>,
{
    let progress = indicatif::ProgressBar::new(tables.len() as u64);
    let mut out = Vec::new();
    for id in tables {
        progress.set_message(id.join("$"));
        match report(id).await {
            Ok(r) => out.push(serde_json::to_value(r).map_err(|e| e.to_string())?),
            Err(e) if tables.len() > 1 => {
                out.push(serde_json::json!({"id": id, "error": e.message}))
            }
            Err(e) => return Err(e.message),
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    print_json(&out)
}

/// A table id as the command line spells it (`ns$t`, as in REST paths).
fn table_id(text: &str) -> Vec<String> {
    text.split('$').map(str::to_string).collect()
}

/// The governance layer over the configured roots (every warehouse, so a
/// clone in another is seen) and the catalog of `warehouse`.
async fn opened(
    args: &ServeArgs,
    warehouse: Option<&str>,
) -> Result<(Governance, std::sync::Arc<Catalog>), String> {
    let gov = Governance::open(&args.governance()?)
        .await
        .map_err(|e| e.message.clone())?;
    let warehouse = warehouse.unwrap_or(crate::governance::DEFAULT_WAREHOUSE);
    let catalog = gov.catalog(warehouse).await.map_err(|e| e.message)?;
    Ok((gov, catalog))
}

/// `lance-catalog maintenance orphans`: the orphan scan of one table or of
/// every table of a warehouse, as JSON; progress on stderr.
pub async fn orphans(
    args: ServeArgs,
    warehouse: Option<String>,
    table: Option<String>,
) -> Result<(), String> {
    let (gov, catalog) = opened(&args, warehouse.as_deref()).await?;
    let tables = chosen_tables(&catalog, table).await?;
    let refs = gov.foreign_refs().await.map_err(|e| e.message)?;
    print_each(&tables, |id| catalog.orphan_scan(id, &refs)).await
}

/// `lance-catalog maintenance reclaim`: delete the named files of a table
/// (`--path`, or every orphan and transaction file a saved `orphans`
/// report names for it, `--from`) that a fresh scan still names and that
/// are old enough; prints what was deleted and what kept.
pub async fn reclaim(
    args: ServeArgs,
    warehouse: Option<String>,
    table: String,
    mut paths: Vec<String>,
    from: Option<std::path::PathBuf>,
) -> Result<(), String> {
    let id = table_id(&table);
    if let Some(file) = from {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        paths.extend(paths_in_report(&text, &id)?);
    }
    let (gov, catalog) = opened(&args, warehouse.as_deref()).await?;
    let refs = gov.foreign_refs().await.map_err(|e| e.message)?;
    let done = catalog
        .reclaim(&id, &paths, &refs)
        .await
        .map_err(|e| e.message)?;
    print_json(&done)
}

/// The orphan and transaction paths a saved report (one table's, or a
/// list of them) names for table `id`.
fn paths_in_report(text: &str, id: &[String]) -> Result<Vec<String>, String> {
    use crate::api::orphans::OrphanReport;
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("the report is not JSON: {e}"))?;
    let reports: Vec<serde_json::Value> = match value {
        serde_json::Value::Array(items) => items,
        one => vec![one],
    };
    let mut paths = Vec::new();
    for item in reports {
        let Ok(report) = serde_json::from_value::<OrphanReport>(item) else {
            continue;
        };
        if report.id == id {
            paths.extend(report.orphans.into_iter().map(|f| f.path));
            paths.extend(report.transactions.into_iter().map(|f| f.path));
        }
    }
    Ok(paths)
}
