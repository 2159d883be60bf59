//! Where a new table's bytes go, and how they become a table: a fresh
//! directory the catalog names or one the caller chose (checked, see
//! `locations.rs`), written on its own task, then recorded; whatever fails,
//! only bytes that are certainly this write's alone are removed. Also the
//! tables at nested locations, which the engine mistakes for declared ones.

use std::collections::HashMap;
use std::sync::Arc;

use lance::dataset::{InsertBuilder, WriteMode, WriteParams};
use lance_namespace::models::{CreateTableRequest, CreateTableResponse};
use tracing::Instrument;

use crate::core::caller_options::CallerOptions;
use crate::core::data::rows::Rows;
use crate::core::location::Location;
use crate::core::manifest_lock::Held;
use crate::core::manifest_tx::table_row;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    /// A written table's location relative to the root, when the engine
    /// misreads it: nested (more than one directory deep; the engine tells
    /// a written table from a declared one by joining its location as ONE
    /// path segment) or with a character object_store escapes in a path
    /// segment (non-ASCII, `~ # % ? * [ ] { } ^ | < > "` and more: the
    /// engine looks for the escaped name, not the directory Lance wrote).
    /// For these the core answers itself.
    pub(crate) fn engine_misreads(&self, location: &str) -> Option<String> {
        // Locations come back as URIs, each segment percent-encoded.
        let decoded = percent_encoding::percent_decode_str(location)
            .decode_utf8()
            .ok()?;
        let root = self.root.trim_end_matches('/');
        let stripped = decoded
            .strip_prefix("file://")
            .filter(|_| !root.contains("://"))
            .unwrap_or(&decoded);
        let rel = stripped.strip_prefix(root)?.strip_prefix('/')?;
        // A recorded location is checked when it is recorded; this is only
        // a second look, so anything odd is left to the engine.
        if rel.is_empty()
            || rel
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return None;
        }
        let escaped = |s: &str| object_store::path::PathPart::from(s).as_ref() != s;
        (rel.contains('/') || rel.split('/').any(escaped)).then(|| rel.to_string())
    }

    /// Whether `location` is one the engine misreads and holds a dataset.
    pub(crate) async fn misread_with_data(&self, location: Option<&str>) -> CatalogResult<bool> {
        match location.and_then(|l| self.engine_misreads(l)) {
            Some(rel) => self.holds_dataset(&rel).await,
            None => Ok(false),
        }
    }

    /// Create over an existing table at a nested location: `create` is 5,
    /// `exist_ok` answers the table, `overwrite` writes a new version.
    pub(in crate::core) async fn create_over_nested(
        &self,
        caller: &CallerOptions,
        id: &[String],
        mode: &str,
        rel: &str,
        rows: Rows,
    ) -> CatalogResult<CreateTableResponse> {
        let uri = self.location_uri(rel);
        let version = match mode {
            "overwrite" => {
                let params = WriteParams {
                    mode: WriteMode::Overwrite,
                    session: Some(self.session.clone()),
                    store_params: self.store_params(Some(caller)),
                    ..Default::default()
                };
                InsertBuilder::new(uri.as_str())
                    .with_params(&params)
                    .execute_stream(rows.into_source())
                    .await?
                    .version()
                    .version
            }
            "exist_ok" => self.open_at(id, &uri, None).await?.version().version,
            _ => return Err(crate::core::checks::table_already_exists(id)),
        };
        let mut described = self.describe(id, Default::default()).await?;
        crate::core::checks::public_properties(&mut described.properties);
        Ok(CreateTableResponse {
            location: Some(uri),
            version: Some(version as i64),
            properties: described.properties,
            storage_options: self.vended_storage_options(),
            ..Default::default()
        })
    }

    /// Create a new table at `placement`: write the dataset, then record
    /// it. The work runs on its own task, so a caller that goes away cannot
    /// stop it between the write and the record; whatever fails, the
    /// catalog removes the bytes it wrote and nothing else.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(in crate::core) async fn create_table_at(
        &self,
        req: CreateTableRequest,
        caller: &CallerOptions,
        placement: Placement,
        rows: Rows,
    ) -> CatalogResult<CreateTableResponse> {
        let id = req.id.clone().unwrap_or_default();
        // Refused early, before any byte is written; re-checked under the
        // same lock when the table is recorded. A fresh name is checked
        // too: it is predictable, so another table may have been declared
        // there (in some case) to read what this one writes.
        self.check_unclaimed(&self.hold_manifest().await, &id, placement.relative())
            .await?;
        if let Placement::Chosen(rel) = &placement {
            self.require_empty_location(rel).await?;
        }
        let source = rows.into_source();
        let (catalog, caller) = (self.clone(), caller.clone());
        let real = req
            .properties
            .as_ref()
            .and_then(|p| p.get(crate::core::reserved::TABLE_ID).cloned());
        let task = async move {
            let rel = placement.relative().clone();
            let chosen = matches!(placement, Placement::Chosen(_));
            let intent = catalog.begin_create(&id, &rel, real, chosen).await?;
            let params = WriteParams {
                mode: WriteMode::Create,
                session: Some(catalog.session.clone()),
                store_params: catalog.store_params(Some(&caller)),
                ..Default::default()
            };
            let uri = catalog.location_uri(rel.as_str());
            let written = InsertBuilder::new(uri.as_str())
                .with_params(&params)
                .execute_stream(source)
                .instrument(tracing::debug_span!("lance_write"))
                .await;
            let ds = match written {
                Ok(ds) => ds,
                Err(e) => {
                    catalog
                        .undo_failed_write(&placement, Some(intent.id()))
                        .await;
                    intent.finish().await;
                    return Err(CatalogError::from_lance(&e));
                }
            };
            crate::fault::point("create.written");
            if let Err(e) = intent.confirm().await {
                catalog
                    .undo_failed_write(&placement, Some(intent.id()))
                    .await;
                return Err(e);
            }
            let recorded = catalog
                .record_placed(&id, &placement, req.properties.as_ref(), Some(intent.id()))
                .await;
            intent.finish().await;
            recorded?;
            Ok(CreateTableResponse {
                location: Some(uri),
                version: Some(ds.version().version as i64),
                properties: req.properties,
                storage_options: catalog.vended_storage_options(),
                ..Default::default()
            })
        };
        own_task(task).await
    }

    /// Record a table freshly written at `placement`. Its location is
    /// checked again under the manifest lock and settled after the commit
    /// (see `table/locations.rs`). Whatever fails, the written bytes are removed
    /// only when they are certainly this write's alone.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn record_placed(
        &self,
        id: &[String],
        placement: &Placement,
        properties: Option<&HashMap<String, String>>,
        own_intent: Option<&str>,
    ) -> CatalogResult<()> {
        let rel = placement.relative();
        let held = self.hold_manifest().await;
        if let Err(e) = self.check_unclaimed(&held, id, rel).await {
            // Another table claimed an overlapping location meanwhile: the
            // bytes may be its too; the reconciler reports what is left.
            self.remove_if_unowned(rel, own_intent).await;
            return Err(e);
        }
        self.record_written(&held, id, rel, properties, own_intent)
            .await?;
        match self.settle_claim(&held, id, rel).await? {
            None => Ok(()),
            Some(err) => {
                self.remove_if_unowned(rel, own_intent).await;
                Err(err)
            }
        }
    }

    /// Undo a write that failed before anything was recorded. A fresh
    /// directory is this write's own; at a chosen location a committed
    /// dataset is another writer's (it won the race), so it stays.
    pub(crate) async fn undo_failed_write(&self, placement: &Placement, own_intent: Option<&str>) {
        match placement {
            Placement::Fresh(rel) => {
                self.remove_if_unowned(rel, own_intent).await;
            }
            Placement::Chosen(rel) => match self.holds_dataset(rel.as_str()).await {
                Ok(false) => {
                    self.remove_if_unowned(rel, own_intent).await;
                }
                _ => {
                    tracing::warn!(location = %rel, "a failed create left its bytes beside another writer's dataset")
                }
            },
        }
    }

    /// Record a table whose bytes this call wrote at `relative`. When the
    /// record does not stand, the bytes are removed, but only once the
    /// manifest shows the id is not recorded there (a commit reported as
    /// failed may have landed).
    pub(crate) async fn record_written(
        &self,
        held: &Held<'_>,
        id: &[String],
        relative: &Location,
        properties: Option<&HashMap<String, String>>,
        own_intent: Option<&str>,
    ) -> CatalogResult<()> {
        let Err(e) = self.record_table(held, id, relative, properties).await else {
            return Ok(());
        };
        match self.recorded_location(id).await {
            // Recorded at this place (in any spelling): the bytes are the
            // record's, and stay.
            Ok(Some(at)) if at == *relative => Ok(()),
            Ok(other) => {
                self.remove_if_unowned(relative, own_intent).await;
                Err(lost_create(e, id, other.is_some()))
            }
            Err(_) => Err(e),
        }
    }

    /// Record a table at `relative` in the manifest: one appended row,
    /// refused if the id is taken (by a table or a namespace). Removes
    /// nothing.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn record_table(
        &self,
        held: &Held<'_>,
        id: &[String],
        relative: &Location,
        properties: Option<&HashMap<String, String>>,
    ) -> CatalogResult<()> {
        let key = crate::core::checks::manifest_key(id);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let ds = self.manifest_snapshot().await?;
            let schema = Arc::new(arrow_schema::Schema::from(ds.schema()));
            let row = table_row(
                schema,
                &key,
                relative.as_str(),
                properties.unwrap_or(&HashMap::new()),
            )?;
            match self.manifest_apply(held, ds, vec![row], &[], false).await {
                // A commit on other names that Lance would not rebase over
                // (the engine's rewrite, another replica's): the only
                // precondition, the id being free, is checked again.
                Err(e)
                    if e.code == Code::CONCURRENT_MODIFICATION
                        && attempt < 4
                        && self.recorded_location(id).await?.is_none() =>
                {
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                other => return other,
            }
        }
    }

    /// Table `id`'s location relative to the root, as recorded (404 when
    /// it is not recorded).
    pub(crate) async fn relative_table_location(&self, id: &[String]) -> CatalogResult<String> {
        match self.recorded_location(id).await? {
            Some(l) => Ok(l.to_string()),
            None => Err(crate::core::table_not_found(id)),
        }
    }

    /// Where table `id` is recorded now, if it is.
    pub(crate) async fn recorded_location(&self, id: &[String]) -> CatalogResult<Option<Location>> {
        let ds = self.manifest_snapshot().await?;
        let rows = self
            .manifest_rows(&ds, &[crate::core::checks::manifest_key(id)])
            .await?;
        Ok(rows
            .first()
            .and_then(crate::core::manifest_tx::row_location)
            .map(|l| Location::new(&l)))
    }
}

