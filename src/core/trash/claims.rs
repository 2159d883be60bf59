//! The locations trashed tables keep claimed, looked up by location: one
//! small object per claim at `_catalog/control/trash-claims/<the
//! location's segments>/@<trash id>`, so an overlap check lists the claims
//! at each ancestor of a location and everything below it (a few listings,
//! whatever the trash holds) instead of reading every trash entry.
//!
//! A claim is written before its entry and removed after it, so an entry
//! always has its claim. A claim without an entry is a drop that has not
//! filed its entry yet (its table is still in the manifest, which claims
//! the same bytes) or one left by a crash: it is ignored, and removed once
//! it is [`STALE_MS`] old. Trash entries filed before claims existed get
//! theirs once per root, on first use (`trash-claims-built.json` marks it
//! done); until then lookups read the entries, as before.

use std::sync::atomic::Ordering;

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutPayload};
use serde::Serialize;

use crate::core::table::locations::{canonical, Placed};
use crate::core::trash::records::TrashEntry;
use crate::core::Catalog;
use crate::error::CatalogResult;
use crate::records::{now_ms, unavailable};

/// Where claims live, below the control directory.
const DIR: &str = "trash-claims";
/// The marker that every entry on this root has its claim.
const BUILT: &str = "trash-claims-built.json";
/// Claim file names start with this (a location segment that does too is
/// a directory, never a claim: listings tell files from directories).
const MARK: char = '@';
/// Age after which a claim without an entry is removed.
const STALE_MS: u64 = 10 * 60 * 1000;

/// What a claim file holds: the table's manifest key, for an operator
/// reading the store (lookups read the entry itself).
#[derive(Serialize)]
struct Claim {
    key: String,
}

impl Catalog {
    fn claims_dir(&self) -> (std::sync::Arc<dyn ObjectStore>, Path) {
        let (store, control) = self.control.raw();
        (store, control.join(DIR))
    }

    /// The claims directory of a canonical location.
    fn claims_at(dir: &Path, location: &str) -> Path {
        location
            .split('/')
            .filter(|s| !s.is_empty())
            .fold(dir.clone(), |p, s| p.join(s))
    }

    /// Claim a trashed table's location (before its entry is filed).
    pub(crate) async fn claim_trash(&self, e: &TrashEntry) -> CatalogResult<()> {
        let Some(place) = e.placed() else {
            return Ok(());
        };
        let (store, dir) = self.claims_dir();
        let path =
            Self::claims_at(&dir, &place.location).join(format!("{MARK}{}", e.trash_id).as_str());
        let body = serde_json::to_vec(&Claim {
            key: crate::core::checks::manifest_key(&e.id),
        })
        .unwrap_or_default();
        store
            .put(&path, PutPayload::from(body))
            .await
            .map_err(|err| unavailable("write", err))?;
        Ok(())
    }

    /// Release a trashed table's claim (after its entry is gone). A claim
    /// that cannot be removed is ignored by lookups and removed later.
    pub(crate) async fn release_claim(&self, e: &TrashEntry) {
        let Some(place) = e.placed() else { return };
        let (store, dir) = self.claims_dir();
        let path =
            Self::claims_at(&dir, &place.location).join(format!("{MARK}{}", e.trash_id).as_str());
        if let Err(err) = store.delete(&path).await {
            if !matches!(err, object_store::Error::NotFound { .. }) {
                tracing::warn!(trash_id = %e.trash_id, error = %err, "could not release a trash claim; it is ignored and removed later");
            }
        }
    }

    /// Whether every entry of this root has its claim; makes it so once.
    async fn claims_ready(&self) -> CatalogResult<bool> {
        if self.claims_built.load(Ordering::Acquire) {
            return Ok(true);
        }
        let (store, dir) = self.claims_dir();
        let (_, control) = self.control.raw();
        let marker = control.join(BUILT);
        match store.head(&marker).await {
            Ok(_) => {}
            Err(object_store::Error::NotFound { .. }) => {
                for e in self.trash_entries().await? {
                    self.claim_trash(&e).await?;
                }
                store
                    .put(&marker, PutPayload::from(b"{}".to_vec()))
                    .await
                    .map_err(|err| unavailable("write", err))?;
                tracing::info!(claims = %dir, "trash claims built for entries filed before them");
            }
            Err(err) => return Err(unavailable("read", err)),
        }
        self.claims_built.store(true, Ordering::Release);
        Ok(true)
    }

    /// The claims that may overlap one of `near` (every entry's when it is
    /// empty or holds the root).
    pub(crate) async fn trash_placed_near(&self, near: &[&str]) -> CatalogResult<Vec<Placed>> {
        let locations: Vec<String> = near.iter().map(|l| canonical(l)).collect();
        if locations.is_empty()
            || locations.iter().any(String::is_empty)
            || !self.claims_ready().await?
        {
            return Ok(self
                .trash_entries()
                .await?
                .iter()
                .filter_map(TrashEntry::placed)
                .collect());
        }
        let (store, dir) = self.claims_dir();
        let mut found: Vec<ObjectMeta> = Vec::new();
        for location in &locations {
            let segs: Vec<&str> = location.split('/').collect();
            // Claims at each ancestor: the files directly in its directory.
            for depth in 1..segs.len() {
                let at = Self::claims_at(&dir, &segs[..depth].join("/"));
                let listed = store
                    .list_with_delimiter(Some(&at))
                    .await
                    .map_err(|err| unavailable("list", err))?;
                found.extend(listed.objects);
            }
            // Claims at the location and anywhere below it.
            let at = Self::claims_at(&dir, location);
            let below: Vec<ObjectMeta> = store
                .list(Some(&at))
                .try_collect()
                .await
                .map_err(|err| unavailable("list", err))?;
            found.extend(below);
        }
        found.sort_by(|a, b| a.location.cmp(&b.location));
        found.dedup_by(|a, b| a.location == b.location);
        let mut out = Vec::new();
        for meta in found {
            if let Some(place) = self.claim_placed(&store, &meta).await? {
                out.push(place);
            }
        }
        Ok(out)
    }

