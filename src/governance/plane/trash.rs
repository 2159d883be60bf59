//! Recoverable drops: undrop, the trash listing and purge (`trash.rs` holds the rules).

use super::prelude::*;

impl Plane<'_> {
    pub(super) async fn undrop_table(
        &self,
        request: UndropTableRequest,
    ) -> CatalogResult<UndropTableResponse> {
        self.undrop_table_governed(self.call, request).await
    }

    pub(super) async fn undrop_namespace(
        &self,
        request: UndropNamespaceRequest,
    ) -> CatalogResult<UndropNamespaceResponse> {
        self.undrop_namespace_governed(self.call, request).await
    }

    pub(super) async fn list_trash(
        &self,
        request: ListTrashRequest,
    ) -> CatalogResult<ListTrashResponse> {
        self.list_trash_governed(self.call, request).await
    }

    pub(super) async fn purge_trash(
        &self,
        request: PurgeTrashRequest,
    ) -> CatalogResult<PurgeTrashResponse> {
        self.purge_trash_governed(self.call, request).await
    }
}
