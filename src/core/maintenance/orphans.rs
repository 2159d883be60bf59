//! The orphan scan and reclaim of one table (see `api/orphans.rs`).
//!
//! The scan lists the table's location and reads every manifest there
//! (every retained version of every branch), adding what other tables
//! reach into it through base paths (shallow clones, [`ForeignRefs`]). It
//! names only files in the subtrees Lance manages and can judge; what the
//! table keeps for itself (refs, the version hint, markers, branch trees,
//! the memory WAL, fragment-reuse maps, an upload's staging parts) is
//! never named, and `_blobs/` or anything unrecognised is reported as
//! unverifiable. Reclaim scans again and deletes only what that scan still
//! names and is old enough, each file by the very path its listing gave.

use std::collections::{BTreeSet, HashMap};

use object_store::ObjectMeta;

use crate::api::orphans::{
    KeptFile, KeptReason, OrphanFile, OrphanReport, ReclaimResponse, MAX_RECLAIM_PATHS,
};
use crate::core::location::Location;
use crate::core::references::{key_of, list_and_read, relative, ForeignRefs, Listed, Refs};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// Lance's own threshold for a file no manifest names: younger, it may
/// belong to a write still in flight (`UNVERIFIED_THRESHOLD_DAYS`).
pub(crate) const MIN_AGE_S: u64 = 7 * 24 * 3600;

/// How the scan treats a path (relative to the table's location).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// The table's own bookkeeping: never named.
    Kept,
    /// A transaction file: named apart when unreferenced.
    Transaction,
    /// A file Lance manages and a manifest would name if it were live.
    Managed,
    /// Not judged: `_blobs/` (its descriptors are not read) and anything
    /// outside Lance's layout.
    Unverifiable,
    /// Reached through a symbolic link (the listing follows them): not
    /// the table's, never named as an orphan, never deleted.
    Linked,
}

fn class_of(rel: &str) -> Class {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts.last().copied().unwrap_or_default();
    // Staging: object_store's local multipart parts (`<name>#<n>`), Lance's
    // staged data files and parts, a rename commit's staged manifest.
    if name.contains('#') || name.ends_with(".lance-stage") {
        return Class::Kept;
    }
    match parts.as_slice() {
        ["_refs" | "_fri" | "tree" | "_mem_wal", ..] => Class::Kept,
        ["data", "_parts", ..] => Class::Kept,
        ["_versions", f] if f.contains(".manifest-") => Class::Kept,
        [".lance-reserved" | ".lance-deregistered"] => Class::Kept,
        ["_versions", "latest_version_hint.json"] => Class::Kept,
        ["_versions", f] if f.ends_with(".manifest") || f.starts_with(".tmp") => Class::Managed,
        ["_transactions", f] if f.ends_with(".txn") => Class::Transaction,
        ["data", f] if f.ends_with(".lance") => Class::Managed,
        ["data", _, f] if f.ends_with(".blob") => Class::Managed,
        ["_indices", _, ..] => Class::Managed,
        ["_deletions", f] if f.ends_with(".arrow") || f.ends_with(".bin") => Class::Managed,
        _ => Class::Unverifiable,
    }
}

/// One scan's findings, with the listing entries behind them.
struct OrphanPass {
    report: OrphanReport,
    /// Every listed file by its relative path.
    listed: HashMap<String, (ObjectMeta, Class, bool)>,
}

fn file_of(rel: &str, meta: &ObjectMeta, now: u64) -> OrphanFile {
    let modified = meta.last_modified.timestamp_millis().max(0) as u64;
    OrphanFile {
        path: rel.to_string(),
        size_bytes: meta.size,
        last_modified_ms: modified,
        maybe_in_flight: now.saturating_sub(modified) < MIN_AGE_S * 1000,
    }
}

impl Catalog {
    /// The orphan scan of table `id` (a report: nothing is written).
    pub async fn orphan_scan(
        &self,
        id: &[String],
        foreign: &ForeignRefs,
    ) -> CatalogResult<OrphanReport> {
        Ok(self.orphan_pass(id, foreign).await?.report)
    }

