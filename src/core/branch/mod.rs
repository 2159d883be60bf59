//! Tables the catalog opens and writes itself: opening a line, the main
//! one or a branch (`open.rs`); the writes committed on it (`writes.rs`,
//! column changes and restores in `reshape.rs`, index parameters in
//! `index.rs`); and the commit handler of every table it opens, fenced by
//! batch claims (`fenced.rs`).

pub(crate) mod fenced;
pub(crate) mod index;
pub(crate) mod open;
pub(crate) mod reshape;
pub(crate) mod writes;
