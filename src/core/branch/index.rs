//! An index request's parameters, as the catalog builds the index itself
//! on the table it opened (`writes.rs`): the type names Lance's directory
//! namespace accepts, and the tuning fields of the request it ignores
//! (partitions, sub-vectors, bits, sample rate, iterations, HNSW's `m`
//! and `ef_construction`) honoured where the index type has them.

use lance::index::vector::VectorIndexParams;
use lance::index::IndexParams;
use lance_index::scalar::{BuiltinIndexType, InvertedIndexParams, ScalarIndexParams};
use lance_index::vector::bq::{validate_supported_rq_num_bits, RQBuildParams};
use lance_index::vector::hnsw::builder::HnswBuildParams;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_index::vector::sq::builder::SQBuildParams;
use lance_index::IndexType;
use lance_linalg::distance::MetricType;
use lance_namespace::models::CreateTableIndexRequest;

use crate::error::{CatalogError, CatalogResult};

pub(crate) enum Params {
    Scalar(IndexType, ScalarIndexParams),
    Inverted(InvertedIndexParams),
    Vector(IndexType, VectorIndexParams),
}

impl Params {
    pub(crate) fn index_type(&self) -> IndexType {
        match self {
            Params::Scalar(t, _) | Params::Vector(t, _) => *t,
            Params::Inverted(_) => IndexType::Inverted,
        }
    }
    pub(crate) fn params(&self) -> &dyn IndexParams {
        match self {
            Params::Scalar(_, p) => p,
            Params::Inverted(p) => p,
            Params::Vector(_, p) => p,
        }
    }
    pub(crate) fn is_vector(&self) -> bool {
        matches!(self, Params::Vector(..))
    }
}

fn metric(distance: Option<&str>) -> CatalogResult<MetricType> {
    let d = distance.unwrap_or("l2");
    MetricType::try_from(d)
        .map_err(|e| CatalogError::invalid(format!("unsupported distance_type {d:?}: {e}")))
}

/// A tuning field that must be a positive count when given.
fn count(value: Option<i32>, field: &str) -> CatalogResult<Option<usize>> {
    match value {
        None => Ok(None),
        Some(v) if v > 0 => Ok(Some(v as usize)),
        Some(v) => Err(CatalogError::invalid(format!(
            "{field} must be a positive number, got {v}"
        ))),
    }
}

fn ivf(req: &CreateTableIndexRequest) -> CatalogResult<IvfBuildParams> {
    let mut p = IvfBuildParams::default();
    if let Some(n) = count(req.num_partitions, "num_partitions")? {
        p.num_partitions = Some(n);
    }
    if let Some(n) = count(req.target_partition_size, "target_partition_size")? {
        p.target_partition_size = Some(n);
    }
    if let Some(n) = count(req.max_iterations, "max_iterations")? {
        p.max_iters = n;
    }
    if let Some(n) = count(req.sample_rate, "sample_rate")? {
        p.sample_rate = n;
    }
    Ok(p)
}

fn pq(req: &CreateTableIndexRequest) -> CatalogResult<PQBuildParams> {
    let mut p = PQBuildParams::default();
    if let Some(n) = count(req.num_sub_vectors, "num_sub_vectors")? {
        p.num_sub_vectors = n;
    }
    if let Some(n) = count(req.num_bits, "num_bits")? {
        p.num_bits = n;
    }
    if let Some(n) = count(req.max_iterations, "max_iterations")? {
        p.max_iters = n;
    }
    if let Some(n) = count(req.sample_rate, "sample_rate")? {
        p.sample_rate = n;
    }
    Ok(p)
}

fn sq(req: &CreateTableIndexRequest) -> CatalogResult<SQBuildParams> {
    let mut p = SQBuildParams::default();
    if let Some(n) = count(req.num_bits, "num_bits")? {
        p.num_bits = u16::try_from(n)
            .map_err(|_| CatalogError::invalid(format!("num_bits {n} is too large")))?;
    }
    if let Some(n) = count(req.sample_rate, "sample_rate")? {
        p.sample_rate = n;
    }
    Ok(p)
}

fn rq(req: &CreateTableIndexRequest) -> CatalogResult<RQBuildParams> {
    let Some(bits) = req.num_bits else {
        return Ok(RQBuildParams::default());
    };
    let bits = u8::try_from(bits)
        .ok()
        .filter(|b| validate_supported_rq_num_bits(*b).is_ok())
        .ok_or_else(|| CatalogError::invalid(format!("IVF_RQ num_bits {bits} is not supported")))?;
    Ok(RQBuildParams::new(bits))
}

