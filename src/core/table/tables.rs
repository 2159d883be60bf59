//! Table operations with rules beyond the engine's: the parent must exist,
//! Arrow bodies are checked before any write, create honours an explicit
//! location (Gravitino's `x-lance-table-location`) and properties header.

use crate::api::op;
use std::collections::HashMap;

use bytes::Bytes;
use lance_namespace::models::{
    CreateTableRequest, CreateTableResponse, DeclareTableRequest, DeclareTableResponse,
    DropTableRequest, DropTableResponse, InsertIntoTableRequest, InsertIntoTableResponse,
    MergeInsertIntoTableRequest, MergeInsertIntoTableResponse, RegisterTableRequest,
    RegisterTableResponse,
};
use lance_namespace::LanceNamespace;
use lance_namespace_impls::dir::manifest::ManifestNamespace;

use crate::core::body::parse_mode;
use crate::core::checks::{table_id, table_not_found};
use crate::core::data::rows::Rows;
use crate::core::location::Location;
use crate::core::table::placement::{lost_create, own_task, Placement};
use crate::core::table::stream_write::{MergeCounts, Target, WriteOp};
use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

/// Context keys the REST gateway fills from Gravitino-style headers.
pub const LOCATION_KEY: &str = "header.x-lance-table-location";
pub const PROPERTIES_KEY: &str = "header.x-lance-table-properties";

