//! Recoverable drops: trash records and purges (`records.rs`), drops under
//! a grace period (`detach.rs`), undrop (`undrop.rs`), and the locations
//! trashed tables keep claimed (`claims.rs`).

pub(crate) mod claims;
pub(crate) mod detach;
pub mod records;
pub mod undrop;
