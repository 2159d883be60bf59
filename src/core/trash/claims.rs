//! The locations trashed tables keep claimed, looked up by location: one
//! small object per claim at `_catalog/control/trash-claims-folded/=<segment>/…/@/<trash
//! id>` (each segment of the location by its comparison key, lowercase
//! and composed, so a lookup finds a claim in any case; prefixed with `=`,
//! so no segment is ever `.`, `..` or `@` to the store; a claim of the
//! root itself sits at `trash-claims-folded/@/`). Claims kept by earlier
//! versions under `trash-claims/` (by their own spelling) are written
//! again here by the backfill, like any entry without a claim. An overlap check lists the `@/` directory of the
//! root and of each ancestor of a location and everything below the
//! location: a few listings, whatever the trash holds, instead of reading
//! every trash entry.
//!
//! A claim is written before its entry and removed after it, so an entry
//! always has its claim. A claim without an entry is a drop that has not
//! filed its entry yet (its table is still in the manifest, which claims
//! the same bytes) or one left behind: lookups ignore it, and a backfill
//! removes it once it is [`STALE_MS`] old.
//!
//! The backfill (each process once, in the background, on first use; and
//! with every trash sweep) gives every entry its claim: entries filed by
//! earlier versions, or by a replica of one still running during a rolling
//! update. Until a process's first backfill is done, its lookups read every
//! entry, as before.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutPayload};
use serde::Serialize;

use crate::core::location::{fold, Location};
use crate::core::table::locations::Placed;
use crate::core::trash::records::TrashEntry;
use crate::core::Catalog;
use crate::error::CatalogResult;
use crate::records::{now_ms, unavailable};

/// Where claims live, below the control directory.
const DIR: &str = "trash-claims-folded";
/// The directory of a location's own claims, beside its segments' (which
/// all start with `=`).
const OWN: &str = "@";
/// Age after which a claim without an entry is removed (well past any
/// drop in flight and any clock skew between replicas and the store).
const STALE_MS: u64 = 60 * 60 * 1000;

