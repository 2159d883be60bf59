//! Running a task with Lance: compaction (`compact_files`), cleanup
//! (`cleanup_old_versions`, which never removes the latest version or a
//! tagged one), index builds and index optimisation. Each returns what
//! Lance reported, as the task's `result`.

use lance::dataset::cleanup::{cleanup_old_versions, CleanupPolicyBuilder};
use lance::dataset::optimize::{compact_files, CompactionMode, CompactionOptions};
use lance::index::vector::VectorIndexParams;
use lance::index::{DatasetIndexExt, IndexParams};
use lance::Dataset;
use lance_index::optimize::OptimizeOptions;
use lance_index::scalar::{BuiltinIndexType, InvertedIndexParams, ScalarIndexParams};
use lance_index::vector::bq::RQBuildParams;
use lance_index::vector::hnsw::builder::HnswBuildParams;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_index::vector::sq::builder::SQBuildParams;
use lance_index::IndexType;
use lance_linalg::distance::MetricType;
use serde_json::{json, Map, Value};

use super::TaskKind;
use crate::core::engine;
use crate::error::{CatalogError, CatalogResult, Code};

/// Commit conflicts a compaction retries with a fresh plan.
const COMPACT_RETRIES: usize = 3;

struct P<'a>(&'a Map<String, Value>);

impl P<'_> {
    fn int(&self, name: &str) -> Option<i64> {
        self.0.get(name).and_then(Value::as_i64)
    }
    fn usize(&self, name: &str, default: usize) -> usize {
        self.int(name).map(|v| v.max(0) as usize).unwrap_or(default)
    }
    fn bool(&self, name: &str) -> Option<bool> {
        self.0.get(name).and_then(Value::as_bool)
    }
    fn str(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }
}

