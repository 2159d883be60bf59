//! Streaming scans: the one way the core reads rows itself. A [`ScanSpec`]
//! says what to read (table, branch, version, filter, columns, vector or
//! full-text search, offset / limit); [`Catalog::scan`] answers a stream of
//! record batches straight from the Lance scanner, never the whole result.
//! Arrow Flight tickets are ScanSpecs in JSON (spec queries have their own
//! setup, `query.rs`).

use std::collections::HashMap;

use arrow_array::{Float32Array, RecordBatch};
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use lance_index::scalar::FullTextSearchQuery;
use lance_linalg::distance::MetricType;
use serde::{Deserialize, Serialize};

use crate::core::branch::open::branch_of;
use crate::core::checks::table_id;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// What to read from a table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanSpec {
    /// The table id segments.
    pub id: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<String>>,
    /// Output alias -> source column (instead of `columns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_aliases: Option<HashMap<String, String>>,
    /// Nearest-neighbour search: the query vector, its column, `k`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<Vec<f32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_column: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nprobes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refine_factor: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefilter: Option<bool>,
    /// Full-text search terms, optionally limited to some columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_text_query: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_text_columns: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_row_id: Option<bool>,
}

/// A stream of record batches with its schema.
pub struct Scan {
    pub schema: SchemaRef,
    /// The number of rows the scan yields, when it is known up front (a
    /// scan with no filter, search, offset or limit).
    pub exact_rows: Option<u64>,
    pub batches: BoxStream<'static, CatalogResult<RecordBatch>>,
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan")
            .field("schema", &self.schema)
            .field("exact_rows", &self.exact_rows)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// Start a scan; batches arrive as Lance produces them.
    pub async fn scan(&self, spec: &ScanSpec) -> CatalogResult<Scan> {
        let (scan, exact_rows) = self.scanner(spec).await?;
        let schema = scan.schema().await?;
        let batches = scan
            .try_into_stream()
            .await?
            .map_err(|e| CatalogError::from_lance(&e))
            .boxed();
        Ok(Scan {
            schema,
            exact_rows,
            batches,
        })
    }

    /// What a scan of `spec` would stream, without starting it: the schema
    /// of the plan `scan` would run (so exactly DoGet's: projection order,
    /// aliases, blob columns as descriptions, `_rowid`, `_distance`,
    /// `_score`), and the row count when known up front. Planning reads the
    /// manifest, and index metadata for a search; never a data file.
    pub async fn scan_outline(&self, spec: &ScanSpec) -> CatalogResult<(SchemaRef, Option<u64>)> {
        let (scan, exact_rows) = self.scanner(spec).await?;
        Ok((scan.schema().await?, exact_rows))
    }

    /// A Lance scanner for `spec`, and the row count when it is known up
    /// front.
    async fn scanner(
        &self,
        spec: &ScanSpec,
    ) -> CatalogResult<(lance::dataset::scanner::Scanner, Option<u64>)> {
        let id = table_id(&Some(spec.id.clone()))?;
        let branch = branch_of(&spec.branch);
        let mut ds = self.open_table(&id, branch).await?;
        if let Some(v) = spec.version {
            ds = self.checkout(ds, v, &id).await?;
        }
        let whole = spec.filter.is_none()
            && spec.vector.is_none()
            && spec.full_text_query.is_none()
            && spec.offset.is_none()
            && spec.limit.is_none();
        let exact_rows = if whole {
            ds.count_rows(None).await.ok().map(|n| n as u64)
        } else {
            None
        };
        let mut scan = ds.scan();
        if let Some(f) = spec.filter.as_deref().filter(|f| !f.trim().is_empty()) {
            crate::core::data::sql_text::check_sql("filter", f)?;
            scan.filter(f)?;
        }
        for expr in spec.column_aliases.iter().flat_map(|a| a.values()) {
            crate::core::data::sql_text::check_sql("column expression", expr)?;
        }
        if let Some(aliases) = spec.column_aliases.as_ref().filter(|a| !a.is_empty()) {
            let pairs: Vec<(&str, &str)> = aliases
                .iter()
                .map(|(alias, col)| (alias.as_str(), col.as_str()))
                .collect();
            scan.project_with_transform(&pairs)?;
        } else if let Some(names) = spec.columns.as_ref().filter(|n| !n.is_empty()) {
            scan.project(names)?;
        }
        if let Some(vector) = spec.vector.clone() {
            let column = spec
                .vector_column
                .clone()
                .unwrap_or_else(|| "vector".to_string());
            scan.nearest(&column, &Float32Array::from(vector), spec.k.unwrap_or(10))?;
            if let Some(d) = spec.distance_type.as_deref() {
                let metric = MetricType::try_from(d)
                    .map_err(|e| CatalogError::invalid(format!("distance_type {d:?}: {e}")))?;
                scan.distance_metric(metric);
            }
            if let Some(n) = spec.nprobes {
                scan.nprobes(n);
            }
            if let Some(r) = spec.refine_factor {
                scan.refine(r);
            }
            if spec.prefilter.unwrap_or(false) {
                scan.prefilter(true);
            }
        } else if let Some(q) = spec.full_text_query.as_deref() {
            let mut query = FullTextSearchQuery::new(q.to_string());
            if let Some(cols) = spec.full_text_columns.as_ref().filter(|c| !c.is_empty()) {
                query = query.with_columns(cols)?;
            }
            scan.full_text_search(query)?;
        }
        if spec.limit.is_some() || spec.offset.is_some() {
            scan.limit(spec.limit, spec.offset)?;
        }
        if spec.with_row_id.unwrap_or(false) {
            scan.with_row_id();
        }
        Ok((scan, exact_rows))
    }

    /// The dataset as of `version`, or TableVersionNotFound (11).
    pub(crate) async fn checkout(
        &self,
        ds: lance::Dataset,
        version: u64,
        id: &[String],
    ) -> CatalogResult<lance::Dataset> {
        // A batch's claim is on the main line's versions only.
        let on_main = ds.manifest.branch.is_none();
        let undecided = on_main
            && self
                .intent_on(id)
                .await?
                .is_some_and(|i| i.hides(version as i64));
        if undecided {
            return Err(CatalogError::new(
                Code::TABLE_VERSION_NOT_FOUND,
                format!(
                    "table {} has no version {version}",
                    crate::core::checks::display_id(id)
                ),
            ));
        }
        ds.checkout_version(version).await.map_err(|e| {
            let err = CatalogError::from_lance(&e);
            if matches!(
                err.code,
                Code::TABLE_NOT_FOUND | Code::TABLE_VERSION_NOT_FOUND
            ) || err.message.to_ascii_lowercase().contains("not found")
            {
                CatalogError::new(
                    Code::TABLE_VERSION_NOT_FOUND,
                    format!(
                        "table {} has no version {version}",
                        crate::core::checks::display_id(id)
                    ),
                )
            } else {
                err
            }
        })
    }
}
