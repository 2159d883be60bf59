//! Versions: managed versioning (list, describe, create, delete), and
//! batch commits over several tables in one manifest commit.

pub(crate) mod batch_commit;
pub(crate) mod versions;
