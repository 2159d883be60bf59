//! Query on a branch. The engine reads the main line only; on a branch the
//! core runs the scan itself: filter, columns (with aliases), vector search,
//! full-text search, k / offset, version, row ids. The answer is an Arrow
//! IPC file, as on the main line.

use arrow::ipc::writer::FileWriter;
use arrow_array::{Float32Array, RecordBatch};
use bytes::Bytes;
use futures::TryStreamExt;
use lance_index::scalar::FullTextSearchQuery;
use lance_linalg::distance::MetricType;
use lance_namespace::models::QueryTableRequest;

use super::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn query_on_branch(
        &self,
        id: &[String],
        branch: &str,
        req: &QueryTableRequest,
    ) -> CatalogResult<Bytes> {
        let mut ds = self.open_table(id, Some(branch)).await?;
        if let Some(v) = req.version {
            ds = ds.checkout_version(v as u64).await.map_err(|_| {
                CatalogError::new(
                    Code::TABLE_VERSION_NOT_FOUND,
                    format!("no version {v} on branch {branch:?}"),
                )
            })?;
        }
        if req.k < 0 || req.offset.is_some_and(|o| o < 0) {
            return Err(CatalogError::invalid("k and offset must not be negative"));
        }
        let mut scan = ds.scan();
        if let Some(f) = req.filter.as_deref().filter(|f| !f.trim().is_empty()) {
            scan.filter(f)?;
        }
        if let Some(cols) = &req.columns {
            if let Some(aliases) = cols.column_aliases.as_ref().filter(|a| !a.is_empty()) {
                let pairs: Vec<(&str, &str)> = aliases
                    .iter()
                    .map(|(alias, col)| (alias.as_str(), col.as_str()))
                    .collect();
                scan.project_with_transform(&pairs)?;
            } else if let Some(names) = cols.column_names.as_ref().filter(|n| !n.is_empty()) {
                scan.project(names)?;
            }
        }
        let vector = req.vector.single_vector.clone().or_else(|| {
            req.vector
                .multi_vector
                .as_ref()
                .and_then(|m| m.first().cloned())
        });
        let k = if req.k > 0 { req.k as usize } else { 10 };
        if let Some(vector) = vector.filter(|v| !v.is_empty()) {
            let column = req
                .vector_column
                .clone()
                .unwrap_or_else(|| "vector".to_string());
            scan.nearest(&column, &Float32Array::from(vector), k)?;
            if let Some(d) = req.distance_type.as_deref() {
                let metric = MetricType::try_from(d)
                    .map_err(|e| CatalogError::invalid(format!("distance_type {d:?}: {e}")))?;
                scan.distance_metric(metric);
            }
            if let Some(n) = req.nprobes.filter(|n| *n > 0) {
                scan.nprobes(n as usize);
            }
            if let Some(r) = req.refine_factor.filter(|r| *r > 0) {
                scan.refine(r as u32);
            }
            if req.prefilter.unwrap_or(false) {
                scan.prefilter(true);
            }
        } else if let Some(fts) = req
            .full_text_query
            .as_ref()
            .and_then(|f| f.string_query.as_ref())
        {
            let mut q = FullTextSearchQuery::new(fts.query.clone());
            if let Some(cols) = fts.columns.as_ref().filter(|c| !c.is_empty()) {
                q = q.with_columns(cols)?;
            }
            scan.full_text_search(q)?;
            scan.limit(Some(k as i64), req.offset.map(i64::from))?;
        } else {
            scan.limit(Some(k as i64), req.offset.map(i64::from))?;
        }
        if req.with_row_id.unwrap_or(false) {
            scan.with_row_id();
        }
        let schema = scan.schema().await?;
        let batches: Vec<RecordBatch> = scan.try_into_stream().await?.try_collect().await?;
        let mut out = Vec::new();
        {
            let mut w = FileWriter::try_new(&mut out, &schema)?;
            for b in &batches {
                w.write(b)?;
            }
            w.finish()?;
        }
        Ok(Bytes::from(out))
    }

    pub(crate) async fn query_op(&self, mut req: QueryTableRequest) -> CatalogResult<Bytes> {
        let id = super::checks::table_id(&req.id)?;
        if let Some(branch) = super::open::branch_of(&req.branch) {
            return self.query_on_branch(&id, branch, &req).await;
        }
        req.id = Some(id.clone());
        super::engine(lance_namespace::LanceNamespace::query_table(self.inner.as_ref(), req).await)
            .map_err(|e| super::missing_table(e, &id))
    }
}
