//! Recoverable drops: the trash. With a grace period (the request context's
//! [`TRASH_GRACE`], which the governance layer fills from `--trash-grace`
//! and the project's own setting), a drop forgets the table or subtree but
//! keeps its bytes, and files one record per object here (kind, original
//! id, location relative to the root, last version, properties, who dropped
//! it, when, and when it expires). `detach.rs` files them, `undrop.rs`
//! restores from them.
//!
//! The records live with the root's own (`<root>/_catalog/control/trash`).
//! A trashed table's location stays claimed: no create, declare or
//! register may overlap it, and no drop may delete bytes it overlaps, until
//! the entry is purged. Nothing here deletes data on its own: expiry is
//! reported, and bytes go only on an explicit purge (of the entry, or by
//! the sweep where a policy says so).
//!
//! A record is filed before the manifest forgets its object, so a crash in
//! between leaves a record whose table still stands at the same location
//! ("already restored"): undrop and purge recognise it and touch no bytes.

pub use crate::api::trash::{PendingTask, TrashEntry};
use std::collections::HashMap;

use crate::core::checks::{display_id, manifest_key, table_id};
use crate::core::location::Location;
use crate::core::reserved::{PRINCIPAL, PURGE, TRASH_GRACE};
use crate::core::table::locations::{Placed, TRASH_KEY};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::now_ms;

/// The record kind of trash entries.
pub(crate) const KIND: &str = "trash";

impl TrashEntry {
    pub fn is_table(&self) -> bool {
        self.kind == "table"
    }

    /// The real id of the object it was (none for an entry filed before
    /// real ids existed).
    pub fn object_id(&self) -> Option<&str> {
        self.properties
            .get(crate::core::object_ids::id_property(&self.kind))
            .map(String::as_str)
    }

    /// Its properties as restored: with a real id, given now to an object
    /// dropped before real ids existed.
    pub(crate) fn restored_properties(&self) -> HashMap<String, String> {
        let mut props = self.properties.clone();
        props
            .entry(crate::core::object_ids::id_property(&self.kind).to_string())
            .or_insert_with(crate::core::object_ids::fresh_object_id);
        props
    }

    /// The entry as read at `now_ms`: whether its grace period is over.
    fn read_at(mut self, now_ms: u64) -> Self {
        self.expired = self.expires_at_ms <= now_ms;
        self
    }

    /// Whether the entry is `id` or lies below it.
    pub fn under(&self, id: &[String]) -> bool {
        self.id.starts_with(id)
    }

    /// The placement its location keeps claimed.
    pub(crate) fn placed(&self) -> Option<Placed> {
        let location = self.location.as_deref().filter(|_| self.is_table())?;
        Some(Placed {
            key: format!("{TRASH_KEY}{}:{}", self.trash_id, manifest_key(&self.id)),
            location: Location::new(location),
        })
    }
}

impl From<&TrashEntry> for PendingTask {
    fn from(e: &TrashEntry) -> Self {
        PendingTask {
            task_id: e.trash_id.clone(),
            task_type: "trash_expiry".into(),
            status: if e.expired { "expired" } else { "pending" }.into(),
            id: e.id.clone(),
            kind: e.kind.clone(),
            created_at_ms: e.dropped_at_ms,
            deadline_ms: e.expires_at_ms,
            detail: Some(format!(
                "dropped {} {}; undrop before the deadline, or purge it",
                e.kind,
                display_id(&e.id)
            )),
        }
    }
}

/// Whether a placement is a trashed location rather than a recorded table.
pub(crate) fn is_trash_key(key: &str) -> bool {
    key.starts_with(TRASH_KEY)
}

/// What a drop's context says about the trash.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrashContext {
    pub grace_s: u64,
    pub purge: bool,
    pub dropped_by: Option<String>,
}

impl TrashContext {
    pub(crate) fn of(context: Option<&HashMap<String, String>>) -> Self {
        let get = |k: &str| context.and_then(|c| c.get(k));
        TrashContext {
            grace_s: get(TRASH_GRACE).and_then(|v| v.parse().ok()).unwrap_or(0),
            purge: get(PURGE).is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1"),
            dropped_by: get(PRINCIPAL).cloned(),
        }
    }

    /// Whether a drop goes to trash rather than deleting now.
    pub(crate) fn keeps(&self) -> bool {
        self.grace_s > 0 && !self.purge
    }

    /// A new entry's times: now, and its deadline.
    pub(crate) fn times(&self) -> (u64, u64) {
        let now = now_ms();
        (now, now.saturating_add(self.grace_s.saturating_mul(1000)))
    }
}

