#![forbid(unsafe_code)]
#![recursion_limit = "256"]
#![deny(unreachable_pub, missing_debug_implementations)]
//! lance-catalog: the catalog and governance layer for Lance tables.
//!
//! The core ([`core::Catalog`]) implements `lance_namespace::LanceNamespace`;
//! the REST gateway ([`rest`]) serves it with the Lance Namespace spec's exact
//! wire format. See `README.md` and `docs/` for running and configuring the server.

pub mod api;
pub mod app;
pub mod auth;
pub mod core;
pub mod error;
pub mod fault;
pub mod flight;
pub mod governance;
pub mod grpc;
pub mod records;
pub mod rest;
pub mod telemetry;
pub mod transport;

pub use crate::core::{Catalog, StorageConfig};
pub use crate::error::{CatalogError, CatalogResult, Code};
