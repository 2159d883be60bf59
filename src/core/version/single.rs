//! One table's commit (`create_table_version`): Lance's own commit point,
//! the put-if-absent of version N's manifest, checked as Lance's directory
//! namespace checks it, with no lock and no `__manifest` write, so writers
//! of different tables never wait for each other and one table's writers
//! race only on its version names, as they do without a catalog.

use lance_namespace::models::{
    CreateTableVersionRequest, CreateTableVersionResponse, TableVersion,
};
use lance_namespace::LanceNamespace;
use lance_table::io::commit::ManifestNamingScheme;
use object_store::path::Path;
use object_store::ObjectStoreExt;

use crate::core::checks::{display_id, table_id};
use crate::core::version::intent::{in_progress, Intent};
use crate::core::version::latest::present;
use crate::core::version::materialize::{is_staged_name, materialize, same_bytes, Placed};
use crate::core::{engine, missing_table, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

/// The naming scheme a request names (V2 unless it says V1).
pub(crate) fn scheme(name: Option<&str>) -> (ManifestNamingScheme, &'static str) {
    match name {
        Some(s) if s.eq_ignore_ascii_case("V1") => (ManifestNamingScheme::V1, "V1"),
        _ => (ManifestNamingScheme::V2, "V2"),
    }
}

impl Catalog {
    /// Version `version` of table `id` (or of its `branch`) as a staged
    /// manifest may claim it: version N >= 1, named as version N's final
    /// manifest plus a suffix (`<final>-<uuid>`) in that `_versions/`.
    /// Anything else could make the catalog copy a foreign object (another
    /// table's manifest). Answers the staging and final paths and the
    /// table's own path.
    pub(crate) fn staged_paths(
        &self,
        id: &[String],
        location: &str,
        branch: Option<&str>,
        version: i64,
        naming: ManifestNamingScheme,
        manifest_path: &str,
    ) -> CatalogResult<(Path, Path, Path)> {
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
            None => table_path.clone(),
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
        Ok((staging, final_path, table_path))
    }

    /// [`Catalog::staged_paths`], and the staged manifest is there.
    pub(crate) async fn check_staged(
        &self,
        id: &[String],
        location: &str,
        branch: Option<&str>,
        version: i64,
        naming: ManifestNamingScheme,
        manifest_path: &str,
    ) -> CatalogResult<(Path, Path)> {
        let (staging, final_path, _) =
            self.staged_paths(id, location, branch, version, naming, manifest_path)?;
        if !self.store.exists(&staging).await? {
            return Err(CatalogError::invalid(format!(
                "staging manifest {manifest_path:?} for version {version} of table {} does not exist",
                display_id(id)
            )));
        }
        Ok((staging, final_path))
    }

    /// The newest version in a table's `_versions/` (0 for none).
    pub(crate) async fn latest_placed(&self, table_path: &Path) -> CatalogResult<i64> {
        Ok(self
            .newest_placed(table_path)
            .await?
            .map_or(0, |n| n.version as i64))
    }

    pub(crate) async fn create_version_op(
        &self,
        req: CreateTableVersionRequest,
    ) -> CatalogResult<CreateTableVersionResponse> {
        let id = table_id(&req.id)?;
        // One description answers the location, a legacy recorded version
        // and a batch's claim.
        let described = self.describe(&id, Default::default()).await?;
        let location = described.location.clone().ok_or_else(|| {
            CatalogError::internal(format!("table {} has no location", display_id(&id)))
        })?;
        let branch = crate::core::branch::open::branch_of(&req.branch);
        let naming = scheme(req.naming_scheme.as_deref()).0;
        if branch.is_some() {
            // Branch heads live in the branch's own directory; the engine
            // commits them with its per-table compare-and-swap.
            self.check_staged(
                &id,
                &location,
                branch,
                req.version,
                naming,
                &req.manifest_path,
            )
            .await?;
            let mut req = req;
            req.id = Some(id.clone());
            return engine(self.inner().await?.create_table_version(req).await)
                .map_err(|e| missing_table(e, &id));
        }
        let (staging, final_path, table_path) = self.staged_paths(
            &id,
            &location,
            None,
            req.version,
            naming,
            &req.manifest_path,
        )?;
        let what = format!("version {} of table {}", req.version, display_id(&id));
        let props = described.properties.as_ref();
        if props.is_some_and(|p| p.contains_key(crate::core::reserved::PENDING)) {
            // A version an earlier release's batch recorded, not placed.
            self.publish_recorded(&id).await?;
        }
        // An undecided batch holds the table's next version (a dead one is
        // undone first).
        match Intent::of(props) {
            Some(intent) if intent.stale() => self.abort_intent(&id, &intent).await?,
            Some(_) => return Err(in_progress(&id)),
            None => {}
        }
        let latest = self.latest_placed(&table_path).await?;
        if req.version <= latest {
            return self
                .resent_or_behind(&id, latest, &req, &staging, &final_path)
                .await;
        }
        if req.version != latest + 1 {
            return Err(behind(&id, latest, req.version));
        }
        // Again after the listing: a batch that claimed the latest version
        // since is not built on (one that claims this version after loses
        // its name below, which is the commit), and the version this one
        // follows is still there (an abort may have removed it).
        self.fence_batch(&id).await?;
        if req.version > 1 {
            let before = naming.manifest_path(&table_path, req.version as u64 - 1);
            if present(self.store.inner.head(&before).await)?.is_none() {
                return Err(CatalogError::new(
                    Code::CONCURRENT_MODIFICATION,
                    format!(
                        "version {} of table {} is gone: version {} cannot follow it",
                        req.version - 1,
                        display_id(&id),
                        req.version
                    ),
                ));
            }
        }
        let placed =
            materialize(&self.store, &staging, &final_path, req.manifest_size, &what).await?;
        crate::fault::point("commit.placed");
        self.staged.keep(&self.store, staging);
        let put = match placed {
            Placed::New { size, e_tag } => Some((size, e_tag)),
            Placed::Same => None,
        };
        self.committed(&id, req.version, &final_path, put).await
    }

    /// Whether `req`'s version is placed with the bytes it staged: the
    /// same commit resent after its answer was lost.
    async fn resent(
        &self,
        req: &CreateTableVersionRequest,
        staging: &Path,
        final_path: &Path,
    ) -> CatalogResult<bool> {
        let store = self.store.inner.as_ref();
        Ok(store.head(final_path).await.is_ok()
            && same_bytes(store, staging, final_path, req.manifest_size).await?)
    }

    /// A commit of a version the table has already: its own resend
    /// (success, as the first answer) or one that lost the race (14).
    async fn resent_or_behind(
        &self,
        id: &[String],
        latest: i64,
        req: &CreateTableVersionRequest,
        staging: &Path,
        final_path: &Path,
    ) -> CatalogResult<CreateTableVersionResponse> {
        match self.resent(req, staging, final_path).await? {
            true => self.committed(id, req.version, final_path, None).await,
            false => Err(behind(id, latest, req.version)),
        }
    }

    /// The answer for a placed version: where it is, as it is (`put`: its
    /// size and e-tag when this call put it, else asked of the store).
    pub(crate) async fn committed(
        &self,
        id: &[String],
        version: i64,
        final_path: &Path,
        put: Option<(u64, Option<String>)>,
    ) -> CatalogResult<CreateTableVersionResponse> {
        self.forget_references(id);
        // A store whose put answers no e-tag is asked, as for a resend.
        let (size, e_tag) = match put.filter(|(_, e_tag)| e_tag.is_some()) {
            Some((size, e_tag)) => (Some(size), e_tag),
            None => match self.store.inner.head(final_path).await {
                Ok(meta) => (Some(meta.size), meta.e_tag),
                Err(_) => (None, None),
            },
        };
        Ok(CreateTableVersionResponse {
            version: Some(Box::new(TableVersion {
                version,
                manifest_path: final_path.to_string(),
                manifest_size: size.map(|s| s as i64),
                e_tag,
                ..Default::default()
            })),
            ..Default::default()
        })
    }
}

/// Version `asked` of table `id` is not the next one.
fn behind(id: &[String], latest: i64, asked: i64) -> CatalogError {
    CatalogError::new(
        Code::CONCURRENT_MODIFICATION,
        format!(
            "table {} is at version {latest}: version {asked} cannot be created",
            display_id(id)
        ),
    )
}
