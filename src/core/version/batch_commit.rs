//! BatchCommitTables: declare, create-version, delete-versions and
//! deregister operations over several tables, decided in one manifest commit
//! (see `manifest_tx.rs`; versions are claimed and placed before it, see
//! `batch_versions.rs`). Every operation is checked against one snapshot of
//! the catalog first; a failure or conflict anywhere leaves every table as it
//! was. Deleting version files is the one step that follows the commit: it is
//! idempotent, and a failure there is logged and leaves `deleted_count` unset
//! in that operation's result.

use std::collections::{HashMap, HashSet};

use arrow_array::RecordBatch;
use lance_namespace::models::{
    BatchCommitTablesRequest, BatchCommitTablesResponse, BatchDeleteTableVersionsRequest,
    BatchDeleteTableVersionsResponse, CommitTableResult, CreateTableVersionEntry,
    CreateTableVersionResponse, DeclareTableResponse, DeregisterTableResponse,
};
use lance_namespace::LanceNamespace;
use lance_namespace_impls::dir::manifest::ManifestNamespace;

use crate::core::checks::{display_id, table_id};
use crate::core::manifest_tx::{row_location, row_properties, table_row};
use crate::core::table::locations::{find_overlap, overlap_error, Placed};
use crate::core::version::batch_versions::{Decision, VersionPlan};
use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn batch_commit_op(
        &self,
        req: BatchCommitTablesRequest,
    ) -> CatalogResult<BatchCommitTablesResponse> {
        if req.operations.is_empty() {
            return Err(CatalogError::invalid(
                "a batch needs at least one operation",
            ));
        }
        // A dead batch's claim on a table this one versions is undone
        // first (the undo takes the lock this batch holds below).
        for op in &req.operations {
            if let Some(id) = op.create_table_version.as_ref().and_then(|c| c.id.as_ref()) {
                if let Err(e) = self.recover_stale(id).await {
                    if e.code != Code::TABLE_NOT_FOUND {
                        return Err(e);
                    }
                }
            }
        }
        let held = self.hold_manifest().await;
        let ds = self.manifest_snapshot().await?;
        let schema = std::sync::Arc::new(arrow_schema::Schema::from(ds.schema()));
        // The batch's view of each table it touches: its row to write, or
        // removal; `fresh` marks tables declared by this batch.
        let mut rows: HashMap<String, RecordBatch> = HashMap::new();
        let mut fresh: HashSet<String> = HashSet::new();
        let mut removed: HashSet<String> = HashSet::new();
        let mut plans: Vec<(usize, VersionPlan)> = Vec::new();
        let mut deletes: Vec<(usize, BatchDeleteTableVersionsRequest)> = Vec::new();
        let mut results = Vec::with_capacity(req.operations.len());
        // Every recorded table's location, read when a declaration first
        // names a location of its own.
        // The batch's own chosen locations, checked against each other.
        let mut batch_placed: Vec<Placed> = Vec::new();

        for (i, op) in req.operations.iter().enumerate() {
            let set = [
                op.declare_table.is_some(),
                op.create_table_version.is_some(),
                op.delete_table_versions.is_some(),
                op.deregister_table.is_some(),
            ];
            if set.iter().filter(|s| **s).count() != 1 {
                return Err(CatalogError::invalid(format!(
                    "operation {i} must name exactly one of declare_table, create_table_version, delete_table_versions, deregister_table"
                )));
            }
            let mut result = CommitTableResult::default();
            if let Some(d) = &op.declare_table {
                let id = table_id(&d.id)?;
                let key = crate::core::checks::manifest_key(&id);
                self.require_parent(&id).await?;
                let exists = rows.contains_key(&key)
                    || (!removed.contains(&key)
                        && !self
                            .manifest_rows(&ds, std::slice::from_ref(&key))
                            .await?
                            .is_empty());
                if exists {
                    return Err(CatalogError::new(
                        Code::TABLE_ALREADY_EXISTS,
                        format!("table {} already exists", display_id(&id)),
                    ));
                }
                // A caller-chosen location must be a directory directly
                // under the root; otherwise the catalog picks one.
                let dir = match d.location.as_deref().filter(|l| !l.trim().is_empty()) {
                    Some(wanted) => {
                        let dir = self.relative_location(wanted.trim(), true)?;
                        // Checked against the recorded tables (and
                        // trashed ones) that can overlap it and the batch's
                        // own declarations; the batch's one commit
                        // conflicts if the manifest changes meanwhile.
                        let mut placed =
                            self.placed_tables_near(std::slice::from_ref(&dir)).await?;
                        placed.extend(batch_placed.iter().cloned());
                        if let Some(other) = find_overlap(&dir, &placed, Some(&key)) {
                            return Err(overlap_error(&id, &dir, other));
                        }
                        self.require_empty_location(&dir).await?;
                        batch_placed.push(Placed {
                            key: key.clone(),
                            location: dir.clone(),
                        });
                        dir.to_string()
                    }
                    None => ManifestNamespace::generate_dir_name(&key),
                };
                let location = self.location_uri(&dir);
                crate::core::checks::check_properties(d.properties.as_ref())?;
                let mut props = d.properties.clone();
                let real = crate::core::object_ids::new_object_id(d.context.as_ref());
                crate::core::object_ids::stamp(&mut props, "table", real);
                let props = props.unwrap_or_default();
                rows.insert(key.clone(), table_row(schema.clone(), &key, &dir, &props)?);
                fresh.insert(key.clone());
                removed.remove(&key);
                result.declare_table = Some(Box::new(DeclareTableResponse {
                    location: Some(location),
                    properties: d.properties.clone(),
                    managed_versioning: Some(true),
                    ..Default::default()
                }));
            } else if let Some(c) = &op.create_table_version {
                let id = table_id(&c.id)?;
                let key = crate::core::checks::manifest_key(&id);
                let row = self.batch_row(&ds, &id, &rows, &removed).await?;
                if plans.iter().any(|(_, p): &(usize, VersionPlan)| p.id == id) {
                    return Err(CatalogError::invalid(format!(
                        "table {} gets two versions in one batch",
                        display_id(&id)
                    )));
                }
                let entry = CreateTableVersionEntry {
                    id: id.clone(),
                    version: c.version,
                    branch: c.branch.clone(),
                    manifest_path: c.manifest_path.clone(),
                    manifest_size: c.manifest_size,
                    e_tag: c.e_tag.clone(),
                    metadata: c.metadata.clone(),
                    naming_scheme: c.naming_scheme.clone(),
                };
                if crate::core::branch::open::branch_of(&entry.branch).is_some() {
                    return Err(CatalogError::invalid(
                        "versions on branches are committed one at a time, not in a batch",
                    ));
                }
                let plan = self
                    .plan_version(&entry, &row, fresh.contains(&key))
                    .await?;
                plans.push((i, plan));
            } else if let Some(d) = &op.delete_table_versions {
                let id = table_id(&d.id)?;
                if fresh.contains(&crate::core::checks::manifest_key(&id)) {
                    return Err(CatalogError::invalid(format!(
                        "table {} is declared in this batch and has no versions to delete",
                        display_id(&id)
                    )));
                }
                self.batch_row(&ds, &id, &rows, &removed).await?;
                crate::core::version::versions::check_ranges(&id, &d.ranges)?;
                let mut d = d.clone();
                d.id = Some(id);
                deletes.push((i, *d));
            } else if let Some(d) = &op.deregister_table {
                let id = table_id(&d.id)?;
                // Deletion protection holds in a batch too.
                let force = crate::core::protection::forced(d.context.as_ref());
                self.guard_table(&ds, &id, force).await?;
                let key = crate::core::checks::manifest_key(&id);
                let row = self.batch_row(&ds, &id, &rows, &removed).await?;
                let mut props = row_properties(&row)?;
                props.remove(crate::core::reserved::PENDING);
                props.remove(crate::core::reserved::BATCH_INTENT);
                result.deregister_table = Some(Box::new(DeregisterTableResponse {
                    id: Some(id),
                    location: row_location(&row).map(|l| self.location_uri(&l)),
                    properties: (!props.is_empty()).then_some(props),
                    ..Default::default()
                }));
                rows.remove(&key);
                if !fresh.remove(&key) {
                    removed.insert(key);
                }
            }
            results.push(result);
        }
        let decision = Decision {
            rows,
            removed: removed.into_iter().collect(),
        };
        let (at, plans): (Vec<usize>, Vec<VersionPlan>) = plans.into_iter().unzip();
        let versions = self.decide_batch(&held, ds, &plans, decision).await?;

        // Decided: answer the versions and delete what was asked.
        for (i, version) in at.into_iter().zip(versions) {
            results[i].create_table_version = Some(Box::new(CreateTableVersionResponse {
                version: Some(Box::new(version)),
                ..Default::default()
            }));
        }
        for (i, d) in deletes {
            let deleted = engine(self.inner().await?.batch_delete_table_versions(d).await)
                .unwrap_or_else(|e| {
                    tracing::warn!(error = %e.message, "version deletion after a batch commit failed");
                    BatchDeleteTableVersionsResponse::default()
                });
            results[i].delete_table_versions = Some(Box::new(deleted));
        }
        Ok(BatchCommitTablesResponse {
            results,
            ..Default::default()
        })
    }

    /// A table's row as the batch sees it so far.
    async fn batch_row(
        &self,
        ds: &lance::Dataset,
        id: &[String],
        rows: &HashMap<String, RecordBatch>,
        removed: &HashSet<String>,
    ) -> CatalogResult<RecordBatch> {
        let key = crate::core::checks::manifest_key(id);
        if let Some(row) = rows.get(&key) {
            return Ok(row.clone());
        }
        if removed.contains(&key) {
            return Err(CatalogError::new(
                Code::TABLE_NOT_FOUND,
                format!(
                    "table {} is deregistered earlier in this batch",
                    display_id(id)
                ),
            ));
        }
        Ok(self
            .table_rows(ds, std::iter::once(id.to_vec()))
            .await?
            .remove(0))
    }
}
