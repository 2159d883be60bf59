//! Authorizing a control-plane operation: on a control-plane resource, or
//! on one table or namespace (protection, undrop, pending tasks) routed
//! and authorized as the spec's operations are.

use crate::api::call::Call;
use crate::api::OpDef;
use crate::auth::Principal;
use crate::error::CatalogResult;
use crate::governance::guard::{Access, Kind};
use crate::governance::Governance;

impl Governance {
    /// Authorize the caller for `action` on a control-plane resource.
    pub(in crate::governance) async fn control(
        &self,
        call: &Call,
        action: &'static OpDef,
        kind: Kind,
        id: Vec<String>,
    ) -> CatalogResult<Access> {
        self.control_at(call, action, kind, id, None).await
    }

    /// The same, for a namespace or table of `warehouse`.
    pub(in crate::governance) async fn control_at(
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

    /// Whether the caller could do `action` on a resource (for filtering
    /// lists), without failing.
    pub(in crate::governance) async fn may(
        &self,
        principal: &Option<Principal>,
        action: &'static OpDef,
        kind: Kind,
        id: Vec<String>,
    ) -> bool {
        let warehouse = (kind == Kind::Warehouse).then(|| id.first().cloned().unwrap_or_default());
        let access = Access {
            principal: principal.clone(),
            action,
            warehouse,
            kind,
            id,
            ..Default::default()
        };
        self.allowed(&access).await.unwrap_or(false)
    }

    /// A principal may act on its own keys; anything else is the server
    /// admin's.
    pub(in crate::governance) async fn own_or_admin(
        &self,
        call: &Call,
        action: &'static OpDef,
        owner: Option<&str>,
    ) -> CatalogResult<Option<Principal>> {
        let caller = self.caller(call).await?;
        let own = match (&caller, owner) {
            (Some(c), Some(o)) => c.id == o,
            _ => false,
        };
        if !own {
            self.control(call, action, Kind::Server, vec![]).await?;
        }
        Ok(caller)
    }
}
