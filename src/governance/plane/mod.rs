//! The control plane over the hierarchy, a file per concern: the server
//! (`server.rs`), projects, warehouses, a warehouse's top-level namespaces,
//! protection flags, API keys, local users, grants, trash and maintenance tasks. Each
//! operation runs the guard order: the caller (from its call's metadata),
//! the request's shape, its parent, authorization, then the registry's own
//! conflict check and write; what it creates is owned by its creator.
//!
//! A [`Plane`] is the governance layer serving one call: the
//! `ControlPlane` implementation below hands every operation, by its
//! inventory row, to the `Plane` method of the same name, once for the
//! call's `Idempotency-Key` when it has one.

use std::ops::Deref;

use async_trait::async_trait;

use super::Governance;
use crate::api::call::Call;
use crate::api::control::*;
use crate::error::{CatalogError, CatalogResult};

mod grants;
mod keys;
mod maintenance_policy;
mod namespaces;
mod projects;
mod protection;
mod reports;
mod server;
mod tasks;
mod trash;
mod users;
mod warehouses;

/// What every file of the control plane names.
mod prelude {
    pub(super) use super::{builtin, one, Plane};
    pub(super) use crate::api::control::*;
    pub(super) use crate::api::op;
    pub(super) use crate::api::page::{page_items, CONTROL};
    pub(super) use crate::api::spec::Spec;
    pub(super) use crate::error::{CatalogError, CatalogResult, Code};
    pub(super) use crate::governance::guard::sight::Sight;
    pub(super) use crate::governance::guard::Access;
    pub(super) use crate::governance::{DEFAULT_PROJECT, DEFAULT_WAREHOUSE};
    pub(super) use lance_namespace::models::CreateNamespaceRequest;
}

/// The governance layer serving one call: its operations see the call's
/// metadata (`self.call`) beside everything of the layer (through
/// `Deref`, as `self.registry`, `self.call_control(..)`).
pub(super) struct Plane<'a> {
    gov: &'a Governance,
    call: &'a Call,
}

impl Deref for Plane<'_> {
    type Target = Governance;

    fn deref(&self) -> &Governance {
        self.gov
    }
}

fn builtin(kind: &str, id: &str) -> CatalogError {
    CatalogError::invalid(format!(
        "{kind} {id:?} is built in: it follows the server's --root and cannot be changed or deleted"
    ))
}

fn one(id: &str) -> Vec<String> {
    vec![id.to_string()]
}

macro_rules! control_plane_impl {
    ($( $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; )*) => {
        #[async_trait]
        impl ControlPlane for Governance {
            $(
                async fn $method(&self, call: &Call, request: $Req) -> CatalogResult<$Resp> {
                    // A change its caller keys is done once (`guard/kept.rs`).
                    let shape = match call.idempotency_key {
                        Some(_) => serde_json::to_value(&request).unwrap_or_default(),
                        None => serde_json::Value::Null,
                    };
                    self.kept(&crate::api::op::$Name, call, || shape, async {
                        Plane { gov: self, call }.$method(request).await
                    })
                    .await
                }
            )*
        }
    };
}

crate::api::inventory::for_each_control_op!(control_plane_impl);
