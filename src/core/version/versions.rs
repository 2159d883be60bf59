//! Managed versioning: the catalog, not the dataset directory, decides which
//! version of a table is current.
//!
//! Every table answers `managed_versioning: true`, so Lance clients write a
//! new manifest to a staging path and ask the catalog to make it version N
//! (`create_table_version`). The catalog checks N is the next version, then
//! records the staged manifest in the table's manifest row (the property
//! [`PENDING`]) — for a batch, all tables' rows in ONE manifest commit, which
//! is the atomic point: before it no version of the batch is visible through
//! the catalog, after it all are. Only then is each staged manifest published
//! to its final `_versions/` name (idempotent), where plain Lance readers see
//! it. Until a version is published (a crash between the two steps), the
//! catalog's version listing and description serve it from its staging path.

use std::collections::HashMap;

use arrow_array::RecordBatch;
use lance_namespace::models::{
    CreateTableVersionEntry, DescribeTableVersionRequest, DescribeTableVersionResponse,
    ListTableVersionsRequest, ListTableVersionsResponse, TableVersion,
};
use lance_namespace::LanceNamespace;
use lance_table::io::commit::ManifestNamingScheme;
use object_store::path::Path;
use object_store::ObjectStoreExt;
use serde::{Deserialize, Serialize};

use crate::core::checks::{display_id, table_id, table_not_found};
use crate::core::manifest_tx::{row_properties, with_properties};
use crate::core::{engine, missing_table, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

use crate::core::reserved::PENDING;

/// A version committed through the catalog.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Pending {
    pub version: i64,
    pub manifest_path: String,
    pub manifest_size: Option<i64>,
    pub e_tag: Option<String>,
    pub naming_scheme: String,
}

impl Pending {
    fn table_version(&self) -> TableVersion {
        TableVersion {
            version: self.version,
            manifest_path: self.manifest_path.clone(),
            manifest_size: self.manifest_size,
            e_tag: self.e_tag.clone(),
            ..Default::default()
        }
    }
}

/// One planned version: the table, its updated manifest row, the paths.
pub(crate) struct VersionPlan {
    pub id: Vec<String>,
    pub row: RecordBatch,
    pub pending: Pending,
    pub staging: Path,
    pub final_path: Path,
}

fn scheme(name: Option<&str>) -> (ManifestNamingScheme, &'static str) {
    match name {
        Some(s) if s.eq_ignore_ascii_case("V1") => (ManifestNamingScheme::V1, "V1"),
        _ => (ManifestNamingScheme::V2, "V2"),
    }
}

/// Whether `staging` is a staged copy of `final_path`: the same name plus
/// a suffix (`<final>-<uuid>`), in the same directory.
fn is_staged_name(staging: &Path, final_path: &Path) -> bool {
    staging
        .as_ref()
        .strip_prefix(final_path.as_ref())
        .is_some_and(|rest| rest.len() > 1 && rest.starts_with('-') && !rest.contains('/'))
}

/// Version ranges to delete: at least one; each from a version >= 0 to an
/// end past it, or to -1 (through the latest), as the spec defines them.
pub(crate) fn check_ranges(
    id: &[String],
    ranges: &[lance_namespace::models::VersionRange],
) -> CatalogResult<()> {
    let bad = ranges.iter().find(|r| {
        r.start_version < 0
            || r.end_version < -1
            || (r.end_version >= 0 && r.end_version <= r.start_version)
    });
    match (ranges.is_empty(), bad) {
        (true, _) => Err(CatalogError::invalid(format!(
            "deleting versions of table {} needs at least one range",
            display_id(id)
        ))),
        (false, Some(r)) => Err(CatalogError::invalid(format!(
            "version range [{}, {}) of table {} is invalid: start must be >= 0 and end past start, or -1 for the latest",
            r.start_version,
            r.end_version,
            display_id(id)
        ))),
        (false, None) => Ok(()),
    }
}

impl Catalog {
    /// The newest version in the table's `_versions/` directory (0 if none).
    async fn published_latest(&self, id: &[String]) -> CatalogResult<i64> {
        let listed = engine(
            self.inner()
                .await?
                .list_table_versions(ListTableVersionsRequest {
                    id: Some(id.to_vec()),
                    descending: Some(true),
                    limit: Some(1),
                    ..Default::default()
                })
                .await,
        )
        .map_err(|e| missing_table(e, id))?;
        Ok(listed.versions.first().map(|v| v.version).unwrap_or(0))
    }

