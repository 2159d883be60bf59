//! The estate reconciler: drift between the registries (bindings, trash
//! records, task and round records, policy records), each warehouse's
//! `__manifest` and its storage. It reports; a repair runs only for the
//! kinds an operator names. Records are read before the objects they may
//! name, and a table is deregistered only after it is checked again.

use std::collections::HashSet;

use super::Governance;
use crate::api::policy::PolicyLevel;
use crate::api::reconcile::{Drift, DriftKind, Repair};
use crate::error::{CatalogError, CatalogResult, Code};

/// The kinds a repair was asked for, refused (13) when none is named.
pub(crate) fn repairable(kinds: &[DriftKind]) -> CatalogResult<HashSet<DriftKind>> {
    if kinds.is_empty() {
        return Err(CatalogError::invalid(
            "a repair needs kinds: the drift kinds whose findings it repairs",
        ));
    }
    Ok(kinds.iter().copied().collect())
}

fn finding(kind: DriftKind, warehouse: Option<&str>, subject: String) -> Drift {
    let repair = match kind {
        DriftKind::BindingToMissingWarehouse => Some(Repair::Unbind),
        DriftKind::TableWithoutData => Some(Repair::DeregisterTable),
        DriftKind::UnownedDirectory => Some(Repair::RemovePath),
        DriftKind::TrashWithoutBytes => Some(Repair::ForgetTrashEntry),
        DriftKind::TasksOfMissingTable => Some(Repair::ForgetTasks),
        DriftKind::PolicyOfMissingObject => Some(Repair::ForgetObject),
        DriftKind::SymbolicLink => None,
    };
    Drift {
        kind,
        warehouse_id: warehouse.map(str::to_string),
        subject,
        table: Vec::new(),
        repair,
        repaired: None,
    }
}

impl Governance {
    /// Every finding across the estate; with `repair`, the repair of each
    /// finding of those kinds runs, and `repaired` says what it did.
    pub async fn reconcile_estate(&self, repair: &HashSet<DriftKind>) -> CatalogResult<Vec<Drift>> {
        let opened = self.estate_catalogs("the reconciler").await?;
        // Records first, live objects after: a policy or task record names
        // an object that existed when it was written, so one created while
        // this runs is live by the time it is looked up.
        let policies = self.registry.every_policy_record().await?;
        let mut tasks = Vec::new();
        for (_, catalog) in &opened {
            tasks.push(catalog.task_table_ids().await?);
        }
        let mut live: HashSet<String> = HashSet::new();
        for (_, catalog) in &opened {
            live.extend(catalog.live_object_ids().await?);
        }
        let mut out = Vec::new();
        let warehouses: HashSet<&String> = opened.iter().map(|(w, _)| w).collect();
        for b in self.registry.bindings().await? {
            if warehouses.contains(&b.warehouse_id) {
                continue;
            }
            match self.registry.warehouse(&b.warehouse_id).await {
                Err(e) if e.code == Code::WAREHOUSE_NOT_FOUND => {}
                _ => continue,
            }
            let mut d = finding(
                DriftKind::BindingToMissingWarehouse,
                Some(&b.warehouse_id),
                b.namespace.clone(),
            );
            if repair.contains(&d.kind) {
                self.registry.unbind(&b.namespace, &b.warehouse_id).await?;
                d.repaired = Some(format!("namespace {:?} unbound", b.namespace));
            }
            out.push(d);
        }
        // What every table reads, read afresh once for every path a
        // repair removes (each is checked against it right before).
        let refs = match repair.contains(&DriftKind::UnownedDirectory) {
            true => Some(self.foreign_refs().await?),
            false => None,
        };
        for ((w, catalog), tasks) in opened.iter().zip(tasks) {
            let report = catalog.reconcile().await?;
            for o in report.orphans {
                if o.symlink {
                    out.push(finding(DriftKind::SymbolicLink, Some(w), o.location));
                    continue;
                }
                let mut d = finding(DriftKind::UnownedDirectory, Some(w), o.location.clone());
                if repair.contains(&d.kind) {
                    if let Some(refs) = &refs {
                        d.repaired = Some(catalog.remove_unowned_with(&o.location, refs).await?);
                    }
                }
                out.push(d);
            }
            for t in report.without_data {
                let mut d = finding(DriftKind::TableWithoutData, Some(w), t.location.clone());
                d.table = t.table.clone();
                if repair.contains(&d.kind) {
                    d.repaired = Some(
                        self.deregister_empty(catalog, &t.table, &t.location)
                            .await?,
                    );
                }
                out.push(d);
            }
            for e in catalog.trash_without_bytes().await? {
                let mut d = finding(DriftKind::TrashWithoutBytes, Some(w), e.trash_id.clone());
                d.table = e.id.clone();
                if repair.contains(&d.kind) {
                    catalog.forget_trash(&e).await?;
                    let reals: Vec<String> =
                        e.object_id().map(str::to_string).into_iter().collect();
                    self.forget_objects(&reals).await;
                    d.repaired = Some("trash entry forgotten".into());
                }
                out.push(d);
            }
            for real in tasks.into_iter().filter(|r| !live.contains(r)) {
                let mut d = finding(DriftKind::TasksOfMissingTable, Some(w), real.clone());
                if repair.contains(&d.kind) {
                    let n = catalog.forget_table_tasks(&real).await?;
                    d.repaired = Some(format!("{n} task records and the round record deleted"));
                }
                out.push(d);
            }
        }
        let mut gone: Vec<String> = policies
            .keys()
            .filter(|(level, key)| {
                matches!(level, PolicyLevel::Table | PolicyLevel::Namespace) && !live.contains(key)
            })
            .map(|(_, key)| key.clone())
            .collect();
        gone.sort();
        gone.dedup();
        for real in gone {
            let mut d = finding(DriftKind::PolicyOfMissingObject, None, real.clone());
            if repair.contains(&d.kind) {
                self.forget_objects(std::slice::from_ref(&real)).await;
                d.repaired = Some("policy records and grants deleted".into());
            }
            out.push(d);
        }
        Ok(out)
    }

    /// Deregister table `id` of `catalog` found at `location` with no
    /// data, checked again first: still recorded there, still no dataset
    /// (a first write may have landed since). Answers what it did.
    async fn deregister_empty(
        &self,
        catalog: &crate::Catalog,
        id: &[String],
        location: &str,
    ) -> CatalogResult<String> {
        let real: Vec<String> = catalog
            .object_ids(&[("table", id.to_vec())])
            .await?
            .into_iter()
            .flatten()
            .collect();
        // Exactly as found (its spelling too): anything else is a change.
        let recorded = catalog.recorded_location(id).await?;
        let still = recorded.as_ref().map(|l| l.as_str()) == Some(location)
            && !catalog.holds_dataset(location).await?;
        if !still {
            return Ok("left alone: the table changed since it was found".into());
        }
        catalog.deregister_by_id(id, false).await?;
        self.forget_objects(&real).await;
        Ok("deregistered; no byte touched".into())
    }
}
