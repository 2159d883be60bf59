//! Index creation on a branch. The engine builds indexes on the main line
//! only; on a branch the core opens the branch head and builds the index
//! there, with the same type names and default parameters.

use lance::index::vector::VectorIndexParams;
use lance::index::{DatasetIndexExt, IndexParams};
use lance_index::scalar::{BuiltinIndexType, InvertedIndexParams, ScalarIndexParams};
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_index::vector::sq::builder::SQBuildParams;
use lance_index::IndexType;
use lance_linalg::distance::MetricType;
use lance_namespace::models::{CreateTableIndexRequest, CreateTableIndexResponse};

use crate::core::checks::display_id;
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

enum Params {
    Scalar(IndexType, ScalarIndexParams),
    Inverted(InvertedIndexParams),
    Vector(IndexType, VectorIndexParams),
}

impl Params {
    fn index_type(&self) -> IndexType {
        match self {
            Params::Scalar(t, _) | Params::Vector(t, _) => *t,
            Params::Inverted(_) => IndexType::Inverted,
        }
    }
    fn params(&self) -> &dyn IndexParams {
        match self {
            Params::Scalar(_, p) => p,
            Params::Inverted(p) => p,
            Params::Vector(_, p) => p,
        }
    }
}

fn metric(distance: Option<&str>) -> CatalogResult<MetricType> {
    let d = distance.unwrap_or("l2");
    MetricType::try_from(d)
        .map_err(|e| CatalogError::invalid(format!("unsupported distance_type {d:?}: {e}")))
}

fn params_for(req: &CreateTableIndexRequest) -> CatalogResult<Params> {
    let scalar = |t, b| Ok(Params::Scalar(t, ScalarIndexParams::for_builtin(b)));
    match req.index_type.trim().to_ascii_uppercase().as_str() {
        "SCALAR" | "BTREE" => scalar(IndexType::BTree, BuiltinIndexType::BTree),
        "BITMAP" => scalar(IndexType::Bitmap, BuiltinIndexType::Bitmap),
        "LABEL_LIST" | "LABELLIST" => scalar(IndexType::LabelList, BuiltinIndexType::LabelList),
        "NGRAM" => scalar(IndexType::NGram, BuiltinIndexType::NGram),
        "ZONEMAP" | "ZONE_MAP" => scalar(IndexType::ZoneMap, BuiltinIndexType::ZoneMap),
        "BLOOMFILTER" | "BLOOM_FILTER" => {
            scalar(IndexType::BloomFilter, BuiltinIndexType::BloomFilter)
        }
        "INVERTED" | "FTS" => {
            let mut p = InvertedIndexParams::default();
            if let Some(w) = req.with_position {
                p = p.with_position(w);
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
            Ok(Params::Inverted(p))
        }
        "VECTOR" | "IVF_PQ" => Ok(Params::Vector(
            IndexType::IvfPq,
            VectorIndexParams::with_ivf_pq_params(
                metric(req.distance_type.as_deref())?,
                IvfBuildParams::default(),
                PQBuildParams::default(),
            ),
        )),
        "IVF_FLAT" => Ok(Params::Vector(
            IndexType::IvfFlat,
            VectorIndexParams::with_ivf_flat_params(
                metric(req.distance_type.as_deref())?,
                IvfBuildParams::default(),
            ),
        )),
        "IVF_SQ" => Ok(Params::Vector(
            IndexType::IvfSq,
            VectorIndexParams::with_ivf_sq_params(
                metric(req.distance_type.as_deref())?,
                IvfBuildParams::default(),
                SQBuildParams::default(),
            ),
        )),
        other => Err(CatalogError::invalid(format!(
            "index type {other:?} cannot be built on a branch; use BTREE, BITMAP, LABEL_LIST, NGRAM, ZONEMAP, BLOOMFILTER, INVERTED, IVF_PQ, IVF_FLAT or IVF_SQ"
        ))),
    }
}

impl Catalog {
    pub(crate) async fn create_index_on_branch(
        &self,
        id: &[String],
        branch: &str,
        req: &CreateTableIndexRequest,
    ) -> CatalogResult<CreateTableIndexResponse> {
        let params = params_for(req)?;
        let mut ds = self.open_table(id, Some(branch)).await?;
        if ds.schema().field(&req.column).is_none() {
            return Err(CatalogError::new(
                Code::TABLE_COLUMN_NOT_FOUND,
                format!("table {} has no column {:?}", display_id(id), req.column),
            ));
        }
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
        Ok(CreateTableIndexResponse::default())
    }
}