    /// The catalog-committed version not yet published, if any.
    async fn unpublished(&self, id: &[String]) -> CatalogResult<Option<Pending>> {
        let described = self.describe(id, Default::default()).await?;
        let Some(p) = described
            .properties
            .as_ref()
            .and_then(|p| p.get(PENDING))
            .and_then(|raw| serde_json::from_str::<Pending>(raw).ok())
        else {
            return Ok(None);
        };
        Ok((p.version > self.published_latest(id).await?).then_some(p))
    }

    /// Check one version entry against the table's state in `row` (its
    /// manifest row in the snapshot being committed) and plan it.
    /// `fresh`: the table is declared in the same batch, so it has no
    /// published versions yet.
    pub(crate) async fn plan_version(
        &self,
        entry: &CreateTableVersionEntry,
        row: &RecordBatch,
        fresh: bool,
    ) -> CatalogResult<VersionPlan> {
        let id = table_id(&Some(entry.id.clone()))?;
        let props = row_properties(row)?;
        let committed = props
            .get(PENDING)
            .and_then(|raw| serde_json::from_str::<Pending>(raw).ok())
            .map(|p| p.version)
            .unwrap_or(0);
        let published = if fresh {
            0
        } else {
            self.published_latest(&id).await?
        };
        let latest = committed.max(published);
        if entry.version != latest + 1 {
            return Err(CatalogError::new(
                Code::CONCURRENT_MODIFICATION,
                format!(
                    "table {} is at version {latest}: version {} cannot be created",
                    display_id(&id),
                    entry.version
                ),
            ));
        }
        let dir = crate::core::manifest_tx::row_location(row).ok_or_else(|| {
            CatalogError::internal(format!("table {} has no location", display_id(&id)))
        })?;
        let (naming, naming_name) = scheme(entry.naming_scheme.as_deref());
        let (staging, final_path) = self
            .check_staged(
                &id,
                &self.location_uri(&dir),
                None,
                entry.version,
                naming,
                &entry.manifest_path,
            )
            .await?;
        let pending = Pending {
            version: entry.version,
            manifest_path: entry.manifest_path.clone(),
            manifest_size: entry.manifest_size,
            e_tag: entry.e_tag.clone(),
            naming_scheme: naming_name.to_string(),
        };
        let encoded = serde_json::to_string(&pending)
            .map_err(|e| CatalogError::internal(format!("cannot encode version: {e}")))?;
        let row = with_properties(row, |p| {
            p.insert(PENDING.to_string(), encoded);
        })?;
        Ok(VersionPlan {
            id,
            row,
            pending,
            staging,
            final_path,
        })
    }

    /// Publish a committed version to its final name (idempotent).
    pub(crate) async fn publish(&self, plan: &VersionPlan) -> TableVersion {
        self.refs_cache
            .forget_table(&crate::core::checks::manifest_key(&plan.id));
        match self
            .store
            .copy_if_not_exists(&plan.staging, &plan.final_path)
            .await
        {
            Ok(_) => {
                let meta = self.store.inner.head(&plan.final_path).await.ok();
                if let Err(e) = self.store.delete(&plan.staging).await {
                    tracing::debug!(error = %e, "staging manifest not removed");
                }
                TableVersion {
                    version: plan.pending.version,
                    manifest_path: plan.final_path.to_string(),
                    manifest_size: meta.as_ref().map(|m| m.size as i64),
                    e_tag: meta.and_then(|m| m.e_tag),
                    ..Default::default()
                }
            }
            Err(e) => {
                tracing::warn!(table = %display_id(&plan.id), version = plan.pending.version, error = %e,
                    "committed version not yet published; served from its staging path");
                plan.pending.table_version()
            }
        }
    }

