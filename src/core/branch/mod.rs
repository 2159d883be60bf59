//! Branches and tags: opening a branch head (`open.rs`), the writes and
//! reads the engine runs on the main line only (`writes.rs`), index
//! builds on a branch (`index.rs`), and the commit handler of every table
//! the catalog opens (`fenced.rs`).

pub(crate) mod fenced;
pub(crate) mod index;
pub(crate) mod open;
pub(crate) mod writes;
