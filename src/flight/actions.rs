//! Flight's actions are the inventory's rows: `DoAction` with an
//! operation's method as its type (`describe_table`, `count_table_rows`,
//! `create_namespace`, …) and its JSON request as its body runs that
//! operation through the same dispatch and admission as REST. Rows whose
//! body or answer is Arrow data are Flight's streams (`DoPut`, `DoGet`),
//! not actions. `count_rows` and `explain`, the names Flight offered
//! first, stay as other names of their rows.

use arrow_flight::ActionType;
use serde_json::{Map, Value};
use tonic::Status;

use crate::api::spec::Spec;
use crate::api::{op, AnswerKind, BodyKind, OpDef, OPS};
use crate::error::CatalogError;
use crate::transport::dispatch::{dispatch, Reply};
use crate::transport::status::to_status;

/// The names Flight offered before its actions were the rows.
const ALIASES: [(&str, &OpDef); 2] = [
    ("count_rows", &op::CountTableRows),
    ("explain", &op::ExplainTableQueryPlan),
];

/// Whether a row is served as an action (its body and answer are JSON).
fn served(op: &OpDef) -> bool {
    op.body != BodyKind::Arrow && op.answer != AnswerKind::ArrowFile
}

/// The row an action's type names.
fn row(action: &str) -> Option<&'static OpDef> {
    ALIASES
        .iter()
        .find(|(name, _)| *name == action)
        .map(|(_, op)| *op)
        .or_else(|| OPS.iter().copied().find(|op| op.action == action))
        .filter(|op| served(op))
}

/// Run action `kind` with its JSON `body`, with the call's headers laid
/// over it as over a REST request's (the caller's identity, and context:
/// its `Idempotency-Key` among them): the answer's JSON, or nothing for
/// an operation that answers nothing (the exists checks).
pub(super) async fn run(
    ns: &dyn Spec,
    kind: &str,
    body: &[u8],
    headers: &http::HeaderMap,
) -> Result<Vec<u8>, Status> {
    let op = row(kind).ok_or_else(|| {
        to_status(CatalogError::unsupported(format!(
            "unknown action {kind:?}; ListActions names the ones offered"
        )))
    })?;
    let mut obj: Map<String, Value> = match body.is_empty() {
        true => Map::new(),
        false => serde_json::from_slice(body).map_err(|e| {
            to_status(CatalogError::invalid(format!(
                "the body of action {kind:?} is not a JSON object: {e}"
            )))
        })?,
    };
    // Who calls is the call's to say, never the body's.
    obj.remove("identity");
    crate::transport::headers::apply_headers(headers, &mut obj);
    let reply = dispatch(ns, op, obj, bytes::Bytes::new())
        .await
        .map_err(to_status)?;
    let answer = match reply {
        Reply::Json(v) | Reply::FullIds(v) => v,
        Reply::Empty => return Ok(Vec::new()),
        Reply::ArrowFile(_) | Reply::ArrowStream(_) => {
            return Err(to_status(CatalogError::internal(format!(
                "{op} answered Arrow data to an action"
            ))))
        }
    };
    serde_json::to_vec(&answer)
        .map_err(|e| to_status(CatalogError::internal(format!("cannot render answer: {e}"))))
}

/// Every action offered: a row each, by its method, and the first names.
pub(super) fn offered() -> Vec<ActionType> {
    let rows = OPS.iter().filter(|op| served(op)).map(|op| ActionType {
        r#type: op.action.into(),
        description: format!(
            "{}: body, its JSON request ({}); result, its JSON answer",
            op.name, op.request
        ),
    });
    let aliases = ALIASES.iter().map(|(name, op)| ActionType {
        r#type: (*name).into(),
        description: format!("another name of {}", op.action),
    });
    rows.chain(aliases).collect()
}
