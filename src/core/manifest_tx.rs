//! Atomic changes to the `__manifest` table that the storage engine has no
//! operation for: renames, property updates, version commits and batches.
//!
//! Mechanism: the rows to add or replace and the ids to remove are applied as
//! ONE Lance commit on the manifest (`manifest_commit.rs`: an append and
//! deletions, keyed on `object_id`), built against the manifest version the
//! preconditions were checked on. A concurrent change to the same keys (or
//! one that cannot say which keys it changed) makes this commit conflict and
//! the caller gets ConcurrentModification (14): the change is applied whole,
//! against the state it was checked on, or not at all. Within one process the catalog
//! also serialises these transactions behind a lock (`manifest_lock.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use futures::TryStreamExt;
use lance::Dataset;

use crate::core::manifest_lock::Held;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// The manifest's key column.
const OBJECT_ID: &str = "object_id";
/// The manifest column naming an object's kind (`namespace` or `table`).
const OBJECT_TYPE: &str = "object_type";
/// The manifest column holding an object's properties as JSON.
const METADATA: &str = "metadata";

pub(crate) use crate::core::manifest_commit::literal;

fn string_at(batch: &RecordBatch, column: &str) -> Option<String> {
    batch
        .column_by_name(column)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
        .filter(|a| !a.is_empty() && !a.is_null(0))
        .map(|a| a.value(0).to_string())
}

/// The object id of a one-row manifest batch.
pub(crate) fn row_object_id(row: &RecordBatch) -> Option<String> {
    string_at(row, OBJECT_ID)
}

/// The location (directory under the root) of a one-row manifest batch.
pub(crate) fn row_location(row: &RecordBatch) -> Option<String> {
    string_at(row, "location")
}

/// The object type of a one-row manifest batch.
pub(crate) fn row_type(row: &RecordBatch) -> Option<String> {
    string_at(row, OBJECT_TYPE)
}

/// The properties of a one-row manifest batch.
pub(crate) fn row_properties(row: &RecordBatch) -> CatalogResult<HashMap<String, String>> {
    Ok(string_at(row, METADATA)
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default())
}

fn replace_column(
    row: &RecordBatch,
    column: &str,
    value: Option<String>,
) -> CatalogResult<RecordBatch> {
    let idx = row
        .schema()
        .index_of(column)
        .map_err(|e| CatalogError::internal(format!("manifest has no {column}: {e}")))?;
    let mut columns: Vec<ArrayRef> = row.columns().to_vec();
    columns[idx] = Arc::new(StringArray::from(vec![value; row.num_rows()])) as ArrayRef;
    Ok(RecordBatch::try_new(row.schema(), columns)?)
}

/// A copy of a one-row manifest batch with its properties changed by `f`.
pub(crate) fn with_properties(
    row: &RecordBatch,
    f: impl FnOnce(&mut HashMap<String, String>),
) -> CatalogResult<RecordBatch> {
    let mut props = row_properties(row)?;
    f(&mut props);
    let encoded = (!props.is_empty())
        .then(|| serde_json::to_string(&props))
        .transpose()
        .map_err(|e| CatalogError::internal(format!("cannot encode properties: {e}")))?;
    replace_column(row, METADATA, encoded)
}

/// A copy of a one-row manifest batch under another object id.
pub(crate) fn with_object_id(row: &RecordBatch, id: String) -> CatalogResult<RecordBatch> {
    replace_column(row, OBJECT_ID, Some(id))
}

/// A new table row in the manifest's schema.
pub(crate) fn table_row(
    schema: arrow_schema::SchemaRef,
    object_id: &str,
    location: &str,
    properties: &HashMap<String, String>,
) -> CatalogResult<RecordBatch> {
    object_row(schema, "table", object_id, Some(location), properties)
}

/// A new row of `kind` (`table` or `namespace`) in the manifest's schema.
pub(crate) fn object_row(
    schema: arrow_schema::SchemaRef,
    kind: &str,
    object_id: &str,
    location: Option<&str>,
    properties: &HashMap<String, String>,
) -> CatalogResult<RecordBatch> {
    let metadata = (!properties.is_empty())
        .then(|| serde_json::to_string(properties))
        .transpose()
        .map_err(|e| CatalogError::internal(format!("cannot encode properties: {e}")))?;
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| -> ArrayRef {
            let value = match f.name().as_str() {
                OBJECT_ID => Some(object_id.to_string()),
                OBJECT_TYPE => Some(kind.to_string()),
                "location" => location.map(str::to_string),
                METADATA => metadata.clone(),
                _ => return arrow_array::new_null_array(f.data_type(), 1),
            };
            Arc::new(StringArray::from(vec![value]))
        })
        .collect();
    Ok(RecordBatch::try_new(schema, columns)?)
}

