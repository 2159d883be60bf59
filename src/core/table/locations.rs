//! The catalog owns where its tables live. Every door that records a table
//! location (create at a location, declare, register, batch declare) and
//! every drop goes through here:
//!
//! - a location is a path relative to the storage root, never the root
//!   itself, never the manifest or the catalog's own records;
//! - no table location equals, contains or lies inside another's;
//! - a drop deletes only a location no other table overlaps, re-checked at
//!   drop time, so aliases recorded before these rules existed are safe too.
//!
//! Locations are compared as [`Location`]s are (`core/location.rs`):
//! segment by segment, in any case and Unicode form; a location keeps its
//! own spelling on storage.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray};
use futures::TryStreamExt;

use crate::core::checks::{display_id, manifest_id, manifest_key};
pub(crate) use crate::core::location::Location;
use crate::core::manifest_lock::Held;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// Top-level names under the root that belong to the catalog itself: the
/// engine's manifest and the catalog's own records (jobs).
pub(crate) const RESERVED_DIRS: &[&str] = &["__manifest", "_catalog"];

/// Whether a top-level name under the root is the catalog's own (compared
/// as locations are: some stores ignore case).
pub(crate) fn is_reserved(first_segment: &str) -> bool {
    let first = Location::new(first_segment);
    RESERVED_DIRS.iter().any(|r| Location::new(r) == first)
}

/// A recorded table and where it lives.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    /// The manifest key (`$`-joined id).
    pub key: String,
    /// The location as recorded (possibly the root).
    pub location: Location,
}

impl Placed {
    /// The table as answers name it: a trashed one by its id and trash id.
    pub(crate) fn table_ref(&self) -> crate::api::orphans::TableRef {
        match self
            .key
            .strip_prefix(TRASH_KEY)
            .and_then(|k| k.split_once(':'))
        {
            Some((trash_id, key)) => crate::api::orphans::TableRef {
                id: manifest_id(key),
                trash_id: Some(trash_id.to_string()),
            },
            None => crate::api::orphans::TableRef {
                id: manifest_id(&self.key),
                trash_id: None,
            },
        }
    }
}

/// The tables among manifest rows `batch` (all its rows when it has no
/// `object_type` column, as a scan filtered on it answers) that may
/// overlap one of `near` (all when it is empty).
pub(crate) fn tables_in(batch: &RecordBatch, near: &[Location]) -> Vec<Placed> {
    let col = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
    };
    let (Some(ids), Some(locs)) = (col("object_id"), col("location")) else {
        return Vec::new();
    };
    let kinds = col("object_type");
    let mut out = Vec::new();
    for i in 0..batch.num_rows() {
        let table = kinds
            .as_ref()
            .is_none_or(|k| !k.is_null(i) && k.value(i) == "table");
        if ids.is_null(i) || !table {
            continue;
        }
        let location = match locs.is_null(i) {
            true => Location::default(),
            false => Location::new(locs.value(i)),
        };
        if !near.is_empty() && !near.iter().any(|n| location.overlaps(n)) {
            continue;
        }
        out.push(Placed {
            key: ids.value(i).to_string(),
            location,
        });
    }
    out
}

/// Check a caller's relative location and return it: not the root, no
/// `..`, nothing the catalog keeps for itself.
pub(crate) fn check_relative(location: &str, original: &str) -> CatalogResult<Location> {
    if location.split('/').any(|s| s == "..") {
        return Err(CatalogError::invalid(format!(
            "Path traversal is not allowed. Location must be a relative path within the root directory: {original}"
        )));
    }
    if location.chars().any(|c| c.is_control() || c == '\\') {
        return Err(CatalogError::invalid(format!(
            "table location {original:?} contains a control character or a backslash"
        )));
    }
    // URI syntax inside a path would be read as escapes, a query or a
    // fragment on the way to storage, naming another directory.
    if location.contains(['%', '?', '#']) {
        return Err(CatalogError::invalid(format!(
            "table location {original:?} contains '%', '?' or '#'; give the directory's plain name"
        )));
    }
    let rel = Location::new(location);
    if rel.is_root() {
        return Err(CatalogError::invalid(format!(
            "table location {original:?} is the catalog's storage root itself; a table needs a directory of its own under it"
        )));
    }
    let first = rel.first();
    if is_reserved(first) {
        return Err(CatalogError::invalid(format!(
            "table location {original:?} lies in {first:?}, which the catalog keeps for its own records"
        )));
    }
    Ok(rel)
}

