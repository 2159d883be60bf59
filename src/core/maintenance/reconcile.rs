//! What the storage root holds that the catalog's records do not account
//! for: directories no table owns (a create killed mid-write, a dropped
//! table whose bytes could not be removed, data put there by hand) and
//! tables whose location holds no dataset. Reported, never deleted: only an
//! operator can tell a crash leftover from data someone still wants.

use object_store::path::Path;
use serde::Serialize;

use crate::core::checks::manifest_id;
use crate::core::live::Freshness;
use crate::core::location::Location;
use crate::core::references::key_of;
use crate::core::table::locations::is_reserved;
use crate::core::{engine, Catalog};
use crate::error::CatalogResult;

/// How deep below the root the scan follows directories that lead to
/// registered tables (`warehouse/sales/orders.lance`).
const MAX_DEPTH: usize = 16;

/// The reconciler's report.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Reconciliation {
    /// Paths under the root, relative to it, that no table's location covers.
    pub orphans: Vec<Orphan>,
    /// Tables whose location holds no Lance dataset: declared and never
    /// written, registered at an empty location, or whose data is gone.
    pub without_data: Vec<TableWithoutData>,
}

/// A path under the root that no table owns.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Orphan {
    pub location: String,
    /// Whether it holds a Lance dataset (a `_versions/` directory): the
    /// signature of a create that never got recorded.
    pub dataset: bool,
    /// Whether it is a symbolic link: never followed, never removed.
    pub symlink: bool,
}

/// A recorded table whose location holds no dataset.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TableWithoutData {
    pub table: Vec<String>,
    pub location: String,
}

impl Catalog {
    /// Compare the storage root with what is live (`live.rs`, read now):
    /// a path is unowned when no table, trashed table or create's intent
    /// claims it or a directory it lies in, and no table of the estate
    /// reads there or keeps a base path over it. Links are never followed.
    pub async fn reconcile(&self) -> CatalogResult<Reconciliation> {
        let tables = self.placed_tables().await?;
        // Tables, trashed tables and creates in flight claim locations
        // alike. A stale intent's create died: its bytes are a leftover,
        // reported here and removed by the sweep (the repair leaves them
        // to it).
        let mut claims: Vec<Location> = tables.iter().map(|t| t.location.clone()).collect();
        let now = crate::records::now_ms();
        claims.extend(
            self.create_intents()
                .await?
                .into_iter()
                .filter(|(_, i)| !crate::core::table::intents::stale(i, now))
                .map(|(_, i)| Location::new(&i.location)),
        );
        let refs = self.estate_refs(Freshness::Now).await?;
        let root_key = key_of(&self.location_uri(""));
        let live = |rel: &str| refs.in_footprint(&key_of(&self.location_uri(rel)), &root_key);
        let mut links = self.links();
        let (store, base) = self.location_store("").await?;
        let mut report = Reconciliation::default();
        let mut pending = vec![(String::new(), base.clone(), 0usize)];
        while let Some((rel, path, depth)) = pending.pop() {
            let listed = engine(store.list_with_delimiter(Some(&path)).await)?;
            for file in &listed.objects {
                let Some(name) = file.location.filename() else {
                    continue;
                };
                let child = join(&rel, name);
                if owned(&child, &claims) || live(&child) {
                    continue;
                }
                report.orphans.push(Orphan {
                    symlink: links.first_link(&child).is_some(),
                    location: child,
                    dataset: false,
                });
            }
            for dir in &listed.common_prefixes {
                let Some(name) = dir.filename() else { continue };
                let child = join(&rel, name);
                if rel.is_empty() && is_reserved(name) {
                    continue;
                }
                if owned(&child, &claims) {
                    continue;
                }
                if links.first_link(&child).is_some() {
                    report.orphans.push(Orphan {
                        location: child,
                        dataset: false,
                        symlink: true,
                    });
                    continue;
                }
                let leads_to_claim = claims.iter().any(|c| c.overlaps(&Location::new(&child)));
                if leads_to_claim && depth < MAX_DEPTH {
                    pending.push((child, dir.clone(), depth + 1));
                } else if live(&child) {
                    // A table reads there (a clone of a deregistered
                    // table, a multi-base table's data): live as a whole.
                    continue;
                } else {
                    let dataset = self.holds_dataset(&child).await?;
                    report.orphans.push(Orphan {
                        location: child,
                        dataset,
                        symlink: false,
                    });
                }
            }
        }
        // A trashed location is claimed (not an orphan) but not a table.
        for t in tables
            .iter()
            .filter(|t| !crate::core::trash::records::is_trash_key(&t.key))
        {
            if !t.location.is_root() && !self.holds_dataset(t.location.as_str()).await? {
                report.without_data.push(TableWithoutData {
                    table: manifest_id(&t.key),
                    location: t.location.to_string(),
                });
            }
        }
        report.orphans.sort_by(|a, b| a.location.cmp(&b.location));
        report.without_data.sort_by(|a, b| a.table.cmp(&b.table));
        Ok(report)
    }

    /// Whether a directory under the root holds a Lance dataset.
    pub(crate) async fn holds_dataset(&self, relative: &str) -> CatalogResult<bool> {
        use futures::TryStreamExt;
        let (store, path) = self.location_store(relative).await?;
        let versions: Path = path.clone().join("_versions");
        Ok(engine(store.list(Some(versions)).try_next().await)?.is_some())
    }
}

/// Whether a claimed location is `path` or one of its ancestors.
fn owned(path: &str, claims: &[Location]) -> bool {
    let path = Location::new(path);
    claims.iter().any(|c| path.inside_or_at(c))
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ownership_is_by_ancestor() {
        let tables = vec![Location::new("w/t")];
        assert!(owned("w/t", &tables));
        assert!(owned("w/t/data", &tables));
        assert!(!owned("w", &tables));
        assert!(!owned("w/u", &tables));
    }
}
