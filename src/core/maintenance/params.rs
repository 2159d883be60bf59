//! A task's parameters at submit: each recognised field's shape and basic
//! range is checked and its default filled in; unknown fields are dropped
//! (an old client's `batch_size` does nothing). Whether a column or index
//! exists, or a combination can run, is the task's to find out.

use serde_json::{Map, Value};

use crate::error::{CatalogError, CatalogResult};

/// The compaction mode when a submit names none.
pub(super) const DEFAULT_COMPACTION_MODE: &str = "reencode";
const COMPACTION_MODES: [&str; 3] = ["reencode", "try_binary_copy", "force_binary_copy"];
pub(super) const SCALAR_TYPES: [&str; 8] = [
    "BTREE",
    "BITMAP",
    "LABEL_LIST",
    "INVERTED",
    "FTS",
    "NGRAM",
    "ZONEMAP",
    "BLOOMFILTER",
];
pub(super) const VECTOR_TYPES: [&str; 7] = [
    "IVF_FLAT",
    "IVF_PQ",
    "IVF_SQ",
    "IVF_RQ",
    "IVF_HNSW_FLAT",
    "IVF_HNSW_SQ",
    "IVF_HNSW_PQ",
];
const DISTANCES: [&str; 4] = ["l2", "cosine", "dot", "hamming"];
/// Full-text options, kept only when given.
const FTS_BOOLS: [&str; 5] = [
    "with_position",
    "lower_case",
    "stem",
    "remove_stop_words",
    "ascii_folding",
];

/// Checks fields of one body and collects the saved parameters.
struct Fields {
    given: Map<String, Value>,
    out: Map<String, Value>,
    task: &'static str,
}

fn bad(task: &str, name: &str, what: impl std::fmt::Display) -> CatalogError {
    CatalogError::invalid(format!("{task} parameter {name} {what}"))
}

impl Fields {
    /// An integer field (`null` or absent: the default, if any).
    fn int(&mut self, name: &str, default: Option<i64>, min: i64) -> CatalogResult<Option<i64>> {
        let v = match self.given.get(name) {
            None | Some(Value::Null) => default,
            Some(Value::Number(n)) => match n.as_i64() {
                Some(v) if v >= min => Some(v),
                Some(v) => {
                    return Err(bad(
                        self.task,
                        name,
                        format!("must be at least {min}, not {v}"),
                    ))
                }
                None => return Err(bad(self.task, name, format!("must be an integer, not {n}"))),
            },
            Some(other) => {
                return Err(bad(
                    self.task,
                    name,
                    format!("must be an integer, not {other}"),
                ))
            }
        };
        if let Some(v) = v {
            self.out.insert(name.to_string(), Value::from(v));
        }
        Ok(v)
    }

    fn bool(&mut self, name: &str, default: Option<bool>) -> CatalogResult<Option<bool>> {
        let v = match self.given.get(name) {
            None | Some(Value::Null) => default,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                return Err(bad(
                    self.task,
                    name,
                    format!("must be true or false, not {other}"),
                ))
            }
        };
        if let Some(v) = v {
            self.out.insert(name.to_string(), Value::from(v));
        }
        Ok(v)
    }

    fn number(&mut self, name: &str, default: f64) -> CatalogResult<f64> {
        let v = match self.given.get(name) {
            None | Some(Value::Null) => default,
            Some(Value::Number(n)) => n.as_f64().unwrap_or(default),
            Some(other) => {
                return Err(bad(
                    self.task,
                    name,
                    format!("must be a number, not {other}"),
                ))
            }
        };
        Ok(v)
    }

    fn string(&mut self, name: &str) -> CatalogResult<Option<String>> {
        match self.given.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(bad(
                self.task,
                name,
                format!("must be a string, not {other}"),
            )),
        }
    }

    /// A string from `allowed` (`upper`: compared in upper case).
    fn choice(
        &mut self,
        name: &str,
        default: &str,
        allowed: &[&str],
        upper: bool,
    ) -> CatalogResult<String> {
        let v = self.string(name)?.unwrap_or_else(|| default.to_string());
        let v = if upper { v.to_ascii_uppercase() } else { v };
        if !allowed.contains(&v.as_str()) {
            return Err(bad(
                self.task,
                name,
                format!("must be one of {}, not {v:?}", allowed.join(", ")),
            ));
        }
        self.out.insert(name.to_string(), Value::from(v.clone()));
        Ok(v)
    }

    fn set(&mut self, name: &str, v: Value) {
        self.out.insert(name.to_string(), v);
    }
}

