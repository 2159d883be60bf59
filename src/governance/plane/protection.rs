//! Deletion protection of one table or namespace, routed and authorized as the spec's operations are.

use super::prelude::*;
use crate::governance::guard::request::Named;

impl Plane<'_> {
    pub(super) async fn set_table_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let (route, access) = self
            .admit(
                &op::SetTableProtection,
                &mut Named::called(self.call, &request.id),
            )
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
            .admit(
                &op::SetNamespaceProtection,
                &mut Named::called(self.call, &request.id),
            )
            .await?;
        let done = route.catalog.set_protection("namespace", request).await?;
        self.succeeded(&access).await;
        Ok(done)
    }
}