/// Whether this process has given every entry its claim.
#[derive(Default)]
pub(crate) struct ClaimsState {
    built: AtomicBool,
    started: AtomicBool,
}

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

    /// The claims directory of a location (its segments' comparison
    /// keys, each prefixed).
    fn claims_at<'a>(dir: &Path, segments: impl IntoIterator<Item = &'a str>) -> Path {
        segments
            .into_iter()
            .fold(dir.clone(), |p, s| p.join(format!("={}", fold(s)).as_str()))
    }

    /// The claim file of an entry, if it claims a location.
    fn claim_path(dir: &Path, e: &TrashEntry) -> Option<Path> {
        let place = e.placed()?;
        Some(
            Self::claims_at(dir, place.location.segments())
                .join(OWN)
                .join(e.trash_id.as_str()),
        )
    }

    /// Claim a trashed table's location (before its entry is filed).
    pub(crate) async fn claim_trash(&self, e: &TrashEntry) -> CatalogResult<()> {
        let (store, dir) = self.claims_dir();
        let Some(path) = Self::claim_path(&dir, e) else {
            return Ok(());
        };
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
        let (store, dir) = self.claims_dir();
        let Some(path) = Self::claim_path(&dir, e) else {
            return;
        };
        if let Err(err) = store.delete(&path).await {
            if !matches!(err, object_store::Error::NotFound { .. }) {
                tracing::warn!(trash_id = %e.trash_id, error = %err, "could not release a trash claim; it is ignored and removed later");
            }
        }
    }

    /// Whether this process may answer from claims: its first backfill is
    /// done. The first call starts it in the background.
    fn claims_ready(&self) -> bool {
        if self.claims.built.load(Ordering::Acquire) {
            return true;
        }
        if !self.claims.started.swap(true, Ordering::AcqRel) {
            let this = self.clone();
            tokio::spawn(async move {
                match this.backfill_claims().await {
                    Ok(n) => {
                        if n > 0 {
                            tracing::info!(root = %this.root, claims = n, "trash claims written for entries without one");
                        }
                        this.claims.built.store(true, Ordering::Release);
                    }
                    Err(e) => {
                        tracing::warn!(root = %this.root, error = %e.message, "trash claims backfill failed; lookups read every entry until it succeeds");
                        this.claims.started.store(false, Ordering::Release);
                    }
                }
            });
        }
        false
    }

    /// Give every entry its claim, and remove stale claims no entry has.
    /// Answers how many claims it wrote.
    pub async fn backfill_claims(&self) -> CatalogResult<usize> {
        let (store, dir) = self.claims_dir();
        let listed: Vec<ObjectMeta> = store
            .list(Some(&dir))
            .try_collect()
            .await
            .map_err(|err| unavailable("list", err))?;
        let claims: HashMap<String, ObjectMeta> = listed
            .into_iter()
            .filter_map(|m| Some((claim_id(&m)?.to_string(), m)))
            .collect();
        let entries = self.trash_entries().await?;
        let mut written = 0;
        for e in &entries {
            if e.placed().is_some() && !claims.contains_key(&e.trash_id) {
                self.claim_trash(e).await?;
                written += 1;
            }
        }
        let filed: HashSet<&str> = entries.iter().map(|e| e.trash_id.as_str()).collect();
        for (id, meta) in &claims {
            if !filed.contains(id.as_str()) && age_ms(meta) > STALE_MS {
                let _ = store.delete(&meta.location).await;
            }
        }
        Ok(written)
    }

    /// The claims that may overlap one of `near` (every entry's when it is
    /// empty or holds the root).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn trash_placed_near(&self, near: &[Location]) -> CatalogResult<Vec<Placed>> {
        if near.is_empty() || near.iter().any(Location::is_root) || !self.claims_ready() {
            return Ok(self
                .trash_entries()
                .await?
                .iter()
                .filter_map(TrashEntry::placed)
                .collect());
        }
        let (store, dir) = self.claims_dir();
        let mut found: Vec<ObjectMeta> = Vec::new();
        for location in near {
            let segs: Vec<&str> = location.segments().collect();
            // Claims of the root and of each ancestor: their own directory.
            for depth in 0..segs.len() {
                let at = Self::claims_at(&dir, segs[..depth].iter().copied()).join(OWN);
                let listed = store
                    .list_with_delimiter(Some(&at))
                    .await
                    .map_err(|err| unavailable("list", err))?;
                found.extend(listed.objects);
            }
            // Claims of the location and of anything below it.
            let at = Self::claims_at(&dir, location.segments());
            let below: Vec<ObjectMeta> = store
                .list(Some(&at))
                .try_collect()
                .await
                .map_err(|err| unavailable("list", err))?;
            found.extend(below);
        }
        let ids: std::collections::BTreeSet<String> = found
            .iter()
            .filter_map(claim_id)
            .map(str::to_string)
            .collect();
        let mut out = Vec::new();
        for trash_id in ids {
            // A claim without an entry counts for nothing (see the module).
            if let Some(place) = self.find_trash(&trash_id).await?.and_then(|e| e.placed()) {
                out.push(place);
            }
        }
        Ok(out)
    }

    /// The entries whose claim is exactly `location`.
    pub(crate) async fn trash_at(&self, location: &Location) -> CatalogResult<Vec<TrashEntry>> {
        if location.is_root() || !self.claims_ready() {
            return Ok(self
                .trash_entries()
                .await?
                .into_iter()
                .filter(|e| e.placed().is_some_and(|p| p.location == *location))
                .collect());
        }
        let (store, dir) = self.claims_dir();
        let at = Self::claims_at(&dir, location.segments()).join(OWN);
        let listed = store
            .list_with_delimiter(Some(&at))
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
}

/// The trash id a claim file names: a file directly in an `@` directory
/// (none for anything else found there).
fn claim_id(meta: &ObjectMeta) -> Option<&str> {
    let mut parts = meta.location.as_ref().rsplit('/');
    let id = parts.next()?;
    (parts.next()? == OWN).then_some(id)
}

