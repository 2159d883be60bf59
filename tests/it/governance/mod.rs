//! Governance above the spec: the hierarchy's registries (`hierarchy`),
//! warehouses, authentication and authorization (`auth`), recoverable
//! drops (`trash`).

mod auth;
pub(crate) mod hierarchy;
mod trash;
mod warehouses;