impl Catalog {
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn create_table_op(
        &self,
        req: CreateTableRequest,
        rows: Rows,
    ) -> CatalogResult<CreateTableResponse> {
        let id = table_id(&req.id)?;
        let mut created = self.create_table_inner(req, rows).await?;
        crate::core::checks::public_properties(&mut created.properties);
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
        rows: Rows,
    ) -> CatalogResult<CreateTableResponse> {
        let id = table_id(&req.id)?;
        let mode = parse_mode(
            req.mode.as_deref(),
            &["create", "exist_ok", "overwrite"],
            "create",
            op::CreateTable.action,
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
        crate::core::checks::check_properties(req.properties.as_ref())?;
        // Merged over the server's own for the write: refused before a
        // request reaches storage with them.
        let caller = crate::core::caller_options::CallerOptions::checked(
            req.storage_options.as_ref(),
            "the create's storage_options",
        )?;
        self.require_parent(&id).await?;
        let rows = rows.or_empty_batch();
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
                None => Placement::Fresh(Location::new(&ManifestNamespace::generate_dir_name(
                    &crate::core::checks::manifest_key(&id),
                ))),
            };
            let real = crate::core::object_ids::new_object_id(req.context.as_ref());
            crate::core::object_ids::stamp(&mut req.properties, "table", real);
            return self.create_table_at(req, &caller, placement, rows).await;
        }
        if let Target::Written(location, _) = &target {
            if let Some(rel) = self.engine_misreads(location) {
                return self
                    .create_over_nested(&caller, &id, mode, &rel, rows)
                    .await;
            }
            if mode == "create" {
                // Refused without reading the rest of the body.
                return Err(crate::core::checks::table_already_exists(&id));
            }
            if mode == "overwrite" {
                return self.overwrite_table(req, &id, target, rows).await;
            }
        }
        // An existing or declared table: the engine's own paths, which take
        // the whole body.
        let body = rows.into_bytes().await?;
        let mut created = engine(self.inner().await?.create_table(req, body).await)?;
        self.after_engine_write().await;
        crate::core::checks::public_properties(&mut created.properties);
        Ok(created)
    }

    /// Overwrite a written table with a new version (one commit to its
    /// dataset), and give its record the request's properties, as the
    /// engine's overwrite does, keeping the catalog's own (protection, the
    /// committed version). The record changes by one manifest commit, and
    /// only when its properties do.
    async fn overwrite_table(
        &self,
        req: CreateTableRequest,
        id: &[String],
        target: Target,
        rows: Rows,
    ) -> CatalogResult<CreateTableResponse> {
        let Target::Written(location, main) = target else {
            return Err(CatalogError::internal("overwrite of a table with no data"));
        };
        let existing = self.describe(id, Default::default()).await?;
        let mut props: HashMap<String, String> = existing
            .properties
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| k.starts_with(crate::core::reserved::RESERVED_PREFIX))
            .collect();
        for (k, v) in req.properties.clone().unwrap_or_default() {
            props.entry(k).or_insert(v);
        }
        let version = self.write_into(*main, true, rows.into_source()).await?;
        if existing.properties.as_ref() != Some(&props) {
            let key = crate::core::checks::manifest_key(id);
            let missing = || table_not_found(id);
            self.update_properties(&key, "table", missing, |p| *p = props.clone())
                .await?;
        }
        let mut properties = Some(props);
        crate::core::checks::public_properties(&mut properties);
        Ok(CreateTableResponse {
            location: Some(self.location_uri(&location)),
            version: Some(version as i64),
            properties,
            storage_options: self.vended_storage_options(),
            ..Default::default()
        })
    }

    /// A location relative to the root, from a relative path, an absolute
    /// path or a URI under the root, checked (see `table/locations.rs`). Unless
    /// `nested`, it must be one directory directly under the root: the
    /// engine's own paths treat a table location as one directory name.
    pub(crate) fn relative_location(
        &self,
        location: &str,
        nested: bool,
    ) -> CatalogResult<Location> {
        let root = self.root.trim_end_matches('/');
        let stripped = location
            .strip_prefix("file://")
            .filter(|_| !root.contains("://"))
            .unwrap_or(location);
        // Refusals never name the root (with an S3 root, its bucket and
        // prefix); the wording is Lance's own directory namespace's.
        let rel = match stripped.strip_prefix(root) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
            _ if stripped.contains("://") => {
                return Err(CatalogError::invalid(format!(
                    "Absolute URIs are not allowed outside the catalog's storage root. Location must be a relative path within the root directory: {location}"
                )))
            }
            _ if stripped.starts_with('/') => {
                return Err(CatalogError::invalid(format!(
                    "Absolute paths are not allowed outside the catalog's storage root. Location must be a relative path within the root directory: {location}"
                )))
            }
            _ => stripped,
        };
        let rel = crate::core::table::locations::check_relative(rel, location)?;
        // Where this catalog vends, a location no session policy can
        // narrow to (a `*` or `${` in its key) is refused now, not at
        // every describe later.
        if self.vends() {
            if let Err(e) = crate::core::vending::Scope::of(&self.location_uri(rel.as_str())) {
                return Err(CatalogError::invalid(format!(
                    "table location {location:?}: {}",
                    e.message
                )));
            }
        }
        if !nested && rel.depth() > 1 {
            return Err(CatalogError::invalid(format!(
                "table location {location:?} must be a directory directly under the storage root, not a nested path"
            )));
        }
        Ok(rel)
    }

    pub(crate) async fn declare_table_op(
        &self,
        mut req: DeclareTableRequest,
    ) -> CatalogResult<DeclareTableResponse> {
        let id = table_id(&req.id)?;
        crate::core::checks::check_properties(req.properties.as_ref())?;
        self.require_parent(&id).await?;
        let real = crate::core::object_ids::new_object_id(req.context.as_ref());
        crate::core::object_ids::stamp(&mut req.properties, "table", real);
        let vend = req.vend_credentials != Some(false);
        let placement = match req.location.as_deref().filter(|l| !l.trim().is_empty()) {
            Some(location) => Placement::Chosen(self.relative_location(location.trim(), true)?),
            None => Placement::Fresh(Location::new(&ManifestNamespace::generate_dir_name(
                &crate::core::checks::manifest_key(&id),
            ))),
        };
        let mut declared = self.declare_at(&id, placement, req.properties).await?;
        crate::core::checks::public_properties(&mut declared.properties);
        declared.storage_options = match vend {
            true => self.table_storage_options(&id).await?,
            false => None,
        };
        Ok(declared)
    }

    /// Declare a table at a directory the catalog names, or at one the
    /// caller chose, which must hold nothing yet and overlap no other
    /// table. One appended manifest row; nothing is written to storage.
    async fn declare_at(
        &self,
        id: &[String],
        placement: Placement,
        properties: Option<HashMap<String, String>>,
    ) -> CatalogResult<DeclareTableResponse> {
        self.require_table_absent(id).await?;
        let rel = placement.relative().clone();
        // Another table's location is the clearer refusal, so it is
        // checked before what lies in storage (as `create_table_at` does).
        self.check_unclaimed(&self.hold_manifest().await, id, &rel)
            .await?;
        if matches!(placement, Placement::Chosen(_)) {
            self.require_empty_location(&rel).await?;
        }
        // A fresh name is checked as well (see `create_table_at`).
        // Nothing is written here, so nothing is ever removed; the record is
        // settled on its own task (see register_table_op).
        let (catalog, id_owned, rel_owned, props) =
            (self.clone(), id.to_vec(), rel.clone(), properties.clone());
        own_task(async move {
            let held = catalog.hold_manifest().await;
            catalog
                .check_unclaimed(&held, &id_owned, &rel_owned)
                .await?;
            catalog
                .record_table(&held, &id_owned, &rel_owned, props.as_ref())
                .await
                .map_err(|e| lost_create(e, &id_owned, true))?;
            match catalog.settle_claim(&held, &id_owned, &rel_owned).await? {
                None => Ok(()),
                Some(err) => Err(err),
            }
        })
        .await?;
        Ok(DeclareTableResponse {
            location: Some(self.location_uri(rel.as_str())),
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
            op::RegisterTable.action,
        )?;
        crate::core::checks::check_properties(req.properties.as_ref())?;
        // Registered datasets may sit deeper than one directory (an existing
        // `warehouse/sales/orders.lance`); they are still the catalog's to
        // check: inside the root, overlapping no other table.
        let rel = self.relative_location(&req.location, true)?;
        self.require_parent(&id).await?;
        // Over a recorded table, either mode answers 5 (as the engine's
        // register did), so a registration is always a new object.
        self.require_table_absent(&id).await?;
        let real = crate::core::object_ids::new_object_id(req.context.as_ref());
        crate::core::object_ids::stamp(&mut req.properties, "table", real);
        // Check, record and settle on its own task: a caller that goes away
        // cannot leave a record that was never settled.
        let catalog = self.clone();
        own_task(async move {
            let held = catalog.hold_manifest().await;
            catalog.check_unclaimed(&held, &id, &rel).await?;
            // One appended row, with the properties (and the real id)
            // the caller's request carries.
            catalog
                .record_table(&held, &id, &rel, req.properties.as_ref())
                .await
                .map_err(|e| lost_create(e, &id, true))?;
            let mut registered = RegisterTableResponse {
                // The location as the caller gave it (Lance's own clients
                // compare it with what they sent); describe answers the
                // full URI.
                location: Some(req.location),
                properties: req.properties,
                ..Default::default()
            };
            crate::core::checks::public_properties(&mut registered.properties);
            match catalog.settle_claim(&held, &id, &rel).await? {
                None => Ok(registered),
                Some(err) => Err(err),
            }
        })
        .await
    }

    pub(crate) async fn insert_op(
        &self,
        req: InsertIntoTableRequest,
        rows: Rows,
    ) -> CatalogResult<InsertIntoTableResponse> {
        let id = table_id(&req.id)?;
        let mode = parse_mode(
            req.mode.as_deref(),
            &["append", "overwrite"],
            "append",
            "insert",
        )?;
        self.require_table(&id).await?;
        // Batches flow into Lance's writer as they are decoded; a declared
        // table gets its first version, as the engine's insert does.
        let written = self
            .write_stream(
                &id,
                req.branch.clone(),
                WriteOp::Insert {
                    overwrite: mode == "overwrite",
                },
                rows.schema,
                rows.batches,
                None,
            )
            .await
            .map_err(schema_error)?;
        Ok(InsertIntoTableResponse {
            version: Some(written.version as i64),
            num_inserted_rows: Some(written.num_rows as i64),
            ..Default::default()
        })
    }

    pub(crate) async fn merge_insert_op(
        &self,
        req: MergeInsertIntoTableRequest,
        body: Bytes,
    ) -> CatalogResult<MergeInsertIntoTableResponse> {
        let id = table_id(&req.id)?;
        let rows = Rows::from_bytes(body, op::MergeInsertIntoTable.action).await?;
        // The streamed write's path, on the main line or a branch: the
        // table opened by the catalog, its commit fenced by batch claims,
        // a declared table's first data written as its first version.
        let branch = req.branch.clone();
        let written = self
            .write_stream(
                &id,
                branch,
                WriteOp::MergeInsert(Box::new(req)),
                rows.schema,
                rows.batches,
                None,
            )
            .await
            .map_err(schema_error)?;
        let merged = written.merged.unwrap_or(MergeCounts {
            num_updated_rows: 0,
            num_inserted_rows: written.num_rows,
            num_deleted_rows: 0,
        });
        Ok(MergeInsertIntoTableResponse {
            version: Some(written.version as i64),
            num_inserted_rows: Some(merged.num_inserted_rows as i64),
            num_updated_rows: Some(merged.num_updated_rows as i64),
            num_deleted_rows: Some(merged.num_deleted_rows as i64),
            ..Default::default()
        })
    }

    /// Drop a table: into trash under a grace period (`detach.rs`), else
    /// at once.
    pub(crate) async fn drop_table_op(
        &self,
        req: DropTableRequest,
    ) -> CatalogResult<DropTableResponse> {
        let id = table_id(&req.id)?;
        let force = crate::core::protection::forced(req.context.as_ref());
        let trash = crate::core::trash::records::TrashContext::of(req.context.as_ref());
        match trash.keeps() {
            true => self.trash_table(&id, force, &trash).await,
            false => self.drop_table_by_id(&id, force, &[]).await,
        }
    }

    /// Drop a table: forget it, then delete its directory, which must be
    /// its own (see `table/locations.rs`: never the root, the manifest, or bytes
    /// another table's location overlaps, re-checked now).
    /// `together`: the locations of tables a cascade drops with it (their
    /// reading this one's bytes does not keep them).
    pub(crate) async fn drop_table_by_id(
        &self,
        id: &[String],
        force: bool,
        together: &[String],
    ) -> CatalogResult<DropTableResponse> {
        let (rel, _serial) = self.forget_table(id, force, Some(together)).await?;
        // The table is gone from the catalog; bytes that cannot be removed
        // now are left for the reconciler to report, not an error. The lock
        // is held until they are gone, so no registration in this process
        // can claim them in between.
        self.remove_location(rel.as_str()).await;
        drop(_serial);
        Ok(DropTableResponse {
            id: Some(id.to_vec()),
            location: Some(self.location_uri(rel.as_str())),
            ..Default::default()
        })
    }

    /// Deregister a table: forget it and keep its bytes (one commit that
    /// removes its row, not the engine's rewrite of the whole manifest).
    pub(crate) async fn deregister_by_id(
        &self,
        id: &[String],
        force: bool,
    ) -> CatalogResult<lance_namespace::models::DeregisterTableResponse> {
        let (rel, _held) = self.forget_table(id, force, None).await?;
        Ok(lance_namespace::models::DeregisterTableResponse {
            id: Some(id.to_vec()),
            location: Some(self.location_uri(rel.as_str())),
            ..Default::default()
        })
    }

    /// Remove table `id`'s record and answer where it was, with the lock
    /// still held. With `deleting`, its location must be one a drop may
    /// delete. The record is removed by a commit against the very snapshot
    /// that was checked, so a rename, re-create or registration in between
    /// makes it conflict and check again, instead of deleting bytes that
    /// became another table's.
    /// `deleting`: the locations deleted with it (see
    /// `drop_table_by_id`); none when the bytes are kept.
    async fn forget_table(
        &self,
        id: &[String],
        force: bool,
        deleting: Option<&[String]>,
    ) -> CatalogResult<(Location, crate::core::manifest_lock::Held<'_>)> {
        let key = crate::core::checks::manifest_key(id);
        // What other tables read (the live set's other half), read before
        // the lock: it may read the whole estate's manifests.
        let refs = match deleting {
            Some(_) => Some(
                self.estate_refs(crate::core::live::Freshness::Recent)
                    .await?,
            ),
            None => None,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let held = self.hold_manifest().await;
            let ds = self.manifest_snapshot().await?;
            let located = match deleting {
                Some(_) => self
                    .deletable_locations(&ds, std::slice::from_ref(&key))
                    .await?
                    .remove(&key),
                None => crate::core::manifest_tx::single_rows(
                    &self.manifest_rows(&ds, std::slice::from_ref(&key)).await?,
                )
                .find(|r| crate::core::manifest_tx::row_type(r).as_deref() == Some("table"))
                .map(|r| {
                    Location::new(&crate::core::manifest_tx::row_location(&r).unwrap_or_default())
                }),
            };
            let Some(rel) = located else {
                return Err(table_not_found(id));
            };
            if let (Some(together), Some(refs)) = (deleting, &refs) {
                let mut with = together.to_vec();
                with.push(rel.to_string());
                self.refuse_reached(rel.as_str(), &with, refs)?;
            }
            self.guard_table(&ds, id, force).await?;
            match self
                .manifest_apply(&held, ds, Vec::new(), std::slice::from_ref(&key), false)
                .await
            {
                Ok(()) => return Ok((rel, held)),
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < 5 => {
                    drop(held);
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    pub(crate) async fn table_present(&self, id: &[String]) -> CatalogResult<bool> {
        self.recorded(id, "table").await
    }

    /// Refuse (5) a table id that is recorded already.
    pub(crate) async fn require_table_absent(&self, id: &[String]) -> CatalogResult<()> {
        match self.table_present(id).await? {
            true => Err(crate::core::checks::table_already_exists(id)),
            false => Ok(()),
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