impl Catalog {
    /// Whether the storage root answers: its manifest loads (readiness).
    pub async fn probe(&self) -> CatalogResult<()> {
        // Loaded afresh: the held one's probe would pass on a root whose
        // manifest is gone.
        self.load_manifest().await.map(|_| ())
    }

    /// The manifest at its latest version: the one this process holds
    /// unless a successor exists (one probe; see `meta_cache.rs`), so the
    /// steps of one request and the requests after a commit of this
    /// process's do not load it again.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn manifest_snapshot(&self) -> CatalogResult<Arc<Dataset>> {
        self.current_manifest().await
    }

    /// The manifest loaded afresh from storage.
    pub(super) async fn load_manifest(&self) -> CatalogResult<Arc<Dataset>> {
        let uri = self.location_uri("__manifest");
        let ds = self.dataset_builder(&uri).load().await?;
        Ok(Arc::new(ds))
    }

    /// The object types recorded under `key` in `ds`, kept for that
    /// version and the ones this process commits after it without
    /// touching that row (see `meta_cache.rs`). Every existence question
    /// of one key asks this, so one lookup answers them all.
    pub(crate) async fn kinds_at(&self, ds: &Dataset, key: &str) -> CatalogResult<Vec<String>> {
        let row = [key.to_string()];
        self.cached_at(
            ds,
            crate::core::meta_cache::kinds_key(key),
            &row,
            self.object_kinds(ds, key),
        )
        .await
    }

    /// The object types recorded under `key` in `ds` (one, or none; the
    /// key is unique), read through the manifest's key index.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn object_kinds(&self, ds: &Dataset, key: &str) -> CatalogResult<Vec<String>> {
        let mut scan = ds.scan();
        scan.filter(&format!("{OBJECT_ID} = {}", literal(key)))?;
        scan.project(&[OBJECT_TYPE])?;
        let batches: Vec<RecordBatch> = scan.try_into_stream().await?.try_collect().await?;
        Ok(single_rows(&batches)
            .filter_map(|row| string_at(&row, OBJECT_TYPE))
            .collect())
    }

    /// The manifest rows of the given object ids, all columns.
    pub(crate) async fn manifest_rows(
        &self,
        ds: &Dataset,
        ids: &[String],
    ) -> CatalogResult<Vec<RecordBatch>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let list: Vec<String> = ids.iter().map(|i| literal(i)).collect();
        let mut scan = ds.scan();
        scan.filter(&format!("{OBJECT_ID} IN ({})", list.join(", ")))?;
        let batches: Vec<RecordBatch> = scan.try_into_stream().await?.try_collect().await?;
        Ok(batches.into_iter().filter(|b| b.num_rows() > 0).collect())
    }

    /// Write `rows` and delete the rows keyed `remove`, in one commit on `ds`
    /// (the snapshot the caller checked its preconditions on). With
    /// `replace_existing`, rows whose id exists replace it; otherwise an
    /// existing id fails the commit.
    pub(crate) async fn manifest_apply(
        &self,
        held: &Held<'_>,
        ds: Arc<Dataset>,
        rows: Vec<RecordBatch>,
        remove: &[String],
        replace_existing: bool,
    ) -> CatalogResult<()> {
        self.apply_change(held, ds, rows, remove, replace_existing, Vec::new())
            .await
            .map(|_| ())
    }

    /// Write `rows` (replacing theirs) in one commit on `ds`, conflicting
    /// also with a concurrent change to a `guard` key; answers the version
    /// it made, for a next commit that must see nothing else land between
    /// (a batch's claim, then its decision).
    pub(crate) async fn manifest_claim(
        &self,
        held: &Held<'_>,
        ds: Arc<Dataset>,
        rows: Vec<RecordBatch>,
        guard: Vec<String>,
    ) -> CatalogResult<Arc<Dataset>> {
        self.apply_change(held, ds, rows, &[], true, guard).await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn apply_change(
        &self,
        held: &Held<'_>,
        ds: Arc<Dataset>,
        rows: Vec<RecordBatch>,
        remove: &[String],
        replace_existing: bool,
        guard: Vec<String>,
    ) -> CatalogResult<Arc<Dataset>> {
        self.check_held(held)?;
        let rows = match rows.len() {
            0 => None,
            1 => rows.into_iter().next(),
            _ => Some(arrow::compute::concat_batches(&rows[0].schema(), &rows)?),
        };
        self.manifest_commit(
            ds,
            crate::core::manifest_commit::Change {
                rows,
                remove: remove.to_vec(),
                replace_existing,
                guard,
            },
        )
        .await
    }

    /// Merge `updates` into a table's properties (its manifest metadata).
    pub(crate) async fn update_table_properties(
        &self,
        id: &[String],
        updates: HashMap<String, String>,
    ) -> CatalogResult<()> {
        let missing = || crate::core::checks::table_not_found(id);
        self.update_properties(
            &crate::core::checks::manifest_key(id),
            "table",
            missing,
            |p| p.extend(updates.clone()),
        )
        .await
    }

    /// Change the properties of the manifest row `key` of type `kind`
    /// (`table` or `namespace`; `missing` when there is none) with `f`, in
    /// one commit on the snapshot it read. Only for changes that are safe
    /// to re-apply, since a conflict is retried.
    pub(crate) async fn update_properties(
        &self,
        key: &str,
        kind: &str,
        missing: impl Fn() -> CatalogError,
        f: impl Fn(&mut HashMap<String, String>),
    ) -> CatalogResult<()> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = {
                let held = self.hold_manifest().await;
                let ds = self.manifest_snapshot().await?;
                let rows = self.manifest_rows(&ds, &[key.to_string()]).await?;
                let row = single_rows(&rows)
                    .find(|r| row_type(r).as_deref() == Some(kind))
                    .ok_or_else(&missing)?;
                let row = with_properties(&row, &f)?;
                self.manifest_apply(&held, ds, vec![row], &[], true).await
            };
            match result {
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < 5 => {
                    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt)).await;
                }
                other => return other,
            }
        }
    }
}

