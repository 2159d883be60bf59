//! Table operations with rules beyond the engine's: the parent must exist,
//! Arrow bodies are checked before any write, create honours an explicit
//! location (Gravitino's `x-lance-table-location`) and properties header.

use std::collections::HashMap;

use bytes::Bytes;
use lance::dataset::{WriteMode, WriteParams};
use lance::Dataset;
use lance_namespace::models::{
    CreateTableRequest, CreateTableResponse, DeclareTableRequest, DeclareTableResponse,
    DropTableRequest, DropTableResponse, InsertIntoTableRequest, InsertIntoTableResponse,
    MergeInsertIntoTableRequest, MergeInsertIntoTableResponse, RegisterTableRequest,
    RegisterTableResponse, TableExistsRequest,
};
use lance_namespace::LanceNamespace;
use lance_namespace_impls::dir::manifest::{ManifestEntry, ObjectType};

use super::checks::{table_id, table_not_found};
use super::data::{decode_stream, encode_stream, parse_mode};
use super::open::branch_of;
use super::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

/// Context keys the REST gateway fills from Gravitino-style headers.
pub const LOCATION_KEY: &str = "header.x-lance-table-location";
pub const PROPERTIES_KEY: &str = "header.x-lance-table-properties";

impl Catalog {
    pub(crate) async fn create_table_op(
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
        if let Some(location) = location {
            if !self.table_present(&id).await? {
                return self.create_table_at(req, location, body).await;
            }
        }
        let mut created = engine(self.inner.create_table(req, body).await)?;
        super::checks::public_properties(&mut created.properties);
        Ok(created)
    }

    /// Create a table at a caller-chosen location inside the storage root:
    /// write the dataset there, then register it. A location outside the
    /// root is refused: the catalog only governs what it stores.
    async fn create_table_at(
        &self,
        req: CreateTableRequest,
        location: &str,
        body: Bytes,
    ) -> CatalogResult<CreateTableResponse> {
        let relative = self.relative_location(location)?;
        let uri = self.location_uri(&relative);
        let stream = decode_stream(&body, "create_table")?;
        let reader = arrow_array::RecordBatchIterator::new(
            stream.batches.into_iter().map(Ok),
            stream.schema.clone(),
        );
        let params = WriteParams {
            mode: WriteMode::Create,
            session: Some(self.session.clone()),
            store_params: self.store_params(req.storage_options.clone()),
            ..Default::default()
        };
        let ds = Dataset::write(reader, &uri, Some(params)).await?;
        let id = req.id.clone().unwrap_or_default();
        self.record_table(&id, &relative, req.properties.as_ref())
            .await?;
        Ok(CreateTableResponse {
            location: Some(uri),
            version: Some(ds.version().version as i64),
            properties: req.properties,
            storage_options: req.storage_options,
            ..Default::default()
        })
    }

    /// Record a freshly written table (its directory `relative` under the
    /// root) in the manifest, through the engine's own copy-on-write commit:
    /// it keeps the manifest compact and indexed, and a concurrent create of
    /// the same id makes it fail (14). On failure the directory is removed,
    /// so no unregistered dataset is left behind.
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
            object_id: id.join("$"),
            object_type: ObjectType::Table,
            location: Some(relative.to_string()),
            metadata,
        };
        let recorded = self
            .manifest
            .insert_into_manifest_with_metadata(vec![entry], None)
            .await;
        if let Err(e) = engine(recorded) {
            self.remove_location(relative).await;
            return Err(e);
        }
        Ok(())
    }

    /// A location relative to the root, from a relative path, an absolute
    /// path or a URI under the root.
    pub(crate) fn relative_location(&self, location: &str) -> CatalogResult<String> {
        let root = self.root.trim_end_matches('/');
        let stripped = location
            .strip_prefix("file://")
            .filter(|_| !root.contains("://"))
            .unwrap_or(location);
        let rel = match stripped.strip_prefix(root) {
            Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
            _ if stripped.contains("://") || stripped.starts_with('/') => {
                return Err(CatalogError::invalid(format!(
                    "table location {location:?} is outside the catalog's storage root {root}"
                )))
            }
            _ => stripped,
        };
        let rel = rel.trim_end_matches('/');
        // The storage engine keeps a table's location as one directory name
        // under the root; a nested path would be mangled into one segment.
        if rel.is_empty() || rel.contains('/') || rel == "." || rel == ".." {
            return Err(CatalogError::invalid(format!(
                "table location {location:?} must be a directory directly under the storage root {root}"
            )));
        }
        if rel == "__manifest" {
            return Err(CatalogError::invalid(
                "table location may not be the catalog's manifest",
            ));
        }
        Ok(rel.to_string())
    }

    pub(crate) async fn declare_table_op(
        &self,
        mut req: DeclareTableRequest,
    ) -> CatalogResult<DeclareTableResponse> {
        let id = table_id(&req.id)?;
        super::checks::check_properties(req.properties.as_ref())?;
        self.require_parent(&id).await?;
        req.id = Some(id);
        engine(self.inner.declare_table(req).await)
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
        self.require_parent(&id).await?;
        req.id = Some(id);
        engine(self.inner.register_table(req).await)
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

    pub(crate) async fn drop_table_by_id(&self, id: &[String]) -> CatalogResult<DropTableResponse> {
        let req = DropTableRequest {
            id: Some(id.to_vec()),
            ..Default::default()
        };
        engine(self.inner.drop_table(req).await)
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
            Code(12),
            format!("merge_insert `on` column {missing:?} is not in the data's schema"),
        ));
    }
    Ok(on)
}
