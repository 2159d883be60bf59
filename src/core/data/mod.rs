//! Rows in and out: Arrow bodies checked before any write (`body.rs`,
//! `rows.rs`), streaming scans and queries (`scan.rs`, `query.rs`),
//! streaming writes (`stream_write.rs`) and the SQL text requests carry
//! (`sql_text.rs`).

pub(crate) mod body;
pub(crate) mod query;
pub(crate) mod reads;
pub mod rows;
pub(crate) mod scan;
pub(crate) mod sql_text;
pub(crate) mod stream_write;
