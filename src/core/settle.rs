//! Settling the answer of an engine call: validate the id first, then give
//! every error its spec code, with messages that name the missing object.

use std::future::Future;

use crate::core::checks::{display_id, missing_table, table_id};
use crate::core::engine;
use crate::error::{CatalogError, CatalogResult, Code};

/// What an id names, for settling the engine's NamespaceNotFound.
#[derive(Clone, Copy)]
pub(crate) enum Names {
    Namespace,
    Table,
    /// A table id plus a version or transaction id.
    Transaction,
}

/// Validate an id, then run the engine call. The engine reports a missing
/// parent namespace of a table as NamespaceNotFound with an internal message;
/// for a table operation the table does not exist (4), and the message says
/// which object is missing.
pub(crate) async fn checked<T>(
    id: CatalogResult<Vec<String>>,
    names: Names,
    call: impl Future<Output = lance::Result<T>>,
) -> CatalogResult<T> {
    let id = id?;
    engine(call.await).map_err(|e| match names {
        Names::Namespace if e.code == Code::NAMESPACE_NOT_FOUND => CatalogError::new(
            Code::NAMESPACE_NOT_FOUND,
            format!("namespace {} does not exist", display_id(&id)),
        ),
        Names::Namespace => e,
        Names::Table => missing_table(e, &id),
        Names::Transaction => missing_table(e, &id[..id.len() - 1]),
    })
}

/// Transaction ids are a table id plus a version or transaction uuid.
pub(crate) fn transaction_id(id: &Option<Vec<String>>) -> CatalogResult<Vec<String>> {
    let id = table_id(id)?;
    if id.len() < 2 {
        return Err(CatalogError::invalid(
            "a transaction id is the table id followed by a version number or transaction id",
        ));
    }
    Ok(id)
}
