//! What admission reads from a spec request, read from its typed fields:
//! who calls (`identity`), the warehouse it is scoped to and the minted id
//! of what it creates (`context`), and the ids it names (its own, a
//! rename's destination, a batch's parts). Nothing here walks JSON: a
//! request type that does not say what it names does not compile into
//! admission.

use std::collections::HashMap;

use lance_namespace::models;

use crate::api::call::{Call, Credentials, IDEMPOTENCY_CONTEXT};
use crate::api::{op, OpDef, Target};
use crate::core::object_ids::fresh_object_id;
use crate::core::reserved::{OBJECT_ID, WAREHOUSE};
use crate::error::{CatalogError, CatalogResult};

type Context = Option<HashMap<String, String>>;

/// A spec request, as admission reads it.
pub trait SpecRequest: Send + Sync {
    /// Its caller's credentials, as the spec carries them.
    fn identity(&self) -> Option<&models::Identity>;
    fn context(&self) -> &Context;
    fn context_mut(&mut self) -> &mut Context;
    /// Its own id (`None`: a batch, whose parts name their tables).
    fn id(&self) -> Option<&[String]>;
    /// Whether a create may find its object standing (an `exist_ok` or
    /// `overwrite` mode); a plain create fails if it does.
    fn may_exist(&self) -> bool {
        false
    }
    /// A rename's new namespace (`None`: its source's) and new name.
    fn destination(&self) -> Option<(Option<&[String]>, &str)> {
        None
    }
    /// A batch's parts, each the operation it stands for on its own table.
    fn parts(&self) -> Vec<(&'static OpDef, Vec<String>)> {
        Vec::new()
    }
    /// The contexts of the tables a batch declares, by table id (each gets
    /// a minted id of its own).
    fn declared(&mut self) -> Vec<(Vec<String>, &mut Context)> {
        Vec::new()
    }

    /// The request id its caller was shown, when its transport did not
    /// tell the observer (a control-plane call's).
    fn request_id(&self) -> Option<&str> {
        None
    }

    /// Its caller, as a control-plane call names one (its credentials,
    /// request id and `Idempotency-Key`).
    fn call(&self) -> crate::api::call::Call {
        crate::api::call::Call::new(
            crate::auth::Credentials::of_identity(self.identity()),
            self.request_id().map(str::to_string),
        )
        .keyed(self.idempotency_key().map(str::to_string))
    }

    /// The `Idempotency-Key` its caller names it by (a header, which every
    /// transport puts in the context).
    fn idempotency_key(&self) -> Option<&str> {
        // Header names are any case (a Lance client's `header.Idempotency-Key`
        // context entry is the header it sends).
        let context = self.context().as_ref()?;
        context
            .get(IDEMPOTENCY_CONTEXT)
            .map(String::as_str)
            .or_else(|| {
                context
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(IDEMPOTENCY_CONTEXT))
                    .map(|(_, v)| v.as_str())
            })
    }

    /// What it asks, as a JSON value: what a retry under the same key must
    /// ask again (its caller and its call's headers are not part of it).
    fn shape(&self) -> serde_json::Value;

    /// The warehouse scope it names (its `lance-catalog.warehouse` context,
    /// which REST and gRPC set from the endpoint it came through).
    fn scope(&self) -> Option<&str> {
        self.context().as_ref()?.get(WAREHOUSE).map(String::as_str)
    }
}

/// An id the control plane or a streamed call names: its caller comes
/// with its call (the credentials its transport read), not in a spec body.
/// No `Debug`: it holds the caller's credentials, which the spec's
/// `Identity` would print in clear.
#[derive(Default)]
pub(in crate::governance) struct Named {
    identity: Option<models::Identity>,
    id: Option<Vec<String>>,
    context: Context,
    may_exist: bool,
    request_id: Option<String>,
    /// What its caller asked beyond the id (a Flight write's command).
    asked: Option<serde_json::Value>,
}

impl Named {
    /// `id`, asked by whoever `credentials` name.
    pub(in crate::governance) fn by(credentials: &Credentials, id: &[String]) -> Self {
        Named {
            identity: Some(models::Identity {
                api_key: credentials.api_key.clone(),
                auth_token: credentials.auth_token.clone(),
            }),
            id: Some(id.to_vec()),
            ..Default::default()
        }
    }

