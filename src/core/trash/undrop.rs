//! Undrop: bring trashed objects back from their records (see `trash/records.rs`).
//! A table is re-recorded at its relative location with the properties it
//! had; its bytes never moved, so its versions, tags, branches and indices
//! are all there. A namespace undrop rebuilds every namespace its drop put
//! in trash under the id and re-records every table, in ONE manifest
//! commit, then forgets the records. It is resumable: an object that
//! already stands where its record says (a first call stopped after its
//! commit) counts as restored.

pub use crate::api::trash::{
    UndropNamespaceRequest, UndropNamespaceResponse, UndropTableRequest, UndropTableResponse,
};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::core::checks::{display_id, manifest_key, namespace_id, table_id};
use crate::core::location::Location;
use crate::core::manifest_tx::{
    object_row, row_location, row_object_id, row_properties, row_type, single_rows,
};
use crate::core::object_ids::id_property;
use crate::core::table::locations::find_overlap;
use crate::core::table::locations::placed_name;
use crate::core::trash::records::TrashEntry;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

const ATTEMPTS: u64 = 5;

/// What became of one record.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Restored,
    /// It stands already where its record says.
    Already,
    /// Its name, or its location, is another object's now: it stays in
    /// trash.
    Taken(String),
    /// A table declared and never written.
    NoData,
    /// Its bytes are gone (removed outside the catalog).
    Gone,
}

