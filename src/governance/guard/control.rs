//! Authorizing a control-plane operation: on a control-plane resource, or
//! on one table or namespace (protection, undrop, pending tasks) routed
//! and authorized as the spec's operations are.

use crate::api::call::Call;
use crate::api::OpDef;
use crate::error::CatalogResult;
use crate::governance::guard::{Access, Kind};
use crate::governance::Governance;

impl Governance {
    /// Authorize the caller for `action` on a control-plane resource.
    pub(super) async fn control(
        &self,
        call: &Call,
        action: &'static OpDef,
        kind: Kind,
        id: Vec<String>,
    ) -> CatalogResult<Access> {
        self.control_at(call, action, kind, id, None).await
    }

    /// The same, for a namespace or table of `warehouse`.
    pub(super) async fn control_at(
        &self,
        call: &Call,
        action: &'static OpDef,
        kind: Kind,
        id: Vec<String>,
        warehouse: Option<String>,
    ) -> CatalogResult<Access> {
        let principal = self.caller(call).await?;
        let warehouse = match kind {
            Kind::Warehouse => id.first().cloned(),
            _ => warehouse,
        };
        let access = Access {
            principal,
            action,
            warehouse,
            kind,
            id,
            request_id: call.request_id.clone(),
            ..Default::default()
        };
        self.authorize(&access).await?;
        Ok(access)
    }
}
