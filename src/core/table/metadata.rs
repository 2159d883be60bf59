//! Schema-level and field-level metadata, on any branch.
//!
//! Schema metadata merges: keys in the request are set, other keys stay. The
//! spec's model cannot say "delete this key", so a key can be removed by
//! naming it in the request context entry [`UNSET_KEYS`] (a JSON list); the
//! REST gateway fills it from `null` values in the request body.

use std::collections::HashMap;

use lance::dataset::transaction::UpdateMapEntry;
use lance_namespace::models::{
    UpdateFieldMetadataRequest, UpdateFieldMetadataResponse, UpdateTableSchemaMetadataRequest,
    UpdateTableSchemaMetadataResponse,
};

use crate::core::branch::open::branch_of;
use crate::core::checks::{display_id, table_id};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

use crate::core::reserved::UNSET_KEYS;

impl Catalog {
    pub(crate) async fn update_schema_metadata_op(
        &self,
        req: UpdateTableSchemaMetadataRequest,
    ) -> CatalogResult<UpdateTableSchemaMetadataResponse> {
        let id = table_id(&req.id)?;
        let unset: Vec<String> = match req.context.as_ref().and_then(|c| c.get(UNSET_KEYS)) {
            Some(raw) => serde_json::from_str(raw).map_err(|e| {
                CatalogError::invalid(format!("{UNSET_KEYS} must be a JSON list of keys: {e}"))
            })?,
            None => Vec::new(),
        };
        let set = req.metadata.clone().unwrap_or_default();
        if let Some(k) = set.keys().find(|k| k.is_empty()) {
            return Err(CatalogError::invalid(format!(
                "metadata key {k:?} is empty"
            )));
        }
        let mut entries: Vec<UpdateMapEntry> = set
            .into_iter()
            .map(|(key, value)| UpdateMapEntry {
                key,
                value: Some(value),
            })
            .collect();
        entries.extend(
            unset
                .into_iter()
                .map(|key| UpdateMapEntry { key, value: None }),
        );
        let mut ds = self.open_table(&id, branch_of(&req.branch)).await?;
        let metadata = ds.update_schema_metadata(entries).await?;
        Ok(UpdateTableSchemaMetadataResponse {
            metadata: Some(metadata),
            ..Default::default()
        })
    }

    pub(crate) async fn update_field_metadata_op(
        &self,
        req: UpdateFieldMetadataRequest,
    ) -> CatalogResult<UpdateFieldMetadataResponse> {
        let id = table_id(&req.id)?;
        if req.updates.is_empty() {
            return Err(CatalogError::invalid(
                "update_field_metadata needs at least one entry in `updates`",
            ));
        }
        let mut ds = self.open_table(&id, branch_of(&req.branch)).await?;
        for u in &req.updates {
            if ds.schema().field(&u.path).is_none() {
                return Err(CatalogError::new(
                    Code::TABLE_COLUMN_NOT_FOUND,
                    format!("table {} has no column {:?}", display_id(&id), u.path),
                ));
            }
        }
        let mut builder = ds.update_field_metadata();
        for u in &req.updates {
            let values: Vec<UpdateMapEntry> = u
                .metadata
                .iter()
                .map(|(k, v)| UpdateMapEntry::from((k.clone(), v.clone())))
                .collect();
            builder = if u.replace.flatten().unwrap_or(false) {
                builder.replace(u.path.as_str(), values)?
            } else {
                builder.update(u.path.as_str(), values)?
            };
        }
        builder.await?;
        let fields: HashMap<String, HashMap<String, String>> = req
            .updates
            .iter()
            .filter_map(|u| {
                ds.schema()
                    .field(&u.path)
                    .map(|f| (u.path.clone(), f.metadata.clone()))
            })
            .collect();
        Ok(UpdateFieldMetadataResponse {
            version: ds.version().version as i64,
            fields: Some(fields),
            ..Default::default()
        })
    }
}

impl Catalog {
    /// Explain why a predicate does not apply to the table, if it does not.
    pub(crate) async fn check_predicate(
        &self,
        id: &[String],
        predicate: &str,
    ) -> CatalogResult<()> {
        let ds = self.open_table(id, None).await?;
        let invalid = |e: lance::Error| {
            CatalogError::invalid(format!(
                "predicate {predicate:?} does not apply to table {}: {}",
                display_id(id),
                CatalogError::from_lance(&e).message
            ))
        };
        let mut scan = ds.scan();
        scan.filter(predicate).map_err(invalid)?;
        // Parsing may be deferred to planning: plan, without running it.
        scan.explain_plan(false).await.map_err(invalid)?;
        Ok(())
    }
}