/// Run task `task_type` with `params` on `ds` (the head of table `id` of
/// `catalog`).
pub(super) async fn execute(
    catalog: &crate::core::Catalog,
    id: &[String],
    mut ds: Dataset,
    task_type: &str,
    params: &Map<String, Value>,
) -> CatalogResult<Map<String, Value>> {
    let p = P(params);
    let read_version = ds.version().version;
    let Some(kind) = TaskKind::parse(task_type) else {
        return Err(CatalogError::invalid(format!(
            "task type {task_type:?} is not one this catalog runs"
        )));
    };
    let mut result = match kind {
        TaskKind::Compact => compact(&mut ds, &p).await?,
        TaskKind::Cleanup => {
            // The pre-pass: no link in the table's directory, and the
            // versions a shallow clone's files need stay.
            let pin = catalog.cleanup_prepass(id).await?;
            cleanup(&ds, &p, pin).await?
        }
        TaskKind::ScalarIndex => create_index(&mut ds, &p, false).await?,
        TaskKind::VectorIndex => create_index(&mut ds, &p, true).await?,
        TaskKind::OptimizeIndices => optimize(&mut ds, &p).await?,
        TaskKind::Backfill | TaskKind::Refresh => {
            return Err(CatalogError::internal(format!(
                "{task_type} is a job, run by the job API, not a queued task"
            )))
        }
    };
    result.insert("read_version".into(), json!(read_version));
    result.insert("version".into(), json!(ds.version().version));
    Ok(result)
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Lance's compaction options for a compaction task's (checked)
/// parameters: what the task runs and what the scheduler plans with.
pub(super) fn compaction_options(params: &Map<String, Value>) -> CompactionOptions {
    let p = &P(params);
    let mode = match p.str("compaction_mode").unwrap_or("reencode") {
        "try_binary_copy" => CompactionMode::TryBinaryCopy,
        "force_binary_copy" => CompactionMode::ForceBinaryCopy,
        _ => CompactionMode::Reencode,
    };
    CompactionOptions {
        target_rows_per_fragment: p.usize("target_rows_per_fragment", 1024 * 1024),
        max_rows_per_group: p.usize("max_rows_per_group", 1024),
        max_bytes_per_file: p
            .int("max_bytes_per_file")
            .filter(|b| *b > 0)
            .map(|b| b as usize),
        materialize_deletions: p.bool("materialize_deletions").unwrap_or(true),
        materialize_deletions_threshold: p
            .0
            .get("materialize_deletions_threshold")
            .and_then(Value::as_f64)
            .unwrap_or(0.1) as f32,
        compaction_mode: Some(mode),
        ..Default::default()
    }
}

async fn compact(ds: &mut Dataset, p: &P<'_>) -> CatalogResult<Map<String, Value>> {
    let options = compaction_options(p.0);
    let fragments_before = ds.count_fragments();
    let mut attempt = 0;
    let metrics = loop {
        attempt += 1;
        match compact_files(ds, options.clone(), None).await {
            Ok(m) => break m,
            // Another writer committed meanwhile: plan again on its result.
            Err(e)
                if attempt < COMPACT_RETRIES
                    && CatalogError::from_lance(&e).code == Code::CONCURRENT_MODIFICATION =>
            {
                engine(ds.checkout_latest().await)?;
            }
            Err(e) => return Err(CatalogError::from_lance(&e)),
        }
    };
    let mut out = object(serde_json::to_value(&metrics).unwrap_or_default());
    out.insert("fragments_before".into(), json!(fragments_before));
    out.insert("fragments_after".into(), json!(ds.count_fragments()));
    Ok(out)
}

/// `older_than`: a non-negative whole number and one unit (`7d`, `168h`,
/// `30m`, `45s`); nothing else (no `1w`, `1.5d`, `1h30m`, `7D`).
pub(super) fn parse_older_than(s: &str) -> CatalogResult<chrono::Duration> {
    let bad = || {
        CatalogError::invalid(format!(
            "older_than {s:?} must be a whole number and one unit of d, h, m or s (e.g. \"7d\")"
        ))
    };
    let (digits, unit) = s.split_at(s.len().saturating_sub(1));
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: i64 = digits.parse().map_err(|_| bad())?;
    let secs = match unit {
        "d" => n.checked_mul(86_400),
        "h" => n.checked_mul(3_600),
        "m" => n.checked_mul(60),
        "s" => Some(n),
        _ => None,
    }
    .ok_or_else(bad)?;
    chrono::Duration::try_seconds(secs).ok_or_else(bad)
}

async fn cleanup(ds: &Dataset, p: &P<'_>, pin: Option<u64>) -> CatalogResult<Map<String, Value>> {
    let mut builder = CleanupPolicyBuilder::default()
        .delete_unverified(false)
        .error_if_tagged_old_versions(false);
    let older_than = p.str("older_than").unwrap_or("");
    if !older_than.is_empty() {
        let age = parse_older_than(older_than)?;
        builder = builder.before_timestamp(chrono::Utc::now() - age);
    }
    let retain = p.usize("retain_versions", 0);
    if retain > 0 {
        builder = engine(builder.retain_n_versions(ds, retain).await)?;
    }
    let mut policy = builder.build();
    if let Some(pin) = pin {
        policy.before_version = Some(policy.before_version.map_or(pin, |v| v.min(pin)));
    }
    let versions_before = engine(ds.versions().await)?.len();
    let stats = engine(cleanup_old_versions(ds, policy).await)?;
    let mut out = object(json!({
        "bytes_removed": stats.bytes_removed,
        "old_versions_removed": stats.old_versions,
        "data_files_removed": stats.data_files_removed,
        "transaction_files_removed": stats.transaction_files_removed,
        "index_files_removed": stats.index_files_removed,
        "deletion_files_removed": stats.deletion_files_removed,
        "failed_deletes": stats.failed_deletes,
    }));
    out.insert("versions_before".into(), json!(versions_before));
    if let Some(pin) = pin {
        // Kept, with every later version, for a shallow clone's files.
        out.insert("kept_for_clones_from_version".into(), json!(pin));
    }
    out.insert(
        "versions_after".into(),
        json!(engine(ds.versions().await)?.len()),
    );
    Ok(out)
}

enum Built {
    Scalar(IndexType, ScalarIndexParams),
    Inverted(InvertedIndexParams),
    Vector(IndexType, VectorIndexParams),
}

impl Built {
    fn kind(&self) -> IndexType {
        match self {
            Built::Scalar(t, _) | Built::Vector(t, _) => *t,
            Built::Inverted(_) => IndexType::Inverted,
        }
    }
    fn params(&self) -> &dyn IndexParams {
        match self {
            Built::Scalar(_, p) => p,
            Built::Inverted(p) => p,
            Built::Vector(_, p) => p,
        }
    }
}

fn scalar_params(p: &P<'_>) -> CatalogResult<Built> {
    let b = |t, b| Ok(Built::Scalar(t, ScalarIndexParams::for_builtin(b)));
    match p.str("index_type").unwrap_or("BTREE") {
        "BITMAP" => b(IndexType::Bitmap, BuiltinIndexType::Bitmap),
        "LABEL_LIST" => b(IndexType::LabelList, BuiltinIndexType::LabelList),
        "NGRAM" => b(IndexType::NGram, BuiltinIndexType::NGram),
        "ZONEMAP" => b(IndexType::ZoneMap, BuiltinIndexType::ZoneMap),
        "BLOOMFILTER" => b(IndexType::BloomFilter, BuiltinIndexType::BloomFilter),
        "INVERTED" | "FTS" => {
            let mut f = InvertedIndexParams::default();
            if let Some(v) = p.bool("with_position") {
                f = f.with_position(v);
            }
            if let Some(v) = p.bool("lower_case") {
                f = f.lower_case(v);
            }
            if let Some(v) = p.bool("stem") {
                f = f.stem(v);
            }
            if let Some(v) = p.bool("remove_stop_words") {
                f = f.remove_stop_words(v);
            }
            if let Some(v) = p.bool("ascii_folding") {
                f = f.ascii_folding(v);
            }
            if let Some(v) = p.str("base_tokenizer") {
                f = f.base_tokenizer(v.to_string());
            }
            if let Some(v) = p.str("language") {
                f = engine(f.language(v))?;
            }
            if let Some(v) = p.int("max_token_length") {
                f = f.max_token_length(Some(v.max(0) as usize));
            }
            Ok(Built::Inverted(f))
        }
        _ => b(IndexType::BTree, BuiltinIndexType::BTree),
    }
}

fn vector_params(p: &P<'_>) -> CatalogResult<Built> {
    let d = p.str("distance_type").unwrap_or("l2");
    let metric = MetricType::try_from(d)
        .map_err(|e| CatalogError::invalid(format!("distance_type {d:?}: {e}")))?;
    let ivf = IvfBuildParams {
        num_partitions: p.int("num_partitions").map(|n| n.max(1) as usize),
        max_iters: p.usize("max_iterations", 50),
        sample_rate: p.usize("sample_rate", 256),
        ..Default::default()
    };
    let mut pq = PQBuildParams::default();
    if let Some(n) = p.int("num_sub_vectors") {
        pq.num_sub_vectors = n.max(1) as usize;
    }
    pq.num_bits = p.usize("num_bits", 8);
    pq.max_iters = ivf.max_iters;
    pq.sample_rate = ivf.sample_rate;
    let sq = SQBuildParams {
        num_bits: p.usize("num_bits", 8) as u16,
        sample_rate: ivf.sample_rate,
    };
    let hnsw = HnswBuildParams::default()
        .num_edges(p.usize("m", 20))
        .ef_construction(p.usize("ef_construction", 150));
    let t = p.str("index_type").unwrap_or("IVF_PQ");
    let (kind, params) = match t {
        "IVF_FLAT" => (
            IndexType::IvfFlat,
            VectorIndexParams::with_ivf_flat_params(metric, ivf),
        ),
        "IVF_SQ" => (
            IndexType::IvfSq,
            VectorIndexParams::with_ivf_sq_params(metric, ivf, sq),
        ),
        "IVF_RQ" => (
            IndexType::IvfRq,
            VectorIndexParams::with_ivf_rq_params(
                metric,
                ivf,
                RQBuildParams::new(p.usize("num_bits", 1) as u8),
            ),
        ),
        "IVF_HNSW_FLAT" => (
            IndexType::IvfHnswFlat,
            VectorIndexParams::ivf_hnsw(metric, ivf, hnsw),
        ),
        "IVF_HNSW_SQ" => (
            IndexType::IvfHnswSq,
            VectorIndexParams::with_ivf_hnsw_sq_params(metric, ivf, hnsw, sq),
        ),
        "IVF_HNSW_PQ" => (
            IndexType::IvfHnswPq,
            VectorIndexParams::with_ivf_hnsw_pq_params(metric, ivf, hnsw, pq),
        ),
        _ => (
            IndexType::IvfPq,
            VectorIndexParams::with_ivf_pq_params(metric, ivf, pq),
        ),
    };
    Ok(Built::Vector(kind, params))
}

async fn create_index(
    ds: &mut Dataset,
    p: &P<'_>,
    vector: bool,
) -> CatalogResult<Map<String, Value>> {
    let column = p.str("column").unwrap_or_default().to_string();
    if ds.schema().field(&column).is_none() {
        return Err(CatalogError::new(
            Code::TABLE_COLUMN_NOT_FOUND,
            format!("the table has no column {column:?}"),
        ));
    }
    let built = match vector {
        true => vector_params(p)?,
        false => scalar_params(p)?,
    };
    let name = p.str("name").map(str::to_string);
    let replace = p.bool("replace").unwrap_or(true);
    let meta = ds
        .create_index(
            &[column.as_str()],
            built.kind(),
            name,
            built.params(),
            replace,
        )
        .await
        .map_err(|e| CatalogError::from_lance(&e))?;
    Ok(object(json!({
        "index_name": meta.name,
        "index_uuid": meta.uuid.to_string(),
        "index_type": p.str("index_type"),
        "column": column,
        "dataset_version": meta.dataset_version,
    })))
}

async fn optimize(ds: &mut Dataset, p: &P<'_>) -> CatalogResult<Map<String, Value>> {
    let mut options = OptimizeOptions::default();
    if let Some(Value::Array(names)) = p.0.get("index_names") {
        options = options.index_names(
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect(),
        );
    }
    if let Some(n) = p.int("num_indices_to_merge") {
        options = options.num_indices_to_merge(Some(n.max(0) as usize));
    }
    options.retrain = p.bool("retrain").unwrap_or(false);
    let indices = engine(ds.load_indices().await)?;
    let mut names: Vec<String> = indices
        .iter()
        .filter(|i| !i.name.starts_with("__"))
        .map(|i| i.name.clone())
        .collect();
    names.sort();
    names.dedup();
    engine(ds.optimize_indices(&options).await)?;
    Ok(object(json!({ "indices": names })))
}

#[cfg(test)]
mod tests {
    use super::parse_older_than;

    #[test]
    fn older_than_takes_one_whole_unit() {
        assert_eq!(parse_older_than("7d").unwrap().num_seconds(), 7 * 86_400);
        assert_eq!(parse_older_than("168h").unwrap().num_hours(), 168);
        assert_eq!(parse_older_than("0d").unwrap().num_seconds(), 0);
        assert_eq!(parse_older_than("007d").unwrap().num_days(), 7);
        assert_eq!(parse_older_than("45s").unwrap().num_seconds(), 45);
        for bad in [
            "1w",
            "1.5d",
            "-7d",
            "1h30m",
            "7D",
            "7 d",
            "d",
            "",
            "99999999999999999d",
        ] {
            assert!(parse_older_than(bad).is_err(), "{bad}");
        }
    }
}
