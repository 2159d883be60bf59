//! RenameTable: a new name and/or another namespace of the same root. The
//! table keeps its directory, so data, versions, tags and properties come
//! along; only the catalog's record moves, in one atomic manifest commit.

use lance_namespace::models::{RenameTableRequest, RenameTableResponse};

use crate::core::checks::{display_id, namespace_id, table_id};
use crate::core::manifest_tx::with_object_id;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn rename_table_op(
        &self,
        req: RenameTableRequest,
    ) -> CatalogResult<RenameTableResponse> {
        let id = table_id(&req.id)?;
        let dest_ns = match &req.new_namespace_id {
            Some(ns) => namespace_id(&Some(ns.clone()))?,
            None => id[..id.len() - 1].to_vec(),
        };
        let mut dest = dest_ns.clone();
        dest.push(req.new_table_name.clone());
        let dest = table_id(&Some(dest))?;
        if dest == id {
            return Err(CatalogError::invalid(format!(
                "table {} already has that name",
                display_id(&id)
            )));
        }
        // The source existed when the request arrived: if it is gone once
        // this request holds the lock, another change won the race (14).
        self.require_table(&id).await?;
        self.require_namespace(&dest_ns).await?;

        let (old_key, new_key) = (
            crate::core::checks::manifest_key(&id),
            crate::core::checks::manifest_key(&dest),
        );
        // A commit refused by a concurrent one (another replica's write or
        // manifest upkeep) is checked and tried again on the newer snapshot.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let held = self.hold_manifest().await;
            let ds = self.manifest_snapshot().await?;
            let taken = self
                .manifest_rows(&ds, std::slice::from_ref(&new_key))
                .await?;
            if !taken.is_empty() {
                return Err(crate::core::checks::table_already_exists(&dest));
            }
            let rows = self
                .manifest_rows(&ds, std::slice::from_ref(&old_key))
                .await?;
            let Some(row) = rows.first().filter(|b| b.num_rows() == 1) else {
                return Err(CatalogError::new(
                    Code::CONCURRENT_MODIFICATION,
                    format!(
                        "table {} was renamed or dropped by a concurrent request",
                        display_id(&id)
                    ),
                ));
            };
            let moved = with_object_id(row, new_key.clone())?;
            match self
                .manifest_apply(
                    &held,
                    ds,
                    vec![moved],
                    std::slice::from_ref(&old_key),
                    false,
                )
                .await
            {
                Ok(()) => break,
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < 5 => {
                    drop(held);
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(RenameTableResponse::default())
    }
}