    /// The entries whose claim is exactly `location`.
    pub(crate) async fn trash_at(&self, location: &str) -> CatalogResult<Vec<TrashEntry>> {
        let location = canonical(location);
        if location.is_empty() || !self.claims_ready().await? {
            return Ok(self
                .trash_entries()
                .await?
                .into_iter()
                .filter(|e| e.placed().is_some_and(|p| p.location == location))
                .collect());
        }
        let (store, dir) = self.claims_dir();
        let listed = store
            .list_with_delimiter(Some(&Self::claims_at(&dir, &location)))
            .await
            .map_err(|err| unavailable("list", err))?;
        let mut out = Vec::new();
        for meta in listed.objects {
            let Some(trash_id) = claim_id(&meta) else {
                continue;
            };
            if let Some(e) = self.find_trash(trash_id).await? {
                out.push(e);
            }
        }
        out.sort_by(|a, b| a.trash_id.cmp(&b.trash_id));
        Ok(out)
    }

    /// The placement a claim file stands for: its entry's, or none when
    /// it has no entry (removed once stale).
    async fn claim_placed(
        &self,
        store: &std::sync::Arc<dyn ObjectStore>,
        meta: &ObjectMeta,
    ) -> CatalogResult<Option<Placed>> {
        let Some(trash_id) = claim_id(meta) else {
            return Ok(None);
        };
        if let Some(e) = self.find_trash(trash_id).await? {
            return Ok(e.placed());
        }
        let age = now_ms().saturating_sub(meta.last_modified.timestamp_millis().max(0) as u64);
        if age > STALE_MS {
            let _ = store.delete(&meta.location).await;
        }
        Ok(None)
    }
}

/// The trash id a claim file names (none for anything else found there).
fn claim_id(meta: &ObjectMeta) -> Option<&str> {
    meta.location.filename()?.strip_prefix(MARK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(trash_id: &str, name: &str, location: &str) -> TrashEntry {
        TrashEntry {
            trash_id: trash_id.into(),
            kind: "table".into(),
            id: vec!["a".into(), name.into()],
            location: Some(location.into()),
            version: None,
            properties: Default::default(),
            parent_object_id: None,
            dropped_by: None,
            dropped_at_ms: 1,
            expires_at_ms: u64::MAX,
            group: trash_id.into(),
            complete: true,
            expired: false,
            warehouse: None,
            project: None,
        }
    }

    fn keys(placed: &[Placed]) -> Vec<String> {
        let mut k: Vec<String> = placed
            .iter()
            .map(|p| crate::core::table::locations::placed_name(&p.key))
            .collect();
        k.sort();
        k
    }

    /// Entries filed before claims existed get theirs on first use; a
    /// lookup finds claims at an ancestor, at the location and below it,
    /// and none at a sibling that merely shares characters; a released
    /// claim is gone, and a claim whose entry is missing counts for nothing.
    #[tokio::test]
    async fn claims_answer_overlap_by_location() {
        let dir = tempfile::tempdir().unwrap();
        let c = crate::core::open_local(dir.path()).await;
        let legacy = entry("0000000000001-aaaaaaaaaaaa", "old", "ab");
        c.control
            .create(
                crate::core::trash::records::KIND,
                &legacy.trash_id,
                &legacy,
                crate::error::Code::CONCURRENT_MODIFICATION,
            )
            .await
            .unwrap();
        let inside = entry("0000000000002-bbbbbbbbbbbb", "in", "ab/t/deeper");
        let sibling = entry("0000000000003-cccccccccccc", "sib", "ab/tx");
        let exact = entry("0000000000004-dddddddddddd", "same", "ab/t");
        for e in [&inside, &sibling, &exact] {
            c.file_trash(e).await.unwrap();
        }
        let (store, claims) = c.claims_dir();
        let (_, control) = c.control.raw();
        assert!(store.head(&control.clone().join(BUILT)).await.is_err());

        let near = c.trash_placed_near(&["ab/t"]).await.unwrap();
        assert_eq!(
            keys(&near),
            keys(&[
                legacy.placed().unwrap(),
                inside.placed().unwrap(),
                exact.placed().unwrap()
            ])
        );
        assert!(store.head(&control.join(BUILT)).await.is_ok());
        let at: Vec<String> = c
            .trash_at("ab/t")
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.trash_id)
            .collect();
        assert_eq!(at, std::slice::from_ref(&exact.trash_id));

        c.forget_trash(&exact).await.unwrap();
        assert!(c.trash_at("ab/t").await.unwrap().is_empty());
        // A claim with no entry behind it (a crash between the two).
        let orphan = Catalog::claims_at(&claims, "ab/t").join("@0000000000005-eeeeeeeeeeee");
        store
            .put(&orphan, PutPayload::from(b"{}".to_vec()))
            .await
            .unwrap();
        let near = c.trash_placed_near(&["ab/t"]).await.unwrap();
        assert_eq!(
            keys(&near),
            keys(&[legacy.placed().unwrap(), inside.placed().unwrap()])
        );
        // Every entry, when asked for everything.
        assert_eq!(c.trash_placed_near(&[]).await.unwrap().len(), 3);
    }
}
