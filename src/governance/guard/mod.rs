//! The guard order every door follows, and the two slots the access issue
//! fills: authorization (after shape and parent checks, before any
//! conflict check or write) and the hooks run after a successful write
//! (ownership grants for what was created, then events).
//!
//! identity (401) -> shape (400) -> parent (404) -> authorization (403)
//! -> conflict (409) -> storage write -> ownership grants -> events.
//!
//! The room: the one entry every transport and the control plane call
//! (`entry.rs`) and its twins for keyed changes (`kept.rs`), the caller it hands on, the only way outside the room to
//! ask a rule (`sight.rs`), admission and finish (`admit.rs`), what a typed request
//! names (`request.rs`), authorization and what a write does to grants
//! (`authorize.rs`), Cedar (`cedar.rs`), the real ids of what a request is
//! about (`objects.rs`), what lists show (`visible.rs`) and task
//! keys (`task_key.rs`).

pub(super) mod admit;
pub(super) mod authorize;
pub(super) mod cedar;
pub(super) mod entry;
pub(super) mod kept;
pub(super) mod objects;
pub(super) mod sight;
pub(super) mod task_key;
pub(super) mod visible;

pub mod request;

use async_trait::async_trait;
use serde::Serialize;

use crate::auth::cedar::Chain;
use crate::error::CatalogResult;

/// Which object an access is about, beyond its name. Grants bind to an
/// object's real id, so what decides is which object this is, not which
/// name it has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub enum ObjectRef {
    /// Whatever stands at the access's id now (looked up when needed).
    #[default]
    Standing,
    /// This very object: a trashed one being restored, purged or shown,
    /// or one whose real id was looked up already.
    Known(String),
    /// No object: only what lies above the id decides.
    Absent,
}

impl ObjectRef {
    /// The real id, when it is known.
    pub fn known(&self) -> Option<&str> {
        match self {
            ObjectRef::Known(id) => Some(id),
            _ => None,
        }
    }
}

pub use crate::api::kind::Kind;
use crate::api::{op, OpDef};

/// What a caller asks to do, to what.
#[derive(Debug, Clone, Serialize)]
pub struct Access {
    /// Who asks: `None` when authentication is off.
    pub principal: Option<crate::auth::Principal>,
    /// What it asks to do: an operation's row, or an act that is none.
    pub action: &'static OpDef,
    /// The warehouse the object lives in (`None` for server-level objects).
    pub warehouse: Option<String>,
    /// What kind of object `id` names.
    pub kind: Kind,
    /// The object's id (a project or warehouse id is one segment).
    pub id: Vec<String>,
    /// Whether the operation creates this object (its caller becomes its
    /// owner once the write succeeded).
    pub creates: bool,
    /// A rename's new id.
    pub moved_to: Option<Vec<String>>,
    /// Which object of that kind and id (namespaces and tables).
    pub object: ObjectRef,
    /// The objects this access creates, by id, with the real ids minted
    /// for them: its caller owns these once the write succeeded.
    pub minted: Vec<(Vec<String>, String)>,
    /// The real ids of the objects this access destroys if it succeeds
    /// (a drop without trash, a deregister): their grants end with them.
    pub ended: Vec<String>,
    /// The request's id as its caller was shown it, for the audit trail
    /// (`None`: the one the transport's observer knows).
    pub request_id: Option<String>,
    /// The table version the write made, once it returned (audited).
    pub version: Option<i64>,
}

/// Only so an access can be built field by field: every access names its
/// action (one that did not would be `authenticate`, which Cedar refuses).
impl Default for Access {
    fn default() -> Self {
        Access {
            principal: None,
            action: &op::Authenticate,
            warehouse: None,
            kind: Kind::default(),
            id: Vec::new(),
            creates: false,
            moved_to: None,
            object: ObjectRef::default(),
            minted: Vec::new(),
            ended: Vec::new(),
            request_id: None,
            version: None,
        }
    }
}

impl Access {
    /// The real id minted for the object this access creates at its own
    /// id (a Flight create hands it to the core's write).
    pub fn new_object(&self) -> Option<String> {
        self.minted
            .iter()
            .find(|(id, _)| *id == self.id)
            .map(|(_, real)| real.clone())
    }
}

/// What governance looked up for an access, once for every authorizer
/// that asks for it: the object's chain up to the server (real ids where
/// the object has one) and the relations its caller holds on that chain
/// through grants.
#[derive(Debug, Clone)]
pub struct Facts {
    pub chain: Chain,
    pub relations: std::collections::HashSet<String>,
}

/// Decides whether an access is allowed: an error (403, code 15) refuses
/// it. Every configured authorizer must allow (Cedar's policies first,
/// when authentication is required, then any added with
/// `Governance::with_authorizer`).
#[async_trait]
pub trait Authorizer: Send + Sync {
    /// Whether it decides on [`Facts`] (looked up only when one asks, and
    /// only for a known caller).
    fn needs_facts(&self) -> bool {
        false
    }
    async fn authorize(&self, access: &Access, facts: Option<&Facts>) -> CatalogResult<()>;
}

/// Run after a write succeeded; they cannot undo it, so they only record.
#[async_trait]
pub trait Hooks: Send + Sync {
    /// An object was created: the slot where its creator becomes its owner.
    async fn created(&self, _access: &Access) {}
    /// Any write succeeded (create, drop, change).
    async fn event(&self, access: &Access) {
        tracing::debug!(
            target: "lance_catalog::events",
            action = access.action.action,
            kind = access.kind.as_str(),
            warehouse = access.warehouse.as_deref().unwrap_or(""),
            principal = access.principal.as_ref().map(|p| p.id.as_str()).unwrap_or(""),
            id = ?access.id,
            "catalog event"
        );
    }
}

/// The hooks until grants and an event sink are configured: events go to
/// the debug log.
#[derive(Debug, Default, Clone)]
pub struct LogHooks;

#[async_trait]
impl Hooks for LogHooks {}
