//! Every table of the manifest, sorted, kept for one manifest version (see
//! `meta_cache.rs`): a page of `list_tables` or `list_all_tables` is then a
//! binary search and a slice, so it costs the same at 100,000 tables as at
//! 100, where the engine scans and sorts the whole manifest for each page.
//!
//! When the manifest's version changes the index follows it by its delta:
//! the manifest is a Lance table, and a fragment whose metadata (files,
//! deletion file) is unchanged holds the same rows, so only new or changed
//! fragments are read, and their rows patched into the index. A write
//! (one new fragment, or a deletion in one) then costs a small read, not a
//! scan and a sort of every table. A namespace created or dropped, or a
//! large delta (a compaction), rebuilds the index from the kept rows.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{Array, StringArray, UInt64Array};
use futures::TryStreamExt;
use lance::Dataset;
use lance_namespace::models::ListTablesResponse;
use lance_table::format::Fragment;

use super::Catalog;
use crate::error::{CatalogError, CatalogResult};

/// A manifest row the index needs: its object id, and whether it is a
/// namespace (else a table).
type Row = (Arc<str>, bool);

/// The manifest's tables: per namespace (by its `$`-joined key, `""` for
/// the root) the sorted table names, and every reachable table's full key.
#[derive(Debug, Default, Clone)]
pub(crate) struct TableIndex {
    namespaces: Arc<HashSet<Arc<str>>>,
    by_namespace: HashMap<String, Arc<Vec<Arc<str>>>>,
    all: Arc<Vec<Arc<str>>>,
}

/// More changed rows than this and the index is rebuilt, not patched (each
/// patch is a shift of a sorted list).
const MAX_PATCH: usize = 64;

fn split(key: &str) -> (&str, &str) {
    key.rsplit_once('$').unwrap_or(("", key))
}

/// Insert into, or remove one occurrence from, a sorted list.
fn insert_sorted(list: &mut Vec<Arc<str>>, item: Arc<str>) {
    let at = list.partition_point(|n| **n <= *item);
    list.insert(at, item);
}

fn remove_sorted(list: &mut Vec<Arc<str>>, item: &str) {
    if let Ok(at) = list.binary_search_by(|n| (**n).cmp(item)) {
        list.remove(at);
    }
}

impl TableIndex {
    /// From the manifest's namespace and table rows.
    fn build<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Self {
        let mut namespaces = HashSet::new();
        let mut tables = Vec::new();
        for (id, namespace) in rows {
            match namespace {
                true => namespaces.insert(id.clone()),
                false => {
                    tables.push(id.clone());
                    true
                }
            };
        }
        let mut index = TableIndex {
            namespaces: Arc::new(namespaces),
            ..Default::default()
        };
        let mut by_namespace: HashMap<String, Vec<Arc<str>>> = HashMap::new();
        let mut all = Vec::new();
        for key in tables {
            let (parent, name) = split(&key);
            by_namespace
                .entry(parent.to_string())
                .or_default()
                .push(Arc::from(name));
            if index.reachable(parent) {
                all.push(key.clone());
            }
        }
        for (ns, mut names) in by_namespace {
            names.sort();
            index.by_namespace.insert(ns, Arc::new(names));
        }
        all.sort();
        index.all = Arc::new(all);
        index
    }

    /// Reachable from the root: every ancestor namespace stands, as a walk
    /// of the tree would find it.
    fn reachable(&self, parent: &str) -> bool {
        ancestors(parent).all(|a| self.namespaces.contains(a))
    }

    /// This index with rows `removed` and `added`; None when a namespace
    /// that has tables beneath it came or went (what is reachable changes:
    /// rebuild).
    fn patch(&self, removed: &[&Row], added: &[&Row]) -> Option<TableIndex> {
        let mut next = self.clone();
        let namespaces = removed.iter().map(|r| (r, false));
        let namespaces = namespaces.chain(added.iter().map(|r| (r, true)));
        for ((ns, _), present) in namespaces.filter(|((_, is_ns), _)| *is_ns) {
            let beneath = |k: &String| {
                k.as_str() == &**ns || k.strip_prefix(&**ns).is_some_and(|r| r.starts_with('$'))
            };
            if self
                .by_namespace
                .iter()
                .any(|(k, names)| !names.is_empty() && beneath(k))
            {
                return None;
            }
            let set = Arc::make_mut(&mut next.namespaces);
            match present {
                true => set.insert(ns.clone()),
                false => set.remove(&**ns),
            };
        }
        for (key, _) in removed.iter().filter(|(_, is_ns)| !is_ns) {
            let (parent, name) = split(key);
            if let Some(names) = next.by_namespace.get_mut(parent) {
                remove_sorted(Arc::make_mut(names), name);
            }
            if next.reachable(parent) {
                remove_sorted(Arc::make_mut(&mut next.all), key);
            }
        }
        for (key, _) in added.iter().filter(|(_, is_ns)| !is_ns) {
            let (parent, name) = split(key);
            let names = next.by_namespace.entry(parent.to_string()).or_default();
            insert_sorted(Arc::make_mut(names), Arc::from(name));
            if next.reachable(parent) {
                insert_sorted(Arc::make_mut(&mut next.all), key.clone());
            }
        }
        Some(next)
    }