/// The first recorded table, other than `except`, whose location overlaps
/// `location`.
pub(crate) fn find_overlap<'a>(
    location: &Location,
    tables: &'a [Placed],
    except: Option<&str>,
) -> Option<&'a Placed> {
    tables
        .iter()
        .filter(|t| Some(t.key.as_str()) != except)
        .find(|t| t.location.overlaps(location))
}

pub(crate) fn overlap_error(id: &[String], location: &Location, other: &Placed) -> CatalogError {
    let how = if other.location == *location {
        "is"
    } else if other.location.depth() < location.depth() {
        "lies inside"
    } else {
        "contains"
    };
    // Which table, and where exactly, is not told: the caller may not be
    // allowed to see it.
    CatalogError::invalid(format!(
        "table location {location:?} for {} {how} another table's location (compared in any case); a table's location may not overlap another table's",
        display_id(id),
    ))
}

impl Catalog {
    /// Every recorded table (declared ones too) and its location, from the
    /// manifest's latest version, and every location a trashed table keeps
    /// claimed (see `trash/records.rs`).
    pub(crate) async fn placed_tables(&self) -> CatalogResult<Vec<Placed>> {
        self.placed_tables_near(&[]).await
    }

    /// [`Self::placed_tables`], narrowed to those that may overlap one of
    /// `near` (all of them when `near` is empty).
    pub(crate) async fn placed_tables_near(&self, near: &[Location]) -> CatalogResult<Vec<Placed>> {
        // Trash read before and after the manifest: an undrop records its
        // table and then forgets its entry, so one of the reads sees it.
        let before = self.trash_placed_near(near).await?;
        let ds = self.manifest_snapshot().await?;
        let mut placed = self.claimed_near(&ds, near).await?;
        placed.extend(before);
        Ok(placed)
    }

    /// Every location claimed in `ds` (its tables', and trashed ones')
    /// that may overlap one of `near` (all when it is empty).
    pub(crate) async fn claimed_near(
        &self,
        ds: &Arc<lance::Dataset>,
        near: &[Location],
    ) -> CatalogResult<Vec<Placed>> {
        let mut placed = self.placed_near_kept(ds, near).await?;
        placed.extend(self.trash_placed_near(near).await?);
        Ok(placed)
    }

    /// Every recorded table and its location, in one manifest snapshot.
    pub(crate) async fn placed_in(ds: &lance::Dataset) -> CatalogResult<Vec<Placed>> {
        Self::placed_near(ds, &[]).await
    }

