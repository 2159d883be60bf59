//! The REST view of the operation inventory (`src/inventory.rs`): each
//! operation's route, body, query parameters, answer and status, as a static
//! table the router is built from.

use crate::inventory::{for_each_control_op, for_each_spec_op};

/// What a route's request body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// A JSON request model (optional: an empty body or `null` is `{}`).
    Json,
    /// An Arrow IPC stream; the request model comes from the path and query.
    Arrow,
    /// No body: the request model comes from the path and query string.
    None,
    /// A bare JSON map of keys to values; `null` values ask for deletion.
    Map,
    /// A free-form JSON object (a task's parameters): the model's `params`.
    Params,
}

/// What a successful answer is, on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// A JSON object (the response model).
    Json,
    /// An empty 200.
    Empty,
    /// A JSON object whose `tables` are full ids, joined by the caller's
    /// delimiter.
    FullIds,
    /// An Arrow IPC file.
    ArrowFile,
    /// A bare JSON integer.
    Integer,
    /// A JSON string.
    Text,
    /// The response model's `metadata`, as a bare map.
    Map,
    /// The maintenance API's: the model's `table_id` as the
    /// `x-oss-table-id` header, the rest as the body (none for a 204).
    Oss,
}

/// How a query parameter's text becomes a JSON value of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Bool,
    Int,
    /// A JSON-encoded object of strings (create's `properties`).
    JsonMap,
    /// Every occurrence of a repeated key, as a list (merge-insert's `on`).
    List,
    /// Not a model field: a request-context entry `lance-catalog.<name>`
    /// (delete's `force`).
    Context,
}

/// Whose operation a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plane {
    /// The Lance Namespace spec's (`LanceNamespace`).
    Spec,
    /// The catalog's own (`core::control::ControlPlane`).
    Control,
}

/// One operation as served over REST.
#[derive(Debug, Clone, Copy)]
pub struct OpDef {
    pub plane: Plane,
    /// The spec's operationId, e.g. `CreateTable`.
    pub name: &'static str,
    /// Its method, e.g. `create_table`: the Cedar action.
    pub action: &'static str,
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The spec path, e.g. `/v1/table/{id}/create`.
    pub path: &'static str,
    pub body: BodyKind,
    pub answer: AnswerKind,
    /// The status of a successful answer (200, 201 or 202).
    pub status: u16,
    /// The query parameters read into the request model.
    pub query: &'static [(&'static str, Kind)],
    /// The request and response messages (spec models / proto messages).
    pub request: &'static str,
    pub response: &'static str,
    /// The answer's field for `bytes`, `count` and `text` answers.
    pub field: Option<&'static str>,
}

macro_rules! body_kind {
    (json) => {
        BodyKind::Json
    };
    (arrow) => {
        BodyKind::Arrow
    };
    (none) => {
        BodyKind::None
    };
    (map) => {
        BodyKind::Map
    };
    (params) => {
        BodyKind::Params
    };
}

macro_rules! answer_kind {
    (json) => {
        AnswerKind::Json
    };
    (unit) => {
        AnswerKind::Empty
    };
    (ids) => {
        AnswerKind::FullIds
    };
    (bytes) => {
        AnswerKind::ArrowFile
    };
    (count) => {
        AnswerKind::Integer
    };
    (text) => {
        AnswerKind::Text
    };
    (map) => {
        AnswerKind::Map
    };
    (oss) => {
        AnswerKind::Oss
    };
}

macro_rules! opt_field {
    () => {
        None
    };
    ($f:literal) => {
        Some($f)
    };
}

macro_rules! op_defs {
    ($plane:ident; $( $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $([$field:literal])?,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*]; )*) => {
        &[$(
            OpDef {
                plane: Plane::$plane,
                name: stringify!($Name),
                action: stringify!($method),
                method: stringify!($verb),
                path: $path,
                body: body_kind!($body),
                answer: answer_kind!($answer),
                status: $status,
                query: &[$((stringify!($q), Kind::$kind)),*],
                request: stringify!($Req),
                response: stringify!($Resp),
                field: opt_field!($($field)?),
            },
        )*]
    };
}

macro_rules! spec_defs {
    ($($rows:tt)*) => { op_defs!(Spec; $($rows)*) };
}

macro_rules! control_defs {
    ($($rows:tt)*) => { op_defs!(Control; $($rows)*) };
}

/// Every spec operation, in inventory order.
pub static OPS: &[OpDef] = for_each_spec_op!(spec_defs);

/// Every control-plane operation, in inventory order.
pub static CONTROL_OPS: &[OpDef] = for_each_control_op!(control_defs);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_has_54_unique_operations() {
        assert_eq!(OPS.len(), 54);
        let mut names: Vec<_> = OPS.iter().map(|o| o.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 54);
    }
}
