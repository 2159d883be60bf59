//! The one entry: how a transport's request and a control-plane operation
//! reach the rules. Each runs admission (identity, shape, parent,
//! authorization), then the operation, then finish (the creator's
//! ownership, what the write did to grants, its event), in that order and
//! once:
//!
//! - [`Governance::call`]: a spec request, or a table or namespace named by
//!   a control-plane operation, routed to its warehouse's catalog;
//! - [`Governance::call_then`]: the same, with a step after finish (the
//!   credentials `vending.rs` hands with a table: the write is recorded
//!   even if none can be made);
//! - their twins in `kept.rs`, for a change its caller names by an
//!   `Idempotency-Key`;
//! - [`Governance::call_control`]: a control-plane resource (the server, a
//!   project, a warehouse);
//! - [`Governance::call_on`]: an access whose object its operation finds
//!   itself (a grant's object, a trash entry, a trashed table);
//! - [`Governance::call_own`]: a write on what is the caller's own (its
//!   password, its keys), or the server admin's;
//! - [`Governance::call_list`]: a spec list, showing what the caller may see;
//! - [`Governance::call_as`]: a control-plane read (lists, information)
//!   that shows each caller what it may see.
//!
//! Each hands its operation the caller ([`Sight`]): the only way outside
//! the guard room to ask a rule, and only about that caller.
//!
//! The run sees what admission found ([`Admitted`]) and may record what
//! only the write knows: what it created ([`Access::made`]), or that a
//! drop into trash ended nothing.

use crate::api::call::Call;
use crate::api::OpDef;
use crate::error::{CatalogError, CatalogResult};
use crate::governance::guard::request::SpecRequest;
use crate::governance::guard::sight::Sight;
use crate::governance::guard::{Access, Kind};
use crate::governance::{Governance, Route};

/// An admitted call: the catalog it was routed to and the access that was
/// authorized.
pub(in crate::governance) struct Admitted {
    pub route: Route,
    pub access: Access,
}

impl Admitted {
    /// The admitted caller.
    pub(in crate::governance) fn sight<'g>(&self, gov: &'g Governance) -> Sight<'g> {
        Sight::of(gov, &self.access)
    }
}

/// An admitted list: the catalog it was routed to, its caller, and
/// whether that caller may list the whole parent (else it sees the
/// children it may describe).
pub(in crate::governance) struct Listing<'g> {
    pub route: Route,
    pub sight: Sight<'g>,
    pub whole: bool,
}

impl Access {
    /// What a control-plane create made (known once the write returns):
    /// its creator owns it when the call finishes.
    pub(in crate::governance) fn made(&mut self, kind: Kind, id: &str) {
        self.kind = kind;
        self.id = vec![id.to_string()];
        self.warehouse = (kind == Kind::Warehouse).then(|| id.to_string());
        self.creates = true;
    }

    /// A create of what stood makes no owner.
    pub(in crate::governance) fn made_nothing(&mut self) {
        self.creates = false;
        self.minted.clear();
    }

    /// A drop that moved its object into trash ended nothing: its grants
    /// stay with it (its owner is who may undrop it) until it is purged.
    pub(in crate::governance) fn kept_in_trash(&mut self) {
        self.ended.clear();
    }
}

