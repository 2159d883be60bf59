//! QueryTable, answered as a stream: the scanner is set up as the engine's
//! query sets it up (search, probes, bounds, projection, filter, limit),
//! then its batches are encoded as Arrow IPC as Lance produces them
//! (`ipc_out.rs`) instead of being gathered into one batch and one
//! buffer first. Main line and branches, every transport, one path.

use arrow_array::Float32Array;
use futures::{StreamExt, TryStreamExt};
use lance::dataset::scanner::Scanner;
use lance_index::scalar::inverted::query::{
    BooleanQuery, BoostQuery, FtsQuery, MatchQuery, MultiMatchQuery, Occur, Operator, PhraseQuery,
};
use lance_index::scalar::FullTextSearchQuery;
use lance_linalg::distance::MetricType;
use lance_namespace::models::{self, QueryTableRequest};

use crate::core::branch::open::branch_of;
use crate::core::checks::table_id;
use crate::core::data::ipc_out::Framing;
use crate::core::data::rows::Chunks;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult};

impl Catalog {
    /// The answer to a query: Arrow IPC framed as asked, chunk by chunk.
    /// Planning errors (a bad filter, a missing column) are returned before
    /// the first chunk, so they keep their status.
    pub async fn query_answer(
        &self,
        req: QueryTableRequest,
        framing: Framing,
    ) -> CatalogResult<Chunks> {
        crate::core::data::sql_text::check_request(&req)?;
        let stream = self.query_scanner(&req).await?.try_into_stream().await?;
        // The stream's own schema: what its batches carry.
        let schema = lance::io::RecordBatchStream::schema(&stream);
        let batches = stream.map_err(|e| CatalogError::from_lance(&e)).boxed();
        Ok(framing.encode(schema, batches))
    }
}

impl Catalog {
    /// The scanner of a query: its table (branch, version) set up as the
    /// engine sets it up. Queries and the plans of queries on branches.
    pub(crate) async fn query_scanner(&self, req: &QueryTableRequest) -> CatalogResult<Scanner> {
        let id = table_id(&req.id)?;
        if req.k < 0 || req.offset.is_some_and(|o| o < 0) {
            return Err(CatalogError::invalid("k and offset must not be negative"));
        }
        let mut ds = self.open_table(&id, branch_of(&req.branch)).await?;
        if let Some(v) = req.version {
            let v = u64::try_from(v)
                .map_err(|_| CatalogError::invalid(format!("version {v} is not a version")))?;
            ds = self.checkout(ds, v, &id).await?;
        }
        let mut scanner = ds.scan();
        apply(&mut scanner, req)?;
        Ok(scanner)
    }

    /// The plan of a query: explained, or run and analysed (for queries on
    /// a branch, which the engine would answer from the main line).
    pub(crate) async fn query_plan(
        &self,
        req: &QueryTableRequest,
        analyze: bool,
        verbose: bool,
    ) -> CatalogResult<String> {
        let scanner = self.query_scanner(req).await?;
        Ok(match analyze {
            true => scanner.analyze_plan().await?,
            false => scanner.explain_plan(verbose).await?,
        })
    }
}

fn invalid(what: &str, e: impl std::fmt::Display) -> CatalogError {
    CatalogError::invalid(format!("invalid {what}: {e}"))
}

/// Set up `scanner` for `req`, in the engine's order (prefilter before
/// the search; the limit is `k` rows unless a vector search took `k`).
fn apply(scanner: &mut Scanner, req: &QueryTableRequest) -> CatalogResult<()> {
    if let Some(prefilter) = req.prefilter {
        scanner.prefilter(prefilter);
    }
    let vector = req
        .vector
        .single_vector
        .clone()
        .filter(|v| !v.is_empty())
        .or_else(|| {
            req.vector
                .multi_vector
                .as_ref()
                .and_then(|m| m.first().cloned())
                .filter(|v| !v.is_empty())
        });
    if let Some(vector) = &vector {
        let column = req.vector_column.as_deref().unwrap_or("vector");
        let k = if req.k > 0 { req.k as usize } else { 10 };
        scanner
            .nearest(column, &Float32Array::from(vector.clone()), k)
            .map_err(|e| invalid("vector search", e))?;
        if let Some(d) = req.distance_type.as_deref() {
            scanner.distance_metric(metric(d)?);
        }
        probes(scanner, req)?;
        if let Some(ef) = req.ef {
            scanner.ef(ef.max(1) as usize);
        }
        if let Some(r) = req.refine_factor {
            scanner.refine(r.max(0) as u32);
        }
        if req.lower_bound.is_some() || req.upper_bound.is_some() {
            scanner.distance_range(req.lower_bound, req.upper_bound);
        }
        if let Some(bypass) = req.bypass_vector_index {
            scanner.use_index(!bypass);
        }
        if req.fast_search == Some(true) {
            scanner.fast_search();
        }
    }
    if let Some(fts) = req.full_text_query.as_deref() {
        if let Some(q) = &fts.string_query {
            let mut query = FullTextSearchQuery::new(q.query.clone());
            if let Some(cols) = q.columns.as_ref().filter(|c| !c.is_empty()) {
                query = query
                    .with_columns(cols)
                    .map_err(|e| invalid("full-text columns", e))?;
            }
            scanner
                .full_text_search(query)
                .map_err(|e| invalid("full-text search", e))?;
        } else if let Some(q) = &fts.structured_query {
            let query = FullTextSearchQuery::new_query(fts_query(&q.query)?);
            scanner
                .full_text_search(query)
                .map_err(|e| invalid("full-text search", e))?;
        }
    }
    if let Some(columns) = req.columns.as_deref() {
        if let Some(names) = columns.column_names.as_ref().filter(|n| !n.is_empty()) {
            scanner
                .project(names)
                .map_err(|e| invalid("column projection", e))?;
        } else if let Some(aliases) = columns.column_aliases.as_ref().filter(|a| !a.is_empty()) {
            let pairs: Vec<(&str, &str)> = aliases
                .iter()
                .map(|(alias, expr)| (alias.as_str(), expr.as_str()))
                .collect();
            scanner
                .project_with_transform(&pairs)
                .map_err(|e| invalid("column aliases", e))?;
        }
    }
    if let Some(filter) = req.filter.as_deref().filter(|f| !f.is_empty()) {
        scanner.filter(filter).map_err(|e| invalid("filter", e))?;
    }
    if req.with_row_id == Some(true) {
        scanner.with_row_id();
    }
    let offset = req.offset.map(i64::from);
    let limited = match vector {
        None if req.k > 0 => scanner.limit(Some(req.k as i64), offset),
        Some(_) if offset.is_some() => scanner.limit(None, offset),
        _ => Ok(scanner),
    };
    limited.map_err(|e| invalid("limit or offset", e))?;
    Ok(())
}

