//! The contract: every operation the catalog serves, with its facts and
//! its wire form, in one inventory (`inventory.rs`) expanded into a static
//! table (`ops.rs`). Every transport and every rule that depends on what
//! an operation is reads it here, never an operation's spelling. The
//! control plane's trait and every one of its models are here too
//! (`control.rs` and a file per concern), and a call's metadata
//! (`call.rs`: who calls, handed to every operation). Imports nothing of the core, the
//! governance layer or the transports.

pub mod access;
pub mod audit;
pub mod call;
pub mod control;
pub mod health;
pub mod hierarchy;
pub(crate) mod inventory;
pub mod jobs;
pub mod kind;
pub mod maintenance;
mod ops;
pub mod orphans;
pub mod page;
pub mod policy;
pub mod protection;
pub mod reconcile;
pub mod spec;
pub mod sweep;
pub mod trash;
pub mod users;
pub mod vending;

pub use ops::{
    by_action, op, AnswerKind, BodyKind, Effect, Flow, Group, Kind, OpDef, Plane, Target,
    CONTROL_OPS, OPS,
};
