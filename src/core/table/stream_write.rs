//! Streaming writes: a stream of record batches into a table as ONE Lance
//! commit. Batches flow into Lance's writer as they arrive (it buffers up to
//! one data file's row group before flushing), so memory stays bounded; a
//! schema mismatch or a failure mid-stream commits nothing. Arrow Flight's
//! DoPut is served by this.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use lance::dataset::{InsertBuilder, WriteMode, WriteParams};
use lance_namespace::models::{DescribeTableRequest, MergeInsertIntoTableRequest};
use lance_namespace_impls::dir::manifest::ManifestNamespace;
use serde::{Deserialize, Serialize};
use tracing::Instrument;

use crate::core::body::parse_mode;
use crate::core::branch::open::branch_of;
use crate::core::checks::{display_id, table_id, table_not_found};
use crate::core::data::rows::Rows;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// What a streamed write does.
#[derive(Debug, Clone)]
pub enum WriteOp {
    /// Create the table (`mode`: create, exist_ok or overwrite).
    Create {
        mode: Option<String>,
        properties: Option<HashMap<String, String>>,
    },
    /// Create the table when it does not exist, append otherwise.
    CreateOrAppend,
    /// Append (`overwrite: false`) or replace the rows.
    Insert { overwrite: bool },
    /// Merge-insert with the spec request's options (`on`, when-matched, ...).
    MergeInsert(Box<MergeInsertIntoTableRequest>),
}

/// What a streamed write committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteOutcome {
    pub version: u64,
    pub num_rows: u64,
    pub created: bool,
    /// What a merge-insert did with the rows it read (only on a merge).
    #[serde(flatten)]
    pub merged: Option<MergeCounts>,
}

/// A merge-insert's counts, named as the spec's merge-insert answer names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeCounts {
    pub num_updated_rows: u64,
    pub num_inserted_rows: u64,
    pub num_deleted_rows: u64,
}

impl Catalog {
    /// Write `batches` (with `schema`) to table `id` as one commit. A
    /// table it creates gets the real id `new_id` (minted by the governance
    /// layer; a fresh one without it).
    pub async fn write_stream(
        &self,
        id: &[String],
        branch: Option<String>,
        op: WriteOp,
        schema: SchemaRef,
        batches: BoxStream<'static, CatalogResult<RecordBatch>>,
        new_id: Option<String>,
    ) -> CatalogResult<WriteOutcome> {
        let id = table_id(&Some(id.to_vec()))?;
        let branch = branch_of(&branch).map(str::to_string);
        let counted = Arc::new(AtomicU64::new(0));
        let counter = counted.clone();
        let batches = batches.inspect_ok(move |b| {
            counter.fetch_add(b.num_rows() as u64, Ordering::Relaxed);
        });
        let source = Rows {
            schema,
            batches: batches.boxed(),
        }
        .into_source();
        // Checked before anything is written, as for a REST merge-insert.
        let on = match &op {
            WriteOp::MergeInsert(req) => {
                crate::core::body::merge_on_columns(req.on.clone(), source.schema().as_ref())?
            }
            _ => Vec::new(),
        };
        // One manifest lookup decides the path; a create also needs the
        // parent namespace, looked up alongside.
        let creating = matches!(op, WriteOp::Create { .. } | WriteOp::CreateOrAppend);
        let parent = async {
            match creating {
                true => self.require_parent(&id).await,
                false => Ok(()),
            }
        };
        let (target, ()) = tokio::try_join!(self.write_target(&id), parent)?;
        let created = !matches!(target, Target::Written(..));
        if branch.is_some() && created {
            return Err(CatalogError::new(
                Code::TABLE_NOT_FOUND,
                format!("table {} has no data, so no branches", display_id(&id)),
            ));
        }
        let branch = branch.as_deref();
        let mut merged = None;
        let version = match (op, target) {
            (WriteOp::Create { mode, properties }, target) => {
                let mode = parse_mode(
                    mode.as_deref(),
                    &["create", "exist_ok", "overwrite"],
                    "create",
                    "create",
                )?;
                match (target, mode) {
                    (Target::Written(at, main), "overwrite") => {
                        let ds = self.head(&id, &at, main, branch).await?;
                        self.write_into(ds, true, source).await?
                    }
                    (Target::Written(at, main), "exist_ok") => {
                        let ds = self.head(&id, &at, main, branch).await?;
                        return Ok(WriteOutcome {
                            version: ds.version().version,
                            num_rows: 0,
                            created: false,
                            merged: None,
                        });
                    }
                    (Target::Written(..), _) => {
                        return Err(CatalogError::new(
                            Code::TABLE_ALREADY_EXISTS,
                            format!("table {} already exists", display_id(&id)),
                        ))
                    }
                    (fresh, _) => {
                        self.create_from_stream(&id, fresh.declared(), properties, source, new_id)
                            .await?
                    }
                }
            }
            (WriteOp::Insert { .. } | WriteOp::MergeInsert(_), Target::Missing) => {
                return Err(table_not_found(&id))
            }
            (WriteOp::CreateOrAppend, Target::Written(at, main)) => {
                let ds = self.head(&id, &at, main, branch).await?;
                self.write_into(ds, false, source).await?
            }
            (WriteOp::Insert { overwrite }, Target::Written(at, main)) => {
                let ds = self.head(&id, &at, main, branch).await?;
                self.write_into(ds, overwrite, source).await?
            }
            (WriteOp::MergeInsert(req), Target::Written(at, main)) => {
                let ds = Arc::new(self.head(&id, &at, main, branch).await?);
                let job = crate::core::branch::writes::merge_job(ds, &req, on)?;
                let (ds, stats) = job.execute(source).await?;
                merged = Some(MergeCounts {
                    num_updated_rows: stats.num_updated_rows,
                    num_inserted_rows: stats.num_inserted_rows,
                    num_deleted_rows: stats.num_deleted_rows,
                });
                ds.version().version
            }
            // A new table, or the first data of a declared one (as the
            // engine's insert and merge-insert do): written as its first version.
            (_, fresh) => {
                self.create_from_stream(&id, fresh.declared(), None, source, new_id)
                    .await?
            }
        };
        Ok(WriteOutcome {
            version,
            num_rows: counted.load(Ordering::Relaxed),
            created,
            merged,
        })
    }

