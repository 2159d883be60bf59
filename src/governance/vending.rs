//! Credentials with the answers that hand a table to a client (the rows
//! whose facts say `vends`: create, declare, describe). After the
//! operation and its finish step, the caller's right decides the
//! privilege: whoever creates the table or may write it gets read-write,
//! anyone else who may describe it read-only; a quarantined warehouse
//! hands read-only to everyone. Each hand-out is an audit event.

use std::collections::HashMap;

use lance_namespace::models;

use super::guard::Access;
use super::{Governance, DEFAULT_WAREHOUSE};
use crate::api::audit::VendedEvent;
use crate::api::hierarchy::WarehouseStatus;
use crate::api::kind::Kind;
use crate::api::op;
use crate::api::OpDef;
use crate::core::vending::Privilege;
use crate::error::CatalogResult;
use crate::governance::guard::entry::Admitted;
use crate::governance::guard::request::SpecRequest;
use crate::governance::once::Body;

/// A request whose answer may carry credentials: whether its caller asked
/// for none (`vend_credentials: false`).
pub(super) trait AsksCredentials {
    fn declines(&self) -> bool;
}

impl AsksCredentials for models::DescribeTableRequest {
    fn declines(&self) -> bool {
        self.vend_credentials == Some(false)
    }
}

impl AsksCredentials for models::DeclareTableRequest {
    fn declines(&self) -> bool {
        self.vend_credentials == Some(false)
    }
}

impl AsksCredentials for models::CreateTableRequest {
    fn declines(&self) -> bool {
        false
    }
}

/// An answer that hands a table: its location and storage options.
pub(super) trait HandsTable {
    fn location(&self) -> Option<&str>;
    fn storage_options(&mut self) -> &mut Option<HashMap<String, String>>;
}

macro_rules! hands_table {
    ($($T:ident),*) => {$(
        impl HandsTable for models::$T {
            fn location(&self) -> Option<&str> {
                self.location.as_deref()
            }
            fn storage_options(&mut self) -> &mut Option<HashMap<String, String>> {
                &mut self.storage_options
            }
        }
    )*};
}
hands_table!(
    DescribeTableResponse,
    DeclareTableResponse,
    CreateTableResponse
);

impl Governance {
    /// The one entry (`guard/entry.rs`) for an operation whose answer hands
    /// a table: the caller's credentials for it go into the answer, unless
    /// it declined them.
    pub(super) async fn call_vending<R, T>(
        &self,
        op: &'static OpDef,
        request: R,
        body: Body,
        run: impl AsyncFnOnce(&mut Admitted, R) -> CatalogResult<T>,
    ) -> CatalogResult<T>
    where
        R: SpecRequest + AsksCredentials,
        T: HandsTable + serde::Serialize + serde::de::DeserializeOwned + 'static,
    {
        let declined = request.declines();
        self.call_then_kept(op, request, body, run, async |a, answer| {
            self.hand_credentials(a, declined, answer).await
        })
        .await
    }

    /// Put the caller's credentials for the table into `answer`, where its
    /// warehouse vends them and the caller did not decline.
    async fn hand_credentials<A: HandsTable>(
        &self,
        admitted: &Admitted,
        declined: bool,
        answer: &mut A,
    ) -> CatalogResult<()> {
        let (route, access) = (&admitted.route, &admitted.access);
        if declined {
            return Ok(());
        }
        // A replayed answer was kept without its storage options
        // (`once/`): the table's catalog hands them as it did (never to a
        // caller who declined them, whose first answer had none either).
        if answer.storage_options().is_none() {
            *answer.storage_options() = route.catalog.vended_storage_options();
        }
        // The warehouse's current record decides, not the catalog this
        // replica opened earlier: vending turned off, a new role or a
        // quarantine set by another replica applies from the next hand-out.
        let (catalog, quarantined) = match route.warehouse.as_str() {
            DEFAULT_WAREHOUSE => (route.catalog.clone(), false),
            id => {
                let record = self.registry.warehouse(id).await?;
                let quarantined = record.status == WarehouseStatus::Quarantined;
                (self.catalog_of(&record).await?, quarantined)
            }
        };
        if !catalog.vends() {
            return Ok(());
        }
        let Some(location) = answer.location().map(str::to_string) else {
            return Ok(());
        };
        let privilege = match quarantined {
            true => Privilege::Read,
            false => self.privilege(admitted).await?,
        };
        let vended = match catalog.vend(&access.id, &location, privilege).await {
            Ok(Some(vended)) => vended,
            Ok(None) => return Ok(()),
            // A create has committed: its answer says so, without
            // credentials (a describe then names the problem), rather than
            // an error its caller would retry into "already exists".
            Err(e) if access.creates => {
                tracing::warn!(table = ?access.id, error = %e.message, cause = e.cause().unwrap_or(""), "created a table but vended no credentials with it");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        self.registry
            .audit_vended(
                access,
                VendedEvent {
                    privilege: vended.privilege.as_str().to_string(),
                    access_key_id: vended.access_key_id.clone(),
                    expires_at_ms: vended.expires_at_ms,
                },
            )
            .await;
        *answer.storage_options() = Some(vended.options);
        Ok(())
    }

    /// Read-write for whoever creates the table or may write it (Lance's
    /// append arrives as a describe), read-only for the rest.
    async fn privilege(&self, admitted: &Admitted) -> CatalogResult<Privilege> {
        let (route, access) = (&admitted.route, &admitted.access);
        // A task key's runner commits to its own table (the describe it
        // makes was checked against that scope already).
        let runner = access.principal.as_ref().is_some_and(|p| p.task.is_some());
        if access.creates || runner {
            return Ok(Privilege::Write);
        }
        let write = Access {
            action: &op::InsertIntoTable,
            warehouse: Some(route.warehouse.clone()),
            kind: Kind::Table,
            id: access.id.clone(),
            object: access.object.clone(),
            request_id: access.request_id.clone(),
            ..Default::default()
        };
        Ok(match admitted.sight(self).allows(&write).await? {
            true => Privilege::Write,
            false => Privilege::Read,
        })
    }
}
