//! What a warehouse's records still name that is gone: the reconciler's
//! core half (the estate half, across registries, is
//! `governance/drift.rs`). Reads, and the repairs the operator asks for.

use std::collections::HashSet;

use futures::TryStreamExt;

use super::{TaskRecord, TASKS, TASK_TYPES};
use crate::api::trash::TrashEntry;
use crate::core::identity::id_property;
use crate::core::manifest_tx::{row_properties, row_type, single_rows};
use crate::core::Catalog;
use crate::error::CatalogResult;

impl Catalog {
    /// The real ids of every table and namespace of this warehouse, and of
    /// every object in its trash (recoverable: still someone's).
    pub async fn live_object_ids(&self) -> CatalogResult<HashSet<String>> {
        // Trash read before and after the manifest: an undrop records its
        // object and then forgets its entry, so one of the reads sees it.
        let mut out = HashSet::new();
        for e in self.trash_entries().await? {
            out.extend(e.object_id().map(str::to_string));
        }
        let ds = self.current_manifest().await?;
        let batches: Vec<arrow_array::RecordBatch> =
            ds.scan().try_into_stream().await?.try_collect().await?;
        for row in single_rows(&batches) {
            let Some(kind) = row_type(&row).filter(|k| k == "table" || k == "namespace") else {
                continue;
            };
            if let Some(real) = row_properties(&row)?.get(id_property(&kind)) {
                out.insert(real.clone());
            }
        }
        for e in self.trash_entries().await? {
            out.extend(e.object_id().map(str::to_string));
        }
        Ok(out)
    }

    /// The real ids that have task records or a round record here (a
    /// directory left empty by erased records is not one).
    pub async fn task_table_ids(&self) -> CatalogResult<Vec<String>> {
        let mut ids = Vec::new();
        for real in self.control.listed_ids(TASKS).await? {
            let records = self.task_records(&real)?;
            for (_, task_type) in TASK_TYPES {
                if !records.ids::<TaskRecord>(task_type).await?.is_empty() {
                    ids.push(real.clone());
                    break;
                }
            }
        }
        for real in self.round_table_ids().await? {
            if self.round_of(&real).await?.is_some() {
                ids.push(real);
            }
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    /// Delete every task record (and the maintenance round) of the table
    /// whose real id is `real`; answers how many tasks went.
    pub async fn forget_table_tasks(&self, real: &str) -> CatalogResult<usize> {
        let records = self.task_records(real)?;
        let mut gone = 0;
        for (_, task_type) in TASK_TYPES {
            for task_id in records.listed_ids(task_type).await? {
                if records
                    .delete::<TaskRecord, _>(task_type, &task_id, |_| Ok(()))
                    .await?
                {
                    gone += 1;
                }
                records.erase::<TaskRecord>(task_type, &task_id).await?;
                self.remove_marker(&task_id).await;
            }
        }
        self.forget_round(real).await?;
        Ok(gone)
    }

    /// Trash entries of written tables whose location holds no dataset
    /// any more (a declared table in trash never had one).
    pub async fn trash_without_bytes(&self) -> CatalogResult<Vec<TrashEntry>> {
        let mut out = Vec::new();
        for e in self.trash_entries().await? {
            let Some(location) = e.location.as_deref().filter(|_| e.is_table()) else {
                continue;
            };
            if e.version.is_none() {
                continue;
            }
            let relative = crate::core::table::locations::canonical(location);
            if !relative.is_empty() && !self.holds_dataset(&relative).await? {
                out.push(e);
            }
        }
        Ok(out)
    }
}
