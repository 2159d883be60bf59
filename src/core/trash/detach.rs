//! Drops under a grace period: the catalog forgets the object and keeps its
//! bytes, filing trash records first (see `trash/records.rs`).
//!
//! A cascade detaches a whole subtree in ONE manifest commit (every table
//! and namespace row at once) after filing one record per object, all
//! sharing the drop's group and deadline. The subtree is gone whole or not
//! at all; a crash before the commit leaves records whose objects still
//! stand, which the same call, made again, reuses; a crash after it leaves
//! the group unfinished, which the same call completes.

use arrow_array::RecordBatch;
use futures::TryStreamExt;
use lance_namespace::models::{DropNamespaceResponse, DropTableResponse};

use crate::core::checks::{manifest_id, manifest_key, table_not_found};
use crate::core::location::Location;
use crate::core::manifest_tx::{literal, row_location, row_object_id, row_properties, row_type};
use crate::core::trash::records::{new_trash_id, TrashContext, TrashEntry};
use crate::core::Catalog;
use crate::error::{CatalogResult, Code};

/// How often a detach is tried again when another writer changed the
/// manifest between its check and its commit.
const ATTEMPTS: u64 = 5;

impl Catalog {
    /// A trash entry for one manifest row (a table's last version read
    /// from its bytes; none when it was never written).
    async fn entry_for_row(
        &self,
        row: &RecordBatch,
        tc: &TrashContext,
        group: Option<&str>,
        times: (u64, u64),
    ) -> TrashEntry {
        let kind = row_type(row).unwrap_or_else(|| "table".into());
        let location = row_location(row).map(|l| Location::new(&l).to_string());
        // None only for a table that was never written: a dataset that
        // merely failed to open still has data to bring back.
        let version = match (&location, kind.as_str()) {
            (Some(loc), "table") => {
                match self.dataset_builder(&self.location_uri(loc)).load().await {
                    Ok(ds) => Some(ds.version().version),
                    Err(_) if !self.holds_dataset(loc).await.unwrap_or(true) => None,
                    Err(_) => Some(0),
                }
            }
            _ => None,
        };
        let trash_id = new_trash_id(times.0);
        let id = manifest_id(&row_object_id(row).unwrap_or_default());
        let ancestors: Vec<(&str, Vec<String>)> = (1..id.len())
            .map(|n| ("namespace", id[..n].to_vec()))
            .collect();
        let ancestor_object_ids: Vec<String> = match self.object_ids(&ancestors).await {
            Ok(found) => found.into_iter().map(Option::unwrap_or_default).collect(),
            Err(_) => Vec::new(),
        };
        let parent_object_id = ancestor_object_ids
            .last()
            .filter(|r| !r.is_empty())
            .cloned();
        TrashEntry {
            parent_object_id,
            ancestor_object_ids,
            group: group
                .map(str::to_string)
                .unwrap_or_else(|| trash_id.clone()),
            trash_id,
            kind,
            id,
            location,
            version,
            properties: row_properties(row).unwrap_or_default(),
            dropped_by: tc.dropped_by.clone(),
            dropped_at_ms: times.0,
            expires_at_ms: times.1,
            ..Default::default()
        }
    }

