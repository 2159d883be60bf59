//! Deletion protection of one table or namespace, routed and authorized as the spec's operations are.

use super::prelude::*;

impl Plane<'_> {
    pub(super) async fn set_table_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let (route, access) = self
            .object_route(self.call, &op::SetTableProtection, &request.id)
            .await?;
        let done = route.catalog.set_protection("table", request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    pub(super) async fn set_namespace_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let (route, access) = self
            .object_route(self.call, &op::SetNamespaceProtection, &request.id)
            .await?;
        let done = route.catalog.set_protection("namespace", request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }
}
