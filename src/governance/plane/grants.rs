//! Grants: created, listed and revoked by the rules of `granting.rs`, bound to real ids.

use super::prelude::*;

impl Plane<'_> {
    pub(super) async fn create_grant(&self, request: CreateGrantRequest) -> CatalogResult<Grant> {
        self.create_grant_governed(self.call, request).await
    }

    pub(super) async fn list_grants(
        &self,
        request: ListGrantsRequest,
    ) -> CatalogResult<ListGrantsResponse> {
        self.list_grants_governed(self.call, request).await
    }

    pub(super) async fn revoke_grant(
        &self,
        request: RevokeGrantRequest,
    ) -> CatalogResult<RevokeGrantResponse> {
        self.revoke_grant_governed(self.call, request).await
    }
}