    /// `id`, asked by a control-plane call (its request id is audited;
    /// its `Idempotency-Key` was honoured where the call came in, in
    /// `plane/mod.rs`, so the access it makes here carries none).
    pub(in crate::governance) fn called(call: &Call, id: &[String]) -> Self {
        Named {
            request_id: call.request_id.clone(),
            ..Named::by(&call.credentials, id)
        }
    }

    /// `id` in `warehouse`, named by the server itself (no caller).
    pub(in crate::governance) fn in_warehouse(id: &[String], warehouse: Option<&str>) -> Self {
        Named {
            id: Some(id.to_vec()),
            context: warehouse.map(|w| HashMap::from([(WAREHOUSE.to_string(), w.to_string())])),
            ..Default::default()
        }
    }

    /// Named by its caller's `Idempotency-Key`, asking `asked` besides
    /// its id (a Flight write, whose call comes in here).
    pub(in crate::governance) fn keyed(
        mut self,
        key: Option<&str>,
        asked: serde_json::Value,
    ) -> Self {
        if let Some(key) = key {
            self.context
                .get_or_insert_with(HashMap::new)
                .insert(IDEMPOTENCY_CONTEXT.to_string(), key.to_string());
        }
        self.asked = Some(asked);
        self
    }

    /// A create that appends to what stands (Flight's path descriptor).
    pub(in crate::governance) fn or_existing(self) -> Self {
        Named {
            may_exist: true,
            ..self
        }
    }
}

impl SpecRequest for Named {
    fn identity(&self) -> Option<&models::Identity> {
        self.identity.as_ref()
    }
    fn context(&self) -> &Context {
        &self.context
    }
    fn context_mut(&mut self) -> &mut Context {
        &mut self.context
    }
    fn id(&self) -> Option<&[String]> {
        self.id.as_deref()
    }
    fn may_exist(&self) -> bool {
        self.may_exist
    }
    fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }
    fn shape(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "may_exist": self.may_exist,
            "context": self.context,
            "asked": self.asked,
        })
    }
}

/// A spec model's `SpecRequest`: its `identity` and `context` are the
/// spec's on every request; what it names is given (`own_id!()` for its
/// own `id`, and whatever more it says).
macro_rules! spec_request {
    ($Req:ident { $($named:tt)* }) => {
        impl SpecRequest for models::$Req {
            fn identity(&self) -> Option<&models::Identity> {
                self.identity.as_deref()
            }
            fn context(&self) -> &Context {
                &self.context
            }
            fn context_mut(&mut self) -> &mut Context {
                &mut self.context
            }
            fn shape(&self) -> serde_json::Value {
                // A model always renders (string-keyed maps, no floats that
                // JSON cannot hold).
                serde_json::to_value(self).unwrap_or_default()
            }
            $($named)*
        }
    };
}

macro_rules! own_id {
    () => {
        fn id(&self) -> Option<&[String]> {
            self.id.as_deref()
        }
    };
}

/// Requests that name their own `id` and nothing more.
macro_rules! plain {
    ($($Req:ident),* $(,)?) => {$( spec_request!($Req { own_id!(); }); )*};
}

/// Creates whose `mode` may let them find their object standing.
macro_rules! with_mode {
    ($($Req:ident),* $(,)?) => {$(
        spec_request!($Req {
            own_id!();
            fn may_exist(&self) -> bool {
                self.mode
                    .as_deref()
                    .is_some_and(|m| !m.eq_ignore_ascii_case("create"))
            }
        });
    )*};
}

plain!(
    AlterTableAddColumnsRequest,
    AlterTableAlterColumnsRequest,
    AlterTableBackfillColumnsRequest,
    AlterTableDropColumnsRequest,
    AlterTransactionRequest,
    AnalyzeTableQueryPlanRequest,
    BatchDeleteTableVersionsRequest,
    CountTableRowsRequest,
    CreateMaterializedViewRequest,
    CreateTableBranchRequest,
    CreateTableIndexRequest,
    CreateTableTagRequest,
    CreateTableVersionRequest,
    DeclareTableRequest,
    DeleteFromTableRequest,
    DeleteTableBranchRequest,
    DeleteTableTagRequest,
    DeregisterTableRequest,
    DescribeNamespaceRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    DescribeTransactionRequest,
    DropNamespaceRequest,
    DropTableIndexRequest,
    DropTableRequest,
    ExplainTableQueryPlanRequest,
    GetTableStatsRequest,
    GetTableTagVersionRequest,
    InsertIntoTableRequest,
    ListNamespacesRequest,
    ListTableBranchesRequest,
    ListTableIndicesRequest,
    ListTableTagsRequest,
    ListTableVersionsRequest,
    ListTablesRequest,
    MergeInsertIntoTableRequest,
    NamespaceExistsRequest,
    QueryTableRequest,
    RefreshMaterializedViewRequest,
    RestoreTableRequest,
    TableExistsRequest,
    UpdateFieldMetadataRequest,
    UpdateTableRequest,
    UpdateTableSchemaMetadataRequest,
    UpdateTableTagRequest,
);

