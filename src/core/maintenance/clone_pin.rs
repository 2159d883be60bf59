//! The cleanup pre-pass: before any cleanup the catalog runs (a task,
//! submitted or scheduled), the versions a shallow clone's files need are
//! kept. Lance says itself it cannot protect files another dataset reaches
//! through base paths; without this, a cleanup of the source deletes them.

use std::collections::HashMap;

use crate::core::references::{below, key_of, list_and_read};
use crate::error::{CatalogError, CatalogResult};

impl crate::core::Catalog {
    /// What a cleanup of table `id` must respect before Lance deletes
    /// anything (`live.rs`): refused (19) when a symbolic link lies in
    /// the table's directory (Lance's cleanup lists through links and
    /// would delete what lies behind one, outside the root); else the
    /// shallow-clone pin ([`Self::clone_pin`]).
    pub(crate) async fn cleanup_prepass(&self, id: &[String]) -> CatalogResult<Option<u64>> {
        let location = self.relative_table_location(id).await?;
        if let Some(link) = self.links().first_link_below(&location) {
            return Err(CatalogError::new(
                crate::error::Code::INVALID_TABLE_STATE,
                format!(
                    "cleanup refused: {link:?} in the table's directory is a symbolic link, and Lance's cleanup would delete what lies behind it; remove the link first"
                ),
            ));
        }
        self.clone_pin(id).await
    }

    /// The cleanup pre-pass: the newest version of the table at `location`
    /// a cleanup must keep, and everything after it, so that every file
    /// another table reaches into it through base paths (a shallow clone)
    /// stays referenced by a retained version; none when no table does.
    /// Refused when a clone reads a file no version references any more:
    /// Lance's cleanup would delete it once it is a week old.
    pub(crate) async fn clone_pin(&self, id: &[String]) -> CatalogResult<Option<u64>> {
        let location = &self.relative_table_location(id).await?;
        let foreign = self
            .estate_refs(crate::core::live::Freshness::Recent)
            .await?;
        let own = key_of(&self.location_uri(location));
        let reached: Vec<&String> = foreign
            .refs
            .keys()
            // Branch trees are not the main line's to clean: Lance keeps a
            // branch's lineage itself, and a clone of a branch reads there.
            .filter(|k| below(k, &own).is_some_and(|rel| !rel.starts_with("tree/")))
            .collect();
        if reached.is_empty() {
            return Ok(None);
        }
        let (store, base) = self.location_store(location).await?;
        let listed = list_and_read(&store, &base, &own, &["_versions"]).await?;
        let mut newest: HashMap<&String, u64> = HashMap::new();
        for (_, version, refs) in &listed.manifests {
            for k in &reached {
                if refs.files.contains(*k) || refs.dirs.contains(*k) {
                    let v = newest.entry(k).or_insert(0);
                    *v = (*v).max(*version);
                }
            }
        }
        if let Some(lost) = reached.iter().find(|k| !newest.contains_key(*k)) {
            let clones: Vec<String> = foreign
                .reaching(&own, &[])
                .iter()
                .map(crate::core::live::table_ref_name)
                .collect();
            return Err(CatalogError::new(
                crate::error::Code::INVALID_TABLE_STATE,
                format!(
                    "cleanup refused: {} (a shallow clone) reads {:?}, which no retained version of this table references; Lance's cleanup would delete it",
                    clones.join(", "),
                    below(lost, &own).unwrap_or(lost)
                ),
            ));
        }
        Ok(newest.values().min().copied())
    }
}
