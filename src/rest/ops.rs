//! The route table: the project's own inventory of the 54 spec operations
//! (`spec/operations.tsv`), compiled in. The router is built from it, so the
//! inventory and what the server serves cannot drift apart.

use std::sync::LazyLock;

/// What a route's request body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// A JSON request model (optional: an empty body is `{}`).
    Json,
    /// An Arrow IPC stream; the request model comes from the query string.
    Arrow,
    /// No body: the request model comes from the path and query string.
    None,
}

/// One spec operation as served over REST.
#[derive(Debug, Clone)]
pub struct OpDef {
    /// The spec's operationId, e.g. `CreateTable`.
    pub name: String,
    /// `GET` or `POST`.
    pub method: String,
    /// The spec path, e.g. `/v1/table/{id}/create`.
    pub path: String,
    pub body: BodyKind,
    /// The status of a successful answer (200, 201 or 202).
    pub status: u16,
}

pub const INVENTORY: &str = include_str!("../../spec/operations.tsv");

/// The parsed inventory, in file order.
pub static OPS: LazyLock<Vec<OpDef>> = LazyLock::new(|| parse(INVENTORY));

fn parse(text: &str) -> Vec<OpDef> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 5, "spec/operations.tsv: bad line {l:?}");
            OpDef {
                name: cols[0].to_string(),
                method: cols[1].to_string(),
                path: cols[2].to_string(),
                body: match cols[3] {
                    "json" => BodyKind::Json,
                    "arrow" => BodyKind::Arrow,
                    "none" => BodyKind::None,
                    other => panic!("spec/operations.tsv: unknown body kind {other:?}"),
                },
                status: cols[4].parse().expect("spec/operations.tsv: bad status"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_has_54_unique_operations() {
        assert_eq!(OPS.len(), 54);
        let mut names: Vec<_> = OPS.iter().map(|o| o.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 54);
    }
}
