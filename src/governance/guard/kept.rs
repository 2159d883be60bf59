//! The entries for changes a caller names by an `Idempotency-Key`
//! (`governance/once/`): the key is looked up after the caller is known
//! and before anything else, so a retry of a change that answered gets
//! that answer even where the change itself could not pass admission
//! again (a drop's table is gone, a rename's source moved). A retry is its
//! caller's own: the record is kept per principal.
//!
//! - [`Governance::call_kept`] / [`Governance::call_then_kept`]: a spec
//!   change (`entry.rs`'s `call`), its data body compared too;
//! - [`Governance::kept`]: a control-plane change, run as its call says.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::entry::Admitted;
use super::request::SpecRequest;
use crate::api::call::Call;
use crate::api::OpDef;
use crate::error::{CatalogError, CatalogResult};
use crate::governance::once::{asked, held, Begun, Body};
use crate::governance::Governance;

/// An answer read back from its key's record.
fn replayed<T: DeserializeOwned>(op: &OpDef, answer: serde_json::Value) -> CatalogResult<T> {
    serde_json::from_value(answer).map_err(|e| {
        CatalogError::internal(format!(
            "the answer kept for this Idempotency-Key cannot be read as {op}'s: {e}"
        ))
    })
}

impl Governance {
    /// [`Governance::call`] for a change whose caller may name it by a key.
    pub(in crate::governance) async fn call_kept<R, T>(
        &self,
        op: &'static OpDef,
        request: R,
        body: Body,
        run: impl AsyncFnOnce(&mut Admitted, R) -> CatalogResult<T>,
    ) -> CatalogResult<T>
    where
        R: SpecRequest,
        T: Serialize + DeserializeOwned + 'static,
    {
        self.call_then_kept(op, request, body, run, async |_, _| Ok(()))
            .await
    }

    /// [`Governance::call_then`] for such a change. A replayed answer that
    /// hands a table gets the step after (fresh credentials), admitted
    /// again as its caller now stands.
    pub(in crate::governance) async fn call_then_kept<R, T>(
        &self,
        op: &'static OpDef,
        mut request: R,
        body: Body,
        run: impl AsyncFnOnce(&mut Admitted, R) -> CatalogResult<T>,
        then: impl AsyncFnOnce(&Admitted, &mut T) -> CatalogResult<()>,
    ) -> CatalogResult<T>
    where
        R: SpecRequest,
        T: Serialize + DeserializeOwned + 'static,
    {
        let mut claim = None;
        if let (Some(key), false) = (request.idempotency_key(), op.reads()) {
            let principal = self.principal_of(&request).await?;
            let ask = self.ask(
                op,
                principal.as_ref(),
                Some(key),
                || asked(request.shape()),
                body,
            )?;
            match ask {
                None => {}
                Some(ask) => match Box::pin(self.begin(ask)).await? {
                    Begun::Run(c) => claim = Some(c),
                    Begun::Replay(answer) => {
                        let mut answer: T = replayed(op, answer)?;
                        if op.vends {
                            let (route, access) = Box::pin(self.admit(op, &mut request)).await?;
                            Box::pin(then(&Admitted { route, access }, &mut answer)).await?;
                        }
                        return Ok(answer);
                    }
                },
            }
        }
        // Boxed: the steps' futures are large, and this one holds them
        // beside the key's (a debug build's worker stack overflows).
        let ran = held(
            claim.as_ref(),
            Box::pin(self.admit_run_finish(op, request, run)),
        )
        .await;
        if let Some(claim) = claim {
            // A table's answer is kept without its storage options (the
            // operator's, when forwarded): a replay is handed them again.
            claim
                .end(ran.as_ref().ok().map(|(_, answer)| answer), op.vends)
                .await;
        }
        let (admitted, mut answer) = ran?;
        Box::pin(then(&admitted, &mut answer)).await?;
        Ok(answer)
    }

    /// A control-plane change (`run`, its request `shape`), once for its
    /// call's key.
    pub(in crate::governance) async fn kept<T: Serialize + DeserializeOwned>(
        &self,
        op: &'static OpDef,
        call: &Call,
        shape: impl FnOnce() -> serde_json::Value,
        run: impl std::future::Future<Output = CatalogResult<T>>,
    ) -> CatalogResult<T> {
        let key = call.idempotency_key.as_deref();
        if key.is_none() || op.reads() {
            return run.await;
        }
        let principal = self.caller(call).await?;
        let Some(ask) = self.ask(op, principal.as_ref(), key, shape, Body::None)? else {
            return run.await;
        };
        match self.begin(ask).await? {
            Begun::Replay(answer) => replayed(op, answer),
            Begun::Run(claim) => {
                let out = claim.hold(run).await;
                claim.end(out.as_ref().ok(), false).await;
                out
            }
        }
    }
}