    /// Append to or overwrite an opened table as one commit.
    pub(in crate::core) async fn write_into(
        &self,
        ds: lance::Dataset,
        overwrite: bool,
        source: SendableRecordBatchStream,
    ) -> CatalogResult<u64> {
        let params = WriteParams {
            mode: if overwrite {
                WriteMode::Overwrite
            } else {
                WriteMode::Append
            },
            session: Some(self.session.clone()),
            ..Default::default()
        };
        let ds = InsertBuilder::new(Arc::new(ds))
            .with_params(&params)
            .execute_stream(source)
            .instrument(tracing::debug_span!("lance_write"))
            .await?;
        Ok(ds.version().version)
    }

    /// Write the first version into a fresh directory, then record the table
    /// in the manifest in one commit. Nothing is visible while the stream
    /// runs; if the write fails, or the id was taken meanwhile (14), the
    /// directory is removed. A declared table is written at its declared
    /// location.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn create_from_stream(
        &self,
        id: &[String],
        declared: Option<String>,
        properties: Option<HashMap<String, String>>,
        source: SendableRecordBatchStream,
        new_id: Option<String>,
    ) -> CatalogResult<u64> {
        crate::core::checks::check_properties(properties.as_ref())?;
        let mut properties = properties;
        let real = new_id.unwrap_or_else(crate::core::object_ids::fresh_object_id);
        crate::core::object_ids::stamp(&mut properties, "table", real);
        let params = WriteParams {
            mode: WriteMode::Create,
            session: Some(self.session.clone()),
            store_params: self.store_params(None),
            ..Default::default()
        };
        if let Some(location) = declared {
            let ds = InsertBuilder::new(location.as_str())
                .with_params(&params)
                .execute_stream(source)
                .await?;
            return Ok(ds.version().version);
        }
        let key = crate::core::checks::manifest_key(id);
        let dir = crate::core::location::Location::new(&ManifestNamespace::generate_dir_name(&key));
        // On its own task: a caller that goes away ends the stream (the
        // write fails and its directory is removed) but cannot stop the
        // task between the write and the record.
        let catalog = self.clone();
        let id = id.to_vec();
        let real = properties
            .as_ref()
            .and_then(|p| p.get(crate::core::reserved::TABLE_ID).cloned());
        let task = tokio::spawn(async move {
            // The fresh name is checked as a REST create's is (see
            // `create_table_at`), before and when it is recorded.
            catalog
                .check_unclaimed(&catalog.hold_manifest().await, &id, &dir)
                .await?;
            let intent = catalog.begin_create(&id, &dir, real, false).await?;
            let fresh = crate::core::table::placement::Placement::Fresh(dir.clone());
            let written = InsertBuilder::new(catalog.location_uri(dir.as_str()).as_str())
                .with_params(&params)
                .execute_stream(source)
                .instrument(tracing::debug_span!("lance_write"))
                .await;
            let ds = match written {
                Ok(ds) => ds,
                Err(e) => {
                    catalog.undo_failed_write(&fresh, Some(intent.id())).await;
                    intent.finish().await;
                    return Err(CatalogError::from_lance(&e));
                }
            };
            crate::fault::point("create.written");
            if let Err(e) = intent.confirm().await {
                catalog.undo_failed_write(&fresh, Some(intent.id())).await;
                return Err(e);
            }
            let recorded = catalog
                .record_placed(&id, &fresh, properties.as_ref(), Some(intent.id()))
                .await;
            intent.finish().await;
            recorded?;
            Ok(ds.version().version)
        });
        task.await
            .map_err(|e| CatalogError::internal(format!("the create task stopped: {e}")))?
    }

    /// Where a write to `id` lands: a new table, a declared one (written at
    /// its declared location) or an existing one, opened at its head. A
    /// declared table is one whose location holds no version yet: opening
    /// it tells (Lance finds the latest version from its hint), where the
    /// engine's declared check lists and stats every version file.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn write_target(&self, id: &[String]) -> CatalogResult<Target> {
        // The existence check's answer is kept per manifest version (the
        // router has just asked it): a new table costs no second lookup.
        if !self.table_present(id).await? {
            return Ok(Target::Missing);
        }
        let described = self.describe(id, DescribeTableRequest::default()).await;
        let d = match described {
            Ok(d) => d,
            Err(e) if matches!(e.code, Code::NAMESPACE_NOT_FOUND | Code::TABLE_NOT_FOUND) => {
                return Ok(Target::Missing)
            }
            Err(e) => return Err(e),
        };
        // A write would be committed on a version a batch has not decided
        // (Lance rebases onto the newest version it finds): not while one
        // is being placed.
        self.fence_seen(id, d.properties.as_ref()).await?;
        let location = d.location.ok_or_else(|| {
            CatalogError::internal(format!("table {} has no location", display_id(id)))
        })?;
        match self.open_at(id, &location, None).await {
            Ok(ds) => Ok(Target::Written(location, Box::new(ds))),
            Err(e) if e.code == Code::TABLE_NOT_FOUND => Ok(Target::Declared(location)),
            Err(e) => Err(e),
        }
    }
}

pub(crate) enum Target {
    Missing,
    Declared(String),
    /// Written, at this location; its main line as opened.
    Written(String, Box<lance::Dataset>),
}

impl Target {
    fn declared(self) -> Option<String> {
        match self {
            Target::Declared(location) => Some(location),
            _ => None,
        }
    }
}

impl Catalog {
    /// A written table's head: the main line already opened, or a branch.
    async fn head(
        &self,
        id: &[String],
        at: &str,
        main: Box<lance::Dataset>,
        branch: Option<&str>,
    ) -> CatalogResult<lance::Dataset> {
        match branch {
            None => Ok(*main),
            Some(_) => self.open_at(id, at, branch).await,
        }
    }
}

/// Whether an insert `mode` (append or overwrite, any case) replaces rows.
pub fn insert_mode_is_overwrite(mode: Option<&str>) -> CatalogResult<bool> {
    Ok(parse_mode(mode, &["append", "overwrite"], "append", "insert")? == "overwrite")
}
