//! Admission and finish, the two halves every entry (`entry.rs`) runs
//! around an operation: route, shape and parent, authorization, read from
//! the typed request; then ownership, grants and the event.

use crate::api::spec::Spec;
use crate::api::{op, OpDef};
use lance_namespace::models;

use super::request::{asked, door_id, mint, SpecRequest};
use super::{Access, ObjectRef};
use crate::api::kind::Kind;
use crate::error::{CatalogResult, Code};
use crate::governance::{Governance, Route};

impl Governance {
    /// Route, check a door's shape and parent, authorize: the guards before
    /// the core's own conflict checks and write, read from the typed
    /// request. The request may change: the real ids of what it creates
    /// are minted into it.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn admit<R: SpecRequest>(
        &self,
        op: &'static OpDef,
        request: &mut R,
    ) -> CatalogResult<(Route, Access)> {
        // Identity, then shape and parent, then authorization.
        let principal = self.principal_of(request).await?;
        let route = self.route(op, request).await?;
        let minted = mint(op, request);
        let mut access = asked(op, &route.warehouse, request);
        access.principal = principal;
        access.request_id = request.request_id().map(str::to_string);
        if op.moves() {
            // The source is the "parent" a rename needs first.
            let source = request.id().map(<[String]>::to_vec);
            let found = route
                .catalog
                .table_exists(models::TableExistsRequest {
                    id: source.clone(),
                    ..Default::default()
                })
                .await;
            if let Err(e) = found {
                if e.code == Code::TABLE_NOT_FOUND || e.code == Code::NAMESPACE_NOT_FOUND {
                    return Err(self
                        .hidden(e, &access, Kind::Table, source.unwrap_or_default())
                        .await);
                }
                return Err(e);
            }
        }
        let door = door_id(op, request)?;
        let mut creates = false;
        if op.is_door() {
            creates = self
                .door(&route, &access, op, &door, request.may_exist())
                .await?
                && !op.moves();
        }
        if op.is_batch() {
            // A batch is allowed exactly when each of its parts would be.
            let parts = request.parts();
            if parts.is_empty() {
                self.authorize(&access).await?;
            }
            for (part_op, id) in parts {
                let mut part = Access {
                    action: part_op,
                    kind: Kind::Table,
                    id,
                    object: ObjectRef::Standing,
                    ..access.clone()
                };
                self.authorize_object(&route, &mut part).await?;
                if part_op.ends_object {
                    access.ended.extend(part.object.known().map(str::to_string));
                }
            }
        } else {
            self.authorize_object(&route, &mut access).await?;
        }
        if op.reads_tables {
            // A view's SQL may read any table of its warehouse: whoever
            // makes or refreshes one must be able to read them all.
            self.authorize(&Access {
                action: &op::QueryTable,
                kind: Kind::Namespace,
                id: vec![],
                object: ObjectRef::Standing,
                ..access.clone()
            })
            .await?;
        }
        if op.registers {
            // Registering bytes no table owns is a privilege of its own,
            // held on the warehouse: writing to a namespace is not enough.
            self.authorize(&Access {
                action: &op::RegisterLocation,
                kind: Kind::Warehouse,
                id: vec![route.warehouse.clone()],
                object: ObjectRef::Standing,
                ..access.clone()
            })
            .await?;
        }
        if let (true, Some(mut destination)) = (op.moves(), door.clone()) {
            // A rename also writes into its destination namespace.
            destination.pop();
            self.authorize(&Access {
                kind: Kind::Namespace,
                id: destination,
                object: ObjectRef::Standing,
                ..access.clone()
            })
            .await?;
        }
        let route = self.for_write(op, route).await?;
        access.creates = creates;
        if creates || op.is_batch() {
            access.minted = minted;
        }
        if op.moves() {
            access.moved_to = door;
        }
        if op.ends_object {
            access
                .ended
                .extend(access.object.known().map(str::to_string));
        }
        Ok((route, access))
    }

    /// The door step of admit: the object's shape
    /// and parent (a parent the caller may not see is refused as if it were
    /// not there), then whether the write creates it. It does when it does
    /// not stand now; `may_exist: false` (a plain create, which fails if it
    /// stands) creates without looking. A create of what stands makes no
    /// owner.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn door(
        &self,
        route: &Route,
        access: &Access,
        op: &OpDef,
        id: &Option<Vec<String>>,
        may_exist: bool,
    ) -> CatalogResult<bool> {
        let namespace = op.names_namespace();
        let checked = route.catalog.check_door(!namespace, id).await;
        let id = id.as_deref().unwrap_or_default();
        if let Err(e) = checked {
            let parent = id[..id.len().saturating_sub(1)].to_vec();
            return Err(match e.code {
                Code::NAMESPACE_NOT_FOUND => {
                    let door = Access {
                        id: id.to_vec(),
                        ..access.clone()
                    };
                    self.hidden(e, &door, Kind::Namespace, parent).await
                }
                _ => e,
            });
        }
        if !may_exist {
            return Ok(true);
        }
        Ok(!match namespace {
            true => route.catalog.namespace_present(id).await?,
            false => route.catalog.table_present(id).await?,
        })
    }

    /// The one finish step after an operation succeeded, on every
    /// transport: ownership of what it created, then what a write did to
    /// grants, then its event (reads record nothing).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn finish(&self, access: &Access) {
        if access.creates || !access.minted.is_empty() {
            self.own(access).await;
            self.hooks.created(access).await;
        }
        if !access.action.reads() {
            self.grants_follow(access).await;
            self.succeeded(access).await;
        }
    }
}
