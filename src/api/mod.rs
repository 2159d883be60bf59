//! The contract: every operation the catalog serves, with its facts and
//! its wire form, in one inventory (`inventory.rs`) expanded into a static
//! table (`ops.rs`). Every transport and every rule that depends on what
//! an operation is reads it here, never an operation's spelling. Imports
//! nothing of the core, the governance layer or the transports.

pub(crate) mod inventory;
mod ops;

pub use ops::{
    op, AnswerKind, BodyKind, Effect, Flow, Group, Kind, OpDef, Plane, Target, CONTROL_OPS, OPS,
};