/// A new trash id: the drop time, then random.
pub(crate) fn new_trash_id(at_ms: u64) -> String {
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{at_ms:013}-{}", &random[..12])
}

impl Catalog {
    /// Every entry in this root's trash, oldest first.
    pub async fn trash_entries(&self) -> CatalogResult<Vec<TrashEntry>> {
        let now = now_ms();
        Ok(self
            .control
            .all::<TrashEntry>(KIND)
            .await?
            .into_iter()
            .map(|(_, e)| e.read_at(now))
            .collect())
    }

    /// File an entry, its location claimed first (`claims.rs`).
    pub(crate) async fn file_trash(&self, entry: &TrashEntry) -> CatalogResult<()> {
        self.claim_trash(entry).await?;
        let filed = self
            .control
            .create(KIND, &entry.trash_id, entry, Code::CONCURRENT_MODIFICATION)
            .await;
        if filed.is_err() {
            // Only when the entry is certainly not there: a create that
            // landed but answered an error (a lost response, a retry that
            // found its own record) keeps its claim.
            if let Ok(None) = self.find_trash(&entry.trash_id).await {
                self.release_claim(entry).await;
            }
        }
        filed.map(|_| ())
    }

    /// Forget an entry, then release its claim.
    pub(crate) async fn forget_trash(&self, entry: &TrashEntry) -> CatalogResult<()> {
        self.control
            .delete::<TrashEntry, _>(KIND, &entry.trash_id, |_| Ok(()))
            .await?;
        self.release_claim(entry).await;
        Ok(())
    }

    /// One entry, if it exists (a malformed id names none).
    pub(crate) async fn find_trash(&self, trash_id: &str) -> CatalogResult<Option<TrashEntry>> {
        if crate::records::check_id("trash entry", trash_id).is_err() {
            return Ok(None);
        }
        let now = now_ms();
        Ok(self
            .control
            .get::<TrashEntry>(KIND, trash_id)
            .await?
            .map(|v| v.value.read_at(now)))
    }

    /// Give an entry a new drop's time, deadline and dropper.
    pub(crate) async fn refresh_trash(
        &self,
        trash_id: &str,
        tc: &TrashContext,
        times: (u64, u64),
    ) -> CatalogResult<TrashEntry> {
        let v = self
            .control
            .update(
                KIND,
                trash_id,
                Code::TRASH_ENTRY_NOT_FOUND,
                |mut e: TrashEntry| {
                    (e.dropped_at_ms, e.expires_at_ms) = times;
                    e.dropped_by = tc.dropped_by.clone();
                    Ok(e)
                },
            )
            .await?;
        Ok(v.value)
    }

    pub(crate) async fn mark_trash_complete(&self, trash_id: &str) -> CatalogResult<()> {
        self.control
            .update(
                KIND,
                trash_id,
                Code::TRASH_ENTRY_NOT_FOUND,
                |mut e: TrashEntry| {
                    e.complete = true;
                    Ok(e)
                },
            )
            .await
            .map(|_| ())
    }

    /// One entry of this root's trash.
    pub async fn trash_entry(&self, trash_id: &str) -> CatalogResult<TrashEntry> {
        crate::records::check_id("trash entry", trash_id)?;
        self.find_trash(trash_id)
            .await?
            .ok_or_else(|| not_in_trash(trash_id))
    }

