//! Recoverable drops: trash records and purges (`records.rs`), drops under
//! a grace period (`detach.rs`) and undrop (`undrop.rs`).

pub(crate) mod detach;
pub mod records;
pub mod undrop;
