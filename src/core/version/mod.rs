//! Versions: managed versioning (list, describe, create, delete), one
//! table's commit (`single.rs`), and versions of several tables decided
//! together (`batch_versions.rs`, under `intent.rs`'s claims); a table's
//! newest version, read by names on a local disk (`latest.rs`).

pub(crate) mod batch_commit;
pub(crate) mod batch_versions;
pub(crate) mod intent;
pub(crate) mod latest;
pub(crate) mod materialize;
pub(crate) mod single;
pub(crate) mod staged;
pub(crate) mod versions;
