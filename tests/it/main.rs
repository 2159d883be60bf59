//! The one integration test binary (one link of lance, not one per file),
//! by what it checks:
//!
//! | module | what |
//! |---|---|
//! | `conformance` | the spec's behaviour: the cases written once against `&dyn LanceNamespace` and run in every mode of one table, route coverage, managed versioning and batches |
//! | `transport` | each transport's own wire: REST (`wire`, `hostile`), gRPC, Arrow Flight |
//! | `governance` | the hierarchy, warehouses, authentication and authorization, trash |
//! | `storage` | storage roots, what the catalog leaves on storage, maintenance tasks |
//!
//! `harness.rs` holds what they share.

mod conformance;
mod governance;
mod harness;
mod storage;
mod transport;
