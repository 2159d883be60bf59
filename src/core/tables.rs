//! Table operations with rules beyond the engine's: the parent must exist,
//! Arrow bodies are checked before any write, create honours an explicit
//! location (Gravitino's `x-lance-table-location`) and properties header.

use std::collections::HashMap;

use bytes::Bytes;
use lance::dataset::{WriteMode, WriteParams};
use lance::Dataset;
use lance_namespace::models::{
    CreateTableRequest, CreateTableResponse, DeclareTableRequest, DeclareTableResponse,
    DropTableResponse, InsertIntoTableRequest, InsertIntoTableResponse,
    MergeInsertIntoTableRequest, MergeInsertIntoTableResponse, RegisterTableRequest,
    RegisterTableResponse, TableExistsRequest,
};
use lance_namespace::LanceNamespace;
use lance_namespace_impls::dir::manifest::{ManifestEntry, ManifestNamespace, ObjectType};

use super::checks::{table_id, table_not_found};
use super::data::{decode_stream, encode_stream, parse_mode};
use super::open::branch_of;
use super::stream_write::Target;
use super::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

/// Context keys the REST gateway fills from Gravitino-style headers.
pub const LOCATION_KEY: &str = "header.x-lance-table-location";
pub const PROPERTIES_KEY: &str = "header.x-lance-table-properties";

impl Catalog {
    pub(crate) async fn create_table_op(
        &self,
        req: CreateTableRequest,
        body: Bytes,
    ) -> CatalogResult<CreateTableResponse> {
        let id = table_id(&req.id)?;
        let mut created = self.create_table_inner(req, body).await?;
        // The table exists now: a failure to read its namespaces' options
        // falls back to the root's rather than failing the create.
        created.storage_options = match self.table_storage_options(&id).await {
            Ok(options) => options,
            Err(e) => {
                tracing::warn!(error = %e.message, "storage options of a created table");
                self.vended_storage_options()
            }
        };
        Ok(created)
    }