/// Run `work` on its own task and wait for it: the work goes on to its end
/// even if the caller's request is dropped.
pub(in crate::core) async fn own_task<T: Send + 'static>(
    work: impl std::future::Future<Output = CatalogResult<T>> + Send + 'static,
) -> CatalogResult<T> {
    tokio::spawn(work)
        .await
        .map_err(|e| CatalogError::internal(format!("a catalog task stopped: {e}")))?
}

/// Where a new table's bytes go: a directory the catalog named (fresh and
/// unique, so no other table can overlap it) or one the caller chose.
pub(crate) enum Placement {
    Fresh(Location),
    Chosen(Location),
}

impl Placement {
    pub(crate) fn relative(&self) -> &Location {
        match self {
            Placement::Fresh(r) | Placement::Chosen(r) => r,
        }
    }
}

/// A create whose record lost to another create of the same id (`taken`:
/// the id is recorded) answers TableAlreadyExists (5), as the engine's own
/// create does; any other failure keeps its code.
pub(in crate::core) fn lost_create(e: CatalogError, id: &[String], taken: bool) -> CatalogError {
    if taken && (e.code == Code::CONCURRENT_MODIFICATION || e.code == Code::TABLE_ALREADY_EXISTS) {
        CatalogError::new(
            Code::TABLE_ALREADY_EXISTS,
            format!(
                "table {} already exists (created concurrently); nothing of this create was kept",
                crate::core::checks::display_id(id)
            ),
        )
    } else {
        e
    }
}
