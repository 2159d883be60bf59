//! Deletion protection of one table or namespace, routed and authorized as the spec's operations are.

use super::prelude::*;
use crate::governance::guard::entry::Admitted;
use crate::governance::guard::request::Named;

impl Plane<'_> {
    pub(super) async fn set_table_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let named = Named::called(self.call, &request.id);
        self.call(
            &op::SetTableProtection,
            named,
            async |a: &mut Admitted, _| a.route.catalog.set_protection("table", request).await,
        )
        .await
    }

    pub(super) async fn set_namespace_protection(
        &self,
        request: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let named = Named::called(self.call, &request.id);
        self.call(
            &op::SetNamespaceProtection,
            named,
            async |a: &mut Admitted, _| a.route.catalog.set_protection("namespace", request).await,
        )
        .await
    }
}