impl Catalog {
    /// Restore `namespaces` (shallowest first) and `tables` in one
    /// manifest commit; their parents are checked by the caller.
    async fn restore(
        &self,
        namespaces: &[TrashEntry],
        tables: &[TrashEntry],
        skip_declared: bool,
    ) -> CatalogResult<Vec<(TrashEntry, Outcome)>> {
        let mut namespaces = namespaces.to_vec();
        namespaces.sort_by_key(|e| e.id.len());
        let restoring: HashSet<&str> = tables.iter().map(|e| e.trash_id.as_str()).collect();
        for attempt in 1..=ATTEMPTS {
            let held = self.hold_manifest().await;
            let ds = self.manifest_snapshot().await?;
            let keys: Vec<String> = namespaces
                .iter()
                .chain(tables)
                .map(|e| manifest_key(&e.id))
                .collect();
            let mut standing: HashMap<String, (String, Option<Location>)> = HashMap::new();
            let mut real_ids: HashMap<String, String> = HashMap::new();
            for r in single_rows(&self.manifest_rows(&ds, &keys).await?) {
                let (Some(key), Some(kind)) = (row_object_id(&r), row_type(&r)) else {
                    continue;
                };
                if let Some(real) = row_properties(&r)?.get(id_property(&kind)) {
                    real_ids.insert(key.clone(), real.clone());
                }
                standing.insert(key, (kind, row_location(&r).map(|l| Location::new(&l))));
            }
            let in_trash = self.trash_entries().await?;
            let mut claimed = Self::placed_in(&ds).await?;
            claimed.extend(
                in_trash
                    .iter()
                    .filter(|e| !restoring.contains(e.trash_id.as_str()))
                    .filter_map(TrashEntry::placed),
            );
            // Purged meanwhile (another replica): its bytes are not ours.
            let purged = |e: &TrashEntry| !in_trash.iter().any(|t| t.trash_id == e.trash_id);
            let schema = Arc::new(arrow_schema::Schema::from(ds.schema()));
            let mut rows = Vec::new();
            let mut outcomes = Vec::new();
            for ns in &namespaces {
                let key = manifest_key(&ns.id);
                // The same namespace (restored by a first call that
                // stopped), or one made since under its name: its tables
                // must not come back under another namespace's grants.
                let same = match (ns.object_id(), real_ids.get(&key)) {
                    (Some(mine), Some(there)) => mine == there,
                    _ => true,
                };
                let outcome = match standing.get(&key) {
                    Some((kind, _)) if kind == "namespace" && same => Outcome::Already,
                    Some((kind, _)) if kind == "namespace" => Outcome::Taken(format!(
                        "namespace {} was created again since the drop: it is another namespace now",
                        display_id(&ns.id)
                    )),
                    Some(_) => {
                        Outcome::Taken(format!("table {} holds its name", display_id(&ns.id)))
                    }
                    None => {
                        rows.push(object_row(
                            schema.clone(),
                            "namespace",
                            &key,
                            None,
                            &ns.restored_properties(),
                        )?);
                        Outcome::Restored
                    }
                };
                outcomes.push((ns.clone(), outcome));
            }
            let blocked: Vec<Vec<String>> = outcomes
                .iter()
                .filter(|(_, o)| matches!(o, Outcome::Taken(_)))
                .map(|(e, _): &(TrashEntry, Outcome)| e.id.clone())
                .collect();
            for t in tables {
                let key = manifest_key(&t.id);
                let location = t.location.as_deref().map(Location::new);
                if let Some(ns) = blocked.iter().find(|ns| t.id.starts_with(ns)) {
                    let why = format!("its namespace {}'s name is taken", display_id(ns));
                    outcomes.push((t.clone(), Outcome::Taken(why)));
                    continue;
                }
                let outcome = match (standing.get(&key), location) {
                    (Some((kind, at)), loc) if kind == "table" && *at == loc => Outcome::Already,
                    (Some((kind, at)), _) => Outcome::Taken(format!(
                        "{kind} {} holds its name{}; the dropped copy stays in trash as {}",
                        display_id(&t.id),
                        at.as_ref()
                            .map(|l| format!(" (at {l:?})"))
                            .unwrap_or_default(),
                        t.trash_id
                    )),
                    (None, _) if purged(t) => Outcome::Gone,
                    (None, None) => Outcome::NoData,
                    (None, Some(loc))
                        if t.version.is_none()
                            && skip_declared
                            && !self.holds_dataset(loc.as_str()).await? =>
                    {
                        Outcome::NoData
                    }
                    (None, Some(loc)) => {
                        if t.version.is_some_and(|v| v > 0)
                            && !self.holds_dataset(loc.as_str()).await?
                        {
                            Outcome::Gone
                        } else if let Some(other) = find_overlap(&loc, &claimed, Some(&key)) {
                            Outcome::Taken(format!(
                                "its location {loc:?} overlaps the location of {} now; it stays in trash as {}",
                                placed_name(&other.key),
                                t.trash_id
                            ))
                        } else {
                            rows.push(object_row(
                                schema.clone(),
                                "table",
                                &key,
                                Some(loc.as_str()),
                                &t.restored_properties(),
                            )?);
                            Outcome::Restored
                        }
                    }
                };
                outcomes.push((t.clone(), outcome));
            }
            if rows.is_empty() {
                return Ok(outcomes);
            }
            crate::fault::point("trash.undrop");
            match self.manifest_apply(&held, ds, rows, &[], false).await {
                Ok(()) => return Ok(outcomes),
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < ATTEMPTS => {
                    drop(held);
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
        unreachable!("the last attempt returns")
    }

    /// Forget the records of everything restored or settled; the rest
    /// stays in trash.
    async fn settle_records(&self, outcomes: &[(TrashEntry, Outcome)]) -> CatalogResult<()> {
        // Namespaces last, deepest first: the drop's own entry goes last.
        let mut done: Vec<&TrashEntry> = outcomes
            .iter()
            .filter(|(_, o)| !matches!(o, Outcome::Taken(_)))
            .map(|(e, _)| e)
            .collect();
        done.sort_by_key(|e| (!e.is_table(), std::cmp::Reverse(e.id.len())));
        for e in done {
            self.forget_trash(e).await?;
            crate::fault::point("trash.undrop");
        }
        Ok(())
    }

    /// The trashed table an undrop of `id` restores: the newest copy, or
    /// the one `trash_id` names.
    pub async fn undrop_entry(
        &self,
        id: &[String],
        trash_id: Option<&str>,
    ) -> CatalogResult<Option<TrashEntry>> {
        self.newest_in_trash(true, id, trash_id).await
    }

    /// The newest trash entry of a table (`table`) or a namespace at `id`,
    /// or the one `trash_id` names.
    async fn newest_in_trash(
        &self,
        table: bool,
        id: &[String],
        trash_id: Option<&str>,
    ) -> CatalogResult<Option<TrashEntry>> {
        Ok(self
            .trash_entries()
            .await?
            .into_iter()
            .rev()
            .filter(|e| e.is_table() == table && e.id == id)
            .find(|e| trash_id.is_none_or(|t| t == e.trash_id)))
    }

    pub async fn undrop_table(
        &self,
        req: UndropTableRequest,
    ) -> CatalogResult<UndropTableResponse> {
        let id = table_id(&Some(req.id.clone()))?;
        let entry = self
            .undrop_entry(&id, req.trash_id.as_deref())
            .await?
            .ok_or_else(|| {
                CatalogError::new(
                    Code::TABLE_NOT_FOUND,
                    match &req.trash_id {
                        Some(t) => format!(
                            "trash entry {t:?} is not a dropped table {}",
                            display_id(&id)
                        ),
                        None => format!("no dropped table {} is in trash", display_id(&id)),
                    },
                )
            })?;
        let parent = &id[..id.len() - 1];
        if !self.namespace_present(parent).await? {
            return Err(CatalogError::new(
                Code::NAMESPACE_NOT_FOUND,
                format!(
                    "namespace {} does not exist; undrop it (or create it) first",
                    display_id(parent)
                ),
            ));
        }
        let outcomes = self
            .restore(&[], std::slice::from_ref(&entry), false)
            .await?;
        if let Some((_, Outcome::Taken(why))) = outcomes.first() {
            return Err(CatalogError::new(
                Code::TABLE_ALREADY_EXISTS,
                format!("cannot undrop table {}: {why}", display_id(&id)),
            ));
        }
        if let Some((_, Outcome::Gone)) = outcomes.first() {
            self.settle_records(&outcomes).await?;
            return Err(CatalogError::new(
                Code::TABLE_NOT_FOUND,
                format!(
                    "the bytes of dropped table {} are gone from {:?}; its trash entry is forgotten",
                    display_id(&id),
                    entry.location.clone().unwrap_or_default()
                ),
            ));
        }
        self.settle_records(&outcomes).await?;
        Ok(UndropTableResponse {
            location: self.location_uri(entry.location.as_deref().unwrap_or_default()),
            id,
            trash_id: entry.trash_id,
            version: entry.version,
        })
    }

    /// The drop a namespace undrop restores: the group of the newest
    /// trashed namespace `id` (or of the entry `trash_id` names).
    pub async fn undrop_group(
        &self,
        id: &[String],
        trash_id: Option<&str>,
    ) -> CatalogResult<Option<String>> {
        Ok(self
            .newest_in_trash(false, id, trash_id)
            .await?
            .map(|e| e.group))
    }

    pub async fn undrop_namespace(
        &self,
        req: UndropNamespaceRequest,
    ) -> CatalogResult<UndropNamespaceResponse> {
        let id = namespace_id(&Some(req.id.clone()))?;
        if id.is_empty() {
            return Err(CatalogError::invalid("the root namespace is never dropped"));
        }
        let group = self
            .undrop_group(&id, req.trash_id.as_deref())
            .await?
            .ok_or_else(|| {
                CatalogError::new(
                    Code::NAMESPACE_NOT_FOUND,
                    format!("no dropped namespace {} is in trash", display_id(&id)),
                )
            })?;
        let parent = &id[..id.len() - 1];
        if !self.namespace_present(parent).await? {
            return Err(CatalogError::new(
                Code::NAMESPACE_NOT_FOUND,
                format!(
                    "namespace {} does not exist; undrop it (or create it) first",
                    display_id(parent)
                ),
            ));
        }
        let entries: Vec<TrashEntry> = self
            .trash_entries()
            .await?
            .into_iter()
            .filter(|e| e.group == group && e.under(&id))
            .collect();
        let (tables, namespaces): (Vec<_>, Vec<_>) =
            entries.into_iter().partition(TrashEntry::is_table);
        let outcomes = self.restore(&namespaces, &tables, true).await?;
        self.settle_records(&outcomes).await?;
        let mut answer = UndropNamespaceResponse {
            id: id.clone(),
            ..Default::default()
        };
        let mut taken = Vec::new();
        for (e, o) in outcomes {
            match o {
                Outcome::Restored | Outcome::Already => answer.restored.push(e),
                Outcome::NoData => {
                    answer.warnings.push(format!(
                        "table {} was declared but never written: skipped (no data was lost)",
                        display_id(&e.id)
                    ));
                    answer.skipped.push(e);
                }
                Outcome::Gone => answer.warnings.push(format!(
                    "the bytes of table {} are gone from {:?}: skipped, its trash entry is forgotten",
                    display_id(&e.id),
                    e.location.clone().unwrap_or_default()
                )),
                Outcome::Taken(why) => taken.push(format!("{} ({why})", display_id(&e.id))),
            }
        }
        for w in &answer.warnings {
            tracing::warn!(namespace = %display_id(&id), "{w}");
        }
        if !taken.is_empty() {
            return Err(CatalogError::new(
                Code::TABLE_ALREADY_EXISTS,
                format!(
                    "namespace {} was undropped except for: {}; those stay in trash",
                    display_id(&id),
                    taken.join("; ")
                ),
            ));
        }
        Ok(answer)
    }
}
