//! Index health of a table (see `api/health.rs`), read from its latest
//! manifest alone: each index's segments say which fragments they cover,
//! and the fragments their rows. Nothing is opened but the manifest and
//! the index list, and nothing is written (Lance's own statistics may
//! migrate old index metadata, a commit; this never does).

use lance::index::DatasetIndexExt;
use lance::Dataset;

use crate::api::health::{IndexHealth, IndexHealthEntry, MAX_SEGMENTS};
use crate::core::{engine, Catalog};
use crate::error::{CatalogResult, Code};

/// A fragment's rows, deleted ones not counted.
fn live_rows(f: &lance_table::format::Fragment) -> u64 {
    let rows = f.physical_rows.unwrap_or(0) as u64;
    let deleted = f
        .deletion_file
        .as_ref()
        .and_then(|d| d.num_deleted_rows)
        .unwrap_or(0) as u64;
    rows.saturating_sub(deleted)
}

/// The health of every user index of `ds` (the engine's own, named
/// `__…`, are not the table's).
pub(crate) async fn health_of(id: &[String], ds: &Dataset) -> CatalogResult<IndexHealth> {
    let fragments = &ds.manifest.fragments;
    let mut by_name: Vec<(String, Vec<lance_table::format::IndexMetadata>)> = Vec::new();
    for index in engine(ds.load_indices().await)?.iter() {
        if index.name.starts_with("__") {
            continue;
        }
        match by_name.iter_mut().find(|(n, _)| *n == index.name) {
            Some((_, segments)) => segments.push(index.clone()),
            None => by_name.push((index.name.clone(), vec![index.clone()])),
        }
    }
    let mut indices = Vec::new();
    for (name, segments) in by_name {
        let coverage_unknown = segments.iter().any(|s| s.fragment_bitmap.is_none());
        let covers = |fragment: u64| {
            let Ok(fragment) = u32::try_from(fragment) else {
                return false;
            };
            segments.iter().any(|s| {
                s.fragment_bitmap
                    .as_ref()
                    .is_some_and(|b| b.contains(fragment))
            })
        };
        let (mut covered, mut unindexed, mut unindexed_rows) = (0, 0, 0);
        for f in fragments.iter() {
            match covers(f.id) {
                true => covered += 1,
                false => {
                    unindexed += 1;
                    unindexed_rows += live_rows(f);
                }
            }
        }
        let columns = segments[0]
            .fields
            .iter()
            .filter(|f| !segments[0].covering_fields.contains(f))
            .map(|f| {
                ds.schema()
                    .field_path(*f)
                    .unwrap_or_else(|_| format!("#{f}"))
            })
            .collect();
        let count = segments.len() as u64;
        indices.push(IndexHealthEntry {
            name,
            columns,
            segments: count,
            fragments_covered: covered,
            fragments_unindexed: unindexed,
            unindexed_rows,
            coverage_unknown,
            // Fragments that do not say their rows count as unindexed too.
            optimize_due: unindexed > 0 || count > MAX_SEGMENTS,
        });
    }
    indices.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(IndexHealth {
        id: id.to_vec(),
        version: ds.version().version,
        fragments: fragments.len() as u64,
        rows: fragments.iter().map(live_rows).sum(),
        optimize_due: indices.iter().any(|i| i.optimize_due),
        indices,
    })
}

impl Catalog {
    /// Table `id`'s index health at its latest version; a declared table
    /// with no data has none of either.
    pub(crate) async fn index_health(&self, id: &[String]) -> CatalogResult<IndexHealth> {
        let location = self.table_location(id).await?;
        match self.open_at(id, &location, None).await {
            Ok(ds) => health_of(id, &ds).await,
            Err(e) if e.code == Code::TABLE_NOT_FOUND && self.table_present(id).await? => {
                Ok(IndexHealth {
                    id: id.to_vec(),
                    ..Default::default()
                })
            }
            Err(e) => Err(e),
        }
    }
}
