//! The operation inventory (`inventory.rs`) as a static table: each
//! operation's facts (what it does, what its id names, its Cedar group,
//! whether its body streams) and its wire form (route, body, query
//! parameters, answer, status), which every transport and every rule reads.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::inventory::{for_each_control_op, for_each_spec_op};

/// What an operation does to the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only: a quarantined warehouse still serves it.
    Read,
    /// Changes what exists.
    Write,
    /// Makes an object at its id (a door: shape and parent are checked
    /// before authorization; its caller owns what it made).
    Create,
    /// A rename: a door at its destination, keeping its object.
    Move,
}

/// What an operation's `id` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Namespace,
    Table,
    /// A transaction: its table's id and one more segment.
    Transaction,
    /// No id of its own: each of its parts names a table.
    Batch,
    Server,
    Project,
    Warehouse,
    Job,
    ApiKey,
    User,
    Grant,
    Trash,
}

/// The Cedar action groups: a relation grants whole groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    ReadMetadata,
    ReadData,
    WriteData,
    CreateChild,
    Drop,
    ManageGrants,
    Administer,
    /// Recording bytes no table owns as a table.
    Register,
}

impl Group {
    pub const ALL: [Group; 8] = [
        Group::ReadMetadata,
        Group::ReadData,
        Group::WriteData,
        Group::CreateChild,
        Group::Drop,
        Group::ManageGrants,
        Group::Administer,
        Group::Register,
    ];

    /// Its Cedar action name.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::ReadMetadata => "read_metadata",
            Group::ReadData => "read_data",
            Group::WriteData => "write_data",
            Group::CreateChild => "create_child",
            Group::Drop => "drop",
            Group::ManageGrants => "manage_grants",
            Group::Administer => "administer",
            Group::Register => "register",
        }
    }
}

/// Whether REST reads an operation's body (and writes its answer) whole or
/// as a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Whole,
    Streams,
}

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