    async fn orphan_pass(&self, id: &[String], foreign: &ForeignRefs) -> CatalogResult<OrphanPass> {
        let location = self.relative_table_location(id).await?;
        if location.is_empty() {
            // A legacy record at the root: its "location" holds the
            // manifest, the catalog's records and every other table.
            return Err(CatalogError::new(
                Code::INVALID_TABLE_STATE,
                format!(
                    "table {} is recorded at the storage root, which holds every other table: an orphan scan of it cannot tell its files from theirs",
                    crate::core::checks::display_id(id)
                ),
            ));
        }
        // Tables recorded inside this one (legacy aliases, from before
        // locations could not overlap): their files are never this one's.
        let place = Location::new(&location);
        let nested: Vec<Location> = self
            .placed_tables_near(std::slice::from_ref(&place))
            .await?
            .into_iter()
            .filter_map(|p| p.location.below(&place))
            .collect();
        let (store, base) = self.location_store(&location).await?;
        let own = key_of(&self.location_uri(&location));
        let listed = list_and_read(&store, &base, &own, &[]).await?;
        let mut refs: Refs = listed.refs();
        let Listed { listing, manifests } = listed;
        refs.files.extend(foreign.refs.files.iter().cloned());
        refs.dirs.extend(foreign.refs.dirs.iter().cloned());
        let now = crate::records::now_ms();
        let mut report = OrphanReport {
            id: id.to_vec(),
            location: location.clone(),
            manifests_read: manifests.len() as u64,
            min_age_s: MIN_AGE_S,
            ..Default::default()
        };
        let mut branches: BTreeSet<String> = BTreeSet::new();
        for (m, _, _) in &manifests {
            if let Some(rest) = crate::core::references::below(&m.dataset_key, &own) {
                if let Some(name) = rest.strip_prefix("tree/") {
                    branches.insert(name.to_string());
                }
            }
        }
        report.branches = branches.into_iter().collect();
        report.clones = foreign.reaching(&own, std::slice::from_ref(&own));
        let mut listed = HashMap::new();
        let mut links = self.links();
        let mut symlinks = BTreeSet::new();
        for meta in listing {
            let rel = relative(&base, &meta.location);
            report.files_scanned += 1;
            report.bytes_scanned += meta.size;
            let link = links.first_link(&format!("{location}/{rel}")).map(|l| {
                l.strip_prefix(&format!("{location}/"))
                    .unwrap_or(&l)
                    .to_string()
            });
            let at = Location::new(&rel);
            let nested_here = nested.iter().any(|n| at.inside_or_at(n));
            let class = match (link, nested_here) {
                (Some(link), _) => {
                    symlinks.insert(link);
                    Class::Linked
                }
                (None, true) => Class::Kept,
                (None, false) => class_of(&rel),
            };
            let referenced = match class {
                Class::Managed | Class::Transaction => refs.covers(&format!("{own}/{rel}")),
                Class::Kept | Class::Unverifiable | Class::Linked => true,
            };
            let file = file_of(&rel, &meta, now);
            match class {
                Class::Managed if !referenced => {
                    report.orphan_bytes += meta.size;
                    report.orphans.push(file);
                }
                Class::Transaction if !referenced => {
                    report.orphan_bytes += meta.size;
                    report.transactions.push(file);
                }
                Class::Unverifiable => report.unverifiable.push(file),
                _ => {}
            }
            listed.insert(rel, (meta, class, referenced));
        }
        report.symlinks = symlinks.into_iter().collect();
        for list in [
            &mut report.orphans,
            &mut report.transactions,
            &mut report.unverifiable,
        ] {
            list.sort_by(|a, b| a.path.cmp(&b.path));
        }
        Ok(OrphanPass { report, listed })
    }

