//! Writes and reads on a branch, for the operations whose engine
//! implementation ignores `branch`: the core opens the branch head and
//! commits to it itself.

use std::sync::Arc;

use lance::dataset::{MergeInsertBuilder, WhenMatched, WhenNotMatched, WhenNotMatchedBySource};
use lance::index::DatasetIndexExt;
use lance_namespace::models::{
    DropTableIndexRequest, DropTableIndexResponse, MergeInsertIntoTableRequest,
    MergeInsertIntoTableResponse,
};

use crate::core::body::Stream;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn merge_insert_on_branch(
        &self,
        id: &[String],
        branch: &str,
        req: &MergeInsertIntoTableRequest,
        on: Vec<String>,
        stream: Stream,
    ) -> CatalogResult<MergeInsertIntoTableResponse> {
        let ds = Arc::new(self.open_table(id, Some(branch)).await?);
        let builder = merge_job(ds, req, on)?;
        let reader = arrow_array::RecordBatchIterator::new(
            stream.batches.into_iter().map(Ok),
            stream.schema.clone(),
        );
        let (ds, stats) = builder
            .execute_reader(Box::new(reader) as Box<dyn arrow_array::RecordBatchReader + Send>)
            .await?;
        Ok(MergeInsertIntoTableResponse {
            version: Some(ds.version().version as i64),
            num_inserted_rows: Some(stats.num_inserted_rows as i64),
            num_updated_rows: Some(stats.num_updated_rows as i64),
            num_deleted_rows: Some(stats.num_deleted_rows as i64),
            ..Default::default()
        })
    }

    pub(crate) async fn drop_index_on_branch(
        &self,
        id: &[String],
        branch: &str,
        req: &DropTableIndexRequest,
    ) -> CatalogResult<DropTableIndexResponse> {
        let name = req
            .index_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| CatalogError::invalid("drop_table_index needs an index name"))?;
        let mut ds = self.open_table(id, Some(branch)).await?;
        ds.drop_index(name).await.map_err(|e| {
            let err = CatalogError::from_lance(&e);
            if err.code == Code::INVALID_INPUT || err.code == Code::TABLE_NOT_FOUND {
                CatalogError::new(
                    Code::TABLE_INDEX_NOT_FOUND,
                    format!("no index named {name:?} on branch {branch:?}"),
                )
            } else {
                err
            }
        })?;
        Ok(DropTableIndexResponse::default())
    }
}

impl Catalog {
    pub(crate) async fn drop_table_index_op(
        &self,
        mut req: DropTableIndexRequest,
    ) -> CatalogResult<DropTableIndexResponse> {
        let id = crate::core::checks::table_id(&req.id)?;
        if let Some(branch) = crate::core::branch::open::branch_of(&req.branch) {
            return self.drop_index_on_branch(&id, branch, &req).await;
        }
        req.id = Some(id.clone());
        crate::core::engine(
            lance_namespace::LanceNamespace::drop_table_index(self.inner().await?.as_ref(), req)
                .await,
        )
        .map_err(|e| crate::core::missing_table(e, &id))
    }
}

impl Catalog {
    pub(crate) async fn update_table_op(
        &self,
        mut req: lance_namespace::models::UpdateTableRequest,
    ) -> CatalogResult<lance_namespace::models::UpdateTableResponse> {
        let id = crate::core::checks::table_id(&req.id)?;
        crate::core::checks::check_properties(req.properties.as_ref())?;
        let Some(branch) = crate::core::branch::open::branch_of(&req.branch) else {
            req.id = Some(id.clone());
            return crate::core::engine(
                lance_namespace::LanceNamespace::update_table(self.inner().await?.as_ref(), req)
                    .await,
            )
            .map_err(|e| crate::core::missing_table(e, &id));
        };
        if req.updates.is_empty() {
            return Err(CatalogError::invalid(
                "update needs at least one [column, expression] pair",
            ));
        }
        let ds = self.open_table(&id, Some(branch)).await?;
        let mut builder = lance::dataset::UpdateBuilder::new(Arc::new(ds));
        if let Some(p) = req.predicate.as_deref().filter(|p| !p.trim().is_empty()) {
            builder = builder.update_where(p)?;
        }
        for pair in &req.updates {
            let [column, expr] = pair.as_slice() else {
                return Err(CatalogError::invalid(format!(
                    "each update is a [column, expression] pair, got {pair:?}"
                )));
            };
            builder = builder.set(column, expr)?;
        }
        let result = builder.build()?.execute().await?;
        Ok(lance_namespace::models::UpdateTableResponse {
            updated_rows: result.rows_updated as i64,
            version: result.new_dataset.version().version as i64,
            ..Default::default()
        })
    }