/// One operation: its facts and its wire form.
#[derive(Debug, Clone, Copy)]
pub struct OpDef {
    pub plane: Plane,
    pub effect: Effect,
    pub target: Target,
    /// Its Cedar action group.
    pub group: Group,
    pub flow: Flow,
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
    /// Whether its answer hands a table to a client (its location and
    /// storage options), with vended credentials where the warehouse vends.
    pub vends: bool,
    /// Whether its request carries SQL that may read any table of its
    /// warehouse (a materialized view's definition): whoever makes or
    /// refreshes one must be able to read them all, so admission also asks
    /// for `query_table` on the warehouse's root.
    pub reads_tables: bool,
    /// Whether it records bytes no table owns as a table (a registration):
    /// besides its own action it needs the register privilege
    /// (`RegisterLocation`) on its warehouse, since writing to a namespace
    /// is not enough.
    pub registers: bool,
    /// Whether it ends the object its id names (a table's drop or
    /// deregistration, a project's or warehouse's delete): the grants
    /// bound to the object end with it (a table's drop into trash keeps
    /// them, for its undrop). A namespace's drop ends a subtree and says
    /// so itself.
    pub ends_object: bool,
    /// Whether its request or answer carries a secret (a password, a new
    /// API key shown once): nothing of it may be kept, so a retry cannot
    /// be answered from a record and an `Idempotency-Key` is refused.
    pub secret: bool,
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

macro_rules! effect {
    (read) => {
        Effect::Read
    };
    (write) => {
        Effect::Write
    };
    (create) => {
        Effect::Create
    };
    (move) => {
        Effect::Move
    };
}

macro_rules! target {
    (namespace) => {
        Target::Namespace
    };
    (table) => {
        Target::Table
    };
    (transaction) => {
        Target::Transaction
    };
    (batch) => {
        Target::Batch
    };
    (server) => {
        Target::Server
    };
    (project) => {
        Target::Project
    };
    (warehouse) => {
        Target::Warehouse
    };
    (job) => {
        Target::Job
    };
    (api_key) => {
        Target::ApiKey
    };
    (user) => {
        Target::User
    };
    (grant) => {
        Target::Grant
    };
    (trash) => {
        Target::Trash
    };
}

macro_rules! group {
    (read_metadata) => {
        Group::ReadMetadata
    };
    (read_data) => {
        Group::ReadData
    };
    (write_data) => {
        Group::WriteData
    };
    (create_child) => {
        Group::CreateChild
    };
    (drop) => {
        Group::Drop
    };
    (manage_grants) => {
        Group::ManageGrants
    };
    (administer) => {
        Group::Administer
    };
    (register) => {
        Group::Register
    };
}

macro_rules! flow {
    (whole) => {
        Flow::Whole
    };
    (streams) => {
        Flow::Streams
    };
}

/// Whether a row's optional fact words (after its flow) include `$want`:
/// `has_fact!(vends; $($word)*)`. The words are `vends` (first, where
/// `governance/spec.rs` matches it), `reads_tables`, `registers`,
/// `ends_object` and `secret`; any other word matches no rule and fails to compile
/// (every row is walked once in full, see `op_defs!`).
macro_rules! has_fact {
    ($want:ident;) => {
        false
    };
    (vends; vends $($rest:ident)*) => {
        true
    };
    (reads_tables; reads_tables $($rest:ident)*) => {
        true
    };
    (registers; registers $($rest:ident)*) => {
        true
    };
    (ends_object; ends_object $($rest:ident)*) => {
        true
    };
    (secret; secret $($rest:ident)*) => {
        true
    };
    ($want:ident; vends $($rest:ident)*) => {
        has_fact!($want; $($rest)*)
    };
    ($want:ident; reads_tables $($rest:ident)*) => {
        has_fact!($want; $($rest)*)
    };
    ($want:ident; registers $($rest:ident)*) => {
        has_fact!($want; $($rest)*)
    };
    ($want:ident; ends_object $($rest:ident)*) => {
        has_fact!($want; $($rest)*)
    };
    ($want:ident; secret $($rest:ident)*) => {
        has_fact!($want; $($rest)*)
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
    ($plane:ident $list:ident; $( $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $([$field:literal])?,
        $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$effect:ident $target:ident $group:ident $body_flow:ident $($fact:ident)*]; )*) => {
        $(
            // Every fact word is a known one (a walk that matches none).
            const _: bool = has_fact!(any_known; $($fact)*);
            #[doc = concat!("`", stringify!($Name), "`: `", stringify!($verb), " ", $path, "`.")]
            pub static $Name: OpDef = OpDef {
                plane: Plane::$plane,
                effect: effect!($effect),
                target: target!($target),
                group: group!($group),
                flow: flow!($body_flow),
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
                vends: has_fact!(vends; $($fact)*),
                reads_tables: has_fact!(reads_tables; $($fact)*),
                registers: has_fact!(registers; $($fact)*),
                ends_object: has_fact!(ends_object; $($fact)*),
                secret: has_fact!(secret; $($fact)*),
            };
        )*
        /// Every operation of this plane, in inventory order.
        pub static $list: &[&OpDef] = &[$(&$Name),*];
    };
}

macro_rules! spec_defs {
    ($($rows:tt)*) => { op_defs!(Spec OPS; $($rows)*); };
}

macro_rules! control_defs {
    ($($rows:tt)*) => { op_defs!(Control CONTROL_OPS; $($rows)*); };
}

/// Every operation by name (`op::CreateTable`), the handle every rule and
/// every `Access` names an operation by.
#[allow(non_upper_case_globals)]
pub mod op {
    use super::*;

    for_each_spec_op!(spec_defs);
    for_each_control_op!(control_defs);

    /// Not an operation of its own: what a registration also needs on its
    /// warehouse (recording bytes no table owns as a table is a privilege
    /// of its own, not a side effect of writing to a namespace).
    pub static RegisterLocation: OpDef = OpDef {
        plane: Plane::Control,
        effect: Effect::Write,
        target: Target::Warehouse,
        group: Group::Register,
        flow: Flow::Whole,
        name: "RegisterLocation",
        action: "register_location",
        method: "",
        path: "",
        body: BodyKind::None,
        answer: AnswerKind::Json,
        status: 0,
        query: &[],
        request: "",
        response: "",
        field: None,
        vends: false,
        reads_tables: false,
        registers: false,
        ends_object: false,
        secret: false,
    };

    /// Not an operation either: signing in, which is audited and never
    /// authorized (Cedar's schema has no such action, so asking Cedar about
    /// it fails closed).
    pub static Authenticate: OpDef = OpDef {
        effect: Effect::Read,
        target: Target::User,
        group: Group::Administer,
        name: "Authenticate",
        action: "authenticate",
        ..RegisterLocation
    };