with_mode!(
    CreateNamespaceRequest,
    CreateTableRequest,
    RegisterTableRequest
);

spec_request!(RenameTableRequest {
    own_id!();
    fn destination(&self) -> Option<(Option<&[String]>, &str)> {
        Some((self.new_namespace_id.as_deref(), &self.new_table_name))
    }
});

spec_request!(BatchCreateTableVersionsRequest {
    fn id(&self) -> Option<&[String]> {
        None
    }
    fn parts(&self) -> Vec<(&'static OpDef, Vec<String>)> {
        self.entries
            .iter()
            .map(|e| (&op::CreateTableVersion, e.id.clone()))
            .collect()
    }
});

spec_request!(BatchCommitTablesRequest {
    fn id(&self) -> Option<&[String]> {
        None
    }
    fn parts(&self) -> Vec<(&'static OpDef, Vec<String>)> {
        let id = |id: &Option<Vec<String>>| id.clone().unwrap_or_default();
        let mut out = Vec::new();
        for part in &self.operations {
            if let Some(d) = &part.declare_table {
                out.push((&op::DeclareTable, id(&d.id)));
            }
            if let Some(c) = &part.create_table_version {
                out.push((&op::CreateTableVersion, id(&c.id)));
            }
            if let Some(d) = &part.delete_table_versions {
                out.push((&op::BatchDeleteTableVersions, id(&d.id)));
            }
            if let Some(d) = &part.deregister_table {
                out.push((&op::DeregisterTable, id(&d.id)));
            }
        }
        out
    }
    fn declared(&mut self) -> Vec<(Vec<String>, &mut Context)> {
        self.operations
            .iter_mut()
            .filter_map(|p| p.declare_table.as_deref_mut())
            .map(|d| (d.id.clone().unwrap_or_default(), &mut d.context))
            .collect()
    }
});

/// The access a request of `op` asks for, in `warehouse` (its caller is
/// filled in by admission).
pub(in crate::governance) fn asked(
    op: &'static OpDef,
    warehouse: &str,
    request: &dyn SpecRequest,
) -> super::Access {
    super::Access {
        action: op,
        warehouse: Some(warehouse.to_string()),
        kind: match op.names_namespace() {
            true => super::Kind::Namespace,
            false => super::Kind::Table,
        },
        id: object_id(op, request),
        ..Default::default()
    }
}

/// The id of the table or namespace a request of `op` is about: a
/// transaction's id is its table's and one more segment.
pub(in crate::governance) fn object_id(op: &OpDef, request: &dyn SpecRequest) -> Vec<String> {
    let mut id = request.id().map(<[String]>::to_vec).unwrap_or_default();
    if op.target == Target::Transaction {
        id.pop();
    }
    id
}

/// The id a door creates: the request's own, or a rename's destination
/// (in its source's namespace unless it names another).
pub(in crate::governance) fn door_id(
    op: &OpDef,
    request: &dyn SpecRequest,
) -> CatalogResult<Option<Vec<String>>> {
    let Some((namespace, name)) = request.destination() else {
        return Ok(request.id().map(<[String]>::to_vec));
    };
    let own = request.id().map(<[String]>::to_vec).unwrap_or_default();
    if name.is_empty() {
        return Err(CatalogError::invalid(format!("{op} needs new_table_name")));
    }
    let mut id = match namespace {
        Some(ns) => ns.to_vec(),
        None => own[..own.len().saturating_sub(1)].to_vec(),
    };
    id.push(name.to_string());
    Ok(Some(id))
}

