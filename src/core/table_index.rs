//! Every table of the manifest, sorted, kept for one manifest version (see
//! `meta_cache.rs`): a page of `list_tables` or `list_all_tables` is then a
//! binary search and a slice, so it costs the same at 100,000 tables as at
//! 100, where the engine scans and sorts the whole manifest for each page.
//! Built with one scan of the manifest's ids when its version changes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{Array, StringArray};
use futures::TryStreamExt;
use lance_namespace::models::ListTablesResponse;

use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult};

/// The manifest's tables: per namespace (by its `$`-joined key, `""` for
/// the root) the sorted table names, and every reachable table's full key.
#[derive(Debug, Default)]
pub(crate) struct TableIndex {
    by_namespace: HashMap<String, Vec<String>>,
    all: Vec<String>,
}

impl TableIndex {
    /// From the manifest's `(object_id, object_type)` rows.
    fn build(rows: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut namespaces = HashSet::new();
        let mut tables = Vec::new();
        for (id, kind) in rows {
            match kind.as_str() {
                "namespace" => {
                    namespaces.insert(id);
                }
                "table" => tables.push(id),
                _ => {}
            }
        }
        let mut by_namespace: HashMap<String, Vec<String>> = HashMap::new();
        let mut all = Vec::new();
        for key in tables {
            let (parent, name) = match key.rsplit_once('$') {
                Some((parent, name)) => (parent.to_string(), name.to_string()),
                None => (String::new(), key.clone()),
            };
            // Reachable from the root: every ancestor namespace stands, as
            // a walk of the tree would find it.
            let reachable = ancestors(&parent).all(|a| namespaces.contains(a));
            by_namespace.entry(parent).or_default().push(name);
            if reachable {
                all.push(key);
            }
        }
        for names in by_namespace.values_mut() {
            names.sort();
        }
        all.sort();
        Self { by_namespace, all }
    }

    /// A page of namespace `ns`'s tables (names).
    pub(crate) fn tables_of(
        &self,
        ns: &[String],
        page_token: Option<&str>,
        limit: Option<i32>,
    ) -> CatalogResult<ListTablesResponse> {
        let names = self
            .by_namespace
            .get(&crate::core::checks::manifest_key(ns))
            .map(Vec::as_slice)
            .unwrap_or_default();
        page(names, page_token, limit)
    }

    /// A page of every table, as full keys.
    pub(crate) fn all_tables(
        &self,
        page_token: Option<&str>,
        limit: Option<i32>,
    ) -> CatalogResult<ListTablesResponse> {
        page(&self.all, page_token, limit)
    }
}

/// `a$b$c` -> `a`, `a$b`, `a$b$c`; nothing for the root.
fn ancestors(ns: &str) -> impl Iterator<Item = &str> {
    let ends = ns
        .match_indices('$')
        .map(|(i, _)| i)
        .chain((!ns.is_empty()).then_some(ns.len()));
    ends.map(move |end| &ns[..end])
}

/// A page of `sorted` names, by the one paging rule (`api::page`, the
/// spec's sizes: everything without a `limit`).
fn page(
    sorted: &[String],
    page_token: Option<&str>,
    limit: Option<i32>,
) -> CatalogResult<ListTablesResponse> {
    let (tables, page_token) =
        crate::api::page::page(sorted, page_token, limit, crate::api::page::SPEC)?;
    Ok(ListTablesResponse {
        tables,
        page_token,
        ..Default::default()
    })
}

impl Catalog {
    /// The table index of the manifest as it is now.
    pub(crate) async fn table_index(&self) -> CatalogResult<Arc<TableIndex>> {
        self.cached("\u{0}table_index".to_string(), async {
            let ds = self.current_manifest().await?;
            let mut scan = ds.scan();
            scan.project(&["object_id", "object_type"])?;
            let batches: Vec<arrow_array::RecordBatch> =
                scan.try_into_stream().await?.try_collect().await?;
            let mut rows = Vec::new();
            for batch in &batches {
                let column = |name: &str| {
                    batch
                        .column_by_name(name)
                        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                        .ok_or_else(|| {
                            CatalogError::internal(format!(
                                "the manifest's {name} column is not a string column"
                            ))
                        })
                };
                let (ids, kinds) = (column("object_id")?, column("object_type")?);
                for i in 0..batch.num_rows() {
                    if ids.is_valid(i) && kinds.is_valid(i) {
                        rows.push((ids.value(i).to_string(), kinds.value(i).to_string()));
                    }
                }
            }
            Ok(Arc::new(TableIndex::build(rows)))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> TableIndex {
        let rows = [
            ("a", "namespace"),
            ("a$b", "namespace"),
            ("a$t2", "table"),
            ("a$t1", "table"),
            ("a$b$t", "table"),
            ("top", "table"),
            ("gone$t", "table"),
        ];
        TableIndex::build(rows.iter().map(|(i, k)| (i.to_string(), k.to_string())))
    }

    #[test]
    fn pages_follow_the_engine() {
        let idx = index();
        let a = vec!["a".to_string()];
        let p = idx.tables_of(&a, None, Some(1)).unwrap();
        assert_eq!(p.tables, vec!["t1"]);
        assert_eq!(p.page_token.as_deref(), Some("t1"));
        let p = idx.tables_of(&a, Some("t1"), Some(1)).unwrap();
        assert_eq!((p.tables, p.page_token), (vec!["t2".to_string()], None));
        assert_eq!(idx.tables_of(&a, None, Some(0)).unwrap().tables.len(), 0);
        assert_eq!(idx.tables_of(&[], None, None).unwrap().tables, vec!["top"]);
        // Not reachable: its namespace is gone.
        assert_eq!(
            idx.all_tables(None, None).unwrap().tables,
            vec!["a$b$t", "a$t1", "a$t2", "top"]
        );
    }
}