    /// Publish a committed-but-unpublished version (after a crash between
    /// a batch's commit and its publication).
    async fn publish_pending(&self, id: &[String], p: &Pending) -> CatalogResult<()> {
        let location = self.table_location(id).await?;
        let table_path = lance::io::ObjectStore::extract_path_from_uri(
            self.session.store_registry(),
            &location,
        )?;
        let (naming, _) = scheme(Some(&p.naming_scheme));
        let final_path = naming.manifest_path(&table_path, p.version as u64);
        let staging = Path::parse(&p.manifest_path)
            .map_err(|e| CatalogError::internal(format!("bad recorded staging path: {e}")))?;
        // Recorded before staged paths were checked on the way in: still
        // never copy, then delete, anything but this version's own.
        if !is_staged_name(&staging, &final_path) {
            return Err(CatalogError::internal(format!(
                "recorded staging manifest {staging} of table {} is not version {}'s; not published",
                display_id(id),
                p.version
            )));
        }
        self.store
            .copy_if_not_exists(&staging, &final_path)
            .await
            .map_err(|e| {
                CatalogError::new(
                    Code::CONCURRENT_MODIFICATION,
                    format!(
                        "version {} of table {} is committed but cannot be published: {e}",
                        p.version,
                        display_id(id)
                    ),
                )
            })?;
        let _ = self.store.delete(&staging).await;
        Ok(())
    }

    /// Commit versions of several tables at once: all or nothing.
    pub(crate) async fn create_versions(
        &self,
        entries: &[CreateTableVersionEntry],
    ) -> CatalogResult<Vec<TableVersion>> {
        if entries.is_empty() {
            return Err(CatalogError::invalid("a batch needs at least one entry"));
        }
        let mut seen = std::collections::HashSet::new();
        for e in entries {
            table_id(&Some(e.id.clone()))?;
            if crate::core::branch::open::branch_of(&e.branch).is_some() {
                return Err(CatalogError::invalid(
                    "versions on branches are committed one at a time, not in a batch",
                ));
            }
            if !seen.insert(crate::core::checks::manifest_key(&e.id)) {
                return Err(CatalogError::invalid(format!(
                    "table {} appears twice in one batch",
                    display_id(&e.id)
                )));
            }
        }
        let held = self.hold_manifest().await;
        let ds = self.manifest_snapshot().await?;
        let rows = self
            .table_rows(&ds, entries.iter().map(|e| e.id.clone()))
            .await?;
        let mut plans = Vec::with_capacity(entries.len());
        for (entry, row) in entries.iter().zip(rows.iter()) {
            plans.push(self.plan_version(entry, row, false).await?);
        }
        let updated: Vec<RecordBatch> = plans.iter().map(|p| p.row.clone()).collect();
        self.manifest_apply(&held, ds, updated, &[], true).await?;
        let mut out = Vec::with_capacity(plans.len());
        for plan in &plans {
            out.push(self.publish(plan).await);
        }
        Ok(out)
    }

    /// The manifest row of each table, in order; 4 for a missing one.
    pub(crate) async fn table_rows(
        &self,
        ds: &lance::Dataset,
        ids: impl Iterator<Item = Vec<String>>,
    ) -> CatalogResult<Vec<RecordBatch>> {
        let ids: Vec<Vec<String>> = ids.collect();
        let keys: Vec<String> = ids
            .iter()
            .map(|i| crate::core::checks::manifest_key(i))
            .collect();
        let batches = self.manifest_rows(ds, &keys).await?;
        let mut by_key: HashMap<String, RecordBatch> = HashMap::new();
        for row in crate::core::manifest_tx::single_rows(&batches) {
            if crate::core::manifest_tx::row_type(&row).as_deref() == Some("table") {
                if let Some(k) = crate::core::manifest_tx::row_object_id(&row) {
                    by_key.insert(k, row);
                }
            }
        }
        ids.iter()
            .zip(keys.iter())
            .map(|(id, k)| by_key.remove(k).ok_or_else(|| table_not_found(id)))
            .collect()
    }

    pub(crate) async fn list_versions_op(
        &self,
        req: ListTableVersionsRequest,
    ) -> CatalogResult<ListTableVersionsResponse> {
        let id = table_id(&req.id)?;
        let on_branch = crate::core::branch::open::branch_of(&req.branch).is_some();
        let mut listed = engine(self.inner().await?.list_table_versions(req.clone()).await)
            .map_err(|e| missing_table(e, &id))?;
        if on_branch {
            return Ok(listed);
        }
        if let Some(p) = self.unpublished(&id).await? {
            let limit = req.limit.filter(|l| *l >= 0).map(|l| l as usize);
            if req.descending.unwrap_or(false) {
                listed.versions.insert(0, p.table_version());
                if let Some(l) = limit {
                    listed.versions.truncate(l);
                }
            } else if limit.is_none_or(|l| listed.versions.len() < l) {
                listed.versions.push(p.table_version());
            }
        }
        Ok(listed)
    }

