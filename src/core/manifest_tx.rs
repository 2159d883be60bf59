//! Atomic changes to the `__manifest` table that the storage engine has no
//! operation for (renames; later, batch commits).
//!
//! Mechanism: the rows to add and the ids to remove are applied as ONE Lance
//! commit on the manifest (a merge-insert keyed on `object_id` that inserts the
//! new rows and deletes the old ones), built against the manifest version the
//! preconditions were checked on, with no automatic retry. Every other writer
//! of the manifest (the engine's copy-on-write rewrites, another replica)
//! commits the next version too, so a concurrent change makes this commit
//! conflict and the caller gets ConcurrentModification (14): the change is
//! applied whole against the state it was checked on, or not at all. Within one
//! process the catalog also serialises these transactions behind a lock.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use futures::TryStreamExt;
use lance::dataset::builder::DatasetBuilder;
use lance::dataset::{MergeInsertBuilder, WhenMatched, WhenNotMatched, WhenNotMatchedBySource};
use lance::Dataset;

use super::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// The manifest's key column.
const OBJECT_ID: &str = "object_id";
/// The manifest column holding an object's properties as JSON.
const METADATA: &str = "metadata";

/// A SQL string literal.
pub(crate) fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl Catalog {
    /// The manifest at its latest version.
    pub(crate) async fn manifest_snapshot(&self) -> CatalogResult<Arc<Dataset>> {
        let uri = self.location_uri("__manifest");
        let ds = DatasetBuilder::from_uri(&uri)
            .with_session(self.session.clone())
            .with_storage_options(self.storage_options.clone())
            .load()
            .await?;
        Ok(Arc::new(ds))
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

    /// Insert `rows` and delete the rows keyed `remove`, in one commit on
    /// `ds` (the snapshot the caller checked its preconditions on).
    pub(crate) async fn manifest_swap(
        &self,
        ds: Arc<Dataset>,
        rows: Vec<RecordBatch>,
        remove: &[String],
    ) -> CatalogResult<()> {
        let schema = Arc::new(arrow_schema::Schema::from(ds.schema()));
        let rows = if rows.is_empty() {
            RecordBatch::new_empty(schema.clone())
        } else {
            arrow::compute::concat_batches(&rows[0].schema(), &rows)?
        };
        let mut builder = MergeInsertBuilder::try_new(ds.clone(), vec![OBJECT_ID.to_string()])?;
        builder
            .when_matched(WhenMatched::Fail)
            .when_not_matched(WhenNotMatched::InsertAll)
            .conflict_retries(0);
        if !remove.is_empty() {
            let list: Vec<String> = remove.iter().map(|i| literal(i)).collect();
            let expr = format!("{OBJECT_ID} IN ({})", list.join(", "));
            builder.when_not_matched_by_source(WhenNotMatchedBySource::delete_if(&ds, &expr)?);
        }
        let job = builder.try_build()?;
        let reader = arrow_array::RecordBatchIterator::new(vec![Ok(rows.clone())], rows.schema());
        job.execute_reader(Box::new(reader) as Box<dyn arrow_array::RecordBatchReader + Send>)
            .await
            .map_err(|e| {
                let err = CatalogError::from_lance(&e);
                if err.code == Code::CONCURRENT_MODIFICATION
                    || err.code == Code::TABLE_ALREADY_EXISTS
                {
                    CatalogError::new(
                        Code::CONCURRENT_MODIFICATION,
                        format!("the catalog changed while this change was applied; nothing was changed: {}", err.message),
                    )
                } else {
                    err
                }
            })?;
        Ok(())
    }
}

/// A copy of `batch` with its `object_id` column replaced.
pub(crate) fn with_object_ids(batch: &RecordBatch, ids: Vec<String>) -> CatalogResult<RecordBatch> {
    let idx = batch
        .schema()
        .index_of(OBJECT_ID)
        .map_err(|e| CatalogError::internal(format!("manifest has no {OBJECT_ID}: {e}")))?;
    if ids.len() != batch.num_rows() {
        return Err(CatalogError::internal(
            "object id count does not match rows",
        ));
    }
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns[idx] = Arc::new(StringArray::from(ids)) as ArrayRef;
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}

impl Catalog {
    /// Merge `updates` into a table's properties (its manifest metadata).
    /// A property merge is safe to re-apply, so a conflict is retried.
    pub(crate) async fn update_table_properties(
        &self,
        id: &[String],
        updates: std::collections::HashMap<String, String>,
    ) -> CatalogResult<()> {
        let key = id.join("$");
        let mut attempt = 0;
        loop {
            attempt += 1;
            let ds = self.manifest_snapshot().await?;
            let rows = self.manifest_rows(&ds, std::slice::from_ref(&key)).await?;
            let Some(row) = rows.first().filter(|b| b.num_rows() == 1) else {
                return Err(CatalogError::new(
                    Code::TABLE_NOT_FOUND,
                    format!("table {} does not exist", super::checks::display_id(id)),
                ));
            };
            let idx = row
                .schema()
                .index_of(METADATA)
                .map_err(|e| CatalogError::internal(format!("manifest has no {METADATA}: {e}")))?;
            let current = row
                .column(idx)
                .as_any()
                .downcast_ref::<StringArray>()
                .filter(|a| !a.is_null(0))
                .map(|a| a.value(0).to_string());
            let mut props: std::collections::HashMap<String, String> = current
                .as_deref()
                .and_then(|s| serde_json::from_str(s).ok())
                .unwrap_or_default();
            props.extend(updates.clone());
            let encoded = serde_json::to_string(&props)
                .map_err(|e| CatalogError::internal(format!("cannot encode properties: {e}")))?;
            let mut columns: Vec<ArrayRef> = row.columns().to_vec();
            columns[idx] = Arc::new(StringArray::from(vec![encoded])) as ArrayRef;
            let updated = RecordBatch::try_new(row.schema(), columns)?;
            match self.manifest_upsert(ds, updated).await {
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < 5 => {
                    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt)).await;
                }
                other => return other,
            }
        }
    }

    /// Replace existing manifest rows (matched on `object_id`), in one commit.
    async fn manifest_upsert(&self, ds: Arc<Dataset>, rows: RecordBatch) -> CatalogResult<()> {
        let mut builder = MergeInsertBuilder::try_new(ds, vec![OBJECT_ID.to_string()])?;
        builder
            .when_matched(WhenMatched::UpdateAll)
            .when_not_matched(WhenNotMatched::DoNothing)
            .conflict_retries(0);
        let reader = arrow_array::RecordBatchIterator::new(vec![Ok(rows.clone())], rows.schema());
        builder
            .try_build()?
            .execute_reader(Box::new(reader) as Box<dyn arrow_array::RecordBatchReader + Send>)
            .await
            .map_err(|e| CatalogError::from_lance(&e))?;
        Ok(())
    }
}