/// The parameters saved for a task of `task_type` submitted with `given`.
pub(super) fn checked(
    task_type: &str,
    given: Map<String, Value>,
) -> CatalogResult<Map<String, Value>> {
    let task: &'static str = match task_type {
        "lance_compact" => "compact",
        "lance_cleanup" => "cleanup",
        "lance_scalar_index" => "create_scalar_index",
        "lance_vector_index" => "create_vector_index",
        "lance_optimize_indices" => "optimize_indices",
        other => {
            return Err(CatalogError::invalid(format!(
                "unknown task type {other:?}"
            )))
        }
    };
    let mut f = Fields {
        given,
        out: Map::new(),
        task,
    };
    match task {
        "compact" => compact(&mut f)?,
        "cleanup" => cleanup(&mut f)?,
        "create_scalar_index" => index(&mut f, false)?,
        "create_vector_index" => index(&mut f, true)?,
        _ => optimize(&mut f)?,
    }
    Ok(f.out)
}

fn compact(f: &mut Fields) -> CatalogResult<()> {
    f.int("target_rows_per_fragment", Some(1_048_576), 1)?;
    f.bool("materialize_deletions", Some(true))?;
    // 0 means unset; >= 1 never rewrites for deletions; < 0 rewrites all.
    let threshold = f.number("materialize_deletions_threshold", 0.1)?;
    let threshold = if threshold == 0.0 { 0.1 } else { threshold };
    f.set("materialize_deletions_threshold", Value::from(threshold));
    f.int("max_rows_per_group", Some(1024), 1)?;
    f.int("max_bytes_per_file", Some(0), 0)?;
    f.choice(
        "compaction_mode",
        DEFAULT_COMPACTION_MODE,
        &COMPACTION_MODES,
        false,
    )?;
    Ok(())
}

fn cleanup(f: &mut Fields) -> CatalogResult<()> {
    let older_than = f.string("older_than")?.unwrap_or_default();
    f.set("older_than", Value::from(older_than.clone()));
    let retain = f.int("retain_versions", Some(0), 0)?.unwrap_or(0);
    for name in ["delete_unverified", "error_if_tagged_old_versions"] {
        if f.bool(name, Some(false))? == Some(true) {
            return Err(bad(f.task, name, "may only be false"));
        }
    }
    if older_than.is_empty() && retain == 0 {
        return Err(CatalogError::invalid(
            "cleanup needs a condition: older_than (e.g. \"7d\") or retain_versions greater than 0",
        ));
    }
    Ok(())
}

fn index(f: &mut Fields, vector: bool) -> CatalogResult<()> {
    let column = match f.string("column")? {
        Some(c) if !c.is_empty() => c,
        _ => return Err(bad(f.task, "column", "is required (the column to index)")),
    };
    f.set("column", Value::from(column.clone()));
    let name = f.string("name")?.filter(|n| !n.is_empty());
    f.set("name", Value::from(name.unwrap_or(format!("{column}_idx"))));
    f.bool("replace", Some(true))?;
    if !vector {
        let t = f.choice("index_type", "BTREE", &SCALAR_TYPES, true)?;
        if t == "INVERTED" || t == "FTS" {
            for b in FTS_BOOLS {
                f.bool(b, None)?;
            }
            for s in ["base_tokenizer", "language"] {
                if let Some(v) = f.string(s)? {
                    f.set(s, Value::from(v));
                }
            }
            f.int("max_token_length", None, 0)?;
        }
        return Ok(());
    }
    let t = f.choice("index_type", "IVF_PQ", &VECTOR_TYPES, true)?;
    let d = f
        .string("distance_type")?
        .unwrap_or("l2".into())
        .to_ascii_lowercase();
    if !DISTANCES.contains(&d.as_str()) {
        return Err(bad(
            f.task,
            "distance_type",
            format!("must be one of {}, not {d:?}", DISTANCES.join(", ")),
        ));
    }
    f.set("distance_type", Value::from(d));
    f.int("num_partitions", None, 1)?;
    f.int("max_iterations", Some(50), 1)?;
    f.int("sample_rate", Some(256), 1)?;
    if t.ends_with("PQ") {
        f.int("num_sub_vectors", None, 1)?;
    }
    if t.ends_with("PQ") || t.ends_with("SQ") || t.ends_with("RQ") {
        let default = if t.ends_with("RQ") { 1 } else { 8 };
        let bits = f.int("num_bits", Some(default), 1)?.unwrap_or(default);
        if bits > 8 {
            return Err(bad(
                f.task,
                "num_bits",
                format!("must be at most 8, not {bits}"),
            ));
        }
    }
    if t.contains("HNSW") {
        f.int("m", Some(20), 1)?;
        f.int("ef_construction", Some(150), 1)?;
    }
    Ok(())
}