    pub(crate) async fn describe_version_op(
        &self,
        req: DescribeTableVersionRequest,
    ) -> CatalogResult<DescribeTableVersionResponse> {
        let id = table_id(&req.id)?;
        if crate::core::branch::open::branch_of(&req.branch).is_none() {
            if let Some(p) = self.unpublished(&id).await? {
                if req.version.is_none_or(|v| v == p.version) {
                    return Ok(DescribeTableVersionResponse {
                        version: Box::new(p.table_version()),
                        ..Default::default()
                    });
                }
            }
        }
        engine(self.inner().await?.describe_table_version(req).await)
            .map_err(|e| missing_table(e, &id))
    }
}

impl Catalog {
    /// Check a staged manifest before anything copies it: version N >= 1
    /// of this table (or of its `branch`), named as version N's final
    /// manifest plus a suffix (`<final>-<uuid>`) in that `_versions/`, and
    /// present. Anything else could make the catalog copy, and then delete,
    /// a foreign object (another table's manifest). Answers the staging and
    /// final paths.
    pub(crate) async fn check_staged(
        &self,
        id: &[String],
        location: &str,
        branch: Option<&str>,
        version: i64,
        naming: ManifestNamingScheme,
        manifest_path: &str,
    ) -> CatalogResult<(Path, Path)> {
        if version < 1 {
            return Err(CatalogError::invalid(format!(
                "version {version} of table {} cannot be created: versions start at 1",
                display_id(id)
            )));
        }
        let table_path =
            lance::io::ObjectStore::extract_path_from_uri(self.session.store_registry(), location)?;
        let base = match branch {
            Some(b) => Path::parse(format!("{table_path}/tree/{b}")).map_err(|e| {
                CatalogError::invalid(format!("branch {b:?} is not a valid name: {e}"))
            })?,
            None => table_path,
        };
        let final_path = naming.manifest_path(&base, version as u64);
        let staging = Path::parse(manifest_path).map_err(|e| {
            CatalogError::invalid(format!(
                "invalid staging manifest path {manifest_path:?}: {e}"
            ))
        })?;
        if !is_staged_name(&staging, &final_path) {
            return Err(CatalogError::invalid(format!(
                "staging manifest {manifest_path:?} is not a staged manifest for version {version} of table {} (expected {final_path}-<suffix>)",
                display_id(id),
            )));
        }
        if !self.store.exists(&staging).await? {
            return Err(CatalogError::invalid(format!(
                "staging manifest {manifest_path:?} for version {version} of table {} does not exist",
                display_id(id)
            )));
        }
        Ok((staging, final_path))
    }

    pub(crate) async fn create_version_op(
        &self,
        req: lance_namespace::models::CreateTableVersionRequest,
    ) -> CatalogResult<lance_namespace::models::CreateTableVersionResponse> {
        let id = table_id(&req.id)?;
        let location = self.table_location(&id).await?;
        let branch = crate::core::branch::open::branch_of(&req.branch);
        self.check_staged(
            &id,
            &location,
            branch,
            req.version,
            scheme(req.naming_scheme.as_deref()).0,
            &req.manifest_path,
        )
        .await?;
        if branch.is_some() {
            // Branch heads live in the branch's own directory; the engine
            // commits them with its per-table compare-and-swap.
            return engine(self.inner().await?.create_table_version(req).await)
                .map_err(|e| missing_table(e, &id));
        }
        // One table: the engine's compare-and-swap on the version file is the
        // commit, and it reports a lost race as a conflict. A version a batch
        // committed but has not yet published is published first, so the two
        // paths never hand out the same number.
        let _held = self.hold_manifest().await;
        if let Some(p) = self.unpublished(&id).await? {
            self.publish_pending(&id, &p).await?;
        }
        let mut req = req;
        req.id = Some(id.clone());
        engine(self.inner().await?.create_table_version(req).await)
            .map_err(|e| missing_table(e, &id))
    }
}
