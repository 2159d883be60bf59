//! The operator's rules that send a task or a job to an executor: by its
//! type (a task type, `backfill` or `refresh`) and the table's size (rows,
//! data bytes) when the task is first claimed or the job starts. The first
//! rule that matches wins; none matching runs it in process.
//!
//! A rule is written `EXECUTOR[:CONDITION,CONDITION…]`, each condition one
//! of `task_types=T|T…`, `min_rows=N`, `min_bytes=N` (with an optional
//! `KiB`, `MiB`, `GiB` or `TiB`): `ray:task_types=lance_compact,min_rows=1000000`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::TaskKind;

/// The executors a replica has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutorKind {
    /// Lance inside this replica.
    #[default]
    InProcess,
    /// A Ray cluster, through lance-ray.
    Ray,
}

impl ExecutorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutorKind::InProcess => "in_process",
            ExecutorKind::Ray => "ray",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "in_process" => Some(ExecutorKind::InProcess),
            "ray" => Some(ExecutorKind::Ray),
            _ => None,
        }
    }
}

/// Where a task runs, decided when it is first claimed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    pub executor: ExecutorKind,
    /// The rule that chose it, as the operator wrote it; `None`: no rule
    /// matched and the default ran it.
    #[serde(default)]
    pub rule: Option<String>,
    /// The table's size when it was decided.
    #[serde(default)]
    pub rows: Option<u64>,
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Whether the job was handed to its executor (a replica taking the
    /// task over attaches to it instead of starting another).
    #[serde(default)]
    pub started: bool,
}

/// One rule, as parsed; `text` is how the operator wrote it, recorded in
/// each task it placed.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub executor: ExecutorKind,
    /// Empty: every type the executor runs.
    pub task_types: Vec<TaskKind>,
    pub min_rows: Option<u64>,
    pub min_bytes: Option<u64>,
    pub text: String,
}

/// A table's size, as the rules weigh it.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableSize {
    pub rows: u64,
    pub bytes: u64,
}

