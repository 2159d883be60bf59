//! Versions: managed versioning (list, describe, create, delete), one
//! table's commit (`single.rs`), and versions of several tables decided
//! together (`batch_versions.rs`, under `intent.rs`'s claims).

pub(crate) mod batch_commit;
pub(crate) mod batch_versions;
pub(crate) mod intent;
pub(crate) mod materialize;
pub(crate) mod single;
pub(crate) mod staged;
pub(crate) mod versions;
