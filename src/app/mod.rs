//! The application shell, above every layer: running the server
//! (`server.rs`), its settings by section (`config/`: the serve flags, the
//! config file, Ray, local users, the generated reference), and the
//! commands that work on a root with no server (`reports.rs`,
//! `audit_fill.rs`).

pub mod audit_fill;
pub mod config;
pub mod reports;
pub mod server;
