//! Real object ids: every table and namespace carries a real id in its
//! properties ([`TABLE_ID`], [`NAMESPACE_ID`]), given when it is created
//! and kept through renames (the manifest row moves), trash and undrop
//! (the trash entry keeps the properties). A name is only where an object
//! stands now; the id is which object it is. The governance layer binds
//! grants to it, maintenance tasks are kept under it.
//!
//! A create takes the id the governance layer minted for it (request
//! context [`OBJECT_ID`], so the creator's ownership names that very
//! object), or mints one. Objects made before ids existed, or by a plain
//! Lance client beside the catalog, get one from [`Catalog::ensure_object_ids`]
//! (the governance layer runs it when it opens a warehouse) or when a grant
//! first names them. Reads never give ids.

use std::collections::HashMap;

use crate::core::checks::manifest_key;
use crate::core::manifest_tx::{literal, row_object_id, row_properties, row_type, single_rows};
use crate::core::reserved::{NAMESPACE_ID, OBJECT_ID, TABLE_ID};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// The property holding the real id of an object of `kind` (`table` or
/// `namespace`).
pub fn id_property(kind: &str) -> &'static str {
    match kind {
        "table" => TABLE_ID,
        _ => NAMESPACE_ID,
    }
}

/// A fresh real id.
pub fn fresh_object_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A name for a writer of leases and intents: the host (a pod's name
/// under Kubernetes), the process id and a random part, so a restarted
/// replica (or a second worker pool in one process) never takes another's
/// lease for its own.
pub fn fresh_replica_name() -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "replica".into());
    format!("{host}-{}-{}", std::process::id(), &fresh_object_id()[..8])
}

/// This process as the writer of create intents (one name for its life).
pub fn replica_name() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(fresh_replica_name)
}