    /// Delete those of `paths` (relative to table `id`'s location) a fresh
    /// scan still names as orphans and that are old enough; answer, path
    /// by path, what was deleted and what kept and why.
    pub async fn reclaim(
        &self,
        id: &[String],
        paths: &[String],
        foreign: &ForeignRefs,
    ) -> CatalogResult<ReclaimResponse> {
        if paths.is_empty() {
            return Err(CatalogError::invalid(
                "a reclaim needs paths: the files an orphan scan named, relative to the table's location",
            ));
        }
        if paths.len() > MAX_RECLAIM_PATHS {
            return Err(CatalogError::invalid(format!(
                "a reclaim takes at most {MAX_RECLAIM_PATHS} paths, not {}",
                paths.len()
            )));
        }
        let scan = self.orphan_pass(id, foreign).await?;
        let (store, _) = self.location_store(&scan.report.location).await?;
        let now = crate::records::now_ms();
        let mut out = ReclaimResponse::default();
        let mut done = BTreeSet::new();
        for path in paths {
            if !done.insert(path.clone()) {
                continue;
            }
            let kept = |reason| KeptFile {
                path: path.clone(),
                reason,
            };
            if !plain_relative(path) {
                out.kept.push(kept(KeptReason::Invalid));
                continue;
            }
            let Some((meta, class, referenced)) = scan.listed.get(path) else {
                // A link to a directory is no object of the listing.
                let linked = self
                    .links()
                    .first_link(&format!("{}/{path}", scan.report.location))
                    .is_some();
                out.kept.push(kept(match linked {
                    true => KeptReason::SymbolicLink,
                    false => KeptReason::Missing,
                }));
                continue;
            };
            let file = file_of(path, meta, now);
            let reason = match class {
                Class::Linked => Some(KeptReason::SymbolicLink),
                Class::Kept | Class::Unverifiable => Some(KeptReason::Protected),
                _ if *referenced => Some(KeptReason::Referenced),
                _ if file.maybe_in_flight => Some(KeptReason::InFlight),
                _ => None,
            };
            if let Some(reason) = reason {
                out.kept.push(kept(reason));
                continue;
            }
            // Looked at again right before: a link put there since the scan
            // is not deleted through.
            if self
                .links()
                .first_link(&format!("{}/{path}", scan.report.location))
                .is_some()
            {
                out.kept.push(kept(KeptReason::SymbolicLink));
                continue;
            }
            // The listing's own path: inside the table's location by
            // construction, never one rebuilt from the caller's text.
            match store.delete(&meta.location).await {
                Ok(()) => {
                    tracing::info!(table = ?id, path = %path, bytes = meta.size, "reclaim deleted an orphan file");
                    out.bytes_deleted += meta.size;
                    out.deleted.push(file);
                }
                Err(e) if e.is_not_found() => out.kept.push(kept(KeptReason::Missing)),
                Err(e) => {
                    tracing::warn!(table = ?id, path = %path, error = %e, "reclaim could not delete a file");
                    out.kept.push(kept(KeptReason::Failed));
                }
            }
        }
        Ok(out)
    }
}

/// Whether a caller's path is a plain relative path: no empty, `.` or
/// `..` segment, not absolute, no backslash.
fn plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && path
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_s_own_bookkeeping_is_never_named() {
        for kept in [
            "_refs/tags/v1.json",
            "_refs/branches/b.json",
            "_versions/latest_version_hint.json",
            ".lance-reserved",
            ".lance-deregistered",
            "_fri/m/0.bin",
            "tree/b/_versions/1.manifest",
            "tree/b/data/x.lance",
            "_mem_wal/s/0.arrow",
            "data/x.lance#1",
            "data/x.lance-stage",
            "data/_parts/x.lance/0.part",
            "_versions/3.manifest-8d1f",
        ] {
            assert_eq!(class_of(kept), Class::Kept, "{kept}");
        }
        assert_eq!(class_of("_blobs/a/b.blob"), Class::Unverifiable);
        assert_eq!(class_of("notes.txt"), Class::Unverifiable);
        assert_eq!(class_of("data/x.parquet"), Class::Unverifiable);
        assert_eq!(class_of("_transactions/1-a.txn"), Class::Transaction);
        for managed in [
            "data/x.lance",
            "data/x/0001.blob",
            "_indices/u/index.idx",
            "_deletions/1-2-3.arrow",
            "_versions/3.manifest",
            "_versions/d5.manifest",
            "_versions/.tmp_3.manifest_abc",
        ] {
            assert_eq!(class_of(managed), Class::Managed, "{managed}");
        }
    }

    #[test]
    fn reclaim_takes_plain_relative_paths_only() {
        assert!(plain_relative("data/x.lance"));
        for bad in ["", "/data/x", "../x", "data/../x", "data//x", "./x", "a\\b"] {
            assert!(!plain_relative(bad), "{bad}");
        }
    }
}