    async fn create_table_inner(
        &self,
        mut req: CreateTableRequest,
        body: Bytes,
    ) -> CatalogResult<CreateTableResponse> {
        let id = table_id(&req.id)?;
        let mode = parse_mode(
            req.mode.as_deref(),
            &["create", "exist_ok", "overwrite"],
            "create",
            "create_table",
        )?;
        let ctx = req.context.clone().unwrap_or_default();
        if let Some(raw) = ctx.get(PROPERTIES_KEY).filter(|s| !s.trim().is_empty()) {
            let props: HashMap<String, String> = serde_json::from_str(raw).map_err(|e| {
                CatalogError::invalid(format!(
                    "x-lance-table-properties must be a JSON object of strings: {e}"
                ))
            })?;
            req.properties
                .get_or_insert_with(HashMap::new)
                .extend(props);
        }
        super::checks::check_properties(req.properties.as_ref())?;
        let stream = decode_stream(&body, "create_table")?;
        self.require_parent(&id).await?;
        let body = if stream.batches.is_empty() {
            encode_stream(&stream)?
        } else {
            body
        };
        req.id = Some(id.clone());
        req.mode = Some(mode.to_string());
        let location = ctx
            .get(LOCATION_KEY)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty());
        let target = self.write_target(&id).await?;
        if matches!(target, Target::Missing) {
            // A new table: the catalog writes and records it itself, so that
            // a create that loses a race or fails half-way removes what it
            // wrote (the engine's create leaves the dataset behind).
            let placement = match location {
                Some(l) => Placement::Chosen(self.relative_location(l, true)?),
                None => Placement::Fresh(ManifestNamespace::generate_dir_name(
                    &super::checks::manifest_key(&id),
                )),
            };
            return self.create_table_at(req, placement, body).await;
        }
        if let Target::Written(location) = &target {
            if let Some(rel) = self.nested(location) {
                return self.create_over_nested(req, &id, mode, &rel, body).await;
            }
            if mode == "overwrite" {
                // The engine's overwrite replaces the record's properties
                // with the request's: the catalog's own (protection, the
                // committed version) must survive it.
                let existing = self.describe(&id, Default::default()).await?;
                let kept = existing
                    .properties
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|(k, _)| k.starts_with(super::reserved::RESERVED_PREFIX));
                let props = req.properties.get_or_insert_with(HashMap::new);
                for (k, v) in kept {
                    props.entry(k).or_insert(v);
                }
            }
        }
        let mut created = engine(self.inner.create_table(req, body).await)?;
        super::checks::public_properties(&mut created.properties);
        Ok(created)
    }

    /// A written table's location relative to the root, when it is nested
    /// (more than one directory deep): the engine tells such a table from
    /// a declared one by joining its location as ONE path segment, so for
    /// these the core answers itself.
    pub(crate) fn nested(&self, location: &str) -> Option<String> {
        // Locations come back as URIs, each segment percent-encoded.
        let decoded = percent_encoding::percent_decode_str(location)
            .decode_utf8()
            .ok()?;
        self.relative_location(&decoded, true)
            .ok()
            .filter(|rel| rel.contains('/'))
    }

    /// Whether `location` is nested and holds a dataset.
    pub(crate) async fn nested_with_data(&self, location: Option<&str>) -> CatalogResult<bool> {
        match location.and_then(|l| self.nested(l)) {
            Some(rel) => self.holds_dataset(&rel).await,
            None => Ok(false),
        }
    }

    /// Create over an existing table at a nested location: `create` is 5,
    /// `exist_ok` answers the table, `overwrite` writes a new version.
    async fn create_over_nested(
        &self,
        req: CreateTableRequest,
        id: &[String],
        mode: &str,
        rel: &str,
        body: Bytes,
    ) -> CatalogResult<CreateTableResponse> {
        let uri = self.location_uri(rel);
        let version = match mode {
            "overwrite" => {
                let stream = decode_stream(&body, "create_table")?;
                let reader = arrow_array::RecordBatchIterator::new(
                    stream.batches.into_iter().map(Ok),
                    stream.schema.clone(),
                );
                let params = WriteParams {
                    mode: WriteMode::Overwrite,
                    session: Some(self.session.clone()),
                    store_params: self.store_params(req.storage_options.clone()),
                    ..Default::default()
                };
                Dataset::write(reader, &uri, Some(params))
                    .await?
                    .version()
                    .version
            }
            "exist_ok" => self.open_at(id, &uri, None).await?.version().version,
            _ => {
                return Err(CatalogError::new(
                    Code::TABLE_ALREADY_EXISTS,
                    format!("table {} already exists", super::checks::display_id(id)),
                ))
            }
        };
        let mut described = self.describe(id, Default::default()).await?;
        super::checks::public_properties(&mut described.properties);
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
    async fn create_table_at(
        &self,
        req: CreateTableRequest,
        placement: Placement,
        body: Bytes,
    ) -> CatalogResult<CreateTableResponse> {
        let id = req.id.clone().unwrap_or_default();
        if let Placement::Chosen(rel) = &placement {
            self.check_unclaimed(&id, rel).await?;
            self.require_empty_location(rel).await?;
        }
        let stream = decode_stream(&body, "create_table")?;
        let catalog = self.clone();
        let task = async move {
            let rel = placement.relative().to_string();
            let reader = arrow_array::RecordBatchIterator::new(
                stream.batches.into_iter().map(Ok),
                stream.schema.clone(),
            );
            let params = WriteParams {
                mode: WriteMode::Create,
                session: Some(catalog.session.clone()),
                store_params: catalog.store_params(req.storage_options.clone()),
                ..Default::default()
            };
            let uri = catalog.location_uri(&rel);
            let ds = match Dataset::write(reader, &uri, Some(params)).await {
                Ok(ds) => ds,
                Err(e) => {
                    catalog.undo_failed_write(&placement).await;
                    return Err(CatalogError::from_lance(&e));
                }
            };
            catalog
                .record_placed(&id, &placement, req.properties.as_ref())
                .await?;
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

    /// Record a table freshly written at `placement`. A chosen location is
    /// checked again under the manifest lock and settled after the commit
    /// (see `locations.rs`). Whatever fails, the written bytes are removed
    /// only when they are certainly this write's alone.
    pub(crate) async fn record_placed(
        &self,
        id: &[String],
        placement: &Placement,
        properties: Option<&HashMap<String, String>>,
    ) -> CatalogResult<()> {
        let rel = placement.relative();
        let Placement::Chosen(rel) = placement else {
            return self.record_written(id, rel, properties).await;
        };
        let _serial = self.manifest_lock.lock().await;
        if let Err(e) = self.check_unclaimed(id, rel).await {
            // Another table claimed an overlapping location meanwhile: the
            // bytes may be its too; the reconciler reports what is left.
            self.remove_if_unowned(rel).await;
            return Err(e);
        }
        self.record_written(id, rel, properties).await?;
        match self.settle_claim(id, rel).await? {
            None => Ok(()),
            Some(err) => {
                self.remove_if_unowned(rel).await;
                Err(err)
            }
        }
    }

    /// Undo a write that failed before anything was recorded. A fresh
    /// directory is this write's own; at a chosen location a committed
    /// dataset is another writer's (it won the race), so it stays.
    pub(crate) async fn undo_failed_write(&self, placement: &Placement) {
        match placement {
            Placement::Fresh(rel) => self.remove_if_unowned(rel).await,
            Placement::Chosen(rel) => match self.holds_dataset(rel).await {
                Ok(false) => self.remove_if_unowned(rel).await,
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
        id: &[String],
        relative: &str,
        properties: Option<&HashMap<String, String>>,
    ) -> CatalogResult<()> {
        let Err(e) = self.record_table(id, relative, properties).await else {
            return Ok(());
        };
        match self.recorded_location(id).await {
            Ok(Some(at)) if at == relative => Ok(()),
            Ok(other) => {
                self.remove_if_unowned(relative).await;
                Err(lost_create(e, id, other.is_some()))
            }
            Err(_) => Err(e),
        }
    }

    /// Record a table at `relative` in the manifest, through the engine's
    /// own copy-on-write commit: it keeps the manifest compact and indexed,
    /// and fails if the id is taken. Removes nothing.
    pub(crate) async fn record_table(
        &self,
        id: &[String],
        relative: &str,
        properties: Option<&HashMap<String, String>>,
    ) -> CatalogResult<()> {
        let metadata = match properties.filter(|p| !p.is_empty()) {
            Some(p) => Some(serde_json::to_string(p).map_err(|e| {
                CatalogError::internal(format!("cannot encode table properties: {e}"))
            })?),
            None => None,
        };
        let entry = ManifestEntry {
            object_id: super::checks::manifest_key(id),
            object_type: ObjectType::Table,
            location: Some(relative.to_string()),
            metadata,
        };
        engine(
            self.manifest
                .insert_into_manifest_with_metadata(vec![entry], None)
                .await,
        )
    }

    /// Where table `id` is recorded now, if it is.
    async fn recorded_location(&self, id: &[String]) -> CatalogResult<Option<String>> {
        let ds = self.manifest_snapshot().await?;
        let rows = self
            .manifest_rows(&ds, &[super::checks::manifest_key(id)])
            .await?;
        Ok(rows
            .first()
            .and_then(super::manifest_tx::row_location)
            .map(|l| super::locations::canonical(&l)))
    }

    /// A location relative to the root, from a relative path, an absolute
    /// path or a URI under the root, checked (see `locations.rs`). Unless
    /// `nested`, it must be one directory directly under the root: the
    /// engine's own paths treat a table location as one directory name.
    pub(crate) fn relative_location(&self, location: &str, nested: bool) -> CatalogResult<String> {
        let root = self.root.trim_end_matches('/');
        let stripped = location
            .strip_prefix("file://")
            .filter(|_| !root.contains("://"))
            .unwrap_or(location);
        let rel = match stripped.strip_prefix(root) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
            _ if stripped.contains("://") || stripped.starts_with('/') => {
                return Err(CatalogError::invalid(format!(
                    "table location {location:?} is outside the catalog's storage root {root}"
                )))
            }
            _ => stripped,
        };
        let rel = super::locations::check_relative(rel, location)?;
        if !nested && rel.contains('/') {
            return Err(CatalogError::invalid(format!(
                "table location {location:?} must be a directory directly under the storage root {root}"
            )));
        }
        Ok(rel)
    }

    pub(crate) async fn declare_table_op(
        &self,
        mut req: DeclareTableRequest,
    ) -> CatalogResult<DeclareTableResponse> {
        let id = table_id(&req.id)?;
        super::checks::check_properties(req.properties.as_ref())?;
        self.require_parent(&id).await?;
        let vend = req.vend_credentials != Some(false);
        let mut declared = match req.location.as_deref().filter(|l| !l.trim().is_empty()) {
            Some(location) => {
                let rel = self.relative_location(location.trim(), true)?;
                self.declare_at(&id, rel, req.properties).await?
            }
            None => {
                req.id = Some(id.clone());
                engine(self.inner.declare_table(req).await)?
            }
        };
        declared.storage_options = match vend {
            true => self.table_storage_options(&id).await?,
            false => None,
        };
        Ok(declared)
    }

    /// Declare a table at a caller-chosen directory under the root (the
    /// engine only takes the name it would pick itself). The directory must
    /// hold nothing yet and overlap no other table.
    async fn declare_at(
        &self,
        id: &[String],
        rel: String,
        properties: Option<HashMap<String, String>>,
    ) -> CatalogResult<DeclareTableResponse> {
        if self.table_present(id).await? {
            return Err(CatalogError::new(
                Code::TABLE_ALREADY_EXISTS,
                format!("table {} already exists", super::checks::display_id(id)),
            ));
        }
        self.require_empty_location(&rel).await?;
        // Nothing is written here, so nothing is ever removed; the record is
        // settled on its own task (see register_table_op).
        let (catalog, id_owned, rel_owned, props) =
            (self.clone(), id.to_vec(), rel.clone(), properties.clone());
        own_task(async move {
            let _serial = catalog.manifest_lock.lock().await;
            catalog.check_unclaimed(&id_owned, &rel_owned).await?;
            catalog
                .record_table(&id_owned, &rel_owned, props.as_ref())
                .await
                .map_err(|e| lost_create(e, &id_owned, true))?;
            match catalog.settle_claim(&id_owned, &rel_owned).await? {
                None => Ok(()),
                Some(err) => Err(err),
            }
        })
        .await?;
        Ok(DeclareTableResponse {
            location: Some(self.location_uri(&rel)),
            storage_options: self.vended_storage_options(),
            properties,
            managed_versioning: Some(true),
            ..Default::default()
        })
    }

    pub(crate) async fn register_table_op(
        &self,
        mut req: RegisterTableRequest,
    ) -> CatalogResult<RegisterTableResponse> {
        let id = table_id(&req.id)?;
        parse_mode(
            req.mode.as_deref(),
            &["create", "overwrite"],
            "create",
            "register_table",
        )?;
        super::checks::check_properties(req.properties.as_ref())?;
        // Registered datasets may sit deeper than one directory (an existing
        // `warehouse/sales/orders.lance`); they are still the catalog's to
        // check: inside the root, overlapping no other table.
        let rel = self.relative_location(&req.location, true)?;
        self.require_parent(&id).await?;
        req.id = Some(id.clone());
        req.location = rel.clone();
        // Check, record and settle on its own task: a caller that goes away
        // cannot leave a record that was never settled.
        let catalog = self.clone();
        own_task(async move {
            let _serial = catalog.manifest_lock.lock().await;
            catalog.check_unclaimed(&id, &rel).await?;
            let mut registered = engine(catalog.inner.register_table(req).await)?;
            // The full location, as create, declare and describe answer it.
            registered.location = Some(catalog.location_uri(&rel));
            match catalog.settle_claim(&id, &rel).await? {
                None => Ok(registered),
                Some(err) => Err(err),
            }
        })
        .await
    }

    pub(crate) async fn insert_op(
        &self,
        mut req: InsertIntoTableRequest,
        body: Bytes,
    ) -> CatalogResult<InsertIntoTableResponse> {
        let id = table_id(&req.id)?;
        let mode = parse_mode(
            req.mode.as_deref(),
            &["append", "overwrite"],
            "append",
            "insert",
        )?;
        let stream = decode_stream(&body, "insert_into_table")?;
        self.require_table(&id).await?;
        if let Some(branch) = branch_of(&req.branch) {
            return self
                .insert_on_branch(&id, branch, mode, stream)
                .await
                .map_err(schema_error);
        }
        req.id = Some(id);
        req.mode = Some(mode.to_string());
        engine(self.inner.insert_into_table(req, body).await).map_err(schema_error)
    }

    pub(crate) async fn merge_insert_op(
        &self,
        mut req: MergeInsertIntoTableRequest,
        body: Bytes,
    ) -> CatalogResult<MergeInsertIntoTableResponse> {
        let id = table_id(&req.id)?;
        let stream = decode_stream(&body, "merge_insert_into_table")?;
        let on = merge_on_columns(req.on.take(), &stream.schema)?;
        self.require_table(&id).await?;
        if let Some(branch) = branch_of(&req.branch) {
            return self
                .merge_insert_on_branch(&id, branch, &req, on, stream)
                .await
                .map_err(schema_error);
        }
        req.id = Some(id);
        req.on = Some(on);
        engine(self.inner.merge_insert_into_table(req, body).await).map_err(schema_error)
    }

    /// Drop a table: forget it, then delete its directory, which must be
    /// its own (see `locations.rs`: never the root, the manifest, or bytes
    /// another table's location overlaps, re-checked now). The record is
    /// removed by a commit against the very snapshot that was checked, so a
    /// rename, re-create or registration in between makes it conflict and
    /// check again, instead of deleting bytes that became another table's.
    pub(crate) async fn drop_table_by_id(
        &self,
        id: &[String],
        force: bool,
    ) -> CatalogResult<DropTableResponse> {
        let key = super::checks::manifest_key(id);
        let mut attempt = 0;
        let (rel, _serial) = loop {
            attempt += 1;
            let serial = self.manifest_lock.lock().await;
            let ds = self.manifest_snapshot().await?;
            let located = Self::deletable_locations(&ds, std::slice::from_ref(&key)).await?;
            let Some(rel) = located.get(&key).cloned() else {
                return Err(table_not_found(id));
            };
            self.guard_table(&ds, id, force).await?;
            match self
                .manifest_apply(ds, Vec::new(), std::slice::from_ref(&key), false)
                .await
            {
                Ok(()) => break (rel, serial),
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < 5 => {
                    drop(serial);
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                Err(e) => return Err(e),
            }
        };
        // The table is gone from the catalog; bytes that cannot be removed
        // now are left for the reconciler to report, not an error. The lock
        // is held until they are gone, so no registration in this process
        // can claim them in between.
        self.remove_location(&rel).await;
        drop(_serial);
        Ok(DropTableResponse {
            id: Some(id.to_vec()),
            location: Some(self.location_uri(&rel)),
            ..Default::default()
        })
    }

    pub(crate) async fn table_present(&self, id: &[String]) -> CatalogResult<bool> {
        let req = TableExistsRequest {
            id: Some(id.to_vec()),
            ..Default::default()
        };
        match engine(self.inner.table_exists(req).await) {
            Ok(()) => Ok(true),
            Err(e) if e.code == Code::TABLE_NOT_FOUND || e.code == Code::NAMESPACE_NOT_FOUND => {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    pub(crate) async fn require_table(&self, id: &[String]) -> CatalogResult<()> {
        if self.table_present(id).await? {
            Ok(())
        } else {
            Err(table_not_found(id))
        }
    }
}

/// Run `work` on its own task and wait for it: the work goes on to its end
/// even if the caller's request is dropped.
async fn own_task<T: Send + 'static>(
    work: impl std::future::Future<Output = CatalogResult<T>> + Send + 'static,
) -> CatalogResult<T> {
    tokio::spawn(work)
        .await
        .map_err(|e| CatalogError::internal(format!("a catalog task stopped: {e}")))?
}

/// Where a new table's bytes go: a directory the catalog named (fresh and
/// unique, so no other table can overlap it) or one the caller chose.
pub(crate) enum Placement {
    Fresh(String),
    Chosen(String),
}

impl Placement {
    pub(crate) fn relative(&self) -> &str {
        match self {
            Placement::Fresh(r) | Placement::Chosen(r) => r,
        }
    }
}

/// A create whose record lost to another create of the same id (`taken`:
/// the id is recorded) answers TableAlreadyExists (5), as the engine's own
/// create does; any other failure keeps its code.
fn lost_create(e: CatalogError, id: &[String], taken: bool) -> CatalogError {
    if taken && (e.code == Code::CONCURRENT_MODIFICATION || e.code == Code::TABLE_ALREADY_EXISTS) {
        CatalogError::new(
            Code::TABLE_ALREADY_EXISTS,
            format!(
                "table {} already exists (created concurrently); nothing of this create was kept",
                super::checks::display_id(id)
            ),
        )
    } else {
        e
    }
}

/// The engine reports a rejected append as Internal; the caller sent data
/// whose schema does not fit the table, which is a schema validation error.
fn schema_error(e: CatalogError) -> CatalogError {
    let m = e.message.to_ascii_lowercase();
    if e.code == Code::INTERNAL
        && (m.contains("different schema")
            || m.contains("schemamismatch")
            || m.contains("schema mismatch"))
    {
        CatalogError::new(Code::SCHEMA_VALIDATION, e.message)
    } else {
        e
    }
}

/// The merge-insert `on` columns, checked against the incoming data's
/// schema: at least one, none twice, each present (12 otherwise).
pub(crate) fn merge_on_columns(
    on: Option<Vec<String>>,
    schema: &arrow_schema::Schema,
) -> CatalogResult<Vec<String>> {
    let on: Vec<String> = on
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect();
    if on.is_empty() {
        return Err(CatalogError::invalid(
            "merge_insert needs at least one `on` column to match rows by",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = on.iter().find(|c| !seen.insert(c.as_str())) {
        return Err(CatalogError::invalid(format!(
            "merge_insert `on` names column {dup:?} twice"
        )));
    }
    if let Some(missing) = on.iter().find(|c| schema.field_with_name(c).is_err()) {
        return Err(CatalogError::new(
            Code::TABLE_COLUMN_NOT_FOUND,
            format!("merge_insert `on` column {missing:?} is not in the data's schema"),
        ));
    }
    Ok(on)
}