/// Every row of some manifest batches, as one-row batches.
pub(crate) fn single_rows(batches: &[RecordBatch]) -> impl Iterator<Item = RecordBatch> + '_ {
    batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |i| b.slice(i, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Field, Schema};

    fn manifest_schema() -> arrow_schema::SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new(OBJECT_ID, DataType::Utf8, false),
            Field::new(OBJECT_TYPE, DataType::Utf8, false),
            Field::new("location", DataType::Utf8, true),
            Field::new(METADATA, DataType::Utf8, true),
            Field::new("base_objects", DataType::Int64, true),
        ]))
    }

    #[test]
    fn literals_escape_quotes() {
        assert_eq!(literal("a"), "'a'");
        assert_eq!(literal("it's"), "'it''s'");
    }

    #[test]
    fn table_rows_round_trip() {
        let props = HashMap::from([("owner".to_string(), "me".to_string())]);
        let row = table_row(manifest_schema(), "a$t", "dir_a", &props).unwrap();
        assert_eq!(row.num_rows(), 1);
        assert_eq!(row_object_id(&row).as_deref(), Some("a$t"));
        assert_eq!(row_type(&row).as_deref(), Some("table"));
        assert_eq!(row_location(&row).as_deref(), Some("dir_a"));
        assert_eq!(row_properties(&row).unwrap(), props);
        // Columns the catalog does not know stay null.
        assert!(row.column(4).is_null(0));

        let renamed = with_object_id(&row, "b$t".into()).unwrap();
        assert_eq!(row_object_id(&renamed).as_deref(), Some("b$t"));
        assert_eq!(row_location(&renamed).as_deref(), Some("dir_a"));

        let updated = with_properties(&row, |p| {
            p.insert("k".into(), "v".into());
        })
        .unwrap();
        assert_eq!(row_properties(&updated).unwrap().len(), 2);
        let cleared = with_properties(&row, |p| p.clear()).unwrap();
        assert!(row_properties(&cleared).unwrap().is_empty());
        assert!(cleared.column(3).is_null(0));
        // No properties: no metadata at all.
        let bare = table_row(manifest_schema(), "a$u", "dir_u", &HashMap::new()).unwrap();
        assert!(bare.column(3).is_null(0));
    }
}