fn optimize(f: &mut Fields) -> CatalogResult<()> {
    match f.given.get("index_names").cloned() {
        None | Some(Value::Null) => f.set("index_names", Value::Null),
        Some(Value::Array(names))
            if names
                .iter()
                .all(|n| n.as_str().is_some_and(|s| !s.is_empty())) =>
        {
            f.set("index_names", Value::Array(names))
        }
        Some(other) => {
            return Err(bad(
                f.task,
                "index_names",
                format!("must be a list of index names or null, not {other}"),
            ))
        }
    }
    if f.int("num_indices_to_merge", None, 0)?.is_none() {
        f.set("num_indices_to_merge", Value::Null);
    }
    f.bool("retrain", Some(false))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(t: &str, v: Value) -> CatalogResult<Value> {
        checked(t, v.as_object().cloned().unwrap_or_default()).map(Value::Object)
    }

    #[test]
    fn compact_defaults_are_filled_and_unknown_fields_dropped() {
        let p = run("lance_compact", json!({"batch_size": 5})).unwrap();
        assert_eq!(
            p,
            json!({"target_rows_per_fragment": 1048576, "materialize_deletions": true,
                   "materialize_deletions_threshold": 0.1, "max_rows_per_group": 1024,
                   "max_bytes_per_file": 0, "compaction_mode": "reencode"})
        );
        let p = run(
            "lance_compact",
            json!({"materialize_deletions_threshold": 0}),
        )
        .unwrap();
        assert_eq!(p["materialize_deletions_threshold"], json!(0.1));
        for bad in [
            json!({"target_rows_per_fragment": 0}),
            json!({"max_rows_per_group": -1}),
            json!({"max_bytes_per_file": -1}),
            json!({"compaction_mode": ""}),
            json!({"compaction_mode": "Reencode"}),
            json!({"materialize_deletions": "yes"}),
        ] {
            assert!(run("lance_compact", bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn cleanup_needs_a_condition_and_refuses_unsafe_flags() {
        let p = run("lance_cleanup", json!({"retain_versions": 2})).unwrap();
        assert_eq!(
            p,
            json!({"older_than": "", "retain_versions": 2, "delete_unverified": false,
                   "error_if_tagged_old_versions": false})
        );
        assert!(run("lance_cleanup", json!({"older_than": "7d"})).is_ok());
        for bad in [
            json!({}),
            json!({"retain_versions": 0}),
            json!({"retain_versions": -1}),
            json!({"retain_versions": 1, "delete_unverified": true}),
            json!({"older_than": "1d", "error_if_tagged_old_versions": true}),
        ] {
            assert!(run("lance_cleanup", bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn index_parameters() {
        let p = run(
            "lance_scalar_index",
            json!({"column": "k", "index_type": "bitmap"}),
        )
        .unwrap();
        assert_eq!(p["index_type"], "BITMAP");
        assert_eq!(p["name"], "k_idx");
        assert!(run("lance_scalar_index", json!({})).is_err());
        assert!(run(
            "lance_scalar_index",
            json!({"column": "k", "index_type": "IVF_PQ"})
        )
        .is_err());
        let p = run(
            "lance_vector_index",
            json!({"column": "v", "num_partitions": 2}),
        )
        .unwrap();
        assert_eq!(p["index_type"], "IVF_PQ");
        assert_eq!(p["distance_type"], "l2");
        assert_eq!(p["num_bits"], 8);
        assert!(run(
            "lance_vector_index",
            json!({"column": "v", "distance_type": "x"})
        )
        .is_err());
        let p = run("lance_optimize_indices", json!({})).unwrap();
        assert_eq!(
            p,
            json!({"index_names": null, "num_indices_to_merge": null, "retrain": false})
        );
        assert!(run("lance_optimize_indices", json!({"index_names": "a"})).is_err());
    }
}