/// Whether `id` has the shape of a real id (the catalog mints 32 hex
/// digits; anything else in a context is ignored).
fn well_formed(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The real id a new object gets: the one minted for it upstream (the
/// request context's [`OBJECT_ID`]), else a fresh one.
pub(crate) fn new_object_id(context: Option<&HashMap<String, String>>) -> String {
    context
        .and_then(|c| c.get(OBJECT_ID))
        .filter(|v| well_formed(v))
        .cloned()
        .unwrap_or_else(fresh_object_id)
}

/// Give a new object's properties its real id (`id`); an id they hold
/// already (an object kept across an overwrite) stays.
pub(crate) fn stamp(props: &mut Option<HashMap<String, String>>, kind: &str, id: String) {
    props
        .get_or_insert_with(HashMap::new)
        .entry(id_property(kind).to_string())
        .or_insert(id);
}

impl Catalog {
    /// The real ids of the objects standing at `wanted` (kind, id) now, in
    /// order: `None` where nothing of that kind stands, or it has no id
    /// yet. Kept per manifest version (one lookup for every miss).
    pub async fn object_ids(
        &self,
        wanted: &[(&str, Vec<String>)],
    ) -> CatalogResult<Vec<Option<String>>> {
        let keys: Vec<String> = wanted
            .iter()
            .map(|(kind, id)| format!("object_id\u{0}{kind}\u{0}{}", manifest_key(id)))
            .collect();
        let ds = self.current_manifest().await?;
        let (kept, ticket) = self.kept_at::<Option<String>>(&ds, &keys);
        let mut out = vec![None; wanted.len()];
        let mut misses = Vec::new();
        for (i, hit) in kept.into_iter().enumerate() {
            match hit {
                Some(real) => out[i] = real,
                None if wanted[i].1.is_empty() => {}
                None => misses.push(i),
            }
        }
        if misses.is_empty() {
            return Ok(out);
        }
        let lookup: Vec<String> = misses.iter().map(|i| manifest_key(&wanted[*i].1)).collect();
        let rows = self.manifest_rows(&ds, &lookup).await?;
        let mut found: HashMap<(String, String), Option<String>> = HashMap::new();
        for row in single_rows(&rows) {
            if let (Some(key), Some(kind)) = (row_object_id(&row), row_type(&row)) {
                let real = row_properties(&row)?.get(id_property(&kind)).cloned();
                found.insert((kind, key), real);
            }
        }
        // What the rows read tell of each key's existence, kept as
        // `kinds_at` keeps it: the door's and the core's checks of the
        // same key then read nothing more.
        for key in &lookup {
            let kinds: Vec<String> = found
                .keys()
                .filter(|(_, k)| k == key)
                .map(|(kind, _)| kind.clone())
                .collect();
            let row = [key.clone()];
            self.cache_put_from(crate::core::meta_cache::kinds_key(key), ticket, kinds, &row);
        }
        for i in misses {
            let (kind, id) = &wanted[i];
            let real = found
                .get(&(kind.to_string(), manifest_key(id)))
                .cloned()
                .flatten();
            self.cache_put_from(keys[i].clone(), ticket, real.clone(), &[manifest_key(id)]);
            out[i] = real;
        }
        Ok(out)
    }

    /// The real id of the object standing at `id`, given now when it has
    /// none (a write: only for doors that record something). 4 or 1 when
    /// nothing of `kind` stands there.
    pub async fn assign_object_id(&self, kind: &str, id: &[String]) -> CatalogResult<String> {
        let kind_id = [(kind, id.to_vec())];
        if let Some(real) = self.object_ids(&kind_id).await?.remove(0) {
            return Ok(real);
        }
        let missing = || match kind {
            "table" => crate::core::checks::table_not_found(id),
            _ => crate::core::checks::missing_namespace(id),
        };
        let fresh = fresh_object_id();
        // Two replicas giving one at once: one commit wins, the other,
        // retried, keeps the winner's.
        self.update_properties(&manifest_key(id), kind, missing, |p| {
            p.entry(id_property(kind).to_string())
                .or_insert_with(|| fresh.clone());
        })
        .await?;
        self.object_ids(&kind_id)
            .await?
            .remove(0)
            .ok_or_else(missing)
    }

    /// Give every table and namespace that has no real id one, in one
    /// manifest commit; answers how many. Safe to run on every replica at
    /// once: a lost commit is tried again on a fresh snapshot.
    pub async fn ensure_object_ids(&self) -> CatalogResult<usize> {
        use futures::TryStreamExt;
        for attempt in 1..=5u64 {
            let held = self.hold_manifest().await;
            let ds = self.manifest_snapshot().await?;
            let mut scan = ds.scan();
            // Rows that certainly hold their id are left out by the filter;
            // the rest are checked one by one.
            scan.filter(&format!(
                "object_id <> '' AND (metadata IS NULL OR (object_type = 'table' AND metadata NOT LIKE {}) OR (object_type = 'namespace' AND metadata NOT LIKE {}))",
                literal(&format!("%\"{TABLE_ID}\":%")),
                literal(&format!("%\"{NAMESPACE_ID}\":%")),
            ))?;
            let batches: Vec<arrow_array::RecordBatch> =
                scan.try_into_stream().await?.try_collect().await?;
            let mut rows = Vec::new();
            for row in single_rows(&batches) {
                let Some(kind) = row_type(&row).filter(|k| k == "table" || k == "namespace") else {
                    continue;
                };
                if row_properties(&row)?.contains_key(id_property(&kind)) {
                    continue;
                }
                rows.push(crate::core::manifest_tx::with_properties(&row, |p| {
                    p.insert(id_property(&kind).to_string(), fresh_object_id());
                })?);
            }
            let n = rows.len();
            if n == 0 {
                return Ok(0);
            }
            match self.manifest_apply(&held, ds, rows, &[], true).await {
                Ok(()) => return Ok(n),
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < 5 => {
                    drop(held);
                    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(CatalogError::new(
            Code::CONCURRENT_MODIFICATION,
            "giving objects their ids kept losing to other writers",
        ))
    }

    /// The real ids of namespace `id` and of everything below it.
    pub async fn subtree_object_ids(&self, id: &[String]) -> CatalogResult<Vec<String>> {
        if id.is_empty() {
            return Ok(Vec::new());
        }
        let ds = self.current_manifest().await?;
        let mut out = Vec::new();
        for row in self.subtree_rows(&ds, id).await? {
            if let Some(kind) = row_type(&row) {
                if let Some(real) = row_properties(&row)?.get(id_property(&kind)) {
                    out.push(real.clone());
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lance_namespace::models::CreateNamespaceRequest;
    use lance_namespace::LanceNamespace;

    /// Objects made without an id (by the engine alone, as a plain Lance
    /// client beside the catalog would) get one, once; reads give none.
    #[tokio::test]
    async fn objects_without_an_id_get_one_once() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(&crate::core::StorageConfig {
            root: dir.path().to_string_lossy().into_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
        for id in [vec!["a".to_string()], vec!["b".to_string()]] {
            catalog
                .inner()
                .await
                .unwrap()
                .create_namespace(CreateNamespaceRequest {
                    id: Some(id),
                    ..Default::default()
                })
                .await
                .unwrap();
        }
        let wanted = [
            ("namespace", vec!["a".to_string()]),
            ("namespace", vec!["b".to_string()]),
        ];
        assert_eq!(catalog.object_ids(&wanted).await.unwrap(), vec![None, None]);
        assert_eq!(catalog.ensure_object_ids().await.unwrap(), 2);
        let given = catalog.object_ids(&wanted).await.unwrap();
        assert!(
            given.iter().all(|g| g.as_deref().is_some_and(well_formed)),
            "{given:?}"
        );
        assert_ne!(given[0], given[1]);
        assert_eq!(catalog.ensure_object_ids().await.unwrap(), 0);
        assert_eq!(catalog.object_ids(&wanted).await.unwrap(), given);
        // The catalog's own creates mint one at once.
        catalog
            .create_namespace(CreateNamespaceRequest {
                id: Some(vec!["c".to_string()]),
                ..Default::default()
            })
            .await
            .unwrap();
        let c = catalog
            .object_ids(&[("namespace", vec!["c".to_string()])])
            .await
            .unwrap();
        assert!(c[0].is_some());
    }

    #[test]
    fn a_minted_id_is_taken_only_when_well_formed() {
        let minted = fresh_object_id();
        let ctx = HashMap::from([(OBJECT_ID.to_string(), minted.clone())]);
        assert_eq!(new_object_id(Some(&ctx)), minted);
        let forged = HashMap::from([(OBJECT_ID.to_string(), "../x".to_string())]);
        assert_ne!(new_object_id(Some(&forged)), "../x");
        let mut props = Some(HashMap::from([(TABLE_ID.to_string(), "kept".to_string())]));
        stamp(&mut props, "table", minted);
        assert_eq!(props.unwrap()[TABLE_ID], "kept");
    }
}
