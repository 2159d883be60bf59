//! Namespaces: create, list and drop with the rules the engine leaves open,
//! and the storage options a client gets from `lance.storage.*` properties.

pub(crate) mod namespaces;
pub(crate) mod storage_options;