/// The top-level namespace of every id a request names (`None`: the
/// root), which must all lie in one warehouse: its own id (a namespace's,
/// a table's, a transaction's), a rename's destination namespace, a
/// batch's tables.
pub(in crate::governance) fn top_levels(
    op: &OpDef,
    request: &dyn SpecRequest,
) -> Vec<Option<String>> {
    let mut out = Vec::new();
    if let Some(id) = request.id() {
        let namespace_len = match op.target {
            Target::Namespace => id.len(),
            Target::Transaction => id.len().saturating_sub(2),
            _ => id.len().saturating_sub(1),
        };
        out.push((namespace_len > 0).then(|| id[0].clone()));
    }
    if let Some((Some(ns), _)) = request.destination() {
        out.push(ns.first().cloned());
    }
    for (_, id) in request.parts() {
        out.push((id.len() > 1).then(|| id[0].clone()));
    }
    if out.is_empty() {
        out.push(None);
    }
    out
}

/// Mint the real ids of the objects a request of `op` creates, into its
/// contexts (only the server says which id a new object gets: a caller's
/// own is removed), and answer them by id.
pub(in crate::governance) fn mint(
    op: &OpDef,
    request: &mut dyn SpecRequest,
) -> Vec<(Vec<String>, String)> {
    let mut minted = Vec::new();
    let own = request.id().map(<[String]>::to_vec).unwrap_or_default();
    let context = request.context_mut();
    if let Some(c) = context.as_mut() {
        c.remove(OBJECT_ID);
    }
    // Every door but a rename (which keeps its table's) makes its object.
    if op.effect == crate::api::Effect::Create {
        let real = fresh_object_id();
        context
            .get_or_insert_with(Default::default)
            .insert(OBJECT_ID.to_string(), real.clone());
        minted.push((own, real));
    }
    // Tables a batch declares, each with an id of its own.
    for (id, context) in request.declared() {
        let real = fresh_object_id();
        context
            .get_or_insert_with(Default::default)
            .insert(OBJECT_ID.to_string(), real.clone());
        minted.push((id, real));
    }
    minted
}

#[cfg(test)]
mod tests {
    use lance_namespace::models;

    use super::top_levels;
    use crate::api::op;

    fn ids(id: &[&str]) -> Option<Vec<String>> {
        Some(id.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn every_named_id_is_routed() {
        let some = |s: &str| Some(s.to_string());
        let ns = models::CreateNamespaceRequest {
            id: ids(&["a"]),
            ..Default::default()
        };
        assert_eq!(top_levels(&op::CreateNamespace, &ns), vec![some("a")]);
        let t = models::DescribeTableRequest {
            id: ids(&["t"]),
            ..Default::default()
        };
        assert_eq!(top_levels(&op::DescribeTable, &t), vec![None]);
        let t = models::DescribeTableRequest {
            id: ids(&["a", "t"]),
            ..Default::default()
        };
        assert_eq!(top_levels(&op::DescribeTable, &t), vec![some("a")]);
        let list = models::ListTablesRequest {
            id: ids(&["a"]),
            ..Default::default()
        };
        assert_eq!(top_levels(&op::ListTables, &list), vec![some("a")]);
        let tx = models::DescribeTransactionRequest {
            id: ids(&["t", "3"]),
            ..Default::default()
        };
        assert_eq!(top_levels(&op::DescribeTransaction, &tx), vec![None]);
        let rename = models::RenameTableRequest {
            id: ids(&["a", "t"]),
            new_namespace_id: ids(&["b"]),
            new_table_name: "u".into(),
            ..Default::default()
        };
        assert_eq!(
            top_levels(&op::RenameTable, &rename),
            vec![some("a"), some("b")]
        );
        let entry = |id: &[&str]| models::CreateTableVersionEntry {
            id: ids(id).unwrap_or_default(),
            ..Default::default()
        };
        let batch = models::BatchCreateTableVersionsRequest {
            entries: vec![entry(&["a", "t"]), entry(&["b", "c", "t"])],
            ..Default::default()
        };
        assert_eq!(
            top_levels(&op::BatchCreateTableVersions, &batch),
            vec![some("a"), some("b")]
        );
        let root = models::ListNamespacesRequest::default();
        assert_eq!(top_levels(&op::ListNamespaces, &root), vec![None]);
    }
}
