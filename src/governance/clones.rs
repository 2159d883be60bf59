//! What every table of every warehouse reaches outside its own location
//! (shallow clones' base paths): the orphan scan, reclaim and a cleanup's
//! pre-pass count those files as referenced. All warehouses are read, since
//! a clone may live in another; one that cannot be read fails the call, as
//! a scan that missed a clone would name files that clone still reads.

use std::sync::{Arc, OnceLock, Weak};

use super::{Governance, DEFAULT_WAREHOUSE};
use crate::core::{EstateRefs, ForeignRefs, Freshness};
use crate::error::{CatalogError, CatalogResult, Code};

/// The estate's references as every catalog's cleanup pre-pass reads them
/// (installed on each catalog the layer opens), once the layer is shared
/// (`attach`): a worker's cleanup in one warehouse sees a clone in another.
#[derive(Default)]
pub(super) struct EstateHook {
    gov: OnceLock<Weak<Governance>>,
}

impl EstateHook {
    pub(super) fn attach(&self, gov: &Arc<Governance>) {
        let _ = self.gov.set(Arc::downgrade(gov));
    }
}

#[async_trait::async_trait]
impl EstateRefs for EstateHook {
    async fn foreign_refs(&self, fresh: Freshness) -> CatalogResult<Option<ForeignRefs>> {
        match self.gov.get().and_then(Weak::upgrade) {
            Some(gov) => gov.foreign_refs_as(fresh).await.map(Some),
            None => Ok(None),
        }
    }
}

impl Governance {
    /// The catalog of every warehouse the registry holds, and the built-in
    /// one, whether this server routes to them or not (`--warehouses`):
    /// what reads across the estate (a clone's references, the objects a
    /// record may name) must see all of it. One that cannot be opened
    /// fails the call (503, 17) naming `purpose`, since missing it would
    /// make its tables look absent.
    pub(super) async fn estate_catalogs(
        &self,
        purpose: &str,
    ) -> CatalogResult<Vec<(String, Arc<crate::Catalog>)>> {
        let mut ids = vec![DEFAULT_WAREHOUSE.to_string()];
        for w in self.registry.all_warehouses(None).await? {
            ids.push(w.warehouse_id);
        }
        let mut out = Vec::new();
        for warehouse in ids {
            let catalog = self.catalog(&warehouse).await.map_err(|e| {
                CatalogError::new(
                    Code::SERVICE_UNAVAILABLE,
                    format!(
                        "warehouse {warehouse:?} could not be read ({}); {purpose} needs every warehouse",
                        e.message
                    ),
                )
            })?;
            out.push((warehouse, catalog));
        }
        Ok(out)
    }

    /// Every table's references outside its own location, estate-wide,
    /// read now (reports, repairs, reclaim).
    pub async fn foreign_refs(&self) -> CatalogResult<ForeignRefs> {
        self.foreign_refs_as(Freshness::Now).await
    }

    /// [`Self::foreign_refs`], each table's as recent as `fresh` asks.
    pub async fn foreign_refs_as(&self, fresh: Freshness) -> CatalogResult<ForeignRefs> {
        let mut refs = ForeignRefs::default();
        for (_, catalog) in self
            .estate_catalogs("what is live (an orphan scan, a cleanup, a deletion)")
            .await?
        {
            catalog.collect_foreign_refs(&mut refs, fresh).await?;
        }
        Ok(refs)
    }
}