    /// A page of namespace `ns`'s tables (names).
    pub(crate) fn tables_of(
        &self,
        ns: &[String],
        page_token: Option<&str>,
        limit: Option<i32>,
    ) -> ListTablesResponse {
        let names = self
            .by_namespace
            .get(&super::checks::manifest_key(ns))
            .map(|n| n.as_slice())
            .unwrap_or_default();
        page(names, page_token, limit)
    }

    /// A page of every table, as full keys.
    pub(crate) fn all_tables(
        &self,
        page_token: Option<&str>,
        limit: Option<i32>,
    ) -> ListTablesResponse {
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

/// The engine's paging, on a sorted list: start after the token (the last
/// name of the previous page), at most `limit` names (all without one), and
/// a token when more follow.
fn page(sorted: &[Arc<str>], page_token: Option<&str>, limit: Option<i32>) -> ListTablesResponse {
    let start = match page_token.filter(|t| !t.is_empty()) {
        Some(token) => sorted.partition_point(|n| **n <= *token),
        None => 0,
    };
    let rest = &sorted[start..];
    let owned = |names: &[Arc<str>]| names.iter().map(|n| n.to_string()).collect();
    let (tables, page_token) = match limit.and_then(|l| usize::try_from(l).ok()) {
        Some(limit) if rest.len() > limit => {
            let token = (limit > 0).then(|| rest[limit - 1].to_string());
            (owned(&rest[..limit]), token)
        }
        _ => (owned(rest), None),
    };
    ListTablesResponse {
        tables,
        page_token,
        ..Default::default()
    }
}

/// An index and what it was built from: each manifest fragment (its
/// metadata changes when any of its rows does) with its live rows.
#[derive(Debug, Default)]
pub(crate) struct Indexed {
    version: u64,
    fragments: HashMap<u64, (Fragment, Arc<Vec<Row>>)>,
    index: Arc<TableIndex>,
}

impl Indexed {
    /// The index of manifest `ds`, from `before` (an earlier version's)
    /// by its delta when there is one.
    async fn follow(before: Option<&Indexed>, ds: &Dataset) -> CatalogResult<Indexed> {
        let mut fragments = HashMap::new();
        let mut stale = Vec::new();
        for f in ds.fragments().iter() {
            match before.and_then(|b| b.fragments.get(&f.id)) {
                Some((old, rows)) if old == f => {
                    fragments.insert(f.id, (f.clone(), rows.clone()));
                }
                _ => stale.push(f.clone()),
            }
        }
        let whole = before.is_none() || fragments.is_empty();
        let mut read = match (stale.is_empty(), whole) {
            (true, _) => HashMap::new(),
            (false, true) => rows_by_fragment(ds, None).await?,
            (false, false) => rows_by_fragment(ds, Some(stale.clone())).await?,
        };
        for f in &stale {
            let rows = Arc::new(read.remove(&f.id).unwrap_or_default());
            fragments.insert(f.id, (f.clone(), rows));
        }
        let patched = before.filter(|_| !whole).and_then(|b| {
            // Rows of fragments gone or changed, and of the new ones.
            let removed: Vec<&Row> = b
                .fragments
                .iter()
                .filter(|(id, (old, _))| fragments.get(*id).is_none_or(|(new, _)| new != old))
                .flat_map(|(_, (_, rows))| rows.iter())
                .collect();
            let added: Vec<&Row> = stale
                .iter()
                .flat_map(|f| fragments[&f.id].1.iter())
                .collect();
            (removed.len() + added.len() <= MAX_PATCH)
                .then(|| b.index.patch(&removed, &added))
                .flatten()
        });
        let index = match patched {
            Some(index) => index,
            None => TableIndex::build(fragments.values().flat_map(|(_, rows)| rows.iter())),
        };
        Ok(Indexed {
            version: ds.version().version,
            fragments,
            index: Arc::new(index),
        })
    }
}

/// The namespace and table rows of the manifest (or of `only` its
/// fragments), by fragment.
async fn rows_by_fragment(
    ds: &Dataset,
    only: Option<Vec<Fragment>>,
) -> CatalogResult<HashMap<u64, Vec<Row>>> {
    let mut scan = ds.scan();
    scan.project(&["object_id", "object_type"])?;
    scan.with_row_address();
    if let Some(fragments) = only {
        scan.with_fragments(fragments);
    }
    let batches: Vec<arrow_array::RecordBatch> =
        scan.try_into_stream().await?.try_collect().await?;
    let mut rows: HashMap<u64, Vec<Row>> = HashMap::new();
    for batch in &batches {
        let column = |name: &str| {
            batch.column_by_name(name).ok_or_else(|| {
                CatalogError::internal(format!("the manifest scan has no {name} column"))
            })
        };
        let strings = |name: &str| {
            column(name)?
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(|| {
                    CatalogError::internal(format!(
                        "the manifest's {name} column is not a string column"
                    ))
                })
        };
        let (ids, kinds) = (strings("object_id")?, strings("object_type")?);
        // Lance's name for the row address column (lance_core::ROW_ADDR).
        let addresses = column("_rowaddr")?
            .as_any()
            .downcast_ref::<UInt64Array>()
            .ok_or_else(|| CatalogError::internal("the manifest's row addresses are not u64"))?;
        for i in 0..batch.num_rows() {
            if !(ids.is_valid(i) && kinds.is_valid(i)) {
                continue;
            }
            let namespace = match kinds.value(i) {
                "namespace" => true,
                "table" => false,
                _ => continue,
            };
            // A row address is its fragment id and its offset in it.
            let fragment = addresses.value(i) >> 32;
            rows.entry(fragment)
                .or_default()
                .push((Arc::from(ids.value(i)), namespace));
        }
    }
    Ok(rows)
}

impl Catalog {
    /// The table index of the manifest as it is now.
    pub(crate) async fn table_index(&self) -> CatalogResult<Arc<TableIndex>> {
        self.cached("\u{0}table_index".to_string(), async {
            let ds = self.current_manifest().await?;
            let before = self.meta.indexed();
            let version = ds.version().version;
            if let Some(b) = before.as_ref().filter(|b| b.version == version) {
                return Ok(b.index.clone());
            }
            let next = Arc::new(Indexed::follow(before.as_deref(), &ds).await?);
            self.meta
                .keep_indexed(next.clone(), |held| held.version < version);
            Ok(next.index.clone())
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
        let rows: Vec<Row> = rows
            .iter()
            .map(|(i, k)| (Arc::from(*i), *k == "namespace"))
            .collect();
        TableIndex::build(rows.iter())
    }

    fn rows(list: &[(&str, bool)]) -> Vec<Row> {
        list.iter().map(|(i, n)| (Arc::from(*i), *n)).collect()
    }

    /// Every page the index can answer, to compare two indexes.
    fn pages(idx: &TableIndex) -> Vec<Vec<String>> {
        let mut out = vec![idx.all_tables(None, None).tables];
        for ns in [vec![], vec!["a".to_string()], vec!["a".into(), "b".into()]] {
            out.push(idx.tables_of(&ns, None, None).tables);
            out.push(idx.tables_of(&ns, Some("t1"), Some(1)).tables);
        }
        out.push(idx.tables_of(&["gone".to_string()], None, None).tables);
        out
    }

    #[test]
    fn a_patch_answers_as_a_rebuild() {
        let before = rows(&[
            ("a", true),
            ("a$b", true),
            ("a$t2", false),
            ("a$t1", false),
            ("a$b$t", false),
            ("top", false),
            ("gone$t", false),
        ]);
        let idx = TableIndex::build(before.iter());
        let removed = rows(&[("a$t2", false), ("gone$t", false)]);
        let added = rows(&[
            ("a$t0", false),
            ("a$t3", false),
            ("a$b$s", false),
            ("gone$u", false),
            ("aa", false),
        ]);
        let patched = idx
            .patch(
                &removed.iter().collect::<Vec<_>>(),
                &added.iter().collect::<Vec<_>>(),
            )
            .unwrap();
        let after: Vec<Row> = before
            .iter()
            .filter(|r| !removed.contains(r))
            .chain(added.iter())
            .cloned()
            .collect();
        assert_eq!(pages(&patched), pages(&TableIndex::build(after.iter())));
        assert_eq!(
            patched.tables_of(&["a".to_string()], None, None).tables,
            vec!["t0", "t1", "t3"]
        );
        // A namespace with tables beneath it changes what is reachable:
        // rebuilt instead. One with none is patched in.
        let ns = rows(&[("gone", true)]);
        assert!(idx.patch(&[], &ns.iter().collect::<Vec<_>>()).is_none());
        let ns = rows(&[("new", true)]);
        let more = rows(&[("new$t", false)]);
        let both: Vec<&Row> = ns.iter().chain(more.iter()).collect();
        let patched = idx.patch(&[], &both).unwrap();
        assert_eq!(
            patched.tables_of(&["new".to_string()], None, None).tables,
            vec!["t"]
        );
        assert!(patched
            .all_tables(None, None)
            .tables
            .contains(&"new$t".to_string()));
        let dropped = idx.patch(&ns.iter().collect::<Vec<_>>(), &[]).unwrap();
        assert_eq!(pages(&dropped), pages(&idx));
    }

    /// Rows as the manifest holds them, written to a Lance dataset.
    async fn write(uri: &str, list: &[(&str, &str)], append: bool) -> Dataset {
        use arrow_array::RecordBatchIterator;
        let ids: Vec<&str> = list.iter().map(|(i, _)| *i).collect();
        let kinds: Vec<&str> = list.iter().map(|(_, k)| *k).collect();
        let batch = arrow_array::RecordBatch::try_from_iter([
            ("object_id", Arc::new(StringArray::from(ids)) as _),
            ("object_type", Arc::new(StringArray::from(kinds)) as _),
        ])
        .unwrap();
        let schema = batch.schema();
        let reader = RecordBatchIterator::new([Ok(batch)], schema);
        let params = lance::dataset::WriteParams {
            mode: match append {
                true => lance::dataset::WriteMode::Append,
                false => lance::dataset::WriteMode::Create,
            },
            ..Default::default()
        };
        Dataset::write(reader, uri, Some(params)).await.unwrap()
    }

    /// Followed by its delta, the index answers as one built afresh.
    #[tokio::test]
    async fn the_index_follows_the_manifest_by_its_delta() {
        let dir = tempfile::tempdir().unwrap();
        let uri = dir.path().join("m.lance").to_string_lossy().to_string();
        let ds = write(
            &uri,
            &[("a", "namespace"), ("a$t1", "table"), ("top", "table")],
            false,
        )
        .await;
        let one = Indexed::follow(None, &ds).await.unwrap();
        let ds = write(
            &uri,
            &[("a$t0", "table"), ("a$b", "namespace"), ("a$b$t", "table")],
            true,
        )
        .await;
        let two = Indexed::follow(Some(&one), &ds).await.unwrap();
        let fresh = Indexed::follow(None, &ds).await.unwrap();
        assert_eq!(pages(&two.index), pages(&fresh.index));
        assert_eq!(
            two.index.all_tables(None, None).tables,
            vec!["a$b$t", "a$t0", "a$t1", "top"]
        );
        let ds = write(&uri, &[("a$t5", "table")], true).await;
        let three = Indexed::follow(Some(&two), &ds).await.unwrap();
        let mut ds = ds;
        ds.delete("object_id = 'a$t1'").await.unwrap();
        let four = Indexed::follow(Some(&three), &ds).await.unwrap();
        let fresh = Indexed::follow(None, &ds).await.unwrap();
        assert_eq!(pages(&four.index), pages(&fresh.index));
        assert_eq!(
            four.index.tables_of(&["a".to_string()], None, None).tables,
            vec!["t0", "t5"]
        );
        // Only the changed fragments were read again: the others' rows are
        // the very ones kept before.
        let kept = |i: &Indexed, id: u64| i.fragments[&id].1.clone();
        assert!(Arc::ptr_eq(&kept(&three, 1), &kept(&four, 1)));
    }

    #[test]
    fn pages_follow_the_engine() {
        let idx = index();
        let a = vec!["a".to_string()];
        let p = idx.tables_of(&a, None, Some(1));
        assert_eq!(p.tables, vec!["t1"]);
        assert_eq!(p.page_token.as_deref(), Some("t1"));
        let p = idx.tables_of(&a, Some("t1"), Some(1));
        assert_eq!((p.tables, p.page_token), (vec!["t2".to_string()], None));
        assert_eq!(idx.tables_of(&a, None, Some(0)).tables.len(), 0);
        assert_eq!(idx.tables_of(&[], None, None).tables, vec!["top"]);
        // Not reachable: its namespace is gone.
        assert_eq!(
            idx.all_tables(None, None).tables,
            vec!["a$b$t", "a$t1", "a$t2", "top"]
        );
    }
}