fn bytes(s: &str) -> Option<u64> {
    let units = [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (suffix, factor) in units {
        if let Some(n) = s.strip_suffix(suffix) {
            return n.parse::<u64>().ok()?.checked_mul(factor);
        }
    }
    s.parse().ok()
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, String> {
        let text = text.trim();
        let (executor, conditions) = text.split_once(':').unwrap_or((text, ""));
        let executor = ExecutorKind::parse(executor).ok_or_else(|| {
            format!(
                "executor rule {text:?}: the executor must be ray or in_process, not {executor:?}"
            )
        })?;
        let mut rule = Rule {
            executor,
            task_types: Vec::new(),
            min_rows: None,
            min_bytes: None,
            text: text.to_string(),
        };
        for condition in conditions.split(',').filter(|c| !c.is_empty()) {
            let bad = |why: &str| format!("executor rule {text:?}: {condition:?} {why}");
            let (key, value) = condition
                .split_once('=')
                .ok_or_else(|| bad("is not key=value"))?;
            match key {
                "task_types" => {
                    for t in value.split('|') {
                        let kind = TaskKind::parse(t).ok_or_else(|| {
                            bad(&format!(
                                "names {t:?}, which is not a task type ({})",
                                TaskKind::ALL
                                    .into_iter()
                                    .chain(TaskKind::JOBS)
                                    .map(TaskKind::name)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                        })?;
                        if executor == ExecutorKind::Ray && !kind.runs_on_ray() {
                            let why = match kind {
                                TaskKind::Refresh => "a refresh runs its view's query in DataFusion, which a Ray job has no engine for",
                                _ => "lance-ray does not run it distributed",
                            };
                            return Err(bad(&format!(
                                "sends {t} to Ray, and {why}: it stays in process"
                            )));
                        }
                        rule.task_types.push(kind);
                    }
                }
                "min_rows" => {
                    rule.min_rows = Some(value.parse().map_err(|_| bad("needs a whole number"))?)
                }
                "min_bytes" => {
                    rule.min_bytes = Some(bytes(value).ok_or_else(|| {
                        bad("needs a whole number of bytes, KiB, MiB, GiB or TiB")
                    })?)
                }
                _ => return Err(bad("is not task_types, min_rows or min_bytes")),
            }
        }
        Ok(rule)
    }

    fn matches(&self, kind: TaskKind, params: &Map<String, Value>, size: TableSize) -> bool {
        // A rule naming no type covers the task types; a job goes only
        // where a rule names it (rules written before jobs had executors
        // keep jobs where they ran).
        let typed = match self.task_types.is_empty() {
            true => !kind.is_job(),
            false => self.task_types.contains(&kind),
        };
        let runnable = self.executor != ExecutorKind::Ray || ray_runs(kind, params);
        typed
            && runnable
            && self.min_rows.is_none_or(|n| size.rows >= n)
            && self.min_bytes.is_none_or(|n| size.bytes >= n)
    }

    /// Whether the rule needs the table's size to decide.
    pub fn weighs_size(&self) -> bool {
        self.min_rows.is_some() || self.min_bytes.is_some()
    }
}

/// The scalar indices lance-ray 0.5 builds distributed; the others
/// (LABEL_LIST, NGRAM, BLOOMFILTER) are built in process.
const RAY_SCALAR_INDICES: [&str; 5] = ["BTREE", "BITMAP", "INVERTED", "FTS", "ZONEMAP"];

/// Whether lance-ray runs this task as asked.
fn ray_runs(kind: TaskKind, params: &Map<String, Value>) -> bool {
    match kind {
        TaskKind::ScalarIndex => {
            let t = params
                .get("index_type")
                .and_then(Value::as_str)
                .unwrap_or("BTREE");
            RAY_SCALAR_INDICES.contains(&t.to_ascii_uppercase().as_str())
        }
        // The runner reaches the table's main line only.
        TaskKind::Backfill => params.get("branch").is_none_or(Value::is_null) && kind.runs_on_ray(),
        other => other.runs_on_ray(),
    }
}

/// Where a task of `kind` with `params` on a table of `size` runs under
/// `rules`.
pub fn place(
    rules: &[Rule],
    kind: TaskKind,
    params: &Map<String, Value>,
    size: Option<TableSize>,
) -> Placement {
    let weighed = size.unwrap_or_default();
    let rule = rules.iter().find(|r| r.matches(kind, params, weighed));
    Placement {
        executor: rule.map_or(ExecutorKind::InProcess, |r| r.executor),
        rule: rule.map(|r| r.text.clone()),
        rows: size.map(|s| s.rows),
        bytes: size.map(|s| s.bytes),
        started: false,
    }
}

impl Placement {
    /// The facts a task's result shows of where it ran.
    pub fn describe(&self, into: &mut Map<String, Value>) {
        into.insert("executor".into(), self.executor.as_str().into());
        if let Some(rule) = &self.rule {
            into.insert("executor_rule".into(), rule.clone().into());
        }
        if let Some(rows) = self.rows {
            into.insert("placed_at_rows".into(), rows.into());
        }
        if let Some(bytes) = self.bytes {
            into.insert("placed_at_bytes".into(), bytes.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_match_in_order() {
        let rules = vec![
            Rule::parse("ray:task_types=lance_compact|lance_vector_index,min_rows=1000").unwrap(),
            Rule::parse("ray:min_bytes=1GiB").unwrap(),
        ];
        assert_eq!(rules[1].min_bytes, Some(1 << 30));
        let small = TableSize {
            rows: 10,
            bytes: 10,
        };
        let tall = TableSize {
            rows: 5000,
            bytes: 10,
        };
        let heavy = TableSize {
            rows: 10,
            bytes: 2 << 30,
        };
        let none = Map::new();
        let p = place(&rules, TaskKind::Compact, &none, Some(tall));
        assert_eq!(p.executor, ExecutorKind::Ray);
        assert_eq!(p.rule.as_deref(), Some(rules[0].text.as_str()));
        let at = |kind, params: &Map<String, Value>, size| {
            place(&rules, kind, params, Some(size)).executor
        };
        assert_eq!(at(TaskKind::Compact, &none, small), ExecutorKind::InProcess);
        assert_eq!(at(TaskKind::ScalarIndex, &none, heavy), ExecutorKind::Ray);
        // lance-ray builds no LABEL_LIST index distributed.
        let label: Map<String, Value> =
            serde_json::from_str(r#"{"index_type": "LABEL_LIST"}"#).unwrap();
        assert_eq!(
            at(TaskKind::ScalarIndex, &label, heavy),
            ExecutorKind::InProcess
        );
        // A rule for every type still leaves cleanup in process.
        assert_eq!(at(TaskKind::Cleanup, &none, heavy), ExecutorKind::InProcess);
        assert_eq!(place(&[], TaskKind::Compact, &none, None).rule, None);
        let all = [Rule::parse("ray").unwrap()];
        let everything = |kind| place(&all, kind, &none, None).executor;
        assert_eq!(everything(TaskKind::VectorIndex), ExecutorKind::Ray);
        assert_eq!(
            everything(TaskKind::OptimizeIndices),
            ExecutorKind::InProcess
        );
        // Jobs go only where a rule names them; a backfill of a branch
        // and a refresh stay in process.
        assert_eq!(everything(TaskKind::Backfill), ExecutorKind::InProcess);
        assert_eq!(everything(TaskKind::Refresh), ExecutorKind::InProcess);
        let named = [Rule::parse("ray:task_types=backfill").unwrap()];
        assert_eq!(
            place(&named, TaskKind::Backfill, &none, None).executor,
            ExecutorKind::Ray
        );
        let branch: Map<String, Value> = serde_json::from_str(r#"{"branch": "dev"}"#).unwrap();
        assert_eq!(
            place(&named, TaskKind::Backfill, &branch, None).executor,
            ExecutorKind::InProcess
        );
        let jobs = [Rule::parse("ray:task_types=backfill,min_rows=1000").unwrap()];
        assert_eq!(
            place(&jobs, TaskKind::Backfill, &none, Some(tall)).executor,
            ExecutorKind::Ray
        );
        assert_eq!(
            place(&jobs, TaskKind::Compact, &none, Some(tall)).executor,
            ExecutorKind::InProcess
        );
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        for (text, says) in [
            ("spark", "must be ray or in_process"),
            ("ray:task_types=lance_cleanup", "stays in process"),
            ("ray:task_types=refresh", "DataFusion"),
            ("ray:task_types=compact", "not a task type"),
            ("ray:min_rows=lots", "whole number"),
            ("ray:min_bytes=1GB", "bytes"),
            ("ray:min_rows", "key=value"),
            ("ray:rows>=5", "is not task_types"),
            ("ray:max_rows=5", "is not task_types"),
        ] {
            let e = Rule::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
