//! A table's newest placed version without listing its `_versions/`.
//!
//! Lance finds the newest version by listing the directory, which grows
//! with every version (and, for a while, every staged manifest): on a
//! local disk that listing is the one cost of a commit through the
//! catalog that grows with the table's age. Each replica keeps a hint
//! per table, the newest version it saw; the store answers from it with
//! a HEAD of that version and of the next ones until one is missing.
//! Versions are placed in order (N only after N-1) and removed oldest
//! first, so the first missing successor after a present version ends
//! the walk. A hint the store contradicts (its version gone: the table
//! was cleaned up or re-created) is dropped for the listing, which
//! remains the one truth; the hint only shortens the way to it.

use std::collections::HashMap;
use std::sync::Mutex;

use lance_table::io::commit::{CommitHandler, ConditionalPutCommitHandler, ManifestNamingScheme};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStoreExt};

use lance_namespace::models::{ListTableVersionsRequest, ListTableVersionsResponse, TableVersion};

use crate::core::branch::open::branch_of;
use crate::core::Catalog;
use crate::error::CatalogResult;

/// Tables whose hint a replica keeps; past it, the hints start over
/// (a forgotten hint costs one listing).
const HINTS: usize = 16_384;

/// Successors walked from a hint before the listing is cheaper.
const WALK: u64 = 32;

/// The newest version each table was seen at, by table path.
#[derive(Default)]
pub(crate) struct Latest {
    hints: Mutex<HashMap<String, u64>>,
}

impl Latest {
    pub(crate) fn hint(&self, table: &Path) -> Option<u64> {
        self.hints.lock().ok()?.get(table.as_ref()).copied()
    }

    /// `version` of `table` is placed: the hint moves up to it, never down.
    pub(crate) fn saw(&self, table: &Path, version: u64) {
        let Ok(mut hints) = self.hints.lock() else {
            return;
        };
        if hints.len() >= HINTS && !hints.contains_key(table.as_ref()) {
            hints.clear();
        }
        let hint = hints.entry(table.to_string()).or_insert(version);
        *hint = (*hint).max(version);
    }

    fn forget(&self, table: &Path) {
        if let Ok(mut hints) = self.hints.lock() {
            hints.remove(table.as_ref());
        }
    }
}

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
        crate::fault::hold("version.newest_walk").await;
        let Some(newest) = self.newest_placed(&table_path).await? else {
            return Ok(Some(ListTableVersionsResponse::default()));
        };
        // The claim read after the walk, as the listing's is: a batch that
        // claimed and placed its version since the description above is
        // seen, and its version is not answered as the newest.
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
        if let Some(from) = self.latest.hint(table_path) {
            if let Some(found) = self.walk(table_path, from).await? {
                self.latest.saw(table_path, found.version);
                return Ok(Some(found));
            }
            self.latest.forget(table_path);
        }
        match ConditionalPutCommitHandler
            .resolve_latest_location(table_path, &self.store)
            .await
        {
            Ok(found) => {
                if found.naming_scheme == ManifestNamingScheme::V2 {
                    self.latest.saw(table_path, found.version);
                }
                Ok(Some(Newest {
                    version: found.version,
                    path: found.path,
                    meta: None,
                }))
            }
            Err(lance::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// From a hinted version, the newest one by its successors; `None`
    /// when the hinted version is not there or the walk is too long.
    async fn walk(&self, table_path: &Path, from: u64) -> CatalogResult<Option<Newest>> {
        let at = |v: u64| ManifestNamingScheme::V2.manifest_path(table_path, v);
        let store = self.store.inner.as_ref();
        let Some(mut meta) = present(store.head(&at(from)).await)? else {
            return Ok(None);
        };
        let mut version = from;
        while let Some(next) = present(store.head(&at(version + 1)).await)? {
            (version, meta) = (version + 1, next);
            if version - from > WALK {
                return Ok(None);
            }
        }
        Ok(Some(Newest {
            version,
            path: at(version),
            meta: Some(meta),
        }))
    }
}

/// An object's metadata, `None` when it is not there.
fn present(head: Result<ObjectMeta, object_store::Error>) -> CatalogResult<Option<ObjectMeta>> {
    match head {
        Ok(meta) => Ok(Some(meta)),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(lance::Error::from(e).into()),
    }
}