    /// Destroy a trash entry now: a table's bytes, or a namespace entry
    /// with everything its drop put in trash below it. Bytes another table
    /// stands on (its undrop finished, or its drop never did) are kept,
    /// and bytes any other location overlaps are refused (19). Answers the
    /// entries purged.
    pub async fn purge_trash(&self, trash_id: &str) -> CatalogResult<Vec<TrashEntry>> {
        let target = self.trash_entry(trash_id).await?;
        let mut doomed: Vec<TrashEntry> = match target.is_table() {
            true => vec![target.clone()],
            false => self
                .trash_entries()
                .await?
                .into_iter()
                .filter(|e| e.group == target.group && e.under(&target.id))
                .collect(),
        };
        // Tables first, so a namespace entry is the last to go.
        doomed.sort_by_key(|e| !e.is_table());
        let near: Vec<Location> = doomed
            .iter()
            .filter_map(TrashEntry::placed)
            .map(|p| p.location)
            .collect();
        // What other tables read, read before the lock (it may read the
        // whole estate's manifests).
        let refs = match doomed.iter().any(|e| e.is_table()) {
            true => Some(
                self.estate_refs(crate::core::live::Freshness::Recent)
                    .await?,
            ),
            false => None,
        };
        let _held = self.hold_manifest().await;
        let ds = self.manifest_snapshot().await?;
        // Only what may overlap the doomed locations is read (nothing when
        // no table is among them).
        let (live, mut claimed) = match near.is_empty() {
            true => (Vec::new(), Vec::new()),
            false => {
                let live = Self::placed_near(&ds, &near).await?;
                let mut claimed = live.clone();
                claimed.extend(self.trash_placed_near(&near).await?);
                (live, claimed)
            }
        };
        claimed.retain(|p| {
            !doomed
                .iter()
                .any(|d| d.placed().is_some_and(|o| o.key == p.key))
        });
        // Check every table's bytes before deleting any: no other table's
        // location overlaps them, and no other table reads there.
        let together: Vec<String> = doomed
            .iter()
            .filter_map(TrashEntry::placed)
            .map(|p| p.location.to_string())
            .collect();
        let mut removals = Vec::new();
        for e in doomed.iter().filter(|e| e.is_table()) {
            let Some(place) = e.placed() else {
                continue;
            };
            let key = manifest_key(&e.id);
            let standing = live
                .iter()
                .any(|t| t.key == key && t.location == place.location);
            if !standing {
                Self::check_deletable(&place.key, &place.location, &claimed)?;
                if let Some(refs) = &refs {
                    self.refuse_reached(place.location.as_str(), &together, refs)?;
                }
                removals.push(place.location);
            }
        }
        for e in &doomed {
            self.forget_trash(e).await?;
        }
        // The entries are gone first: a crash in between leaves bytes the
        // reconciler reports, never an entry whose bytes are gone. Looked
        // at once more: another replica's undrop may have recorded a table
        // on them meanwhile.
        if !removals.is_empty() {
            let now_live = Self::placed_near(&*self.manifest_snapshot().await?, &near).await?;
            for loc in removals {
                match crate::core::table::locations::find_overlap(&loc, &now_live, None) {
                    None => {
                        self.remove_location(loc.as_str()).await;
                    }
                    Some(t) => {
                        tracing::warn!(location = %loc, table = %t.key, "purge kept bytes a table was recorded on meanwhile")
                    }
                }
            }
        }
        Ok(doomed)
    }

    /// What is pending on table `id`: the deadlines of its trashed copies.
    pub async fn table_tasks(&self, id: &[String]) -> CatalogResult<Vec<PendingTask>> {
        let id = table_id(&Some(id.to_vec()))?;
        let mut mine: Vec<PendingTask> = self
            .trash_entries()
            .await?
            .iter()
            .filter(|e| e.is_table() && e.id == id)
            .map(PendingTask::from)
            .collect();
        if !self.table_present(&id).await? {
            if mine.is_empty() {
                return Err(crate::core::checks::table_not_found(&id));
            }
            return Ok(mine);
        }
        mine.extend(self.pending_maintenance(&id).await?);
        Ok(mine)
    }

    /// What is pending on namespace `id` and below it.
    pub async fn namespace_tasks(&self, id: &[String]) -> CatalogResult<Vec<PendingTask>> {
        let id = crate::core::checks::namespace_id(&Some(id.to_vec()))?;
        let mine: Vec<PendingTask> = self
            .trash_entries()
            .await?
            .iter()
            .filter(|e| e.under(&id))
            .map(PendingTask::from)
            .collect();
        if mine.is_empty() {
            self.require_namespace(&id).await?;
        }
        Ok(mine)
    }
}

pub(crate) fn not_in_trash(trash_id: &str) -> CatalogError {
    CatalogError::new(
        Code::TRASH_ENTRY_NOT_FOUND,
        format!("trash entry {trash_id:?} does not exist (purged, restored, or never made)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::table::locations::placed_name;

    #[test]
    fn context_and_names() {
        let mut c = HashMap::new();
        assert!(!TrashContext::of(Some(&c)).keeps());
        c.insert(TRASH_GRACE.to_string(), "60".to_string());
        assert!(TrashContext::of(Some(&c)).keeps());
        c.insert(PURGE.to_string(), "true".to_string());
        assert!(!TrashContext::of(Some(&c)).keeps());
        let e = TrashEntry {
            trash_id: new_trash_id(1),
            kind: "table".into(),
            id: vec!["a".into(), "t".into()],
            location: Some("x_t/".into()),
            ..Default::default()
        };
        let p = e.placed().unwrap();
        assert!(is_trash_key(&p.key));
        assert_eq!(p.location.as_str(), "x_t");
        assert!(placed_name(&p.key).starts_with("dropped table 'a$t' (in trash as 0000000000001-"));
        assert_eq!(placed_name("a$t"), "table 'a$t'");
    }
}