impl Governance {
    /// Admit `request` for `op`, run it on its warehouse's catalog, finish.
    pub(in crate::governance) async fn call<R: SpecRequest, T: 'static>(
        &self,
        op: &'static OpDef,
        request: R,
        run: impl AsyncFnOnce(&mut Admitted, R) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        self.call_then(op, request, run, async |_, _| Ok(())).await
    }

    /// [`Governance::call`] with a step after finish that may still fail
    /// (credentials handed with an answer whose write is recorded).
    pub(in crate::governance) async fn call_then<R: SpecRequest, T: 'static>(
        &self,
        op: &'static OpDef,
        request: R,
        run: impl AsyncFnOnce(&mut Admitted, R) -> CatalogResult<T>,
        then: impl AsyncFnOnce(&Admitted, &mut T) -> CatalogResult<()>,
    ) -> CatalogResult<T> {
        if request.idempotency_key().is_some() && op.replayable() {
            // Every change a caller may key comes in through `kept.rs`:
            // one that reached here would be done again on a retry.
            return Err(CatalogError::internal(format!(
                "{op} reached the catalog by a path that keeps no Idempotency-Key"
            )));
        }
        let (admitted, mut answer) = self.admit_run_finish(op, request, run).await?;
        then(&admitted, &mut answer).await?;
        Ok(answer)
    }

    /// Admit, run, finish: the steps every spec entry shares.
    pub(super) async fn admit_run_finish<R: SpecRequest, T: 'static>(
        &self,
        op: &'static OpDef,
        mut request: R,
        run: impl AsyncFnOnce(&mut Admitted, R) -> CatalogResult<T>,
    ) -> CatalogResult<(Admitted, T)> {
        let (route, access) = self.admit(op, &mut request).await?;
        let mut admitted = Admitted { route, access };
        let answer = run(&mut admitted, request).await?;
        admitted.access.version = made_version(&answer);
        self.finish(&admitted.access).await;
        Ok((admitted, answer))
    }

    /// Admit `op` on a control-plane resource (`kind` and `id`; a
    /// warehouse is its own scope), run it, finish.
    pub(in crate::governance) async fn call_control<T>(
        &self,
        call: &Call,
        op: &'static OpDef,
        kind: Kind,
        id: Vec<String>,
        run: impl AsyncFnOnce(&mut Access) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        let mut access = Sight::enter(self, call).await?.access(op, kind, id);
        self.authorize(&access).await?;
        let answer = run(&mut access).await?;
        self.finish(&access).await;
        Ok(answer)
    }

    /// Authenticate the caller, let the operation find what it acts on
    /// (`resolve`: its own checks, a missing object told only to whoever
    /// may know; it answers the access and what it found for the write),
    /// authorize that access as the caller's, run it, finish.
    pub(in crate::governance) async fn call_on<F, T>(
        &self,
        call: &Call,
        resolve: impl AsyncFnOnce(&Sight<'_>) -> CatalogResult<(Access, F)>,
        run: impl AsyncFnOnce(&mut Access, F, &Sight<'_>) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        let sight = Sight::enter(self, call).await?;
        let (mut access, found) = resolve(&sight).await?;
        access.principal = sight.principal().cloned();
        access.request_id = access.request_id.or_else(|| call.request_id.clone());
        self.authorize(&access).await?;
        let answer = run(&mut access, found, &sight).await?;
        self.finish(&access).await;
        Ok(answer)
    }

    /// A write on what is the caller's own (`owner`, by name), or, for
    /// anyone else, the server admin's: run it, finish.
    pub(in crate::governance) async fn call_own<T>(
        &self,
        call: &Call,
        op: &'static OpDef,
        owner: Option<&str>,
        run: impl AsyncFnOnce(&mut Access, &Sight<'_>) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        let sight = Sight::enter(self, call).await?;
        sight.own_or_admin(op, owner).await?;
        let mut access = sight.access(op, Kind::Server, vec![]);
        let answer = run(&mut access, &sight).await?;
        self.finish(&access).await;
        Ok(answer)
    }

    /// Admit a spec list (identity, route, whether the caller may list
    /// the whole parent) and run it; a list records nothing.
    pub(in crate::governance) async fn call_list<R: SpecRequest, T>(
        &self,
        op: &'static OpDef,
        request: R,
        run: impl AsyncFnOnce(Listing<'_>, R) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        let (route, principal, whole) = self.admit_list(op, &request).await?;
        let access = Access {
            principal,
            request_id: request.request_id().map(str::to_string),
            ..Default::default()
        };
        let sight = Sight::of(self, &access);
        run(
            Listing {
                route,
                sight,
                whole,
            },
            request,
        )
        .await
    }

    /// Authenticate a control-plane call and run it as that caller: a
    /// read, showing what its caller may see, records nothing; a write
    /// inside it goes through a door of its own.
    pub(in crate::governance) async fn call_as<T>(
        &self,
        call: &Call,
        run: impl AsyncFnOnce(&Sight<'_>) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        let sight = Sight::enter(self, call).await?;
        run(&sight).await
    }
}

/// The table version an answer says its write made, audited with it
/// (what a writer committed is attributable).
fn made_version(answer: &dyn std::any::Any) -> Option<i64> {
    use lance_namespace::models as m;
    if let Some(a) = answer.downcast_ref::<m::CreateTableVersionResponse>() {
        return a.version.as_ref().map(|v| v.version);
    }
    // A streamed write (REST's create, insert and merge, Flight's puts).
    if let Some(a) = answer.downcast_ref::<crate::core::WriteOutcome>() {
        return i64::try_from(a.version).ok();
    }
    macro_rules! made {
        ($($t:ident),*; $($o:ident),*) => {
            $(if let Some(a) = answer.downcast_ref::<m::$t>() {
                return Some(a.version);
            })*
            $(if let Some(a) = answer.downcast_ref::<m::$o>() {
                return a.version;
            })*
        };
    }
    made!(
        AlterTableAddColumnsResponse, AlterTableAlterColumnsResponse,
        AlterTableDropColumnsResponse, CreateMaterializedViewResponse,
        UpdateFieldMetadataResponse, UpdateTableResponse;
        CreateTableResponse, DeleteFromTableResponse, InsertIntoTableResponse,
        MergeInsertIntoTableResponse
    );
    None
}