    /// Drop table `id` into trash: file its record, then forget it in the
    /// manifest. Its bytes stay where they are.
    pub(crate) async fn trash_table(
        &self,
        id: &[String],
        force: bool,
        tc: &TrashContext,
    ) -> CatalogResult<DropTableResponse> {
        let key = manifest_key(id);
        // The record this call filed (or took over), kept across retries.
        let mut filed: Option<TrashEntry> = None;
        for attempt in 1..=ATTEMPTS {
            let held = self.hold_manifest().await;
            let ds = self.manifest_snapshot().await?;
            let rows = self.manifest_rows(&ds, std::slice::from_ref(&key)).await?;
            let found = crate::core::manifest_tx::single_rows(&rows)
                .find(|r| row_type(r).as_deref() == Some("table"));
            let guarded = match &found {
                Some(_) => self.guard_table(&ds, id, force).await,
                None => Err(table_not_found(id)),
            };
            let (Some(row), Ok(())) = (found, guarded.clone()) else {
                // Another drop won meanwhile: a record of ours would
                // claim bytes that are its now.
                if let Some(e) = filed.take() {
                    let _ = self.forget_trash(&e).await;
                }
                return Err(guarded.err().unwrap_or_else(|| table_not_found(id)));
            };
            let location = row_location(&row).map(|l| Location::new(&l).to_string());
            // A record for these very bytes, filed by an earlier attempt or
            // left by a call that stopped before its commit, is taken over
            // with this drop's deadline (one record per bytes, never an old
            // deadline).
            let standing = match filed.take() {
                Some(e) if e.location == location => Some(e),
                _ => match &location {
                    Some(loc) => self
                        .trash_at(&Location::new(loc))
                        .await?
                        .into_iter()
                        .rev()
                        .find(|e| e.is_table() && e.id == id),
                    None => None,
                },
            };
            let entry = match standing {
                Some(e) => self.refresh_trash(&e.trash_id, tc, tc.times()).await?,
                None => {
                    let e = self.entry_for_row(&row, tc, None, tc.times()).await;
                    self.file_trash(&e).await?;
                    e
                }
            };
            crate::fault::point("trash.detach");
            match self
                .manifest_apply(&held, ds, Vec::new(), std::slice::from_ref(&key), false)
                .await
            {
                Ok(()) => {
                    return Ok(DropTableResponse {
                        id: Some(id.to_vec()),
                        location: entry.location.as_deref().map(|l| self.location_uri(l)),
                        transaction_id: Some(entry.trash_id),
                        ..Default::default()
                    })
                }
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < ATTEMPTS => {
                    filed = Some(entry);
                    drop(held);
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                Err(e) => {
                    // Forget the record only if the table certainly stands.
                    if self.table_present(id).await.unwrap_or(false) {
                        let _ = self.forget_trash(&entry).await;
                    }
                    return Err(e);
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    /// The manifest rows of namespace `id` and everything below it.
    pub(in crate::core) async fn subtree_rows(
        &self,
        ds: &lance::Dataset,
        id: &[String],
    ) -> CatalogResult<Vec<RecordBatch>> {
        let key = manifest_key(id);
        let prefix = manifest_key(&[id.to_vec(), vec![String::new()]].concat());
        let mut scan = ds.scan();
        scan.filter(&format!(
            "object_id = {} OR starts_with(object_id, {})",
            literal(&key),
            literal(&prefix)
        ))?;
        let batches: Vec<RecordBatch> = scan.try_into_stream().await?.try_collect().await?;
        Ok(crate::core::manifest_tx::single_rows(&batches).collect())
    }

    /// An unfinished cascade of namespace `id` (its drop stopped after the
    /// commit, before it was marked done).
    pub(crate) async fn unfinished_detach(
        &self,
        id: &[String],
    ) -> CatalogResult<Option<TrashEntry>> {
        Ok(self
            .trash_entries()
            .await?
            .into_iter()
            .rev()
            .find(|e| !e.is_table() && e.id == id && e.group == e.trash_id && !e.complete))
    }

    /// Mark a cascade done and answer it.
    pub(crate) async fn finish_detach(
        &self,
        root: &TrashEntry,
    ) -> CatalogResult<DropNamespaceResponse> {
        self.mark_trash_complete(&root.trash_id).await?;
        Ok(DropNamespaceResponse {
            properties: Some(root.properties.clone()).filter(|p| !p.is_empty()),
            transaction_id: Some(vec![root.group.clone()]),
            ..Default::default()
        })
    }

    /// Drop namespace `id` and everything below it into trash (see the
    /// module). Protection was checked by the caller.
    pub(crate) async fn trash_namespace(
        &self,
        id: &[String],
        tc: &TrashContext,
    ) -> CatalogResult<DropNamespaceResponse> {
        let key = manifest_key(id);
        let mut root = self.unfinished_detach(id).await?;
        let root_times = tc.times();
        for attempt in 1..=ATTEMPTS {
            let held = self.hold_manifest().await;
            let ds = self.manifest_snapshot().await?;
            let mut rows = self.subtree_rows(&ds, id).await?;
            let Some(own) = rows
                .iter()
                .find(|r| row_object_id(r).as_deref() == Some(key.as_str()))
                .cloned()
            else {
                return Err(crate::core::checks::missing_namespace(id));
            };
            let group = match &root {
                // Taken over from a call that stopped before its commit:
                // the subtree gets this drop's deadline.
                Some(r) if r.dropped_at_ms != root_times.0 => {
                    let r = self.refresh_trash(&r.trash_id, tc, root_times).await?;
                    root = Some(r.clone());
                    r
                }
                Some(r) => r.clone(),
                None => {
                    let r = self.entry_for_row(&own, tc, None, root_times).await;
                    self.file_trash(&r).await?;
                    root = Some(r.clone());
                    r
                }
            };
            let times = (group.dropped_at_ms, group.expires_at_ms);
            let filed: Vec<TrashEntry> = self
                .trash_entries()
                .await?
                .into_iter()
                .filter(|e| e.group == group.group)
                .collect();
            // Tables first, then namespaces deepest first: the records read
            // in the order a person would undo them backwards.
            rows.retain(|r| row_object_id(r).as_deref() != Some(key.as_str()));
            rows.sort_by_key(|r| {
                let depth = manifest_id(&row_object_id(r).unwrap_or_default()).len();
                (
                    row_type(r).as_deref() != Some("table"),
                    std::cmp::Reverse(depth),
                )
            });
            let mut keys = vec![key.clone()];
            for row in &rows {
                let object = manifest_id(&row_object_id(row).unwrap_or_default());
                let kind = row_type(row).unwrap_or_default();
                let location = row_location(row).map(|l| Location::new(&l).to_string());
                keys.push(manifest_key(&object));
                let known = filed.iter().find(|e| {
                    e.id == object && e.kind == kind && (kind != "table" || e.location == location)
                });
                if let Some(k) = known {
                    if (k.dropped_at_ms, k.expires_at_ms) != times {
                        self.refresh_trash(&k.trash_id, tc, times).await?;
                    }
                } else {
                    let e = self.entry_for_row(row, tc, Some(&group.group), times).await;
                    self.file_trash(&e).await?;
                    crate::fault::point("trash.detach");
                }
            }
            match self
                .manifest_apply(&held, ds, Vec::new(), &keys, false)
                .await
            {
                Ok(()) => {
                    drop(held);
                    crate::fault::point("trash.detach");
                    return self.finish_detach(&group).await;
                }
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < ATTEMPTS => {
                    drop(held);
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
        unreachable!("the last attempt returns")
    }
}
