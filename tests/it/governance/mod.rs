//! Governance above the spec: the hierarchy's registries (`hierarchy`),
//! warehouses, listing through them (`lists`), authentication and
//! authorization (`auth`), recoverable drops (`trash`), maintenance
//! policy records (`policy`).

mod auth;
pub(crate) mod hierarchy;
mod idempotency;
mod lists;
mod policy;
mod scheduler;
mod trash;
pub(crate) mod warehouses;