    /// Cedar actions beyond the routed operations.
    pub static EXTRA: &[&OpDef] = &[&RegisterLocation];
}

pub use op::{CONTROL_OPS, OPS};

static BY_ACTION: LazyLock<HashMap<&'static str, &'static OpDef>> = LazyLock::new(|| {
    OPS.iter()
        .chain(CONTROL_OPS)
        .chain(op::EXTRA)
        .map(|op| (op.action, *op))
        .collect()
});

/// The operation whose method (Cedar action) is `action`.
pub fn by_action(action: &str) -> Option<&'static OpDef> {
    BY_ACTION.get(action).copied()
}

/// Operations are told apart by name (unique in the inventory).
impl PartialEq for OpDef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for OpDef {}

/// An operation is shown, logged and recorded by its method (its Cedar
/// action).
impl std::fmt::Display for OpDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.action)
    }
}

impl serde::Serialize for OpDef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.action)
    }
}

impl OpDef {
    /// Whether it only reads.
    pub fn reads(&self) -> bool {
        self.effect == Effect::Read
    }

    /// Whether a retry may be answered from the record an
    /// `Idempotency-Key` keeps: a change whose request and answer hold no
    /// secret (a read needs no key; one sent with it is ignored).
    pub fn replayable(&self) -> bool {
        !self.reads() && !self.secret
    }

    /// Whether it is a door: it makes an object or a name (create,
    /// declare, register, rename, a view, a namespace).
    pub fn is_door(&self) -> bool {
        matches!(self.effect, Effect::Create | Effect::Move)
    }

    /// Whether it is a rename: a door at its destination that keeps its
    /// object (its source must stand first; its grants follow it).
    pub fn moves(&self) -> bool {
        self.effect == Effect::Move
    }

    /// Whether its own id names a namespace (the spec's others name a
    /// table, a transaction of one, or nothing: a batch).
    pub fn names_namespace(&self) -> bool {
        self.target == Target::Namespace
    }

    /// Whether it is a batch over several tables, each part authorized as
    /// the operation it stands for.
    pub fn is_batch(&self) -> bool {
        self.target == Target::Batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_names_one_operation() {
        let n = OPS.len() + CONTROL_OPS.len() + op::EXTRA.len();
        assert_eq!(BY_ACTION.len(), n, "an action is spelled twice");
        assert_eq!(by_action("create_table"), Some(&op::CreateTable));
        assert!(by_action("fly").is_none());
    }

    #[test]
    fn reads_are_told_from_writes() {
        for op in [
            &op::DescribeTable,
            &op::ListTables,
            &op::TableExists,
            &op::QueryTable,
            &op::CountTableRows,
        ] {
            assert!(op.reads(), "{op}");
        }
        for op in [
            &op::CreateTable,
            &op::DropTable,
            &op::InsertIntoTable,
            &op::RestoreTable,
            &op::CreateTableTag,
        ] {
            assert!(!op.reads(), "{op}");
        }
    }

    #[test]
    fn optional_facts_hold_on_their_rows() {
        /// The names of the rows a fact holds on, sorted.
        fn with(fact: fn(&OpDef) -> bool) -> Vec<&'static str> {
            let mut names: Vec<&'static str> = OPS
                .iter()
                .chain(CONTROL_OPS)
                .chain(op::EXTRA)
                .copied()
                .filter(|o| fact(o))
                .map(|o| o.name)
                .collect();
            names.sort();
            names
        }
        assert_eq!(
            with(|o| o.vends),
            ["CreateTable", "DeclareTable", "DescribeTable"]
        );
        assert_eq!(
            with(|o| o.reads_tables),
            ["CreateMaterializedView", "RefreshMaterializedView"]
        );
        assert_eq!(with(|o| o.registers), ["RegisterTable"]);
        assert_eq!(
            with(|o| o.ends_object),
            [
                "DeleteProject",
                "DeleteWarehouse",
                "DeregisterTable",
                "DropTable"
            ]
        );
        assert_eq!(
            with(|o| o.secret),
            ["CreateApiKey", "CreateUser", "SetUserPassword"]
        );
        // A rename is the one operation that moves its object.
        assert_eq!(with(|o| o.effect == Effect::Move), ["RenameTable"]);
    }

    #[test]
    fn inventory_has_54_unique_operations() {
        assert_eq!(OPS.len(), 54);
        let mut names: Vec<_> = OPS.iter().map(|o| o.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 54);
    }
}
