//! Branches and tags: opening a branch head (`open.rs`), the writes and
//! reads the engine runs on the main line only (`writes.rs`), and index
//! builds on a branch (`index.rs`).

pub(crate) mod index;
pub(crate) mod open;
pub(crate) mod writes;
