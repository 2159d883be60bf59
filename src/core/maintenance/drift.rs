//! What a warehouse's records still name that is gone: the reconciler's
//! core half (the estate half, across registries, is
//! `governance/drift.rs`). Reads, and the repairs the operator asks for.

use std::collections::HashSet;

use futures::TryStreamExt;
use object_store::{ObjectMeta, ObjectStoreExt};

use super::{TaskRecord, TASKS, TASK_TYPES};
use crate::api::trash::TrashEntry;
use crate::core::live::Freshness;
use crate::core::location::Location;
use crate::core::manifest_tx::{row_properties, row_type, single_rows};
use crate::core::object_ids::id_property;
use crate::core::{engine, Catalog};
use crate::error::CatalogResult;

/// How long nothing under an unowned path may have changed before its
/// repair removes it: a client writes a dataset before it registers it.
const UNOWNED_MIN_AGE_MS: i64 = 3_600_000;

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
            let relative = Location::new(location);
            if !relative.is_root() && !self.holds_dataset(relative.as_str()).await? {
                out.push(e);
            }
        }
        Ok(out)
    }

    /// Remove an unowned path under the root (an operator's explicit
    /// repair), checked again first against the live set read now
    /// (`live.rs`): no table or trash entry over it or in it, no table
    /// reading there (a clone of a deregistered table, a multi-base
    /// table's data directory), no create's intent over it (the sweep
    /// decides those), strictly below the root and not the catalog's own
    /// ([`Catalog::removable`]), no symbolic link on the way or inside,
    /// nothing under it changed within the last hour. Deletes the objects
    /// the listing names; answers what it did.
    pub async fn remove_unowned(&self, relative: &str) -> CatalogResult<String> {
        let refs = self.estate_refs(Freshness::Now).await?;
        self.remove_unowned_with(relative, &refs).await
    }

    /// [`Self::remove_unowned`] against the estate's references `refs`,
    /// read afresh by the caller (once for a repair's every path).
    pub async fn remove_unowned_with(
        &self,
        relative: &str,
        refs: &crate::core::ForeignRefs,
    ) -> CatalogResult<String> {
        let place = Location::new(relative);
        let relative = place.as_str();
        if let Err(e) = self.check_dead(&place, refs, None).await {
            return Ok(format!("left alone: {}", e.message));
        }
        let intents = self.create_intents().await?;
        if intents
            .iter()
            .any(|(_, i)| Location::new(&i.location).overlaps(&place))
        {
            return Ok("left alone: a create's intent names it (the sweep decides)".into());
        }
        let Some((store, path)) = self.removable(relative).await? else {
            return Ok(
                "left alone: not below the root, the catalog's own, or reached through a symbolic link"
                    .into(),
            );
        };
        let mut objects: Vec<ObjectMeta> =
            engine(store.list(Some(path.clone())).try_collect().await)?;
        let directory = !objects.is_empty();
        if !directory {
            // A file, not a directory.
            match store.inner.head(&path).await {
                Ok(meta) => objects.push(meta),
                Err(object_store::Error::NotFound { .. }) => {
                    return Ok("nothing left to remove".into())
                }
                Err(e) => return Err(storage_failed(e)),
            }
        }
        // A listing follows links: anything it reached through one is not
        // the root's, and the path is left whole.
        let (_, root) = self.location_store("").await?;
        let mut links = self.links();
        if let Some(link) = objects
            .iter()
            .find_map(|m| links.first_link(&relative_to(&root, &m.location)))
        {
            return Ok(format!(
                "left alone: {link:?} is a symbolic link (nothing is deleted through one)"
            ));
        }
        let newest = objects.iter().map(|m| m.last_modified).max();
        let now = chrono::Utc::now();
        if newest.is_some_and(|t| (now - t).num_milliseconds() < UNOWNED_MIN_AGE_MS) {
            return Ok("left alone: written within the last hour".into());
        }
        let (mut n, mut bytes) = (0u64, 0u64);
        for meta in &objects {
            // The listing's own paths: under `relative` by construction.
            match store.inner.delete(&meta.location).await {
                Ok(()) => (n, bytes) = (n + 1, bytes + meta.size),
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(storage_failed(e)),
            }
        }
        if directory {
            // What the deletes left: empty directories on a local disk.
            self.remove_location(relative).await;
        }
        tracing::warn!(location = %relative, objects = n, bytes, "removed an unowned path (explicit repair)");
        Ok(format!("removed {n} objects, {bytes} bytes"))
    }
}

/// A listed path relative to the root's, its segments decoded.
pub(crate) fn relative_to(
    root: &object_store::path::Path,
    path: &object_store::path::Path,
) -> String {
    crate::core::references::relative(root, path)
}

/// 503: the storage failed under a repair (the cause goes to the log).
fn storage_failed(e: object_store::Error) -> crate::error::CatalogError {
    crate::error::CatalogError::new(
        crate::error::Code::SERVICE_UNAVAILABLE,
        "cannot remove an unowned path: the storage failed (the server log has the cause)",
    )
    .with_cause(e)
}