fn age_ms(meta: &ObjectMeta) -> u64 {
    now_ms().saturating_sub(meta.last_modified.timestamp_millis().max(0) as u64)
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
            ancestor_object_ids: Vec::new(),
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

    async fn ready(c: &Catalog) {
        for _ in 0..500 {
            if c.claims_ready() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the claims backfill did not finish");
    }

    /// Entries filed before claims existed get theirs from the backfill
    /// (lookups read every entry until then); a lookup finds claims at the
    /// root, at an ancestor, at the location and below it, and none at a
    /// sibling that merely shares characters; odd segments (`..`, `@`)
    /// stay inside the claims directory; a released claim is gone, and a
    /// claim whose entry is missing counts for nothing.
    #[tokio::test]
    async fn claims_answer_overlap_by_location() {
        let dir = tempfile::tempdir().unwrap();
        let c = crate::core::open_local(dir.path()).await;
        let legacy = entry("0000000000001-aaaaaaaaaaaa", "old", "ab");
        let at_root = entry("0000000000006-ffffffffffff", "root", "./");
        for e in [&legacy, &at_root] {
            c.control
                .create(
                    crate::core::trash::records::KIND,
                    &e.trash_id,
                    e,
                    crate::error::Code::CONCURRENT_MODIFICATION,
                )
                .await
                .unwrap();
        }
        let inside = entry("0000000000002-bbbbbbbbbbbb", "in", "ab/t/deeper");
        let sibling = entry("0000000000003-cccccccccccc", "sib", "ab/tx");
        let exact = entry("0000000000004-dddddddddddd", "same", "ab/t");
        let odd = entry("0000000000007-abababababab", "odd", "ab/../@");
        for e in [&inside, &sibling, &exact, &odd] {
            c.file_trash(e).await.unwrap();
        }
        let want = keys(&[
            legacy.placed().unwrap(),
            at_root.placed().unwrap(),
            inside.placed().unwrap(),
            exact.placed().unwrap(),
        ]);
        // Before the backfill: every entry is read; the overlapping ones
        // among them are the same.
        let near = c.trash_placed_near(&["ab/t".into()]).await.unwrap();
        let overlapping: Vec<Placed> = near
            .into_iter()
            .filter(|p| p.location.overlaps(&"ab/t".into()))
            .collect();
        assert_eq!(keys(&overlapping), want);
        ready(&c).await;
        // After it: exactly the overlapping claims are found.
        let near = c.trash_placed_near(&["ab/t".into()]).await.unwrap();
        assert_eq!(keys(&near), want);
        let at: Vec<String> = c
            .trash_at(&"ab/t".into())
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.trash_id)
            .collect();
        assert_eq!(at, std::slice::from_ref(&exact.trash_id));
        // Every claim file lies inside the claims directory.
        let claims_dir = dir.path().join("_catalog/control/trash-claims-folded");
        let files: Vec<_> = walk(&claims_dir);
        assert_eq!(files.len(), 6, "{files:?}");
        let named_by_id: Vec<_> = walk(dir.path())
            .into_iter()
            .filter(|f| {
                f.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("000000")
            })
            .collect();
        assert!(
            named_by_id.iter().all(|f| f.starts_with(&claims_dir)),
            "{named_by_id:?}"
        );

        c.forget_trash(&exact).await.unwrap();
        assert!(c.trash_at(&"ab/t".into()).await.unwrap().is_empty());
        // A claim with no entry behind it (a crash between the two).
        let (store, claims) = c.claims_dir();
        let orphan = Catalog::claims_at(&claims, ["ab", "t"])
            .join(OWN)
            .join("0000000000005-eeeeeeeeeeee");
        store
            .put(&orphan, PutPayload::from(b"{}".to_vec()))
            .await
            .unwrap();
        let near = c.trash_placed_near(&["ab/t".into()]).await.unwrap();
        assert_eq!(
            keys(&near),
            keys(&[
                legacy.placed().unwrap(),
                at_root.placed().unwrap(),
                inside.placed().unwrap()
            ])
        );
        // A young orphan survives a backfill (a drop may be filing it).
        assert_eq!(c.backfill_claims().await.unwrap(), 0);
        assert!(store.head(&orphan).await.is_ok());
        // An old one goes, and only it: every entry's claim stays, and so
        // does a file in the claims directory that is not a claim.
        let stray = claims_dir.join("=ab").join("not-a-claim");
        std::fs::write(&stray, b"{}").unwrap();
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 3600);
        let orphan_file = walk(&claims_dir)
            .into_iter()
            .find(|f| f.ends_with("0000000000005-eeeeeeeeeeee"))
            .unwrap();
        for file in [orphan_file, stray.clone()] {
            std::fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(hour_ago)
                .unwrap();
        }
        let before = walk(&claims_dir).len();
        assert_eq!(c.backfill_claims().await.unwrap(), 0);
        assert!(
            store.head(&orphan).await.is_err(),
            "a stale orphan is removed"
        );
        assert!(stray.exists(), "only claims are removed");
        assert_eq!(walk(&claims_dir).len(), before - 1);
        // Every entry, when asked for everything.
        assert_eq!(c.trash_placed_near(&[]).await.unwrap().len(), 5);
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
        out
    }
}
