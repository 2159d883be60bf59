//! The writes the catalog commits itself, on the main line or a branch:
//! the table opened by `open.rs` (its commits go through the fenced
//! handler, `fenced.rs`), never handed to Lance's directory namespace,
//! which opens its own datasets with an unfenced handler and would build
//! on a version a batch has placed but not decided.

use std::sync::Arc;

use lance::dataset::{MergeInsertBuilder, WhenMatched, WhenNotMatched, WhenNotMatchedBySource};
use lance::index::DatasetIndexExt;
use lance_namespace::models::{
    CreateTableIndexRequest, CreateTableIndexResponse, DeleteFromTableRequest,
    DeleteFromTableResponse, DropTableIndexRequest, DropTableIndexResponse,
    MergeInsertIntoTableRequest, UpdateTableRequest, UpdateTableResponse,
};

use crate::core::branch::open::branch_of;
use crate::core::checks::{display_id, table_id};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn drop_table_index_op(
        &self,
        req: DropTableIndexRequest,
    ) -> CatalogResult<DropTableIndexResponse> {
        let id = table_id(&req.id)?;
        let branch = branch_of(&req.branch);
        let name = req
            .index_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| CatalogError::invalid("drop_table_index needs an index name"))?;
        let mut ds = self.open_table(&id, branch).await?;
        let not_found = || {
            CatalogError::new(
                Code::TABLE_INDEX_NOT_FOUND,
                match branch {
                    Some(b) => format!("no index named {name:?} on branch {b:?}"),
                    None => format!("table {} has no index named {name:?}", display_id(&id)),
                },
            )
        };
        let found = ds
            .load_indices_by_name(name)
            .await
            .map_err(|_| not_found())?;
        // Lance's own bookkeeping indices are not the caller's to drop.
        if found
            .first()
            .is_some_and(lance_table::system_index::is_system_index)
        {
            return Err(CatalogError::unsupported(format!(
                "index {name:?} is one of Lance's own and cannot be dropped"
            )));
        }
        ds.drop_index(name).await.map_err(|e| {
            let err = CatalogError::from_lance(&e);
            match err.code {
                Code::INVALID_INPUT | Code::TABLE_NOT_FOUND => not_found(),
                _ => err,
            }
        })?;
        Ok(DropTableIndexResponse {
            transaction_id: transaction_of(&ds).await,
            ..Default::default()
        })
    }

    pub(crate) async fn update_table_op(
        &self,
        req: UpdateTableRequest,
    ) -> CatalogResult<UpdateTableResponse> {
        let id = table_id(&req.id)?;
        crate::core::checks::check_properties(req.properties.as_ref())?;
        if req.updates.is_empty() {
            return Err(CatalogError::invalid(
                "update needs at least one [column, expression] pair",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for pair in &req.updates {
            let [column, _] = pair.as_slice() else {
                return Err(CatalogError::invalid(format!(
                    "each update is a [column, expression] pair, got {pair:?}"
                )));
            };
            if column.trim().is_empty() {
                return Err(CatalogError::invalid("an update names an empty column"));
            }
            if !seen.insert(column.as_str()) {
                return Err(CatalogError::invalid(format!(
                    "column {column:?} is updated more than once"
                )));
            }
        }
        let ds = self.open_table(&id, branch_of(&req.branch)).await?;
        let mut builder = lance::dataset::UpdateBuilder::new(Arc::new(ds));
        if let Some(p) = req.predicate.as_deref().filter(|p| !p.trim().is_empty()) {
            builder = builder.update_where(p)?;
        }
        for pair in &req.updates {
            builder = builder.set(&pair[0], &pair[1])?;
        }
        let result = builder.build()?.execute().await?;
        Ok(UpdateTableResponse {
            updated_rows: result.rows_updated as i64,
            version: result.new_dataset.version().version as i64,
            ..Default::default()
        })
    }

    pub(crate) async fn delete_op(
        &self,
        req: DeleteFromTableRequest,
    ) -> CatalogResult<DeleteFromTableResponse> {
        let id = table_id(&req.id)?;
        if req.predicate.trim().is_empty() {
            return Err(CatalogError::invalid("delete needs a predicate"));
        }
        let mut ds = self.open_table(&id, branch_of(&req.branch)).await?;
        let deleted = ds.delete(&req.predicate).await?;
        Ok(DeleteFromTableResponse {
            version: Some(deleted.new_dataset.version().version as i64),
            ..Default::default()
        })
    }

    pub(crate) async fn create_index_op(
        &self,
        req: CreateTableIndexRequest,
        scalar_only: bool,
    ) -> CatalogResult<CreateTableIndexResponse> {
        let id = table_id(&req.id)?;
        let params = crate::core::branch::index::params_for(&req)?;
        if scalar_only && params.is_vector() {
            return Err(CatalogError::invalid(format!(
                "{} is not a scalar index type",
                req.index_type
            )));
        }
        let mut ds = self.open_table(&id, branch_of(&req.branch)).await?;
        require(&ds, &id, [req.column.as_str()])?;
        ds.create_index(
            &[req.column.as_str()],
            params.index_type(),
            req.name.clone(),
            params.params(),
            false,
        )
        .await
        .map_err(|e| {
            let err = CatalogError::from_lance(&e);
            if err.message.contains("already exists") {
                CatalogError::new(Code::TABLE_INDEX_ALREADY_EXISTS, err.message)
            } else {
                err
            }
        })?;
        Ok(CreateTableIndexResponse {
            transaction_id: transaction_of(&ds).await,
            ..Default::default()
        })
    }
}

/// Every column named exists (12 otherwise).
pub(crate) fn require<'a>(
    ds: &lance::Dataset,
    id: &[String],
    columns: impl IntoIterator<Item = &'a str>,
) -> CatalogResult<()> {
    match columns.into_iter().find(|c| ds.schema().field(c).is_none()) {
        Some(c) => Err(CatalogError::new(
            Code::TABLE_COLUMN_NOT_FOUND,
            format!("table {} has no column {c:?}", display_id(id)),
        )),
        None => Ok(()),
    }
}

/// The id of the transaction that made `ds`'s version, as Lance's
/// directory namespace answers it (none when it cannot be read).
pub(crate) async fn transaction_of(ds: &lance::Dataset) -> Option<String> {
    ds.read_transaction().await.ok().flatten().map(|t| t.uuid)
}

/// A merge-insert job on `ds` with the spec request's options.
pub(crate) fn merge_job(
    ds: Arc<lance::Dataset>,
    req: &MergeInsertIntoTableRequest,
    on: Vec<String>,
) -> CatalogResult<lance::dataset::MergeInsertJob> {
    let mut builder = MergeInsertBuilder::try_new(ds.clone(), on)?;
    // As Lance's directory namespace reads the request (the reference
    // server real clients were written against): a filter implies its
    // clause, and rows that match nothing are inserted unless the request
    // says `when_not_matched_insert_all: false`.
    let matched = match (
        req.when_matched_update_all_filt.as_deref(),
        req.when_matched_update_all,
    ) {
        (Some(f), _) if !f.trim().is_empty() => WhenMatched::update_if(&ds, f)?,
        (_, Some(true)) => WhenMatched::UpdateAll,
        _ => WhenMatched::DoNothing,
    };
    builder.when_matched(matched);
    builder.when_not_matched(match req.when_not_matched_insert_all {
        Some(false) => WhenNotMatched::DoNothing,
        _ => WhenNotMatched::InsertAll,
    });
    match (
        req.when_not_matched_by_source_delete_filt.as_deref(),
        req.when_not_matched_by_source_delete,
    ) {
        (Some(f), _) if !f.trim().is_empty() => {
            builder.when_not_matched_by_source(WhenNotMatchedBySource::delete_if(&ds, f)?);
        }
        (_, Some(true)) => {
            builder.when_not_matched_by_source(WhenNotMatchedBySource::Delete);
        }
        _ => {}
    }
    if let Some(use_index) = req.use_index {
        builder.use_index(use_index);
    }
    Ok(builder.try_build()?)
}
