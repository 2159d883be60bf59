//! Tables: create, declare, register, insert, merge-insert and drop
//! (`tables.rs`), where their bytes go and how they are recorded
//! (`placement.rs`), which locations the catalog owns (`locations.rs`,
//! those near a new one kept per manifest snapshot in `placed_kept.rs`),
//! rename, and schema and field metadata; create intents, so a create
//! killed mid-write leaves nothing the sweep cannot remove (`intents.rs`).

pub(crate) mod describe;
pub(crate) mod intents;
mod intents_sweep;
pub(crate) mod locations;
pub(crate) mod metadata;
pub(crate) mod placed_kept;
pub(crate) mod placement;
pub(crate) mod rename;
pub(crate) mod stream_write;
pub(crate) mod tables;