fn hnsw(req: &CreateTableIndexRequest) -> CatalogResult<HnswBuildParams> {
    let mut p = HnswBuildParams::default();
    if let Some(n) = count(req.m, "m")? {
        p.m = n;
    }
    if let Some(n) = count(req.ef_construction, "ef_construction")? {
        p.ef_construction = n;
    }
    Ok(p)
}

fn inverted(req: &CreateTableIndexRequest) -> CatalogResult<InvertedIndexParams> {
    let mut p = InvertedIndexParams::default();
    if let Some(w) = req.with_position {
        p = p.with_position(w);
    }
    if let Some(t) = &req.base_tokenizer {
        p = p.base_tokenizer(t.clone());
    }
    if let Some(l) = &req.language {
        p = p
            .language(l)
            .map_err(|e| CatalogError::invalid(format!("language {l:?}: {e}")))?;
    }
    if let Some(n) = req.max_token_length {
        let n = usize::try_from(n).map_err(|_| {
            CatalogError::invalid(format!("max_token_length must not be negative, got {n}"))
        })?;
        p = p.max_token_length(Some(n));
    }
    if let Some(l) = req.lower_case {
        p = p.lower_case(l);
    }
    if let Some(s) = req.stem {
        p = p.stem(s);
    }
    if let Some(s) = req.remove_stop_words {
        p = p.remove_stop_words(s);
    }
    if let Some(a) = req.ascii_folding {
        p = p.ascii_folding(a);
    }
    Ok(p)
}

pub(crate) fn params_for(req: &CreateTableIndexRequest) -> CatalogResult<Params> {
    let scalar = |t, b| Ok(Params::Scalar(t, ScalarIndexParams::for_builtin(b)));
    let m = || metric(req.distance_type.as_deref());
    match req.index_type.trim().to_ascii_uppercase().as_str() {
        "SCALAR" | "BTREE" => scalar(IndexType::BTree, BuiltinIndexType::BTree),
        "BITMAP" => scalar(IndexType::Bitmap, BuiltinIndexType::Bitmap),
        "LABEL_LIST" | "LABELLIST" => scalar(IndexType::LabelList, BuiltinIndexType::LabelList),
        "NGRAM" => scalar(IndexType::NGram, BuiltinIndexType::NGram),
        "ZONEMAP" | "ZONE_MAP" => scalar(IndexType::ZoneMap, BuiltinIndexType::ZoneMap),
        "BLOOMFILTER" | "BLOOM_FILTER" => {
            scalar(IndexType::BloomFilter, BuiltinIndexType::BloomFilter)
        }
        "RTREE" | "R_TREE" => scalar(IndexType::RTree, BuiltinIndexType::RTree),
        "INVERTED" | "FTS" => Ok(Params::Inverted(inverted(req)?)),
        "VECTOR" | "IVF_PQ" => Ok(Params::Vector(
            IndexType::IvfPq,
            VectorIndexParams::with_ivf_pq_params(m()?, ivf(req)?, pq(req)?),
        )),
        "IVF_FLAT" => Ok(Params::Vector(
            IndexType::IvfFlat,
            VectorIndexParams::with_ivf_flat_params(m()?, ivf(req)?),
        )),
        "IVF_SQ" => Ok(Params::Vector(
            IndexType::IvfSq,
            VectorIndexParams::with_ivf_sq_params(m()?, ivf(req)?, sq(req)?),
        )),
        "IVF_RQ" => Ok(Params::Vector(
            IndexType::IvfRq,
            VectorIndexParams::with_ivf_rq_params(m()?, ivf(req)?, rq(req)?),
        )),
        "IVF_HNSW_FLAT" => Ok(Params::Vector(
            IndexType::IvfHnswFlat,
            VectorIndexParams::ivf_hnsw(m()?, ivf(req)?, hnsw(req)?),
        )),
        "IVF_HNSW_SQ" => Ok(Params::Vector(
            IndexType::IvfHnswSq,
            VectorIndexParams::with_ivf_hnsw_sq_params(m()?, ivf(req)?, hnsw(req)?, sq(req)?),
        )),
        "IVF_HNSW_PQ" => Ok(Params::Vector(
            IndexType::IvfHnswPq,
            VectorIndexParams::with_ivf_hnsw_pq_params(m()?, ivf(req)?, hnsw(req)?, pq(req)?),
        )),
        other => Err(CatalogError::invalid(format!(
            "unsupported index_type {other:?}; use BTREE, BITMAP, LABEL_LIST, NGRAM, ZONEMAP, BLOOMFILTER, RTREE, INVERTED, IVF_PQ, IVF_FLAT, IVF_SQ, IVF_RQ, IVF_HNSW_FLAT, IVF_HNSW_SQ or IVF_HNSW_PQ"
        ))),
    }
}
