//! Rows in and out: Arrow rows checked before any write (`rows.rs`),
//! streaming scans and queries (`scan.rs`, `query.rs`) and the SQL text
//! requests carry (`sql_text.rs`). Request bodies are `core/body.rs`;
//! streamed writes, which may create a table, are `table/stream_write.rs`.

pub mod ipc_out;
pub(crate) mod query;
pub(crate) mod reads;
pub mod rows;
pub(crate) mod scan;
pub(crate) mod sql_text;