/// The metric names the engine accepts.
fn metric(name: &str) -> CatalogResult<MetricType> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "l2" | "euclidean" => MetricType::L2,
        "cosine" => MetricType::Cosine,
        "dot" | "inner_product" => MetricType::Dot,
        "hamming" => MetricType::Hamming,
        _ => {
            return Err(CatalogError::invalid(format!(
                "unknown distance type {name:?}: use l2, cosine, dot or hamming"
            )))
        }
    })
}

/// `nprobes` with its bounds; a maximum of 0 means unbounded.
fn probes(scanner: &mut Scanner, req: &QueryTableRequest) -> CatalogResult<()> {
    let count = |name: &str, v: i32| {
        usize::try_from(v)
            .map_err(|_| CatalogError::invalid(format!("{name} must not be negative")))
    };
    let unbounded = req.maximum_nprobes == Some(0);
    if let Some(n) = req.nprobes {
        let n = count("nprobes", n)?;
        match unbounded {
            true => scanner.minimum_nprobes(n),
            false => scanner.nprobes(n),
        };
    }
    if let Some(n) = req.minimum_nprobes {
        scanner.minimum_nprobes(count("minimum_nprobes", n)?);
    }
    if let Some(n) = req.maximum_nprobes.filter(|n| *n != 0) {
        scanner.maximum_nprobes(count("maximum_nprobes", n)?);
    }
    Ok(())
}

/// A structured full-text query in the engine's terms.
fn fts_query(q: &models::FtsQuery) -> CatalogResult<FtsQuery> {
    if let Some(m) = &q.r#match {
        return Ok(FtsQuery::Match(match_query(m)?));
    }
    if let Some(p) = &q.phrase {
        let mut phrase = PhraseQuery::new(p.terms.clone()).with_column(p.column.clone());
        if let Some(slop) = p.slop {
            phrase = phrase.with_slop(slop.max(0) as u32);
        }
        return Ok(FtsQuery::Phrase(phrase));
    }
    if let Some(mm) = &q.multi_match {
        let match_queries = mm
            .match_queries
            .iter()
            .map(match_query)
            .collect::<CatalogResult<Vec<_>>>()?;
        return Ok(FtsQuery::MultiMatch(MultiMatchQuery { match_queries }));
    }
    if let Some(b) = &q.boolean {
        let mut clauses = Vec::new();
        for clause in &b.must {
            clauses.push((Occur::Must, fts_query(clause)?));
        }
        for clause in &b.should {
            clauses.push((Occur::Should, fts_query(clause)?));
        }
        for clause in &b.must_not {
            clauses.push((Occur::MustNot, fts_query(clause)?));
        }
        return Ok(FtsQuery::Boolean(BooleanQuery::new(clauses)));
    }
    if let Some(boost) = &q.boost {
        return Ok(FtsQuery::Boost(BoostQuery::new(
            fts_query(&boost.positive)?,
            fts_query(&boost.negative)?,
            boost.negative_boost,
        )));
    }
    Err(CatalogError::invalid(
        "structured_query.query must set exactly one of match, phrase, multi_match, boolean or boost",
    ))
}

fn match_query(m: &models::MatchQuery) -> CatalogResult<MatchQuery> {
    let mut q = MatchQuery::new(m.terms.clone()).with_column(m.column.clone());
    if let Some(boost) = m.boost {
        q = q.with_boost(boost);
    }
    if let Some(f) = m.fuzziness {
        q = q.with_fuzziness(Some(f.max(0) as u32));
    }
    if let Some(n) = m.max_expansions {
        q = q.with_max_expansions(n.max(0) as usize);
    }
    if let Some(op) = m.operator.as_deref() {
        q = q.with_operator(Operator::try_from(op).map_err(|e| invalid("full-text operator", e))?);
    }
    if let Some(n) = m.prefix_length {
        q = q.with_prefix_length(n.max(0) as u32);
    }
    Ok(q)
}
