//! Column changes and restores, committed by the catalog on the table it
//! opened (on the main line or a branch), like every other write of its
//! own (`writes.rs`): fenced by batch claims, never on an undecided version.

use lance::dataset::ColumnAlteration;
use lance_namespace::models::{
    AlterColumnsEntry, AlterTableAlterColumnsRequest, AlterTableAlterColumnsResponse,
    AlterTableDropColumnsRequest, AlterTableDropColumnsResponse, JsonArrowDataType,
    RestoreTableRequest, RestoreTableResponse,
};

use crate::core::branch::open::branch_of;
use crate::core::branch::writes::{require, transaction_of};
use crate::core::checks::table_id;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn alter_columns_op(
        &self,
        req: AlterTableAlterColumnsRequest,
    ) -> CatalogResult<AlterTableAlterColumnsResponse> {
        let id = table_id(&req.id)?;
        check_renames(&req.alterations)?;
        let alterations = req
            .alterations
            .iter()
            .map(alteration)
            .collect::<CatalogResult<Vec<_>>>()?;
        let mut ds = self.open_table(&id, branch_of(&req.branch)).await?;
        require(&ds, &id, req.alterations.iter().map(|a| a.path.as_str()))?;
        ds.alter_columns(&alterations).await.map_err(refused)?;
        Ok(AlterTableAlterColumnsResponse {
            version: ds.version().version as i64,
            ..Default::default()
        })
    }

    pub(crate) async fn drop_columns_op(
        &self,
        req: AlterTableDropColumnsRequest,
    ) -> CatalogResult<AlterTableDropColumnsResponse> {
        let id = table_id(&req.id)?;
        let mut ds = self.open_table(&id, branch_of(&req.branch)).await?;
        require(&ds, &id, req.columns.iter().map(String::as_str))?;
        let columns: Vec<&str> = req.columns.iter().map(String::as_str).collect();
        ds.drop_columns(&columns).await.map_err(refused)?;
        Ok(AlterTableDropColumnsResponse {
            version: ds.version().version as i64,
            ..Default::default()
        })
    }

    /// Make version `version` the table's newest again, as a new version.
    pub(crate) async fn restore_op(
        &self,
        req: RestoreTableRequest,
    ) -> CatalogResult<RestoreTableResponse> {
        let id = table_id(&req.id)?;
        if req.version < 0 {
            return Err(CatalogError::invalid(format!(
                "cannot restore version {}: versions are not negative",
                req.version
            )));
        }
        let ds = self.open_table(&id, branch_of(&req.branch)).await?;
        // A version a batch has not decided is not there to restore (11).
        let mut ds = self.checkout(ds, req.version as u64, &id).await?;
        ds.restore().await?;
        Ok(RestoreTableResponse {
            transaction_id: transaction_of(&ds).await,
            ..Default::default()
        })
    }
}

/// A column change Lance refuses for the schema it would make (a taken
/// name, no column left) is the caller's request that cannot be done (13),
/// not data that failed validation.
fn refused(e: lance::Error) -> CatalogError {
    let err = CatalogError::from_lance(&e);
    match err.code {
        Code::SCHEMA_VALIDATION => CatalogError::invalid(err.message),
        _ => err,
    }
}

/// One entry of an alter-columns request as Lance's alteration.
fn alteration(entry: &AlterColumnsEntry) -> CatalogResult<ColumnAlteration> {
    let mut a = ColumnAlteration::new(entry.path.clone());
    if let Some(Some(name)) = &entry.rename {
        a = a.rename(name.clone());
    }
    if let Some(Some(nullable)) = entry.nullable {
        a = a.set_nullable(nullable);
    }
    match &entry.data_type {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::String(name)) => {
            let json = JsonArrowDataType::new(name.clone());
            let to = lance_namespace::schema::convert_json_arrow_type(&json).map_err(|e| {
                CatalogError::invalid(format!(
                    "data_type {name:?} for column {:?} is not a type: {}",
                    entry.path,
                    CatalogError::from_lance(&e).message
                ))
            })?;
            a = a.cast_to(to);
        }
        Some(other) => {
            return Err(CatalogError::invalid(format!(
                "data_type for column {:?} must be a type name, got {other}",
                entry.path
            )))
        }
    }
    Ok(a)
}

/// New column names in an alteration: not empty, and no two columns end
/// up with one name (an empty rename would leave a column no query can
/// name). Whether a new name collides with an untouched column is Lance's
/// to say (13).
fn check_renames(alterations: &[AlterColumnsEntry]) -> CatalogResult<()> {
    let mut seen = std::collections::HashSet::new();
    for a in alterations {
        let Some(Some(name)) = &a.rename else {
            continue;
        };
        if name.trim().is_empty() {
            return Err(CatalogError::invalid(format!(
                "column {:?} cannot be renamed to an empty name",
                a.path
            )));
        }
        if !seen.insert(name.as_str()) {
            return Err(CatalogError::invalid(format!(
                "two columns cannot both be renamed to {name:?}"
            )));
        }
    }
    Ok(())
}
