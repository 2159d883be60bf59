//! What the live set (`core/live.rs`) needs from above the core: the
//! references of every table of the estate, other warehouses' too, since a
//! shallow clone may live in another. The governance layer installs the
//! source on each catalog it opens; a catalog on its own sees only its own
//! tables.

use std::sync::Arc;

use crate::core::live::Freshness;
use crate::core::references::ForeignRefs;
use crate::core::Catalog;
use crate::error::CatalogResult;

/// Every table's references outside its own location, estate-wide.
#[async_trait::async_trait]
pub trait EstateRefs: Send + Sync {
    /// None: not available (yet); the catalog falls back to its own tables.
    async fn foreign_refs(&self, fresh: Freshness) -> CatalogResult<Option<ForeignRefs>>;
}

impl Catalog {
    /// Install the estate's references (the first call wins).
    pub fn set_estate_refs(&self, source: Arc<dyn EstateRefs>) {
        let _ = self.estate.set(source);
    }
}
