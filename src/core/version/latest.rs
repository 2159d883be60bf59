//! A table's newest placed version, as exactly as Lance's listing has it.
//!
//! Lance finds the newest version by listing `_versions/`, and on a local
//! disk that listing reads the metadata of every entry (every manifest
//! and every staged copy kept for resends): the one cost of a commit
//! through the catalog that grew with the table's age. On a local disk
//! the newest version is read from the entries' names alone (one
//! directory read) and only that manifest's metadata is asked for; other
//! stores list as Lance does. No replica keeps an idea of its own: a
//! version removed out of order (a tag keeps an old one, a range of
//! versions deleted) cannot make a stale idea pass for the newest, as an
//! earlier hint that walked successors could (the first gap ended it).

use lance_table::io::commit::{CommitHandler, ConditionalPutCommitHandler, ManifestNamingScheme};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStoreExt};

use lance_namespace::models::{ListTableVersionsRequest, ListTableVersionsResponse, TableVersion};

use crate::core::branch::open::branch_of;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult};

/// The newest placed version of a table: its number, its manifest's
/// path, and what the store says of that object.
pub(crate) struct Newest {
    pub(crate) version: u64,
    pub(crate) path: Path,
    pub(crate) meta: Option<ObjectMeta>,
}

impl Catalog {
    /// The answer to "the newest version of table `id`" (descending, limit
    /// 1, the first page: how Lance's clients find the version to commit
    /// after), from [`Catalog::newest_placed`]. `None` sends the request
    /// the long way: a branch, a version an earlier release recorded, or a
    /// newest version a batch has not decided.
    pub(crate) async fn newest_listed(
        &self,
        id: &[String],
        req: &ListTableVersionsRequest,
    ) -> CatalogResult<Option<ListTableVersionsResponse>> {
        let newest_only = req.descending == Some(true)
            && req.limit == Some(1)
            && req.page_token.is_none()
            && branch_of(&req.branch).is_none();
        if !newest_only {
            return Ok(None);
        }
        let described = self.describe(id, Default::default()).await?;
        let props = described.properties.as_ref();
        if props.is_some_and(|p| p.contains_key(crate::core::reserved::PENDING)) {
            return Ok(None);
        }
        let Some(location) = described.location.as_deref() else {
            return Ok(None);
        };
        let table_path =
            lance::io::ObjectStore::extract_path_from_uri(self.session.store_registry(), location)?;
        crate::fault::hold("version.newest_read").await;
        let Some(newest) = self.newest_placed(&table_path).await? else {
            return Ok(Some(ListTableVersionsResponse::default()));
        };
        // The claim read after the newest version, as the listing's is: a
        // batch that claimed and placed its version since the description
        // above is seen, and its version is not answered as the newest.
        if self
            .intent_on(id)
            .await?
            .is_some_and(|i| i.hides(newest.version as i64))
        {
            return Ok(None);
        }
        let meta = match newest.meta {
            Some(meta) => meta,
            None => match present(self.store.inner.head(&newest.path).await)? {
                Some(meta) => meta,
                None => return Ok(None),
            },
        };
        Ok(Some(ListTableVersionsResponse {
            versions: vec![TableVersion {
                version: newest.version as i64,
                manifest_path: meta.location.to_string(),
                manifest_size: Some(meta.size as i64),
                e_tag: meta.e_tag,
                timestamp_millis: Some(meta.last_modified.timestamp_millis()),
                metadata: None,
            }],
            ..Default::default()
        }))
    }

    /// The newest version in a table's `_versions/` (`None` for none).
    pub(crate) async fn newest_placed(&self, table_path: &Path) -> CatalogResult<Option<Newest>> {
        if self.store.is_local() {
            if let Some(found) = self.newest_by_name(table_path).await? {
                return Ok(found);
            }
        }
        match ConditionalPutCommitHandler
            .resolve_latest_location(table_path, &self.store)
            .await
        {
            Ok(found) => Ok(Some(Newest {
                version: found.version,
                path: found.path,
                meta: None,
            })),
            Err(lance::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// On a local disk, the newest version by the names in `_versions/`
    /// alone (one directory read, no metadata of each entry), and then
    /// the metadata of that one manifest. `None` sends the question to
    /// Lance's listing: a table with V1 names, a path with encoded
    /// characters or no directory, or a newest manifest gone between the
    /// two reads.
    async fn newest_by_name(&self, table_path: &Path) -> CatalogResult<Option<Option<Newest>>> {
        // A store path spells some characters percent-encoded; only one
        // that spells none is the directory's own name.
        if table_path.as_ref().contains('%') {
            return Ok(None);
        }
        let dir = std::path::Path::new("/")
            .join(table_path.as_ref())
            .join("_versions");
        let newest = tokio::task::spawn_blocking(move || newest_name(&dir))
            .await
            .map_err(|e| CatalogError::internal(format!("reading a version directory: {e}")))??;
        let version = match newest {
            Names::Empty => return Ok(Some(None)),
            Names::Other => return Ok(None),
            Names::Newest(v) => v,
        };
        let path = ManifestNamingScheme::V2.manifest_path(table_path, version);
        Ok(present(self.store.inner.head(&path).await)?.map(|meta| {
            Some(Newest {
                version,
                path,
                meta: Some(meta),
            })
        }))
    }
}

/// What the names in a `_versions/` directory say.
enum Names {
    /// No manifest.
    Empty,
    /// A name the V2 scheme does not explain: Lance's listing decides.
    Other,
    /// The newest version named.
    Newest(u64),
}

/// The newest V2 version named in `dir` (`<20 digits>.manifest`, the
/// digits `u64::MAX - version`); staged copies (`….manifest-<uuid>`) and
/// other files are not versions.
fn newest_name(dir: &std::path::Path) -> CatalogResult<Names> {
    let unread =
        |e: std::io::Error| CatalogError::internal(format!("reading a version directory: {e}"));
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // No directory where the name says: Lance's listing decides.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Names::Other),
        Err(e) => return Err(unread(e)),
    };
    let mut newest = None;
    for entry in entries {
        let entry = entry.map_err(unread)?;
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".manifest")) else {
            continue;
        };
        match (stem.len(), stem.parse::<u64>()) {
            (20, Ok(n)) => newest = newest.max(Some(u64::MAX - n)),
            // A V1 name (the version itself): Lance's listing knows both.
            (_, Ok(_)) => return Ok(Names::Other),
            _ => continue,
        }
    }
    Ok(newest.map_or(Names::Empty, Names::Newest))
}

/// An object's metadata, `None` when it is not there.
pub(crate) fn present(
    head: Result<ObjectMeta, object_store::Error>,
) -> CatalogResult<Option<ObjectMeta>> {
    match head {
        Ok(meta) => Ok(Some(meta)),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(lance::Error::from(e).into()),
    }
}
