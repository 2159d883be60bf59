//! Crash leftovers of the catalog's own creates, across warehouses: the
//! bytes of every create whose intent went stale and that no table owns are
//! removed (see `core/table/intents.rs`), each removal an audit event of
//! the catalog's own. Bytes no intent names are never touched here.

use super::Governance;
use crate::api::audit::EventResource;
use crate::api::sweep::{CreateLeftover, LeftoverOutcome};
use crate::error::CatalogResult;

/// The audit action of a removal (no caller asked for it).
const REMOVED: &str = "remove_create_leftover";

impl Governance {
    /// Stale create intents of every warehouse (of `project`, when named)
    /// and what became of each (`apply`: removed; otherwise what the sweep
    /// would do). One warehouse's failure is logged, not the end of the
    /// rest.
    pub async fn sweep_create_leftovers(
        &self,
        project: Option<&str>,
        apply: bool,
    ) -> CatalogResult<Vec<(String, CreateLeftover)>> {
        let mut out = Vec::new();
        for (warehouse, catalog) in self.every_catalog(project, None).await? {
            let found = match catalog.sweep_intents(apply).await {
                Ok(found) => found,
                Err(e) => {
                    tracing::warn!(warehouse = %warehouse, error = %e.message, "the create leftovers of a warehouse could not be swept; the next sweep tries again");
                    continue;
                }
            };
            for leftover in found {
                if leftover.outcome == LeftoverOutcome::Removed {
                    tracing::warn!(warehouse = %warehouse, location = %leftover.intent.location, table = ?leftover.intent.table, replica = %leftover.intent.replica, "removed the bytes of a create that died before recording its table");
                    let resource = EventResource {
                        kind: "table".to_string(),
                        id: leftover.intent.table.clone(),
                        warehouse: Some(warehouse.clone()),
                        object_id: leftover.intent.object_id.clone(),
                    };
                    self.registry.audit_system(REMOVED, resource).await;
                }
                out.push((warehouse.clone(), leftover));
            }
        }
        Ok(out)
    }
}
