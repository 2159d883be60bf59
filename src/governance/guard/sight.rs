//! The caller an entry hands to its operation: who it is, and what the
//! rules let it see and do. Only the guard room makes one (after
//! authenticating the call), so an operation outside the room asks a rule
//! only as a caller that entered, and always about that caller.

use crate::api::call::Call;
use crate::api::kind::Kind;
use crate::api::OpDef;
use crate::auth::Principal;
use crate::error::{CatalogError, CatalogResult};
use crate::governance::guard::Access;
use crate::governance::Governance;

/// An authenticated caller, as an entry hands it on.
pub(in crate::governance) struct Sight<'g> {
    gov: &'g Governance,
    pub(super) principal: Option<Principal>,
    request_id: Option<String>,
}

impl<'g> Sight<'g> {
    /// Authenticate `call` (identity leads the guard order).
    pub(super) async fn enter(gov: &'g Governance, call: &Call) -> CatalogResult<Self> {
        Ok(Sight {
            gov,
            principal: gov.caller(call).await?,
            request_id: call.request_id.clone(),
        })
    }

    /// The caller an admission found.
    pub(super) fn of(gov: &'g Governance, access: &Access) -> Self {
        Sight {
            gov,
            principal: access.principal.clone(),
            request_id: access.request_id.clone(),
        }
    }

    /// Who calls (`None` when authentication is off).
    pub(in crate::governance) fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// Whether the caller goes by `name`.
    pub(in crate::governance) fn is(&self, name: &str) -> bool {
        self.principal.as_ref().is_some_and(|p| p.id == name)
    }

    /// This caller's access of `action` on `kind` `id` (a warehouse is its
    /// own scope); the operation fills in the rest.
    pub(in crate::governance) fn access(
        &self,
        action: &'static OpDef,
        kind: Kind,
        id: Vec<String>,
    ) -> Access {
        Access {
            principal: self.principal.clone(),
            action,
            warehouse: (kind == Kind::Warehouse).then(|| id.first().cloned().unwrap_or_default()),
            kind,
            id,
            request_id: self.request_id.clone(),
            ..Default::default()
        }
    }

    /// `access` as this caller's, whoever it named.
    fn own(&self, access: &Access) -> Access {
        Access {
            principal: self.principal.clone(),
            request_id: self.request_id.clone(),
            ..access.clone()
        }
    }

    /// Whether the caller may do `action` on a control-plane resource
    /// (filtering a list), unaudited.
    pub(in crate::governance) async fn may(
        &self,
        action: &'static OpDef,
        kind: Kind,
        id: Vec<String>,
    ) -> bool {
        self.allows(&self.access(action, kind, id))
            .await
            .unwrap_or(false)
    }

    /// Whether the caller may see (describe) the namespace or table `id`
    /// of `warehouse`, unaudited.
    pub(in crate::governance) async fn sees(
        &self,
        kind: Kind,
        warehouse: &str,
        id: Vec<String>,
    ) -> CatalogResult<bool> {
        self.gov.may_see(&self.principal, kind, warehouse, id).await
    }

    /// Whether the caller may do what `access` asks, unaudited.
    pub(in crate::governance) async fn allows(&self, access: &Access) -> CatalogResult<bool> {
        self.gov.allowed(&self.own(access)).await
    }

    /// Refuse (audited) unless the caller may do what `access` asks.
    pub(in crate::governance) async fn require(&self, access: &Access) -> CatalogResult<()> {
        self.gov.authorize(&self.own(access)).await
    }

    /// A missing parent or object, told only to a caller who may see
    /// where it would be (`probe_kind` `probe_id`); anyone else gets the
    /// refusal `access` would get were it there.
    pub(in crate::governance) async fn hidden(
        &self,
        missing: CatalogError,
        access: &Access,
        probe_kind: Kind,
        probe_id: Vec<String>,
    ) -> CatalogError {
        self.gov
            .hidden(missing, &self.own(access), probe_kind, probe_id)
            .await
    }

    /// Something missing that only whoever may do `action` on every such
    /// thing (on the server) is told of; anyone else is refused.
    pub(in crate::governance) async fn told_to_admin(
        &self,
        missing: CatalogError,
        action: &'static OpDef,
    ) -> CatalogError {
        match self
            .require(&self.access(action, Kind::Server, vec![]))
            .await
        {
            Err(e) => e,
            Ok(()) => missing,
        }
    }

    /// A principal acts on what is its own (`owner`, by name); anything
    /// else is the server admin's.
    pub(in crate::governance) async fn own_or_admin(
        &self,
        action: &'static OpDef,
        owner: Option<&str>,
    ) -> CatalogResult<()> {
        match owner.is_some_and(|o| self.is(o)) {
            true => Ok(()),
            false => {
                self.require(&self.access(action, Kind::Server, vec![]))
                    .await
            }
        }
    }
}