    pub(crate) async fn delete_op(
        &self,
        mut req: lance_namespace::models::DeleteFromTableRequest,
    ) -> CatalogResult<lance_namespace::models::DeleteFromTableResponse> {
        let id = crate::core::checks::table_id(&req.id)?;
        let Some(branch) = crate::core::branch::open::branch_of(&req.branch) else {
            req.id = Some(id.clone());
            return crate::core::engine(
                lance_namespace::LanceNamespace::delete_from_table(
                    self.inner().await?.as_ref(),
                    req,
                )
                .await,
            )
            .map_err(|e| crate::core::missing_table(e, &id));
        };
        if req.predicate.trim().is_empty() {
            return Err(CatalogError::invalid("delete needs a predicate"));
        }
        let mut ds = self.open_table(&id, Some(branch)).await?;
        ds.delete(&req.predicate).await?;
        Ok(lance_namespace::models::DeleteFromTableResponse {
            version: Some(ds.version().version as i64),
            ..Default::default()
        })
    }

    pub(crate) async fn create_index_op(
        &self,
        mut req: lance_namespace::models::CreateTableIndexRequest,
        scalar_only: bool,
    ) -> CatalogResult<lance_namespace::models::CreateTableIndexResponse> {
        let id = crate::core::checks::table_id(&req.id)?;
        if let Some(branch) = crate::core::branch::open::branch_of(&req.branch) {
            let kind = req.index_type.trim().to_ascii_uppercase();
            if scalar_only && (kind.starts_with("IVF") || kind == "VECTOR") {
                return Err(CatalogError::invalid(format!(
                    "{} is not a scalar index type",
                    req.index_type
                )));
            }
            return self.create_index_on_branch(&id, branch, &req).await;
        }
        req.id = Some(id.clone());
        let r = if scalar_only {
            lance_namespace::LanceNamespace::create_table_scalar_index(
                self.inner().await?.as_ref(),
                req,
            )
            .await
            .map(|r| lance_namespace::models::CreateTableIndexResponse {
                transaction_id: r.transaction_id,
                ..Default::default()
            })
        } else {
            lance_namespace::LanceNamespace::create_table_index(self.inner().await?.as_ref(), req)
                .await
        };
        crate::core::engine(r).map_err(|e| crate::core::missing_table(e, &id))
    }
}

/// A merge-insert job on `ds` with the spec request's options.
pub(crate) fn merge_job(
    ds: Arc<lance::Dataset>,
    req: &MergeInsertIntoTableRequest,
    on: Vec<String>,
) -> CatalogResult<lance::dataset::MergeInsertJob> {
    let mut builder = MergeInsertBuilder::try_new(ds.clone(), on)?;
    let matched = match (
        req.when_matched_update_all,
        &req.when_matched_update_all_filt,
    ) {
        (Some(true), Some(f)) if !f.is_empty() => WhenMatched::update_if(&ds, f)?,
        (Some(true), _) => WhenMatched::UpdateAll,
        _ => WhenMatched::DoNothing,
    };
    builder.when_matched(matched);
    builder.when_not_matched(if req.when_not_matched_insert_all.unwrap_or(false) {
        WhenNotMatched::InsertAll
    } else {
        WhenNotMatched::DoNothing
    });
    if req.when_not_matched_by_source_delete.unwrap_or(false) {
        let by_source = match &req.when_not_matched_by_source_delete_filt {
            Some(f) if !f.is_empty() => WhenNotMatchedBySource::delete_if(&ds, f)?,
            _ => WhenNotMatchedBySource::Delete,
        };
        builder.when_not_matched_by_source(by_source);
    }
    Ok(builder.try_build()?)
}