    /// The recorded tables that overlap one of `near` (all when it is
    /// empty). Overlap is decided in any case, which no index on
    /// `location` answers, so the two columns are read whole and compared
    /// here (about 10 ms per 100,000 tables in a release build).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn placed_near(
        ds: &lance::Dataset,
        near: &[Location],
    ) -> CatalogResult<Vec<Placed>> {
        let mut scan = ds.scan();
        scan.filter("object_type = 'table'")?;
        scan.project(&["object_id", "location"])?;
        let batches: Vec<RecordBatch> = scan.try_into_stream().await?.try_collect().await?;
        let mut out = Vec::new();
        for batch in &batches {
            out.extend(tables_in(batch, near));
        }
        Ok(out)
    }

    /// [`Self::placed_near`] on a snapshot this process holds, answered
    /// from `placed_kept.rs` when the same question was asked of it.
    async fn placed_near_kept(
        &self,
        ds: &Arc<lance::Dataset>,
        near: &[Location],
    ) -> CatalogResult<Vec<Placed>> {
        if let Some(hit) = self.placed_kept.get(ds, near) {
            return Ok(hit);
        }
        let placed = Self::placed_near(ds, near).await?;
        self.placed_kept.keep(ds, near, &placed);
        Ok(placed)
    }

    /// Refuse a new location for table `id` (13, naming the table it
    /// overlaps) unless no other recorded table overlaps it.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn check_unclaimed(
        &self,
        held: &Held<'_>,
        id: &[String],
        location: &Location,
    ) -> CatalogResult<()> {
        self.check_held(held)?;
        let tables = self
            .placed_tables_near(std::slice::from_ref(location))
            .await?;
        let key = manifest_key(id);
        match find_overlap(location, &tables, Some(&key)) {
            Some(other) => Err(overlap_error(id, location, other)),
            None => Ok(()),
        }
    }

    /// After recording `id` at `location`: if another table recorded an
    /// overlapping location at the same time (another replica; both passed
    /// their check before either committed), this record is undone, so two
    /// tables never share bytes. `Ok(None)`: it stands. `Ok(Some(err))`: it
    /// was undone; answer `err`. `Err`: it could not be told or undone; the
    /// record may stand (a later drop re-checks and refuses to delete
    /// shared bytes), and nothing may be removed.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn settle_claim(
        &self,
        held: &Held<'_>,
        id: &[String],
        location: &Location,
    ) -> CatalogResult<Option<CatalogError>> {
        let ds = self.manifest_snapshot().await?;
        let tables = self
            .claimed_near(&ds, std::slice::from_ref(location))
            .await?;
        let key = manifest_key(id);
        if find_overlap(location, &tables, Some(&key)).is_none() {
            return Ok(None);
        }
        // Our row as we spelled it: a record of the same id in another
        // spelling is a newer one.
        let ours = tables
            .iter()
            .any(|t| t.key == key && t.location.as_str() == location.as_str());
        if ours {
            // Against the snapshot that showed our row where we put it: a
            // newer record of the same id is never removed.
            self.manifest_apply(held, ds, Vec::new(), std::slice::from_ref(&key), false)
                .await?;
        }
        Ok(Some(CatalogError::new(
            Code::CONCURRENT_MODIFICATION,
            format!(
                "table {} was being recorded at {location:?} while another table was recorded at an overlapping location; this one was undone, retry",
                display_id(id),
            ),
        )))
    }

    /// Whether dropping table `key` may delete its recorded location: not
    /// the root or the catalog's own records, and no other table's location
    /// overlaps it. Refused with InvalidTableState (19); deregister keeps
    /// the bytes and is always allowed.
    pub(crate) fn check_deletable(
        key: &str,
        location: &Location,
        tables: &[Placed],
    ) -> CatalogResult<()> {
        let name = placed_name(key);
        let first = location.first();
        // Legacy records were never checked: a `..` in one could reach
        // outside its own directory. (`%`, `?` and `#` are safe here: a
        // location is turned into a path segment by segment, encoded.)
        let unsafe_text = location.segments().any(|s| s == "..");
        if location.is_root() || is_reserved(first) || unsafe_text {
            return Err(CatalogError::new(
                Code::INVALID_TABLE_STATE,
                format!(
                    "{name} is recorded at {location:?}, which is the storage root or the catalog's own records; dropping it would delete data that is not the table's. Deregister it instead"
                ),
            ));
        }
        if let Some(other) = find_overlap(location, tables, Some(key)) {
            return Err(CatalogError::new(
                Code::INVALID_TABLE_STATE,
                format!(
                    "{name}'s location {location:?} overlaps the location {:?} of {}; dropping it would delete that table's data. Deregister one of them instead",
                    other.location,
                    placed_name(&other.key)
                ),
            ));
        }
        Ok(())
    }

    /// The recorded locations of the given tables in `ds`, checked
    /// deletable together (a cascade refuses before it deletes anything);
    /// a trashed table's location counts as another table's.
    pub(crate) async fn deletable_locations(
        &self,
        ds: &Arc<lance::Dataset>,
        keys: &[String],
    ) -> CatalogResult<HashMap<String, Location>> {
        // Their own rows first (an index lookup), then only the tables
        // that may overlap them.
        // One row at a time: a batch may hold several.
        let rows = self.manifest_rows(ds, keys).await?;
        let near: Vec<Location> = crate::core::manifest_tx::single_rows(&rows)
            .filter_map(|r| crate::core::manifest_tx::row_location(&r))
            .map(|l| Location::new(&l))
            .collect();
        let tables = match near.is_empty() {
            true => Vec::new(),
            false => self.claimed_near(ds, &near).await?,
        };
        let mut out = HashMap::new();
        for key in keys {
            if let Some(t) = tables.iter().find(|t| &t.key == key) {
                Self::check_deletable(key, &t.location, &tables)?;
                out.insert(key.clone(), t.location.clone());
            }
        }
        Ok(out)
    }
}

/// Placement keys of trashed locations start with this (no manifest key
/// can: ids never hold control characters).
pub(crate) const TRASH_KEY: &str = "\u{1}trash:";

/// The name of a placement in messages: a table, or a trashed one.
pub(crate) fn placed_name(key: &str) -> String {
    match key.strip_prefix(TRASH_KEY).and_then(|k| k.split_once(':')) {
        Some((trash_id, key)) => format!(
            "dropped table {} (in trash as {trash_id})",
            display_id(&manifest_id(key))
        ),
        None => format!("table {}", display_id(&manifest_id(key))),
    }
}

#[cfg(test)]
#[path = "locations_tests.rs"]
mod tests;
