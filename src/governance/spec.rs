//! The spec's 54 operations over the hierarchy: each request is routed to
//! its warehouse's catalog (`router.rs`) through the guard order
//! (`guard.rs`). Four operations are the hierarchy's own: creating a
//! top-level namespace (through its warehouse), dropping one (which
//! unbinds it), and the root listings, which merge every warehouse.

use crate::api::op;
use crate::api::page::SPEC;
use crate::api::spec::{lance_edge, lance_edge_rows, Spec};
use bytes::Bytes;
use lance_namespace::models;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::guard::{Access, ObjectRef};
use super::objects::{batch_parts, is_batch, mint};
use super::requests::{ends_object, moves, reads_tables, registers, string_list};
use super::router::{access, id_is_namespace, is_door, is_read};
use super::vending::AsksCredentials;
use super::{Governance, Route, DEFAULT_WAREHOUSE};
use crate::api::kind::Kind;
use crate::error::{CatalogError, CatalogResult, Code};

impl Governance {
    /// Route, check a door's shape and parent, authorize: the guards before
    /// the core's own conflict checks and write. The request may change:
    /// the real ids of what it creates are minted into it.
    pub(super) async fn admit<R: Serialize + DeserializeOwned>(
        &self,
        op: &'static str,
        request: &mut R,
    ) -> CatalogResult<(Route, Access)> {
        let mut value = serde_json::to_value(&*request)
            .map_err(|e| CatalogError::invalid(format!("cannot read the request: {e}")))?;
        // Identity, then shape and parent, then authorization.
        let principal = self.principal_of(&value).await?;
        let route = self.route(op, &value).await?;
        let (minted, changed) = mint(op, &mut value);
        if changed {
            *request = serde_json::from_value(value.clone())
                .map_err(|e| CatalogError::invalid(format!("cannot read the request: {e}")))?;
        }
        let mut access = access(op, &route.warehouse, &value);
        access.principal = principal;
        if moves(op) {
            // The source is the "parent" a rename needs first.
            let source = string_list(value.get("id"));
            let found = route
                .catalog
                .table_exists(models::TableExistsRequest {
                    id: source.clone(),
                    ..Default::default()
                })
                .await;
            if let Err(e) = found {
                if e.code == Code::TABLE_NOT_FOUND || e.code == Code::NAMESPACE_NOT_FOUND {
                    return Err(self
                        .hidden(e, &access, Kind::Table, source.unwrap_or_default())
                        .await);
                }
                return Err(e);
            }
        }
        let mut creates = false;
        if is_door(op) {
            let id = door_id(op, &value)?;
            // An `exist_ok` or `overwrite` create may find its object
            // standing; a plain one fails if it does.
            let may_exist = value
                .get("mode")
                .and_then(Value::as_str)
                .is_some_and(|m| !m.eq_ignore_ascii_case("create"));
            creates = self.door(&route, &access, op, &id, may_exist).await? && !moves(op);
        }
        if is_batch(op) {
            // A batch is allowed exactly when each of its parts would be.
            let parts = batch_parts(op, &value);
            if parts.is_empty() {
                self.authorize(&access).await?;
            }
            for (action, id) in parts {
                let mut part = Access {
                    action,
                    kind: Kind::Table,
                    id,
                    object: ObjectRef::Standing,
                    ..access.clone()
                };
                self.authorize_object(&route, &mut part).await?;
                if ends_object(action) {
                    access.ended.extend(part.object.known().map(str::to_string));
                }
            }
        } else {
            self.authorize_object(&route, &mut access).await?;
        }
        if reads_tables(op) {
            // A view's SQL may read any table of its warehouse: whoever
            // makes or refreshes one must be able to read them all.
            self.authorize(&Access {
                action: op::QueryTable.action,
                kind: Kind::Namespace,
                id: vec![],
                object: ObjectRef::Standing,
                ..access.clone()
            })
            .await?;
        }
        if registers(op) {
            // Registering bytes no table owns is a privilege of its own,
            // held on the warehouse: writing to a namespace is not enough.
            self.authorize(&Access {
                action: crate::auth::cedar::REGISTER_LOCATION,
                kind: Kind::Warehouse,
                id: vec![route.warehouse.clone()],
                object: ObjectRef::Standing,
                ..access.clone()
            })
            .await?;
        }
        for other in others(op, &value) {
            self.authorize(&Access {
                kind: other.0,
                id: other.1,
                object: ObjectRef::Standing,
                ..access.clone()
            })
            .await?;
        }
        let route = self.for_write(op, route).await?;
        access.creates = creates;
        if creates || is_batch(op) {
            access.minted = minted;
        }
        if moves(op) {
            access.moved_to = door_id(op, &value)?;
        }
        if ends_object(op) {
            access
                .ended
                .extend(access.object.known().map(str::to_string));
        }
        Ok((route, access))
    }

    /// The door step of admit, for every transport (REST and gRPC through
    /// `admit`, Flight's writes through `table_route`): the object's shape
    /// and parent (a parent the caller may not see is refused as if it were
    /// not there), then whether the write creates it. It does when it does
    /// not stand now; `may_exist: false` (a plain create, which fails if it
    /// stands) creates without looking. A create of what stands makes no
    /// owner.
    pub(super) async fn door(
        &self,
        route: &Route,
        access: &Access,
        op: &str,
        id: &Option<Vec<String>>,
        may_exist: bool,
    ) -> CatalogResult<bool> {
        let namespace = id_is_namespace(op);
        let checked = route.catalog.check_door(!namespace, id).await;
        let id = id.as_deref().unwrap_or_default();
        if let Err(e) = checked {
            let parent = id[..id.len().saturating_sub(1)].to_vec();
            return Err(match e.code {
                Code::NAMESPACE_NOT_FOUND => {
                    let door = Access {
                        id: id.to_vec(),
                        ..access.clone()
                    };
                    self.hidden(e, &door, Kind::Namespace, parent).await
                }
                _ => e,
            });
        }
        if !may_exist {
            return Ok(true);
        }
        Ok(!match namespace {
            true => route.catalog.namespace_present(id).await?,
            false => route.catalog.table_present(id).await?,
        })
    }

    /// The one finish step after an operation succeeded, on every
    /// transport: ownership of what it created, then what a write did to
    /// grants, then its event (reads record nothing).
    pub(super) async fn finish(&self, access: &Access) {
        if access.creates || !access.minted.is_empty() {
            self.own(access).await;
            self.hooks.created(access).await;
        }
        if !is_read(access.action) {
            self.grants_follow(access).await;
            self.succeeded(access).await;
        }
    }

    async fn create_namespace_routed(
        &self,
        request: models::CreateNamespaceRequest,
    ) -> CatalogResult<models::CreateNamespaceResponse> {
        let value = serde_json::to_value(&request).unwrap_or(Value::Null);
        let id = request.id.clone().unwrap_or_default();
        if self.warehouses && id.len() == 1 {
            // Identity first, as at every door.
            self.principal_of(&value).await?;
            let Some(scope) = self.scope_of(&value)? else {
                return Err(CatalogError::invalid(format!(
                    "a top-level namespace is created in its warehouse: POST /v1/warehouses/{{warehouse_id}}/namespaces with {{\"namespace\": {:?}}}, or create_namespace through the warehouse's endpoint /warehouses/{{warehouse_id}}",
                    id[0]
                )));
            };
            let principal = self.principal_of(&value).await?;
            return self.create_bound(&scope, request, principal).await;
        }
        let mut request = request;
        let (route, access) = self.admit(op::CreateNamespace.action, &mut request).await?;
        let answer = route.catalog.create_namespace(request).await?;
        self.finish(&access).await;
        Ok(answer)
    }

    /// A drop under a grace period keeps the table's bytes and grants
    /// (its owner is who needs to undrop it); they die at purge.
    async fn drop_table_routed(
        &self,
        mut request: models::DropTableRequest,
    ) -> CatalogResult<models::DropTableResponse> {
        let (route, access) = self.admit(op::DropTable.action, &mut request).await?;
        self.stamp_drop(&mut request.context, &route, &access)
            .await?;
        let answer = route.catalog.drop_table(request).await?;
        self.after_drop(&access, answer.transaction_id.is_some())
            .await;
        Ok(answer)
    }

    /// The hooks after a drop; one into trash keeps its grants.
    async fn after_drop(&self, access: &Access, trashed: bool) {
        match trashed {
            true => self.succeeded(access).await,
            false => self.finish(access).await,
        }
    }

    async fn drop_namespace_routed(
        &self,
        mut request: models::DropNamespaceRequest,
    ) -> CatalogResult<models::DropNamespaceResponse> {
        let id = request.id.clone().unwrap_or_default();
        let (route, mut access) = self.admit(op::DropNamespace.action, &mut request).await?;
        self.stamp_drop(&mut request.context, &route, &access)
            .await?;
        // What a drop that destroys takes with it (one into trash keeps
        // every grant bound to its trashed objects).
        access.ended = route.catalog.subtree_object_ids(&id).await?;
        let answer = route.catalog.drop_namespace(request).await?;
        // Unbound once gone; a door's exist_ok create may have made it again
        // meanwhile, and then the binding is its.
        if self.warehouses && id.len() == 1 && !route.catalog.namespace_present(&id).await? {
            self.forget(&id[0]);
            if let Err(e) = self.registry.unbind(&id[0], &route.warehouse).await {
                tracing::warn!(namespace = %id[0], error = %e.message, "namespace dropped but its binding stays (a later create reclaims it)");
            }
        }
        self.after_drop(&access, answer.transaction_id.is_some())
            .await;
        Ok(answer)
    }

    async fn list_namespaces_routed(
        &self,
        request: models::ListNamespacesRequest,
    ) -> CatalogResult<models::ListNamespacesResponse> {
        let value = serde_json::to_value(&request).unwrap_or(Value::Null);
        let root = request.id.as_ref().is_none_or(Vec::is_empty);
        if !(self.warehouses && root && self.scope_of(&value)?.is_none()) {
            let (route, principal, whole) =
                self.admit_list(op::ListNamespaces.action, &value).await?;
            if whole {
                return route.catalog.list_namespaces(request).await;
            }
            return self.visible_namespaces(&route, &principal, &request).await;
        }
        let (_, principal, whole) = self.admit_list(op::ListNamespaces.action, &value).await?;
        // The merged root: every bound namespace and what the default
        // warehouse's root holds.
        let mut names: Vec<String> = self
            .registry
            .bindings()
            .await?
            .into_iter()
            .map(|b| b.namespace)
            .collect();
        names.extend(root_namespaces(&self.home).await?);
        names.sort();
        names.dedup();
        // Across warehouses a listing right at the default root proves
        // nothing about the others: every name is checked in its own.
        let _ = whole;
        {
            let mut seen = Vec::new();
            for name in names {
                let w = self
                    .bound_to(&name)
                    .await?
                    .unwrap_or_else(|| DEFAULT_WAREHOUSE.to_string());
                if self
                    .may_see(&principal, Kind::Namespace, &w, vec![name.clone()])
                    .await?
                {
                    seen.push(name);
                }
            }
            names = seen;
        }
        let (namespaces, page_token) =
            crate::api::page::page(&names, request.page_token.as_deref(), request.limit, SPEC)?;
        Ok(models::ListNamespacesResponse {
            namespaces,
            page_token,
            ..Default::default()
        })
    }

    async fn list_tables_routed(
        &self,
        request: models::ListTablesRequest,
    ) -> CatalogResult<models::ListTablesResponse> {
        let value = serde_json::to_value(&request).unwrap_or(Value::Null);
        let (route, principal, whole) = self.admit_list(op::ListTables.action, &value).await?;
        if whole {
            return route.catalog.list_tables(request).await;
        }
        self.visible_tables(&route, &principal, &request).await
    }

    async fn list_all_tables_routed(
        &self,
        request: models::ListTablesRequest,
    ) -> CatalogResult<models::ListTablesResponse> {
        let value = serde_json::to_value(&request).unwrap_or(Value::Null);
        let (route, principal, whole) = self.admit_list(op::ListAllTables.action, &value).await?;
        if !self.warehouses || self.scope_of(&value)?.is_some() {
            if whole {
                return route.catalog.list_all_tables(request).await;
            }
            let keys = all_tables(&route.catalog, request.include_declared).await?;
            let tables = self
                .visible_table_keys(&principal, keys, &route.warehouse)
                .await?;
            let (tables, page_token) = crate::api::page::page(
                &tables,
                request.page_token.as_deref(),
                request.limit,
                SPEC,
            )?;
            return Ok(models::ListTablesResponse {
                tables,
                page_token,
                ..Default::default()
            });
        }
        // Every warehouse that holds a namespace, and the default one.
        let mut warehouses: Vec<String> = self
            .registry
            .bindings()
            .await?
            .into_iter()
            .map(|b| b.warehouse_id)
            .collect();
        warehouses.push(DEFAULT_WAREHOUSE.to_string());
        warehouses.sort();
        warehouses.dedup();
        let mut tables = Vec::new();
        for w in warehouses {
            let catalog = match self.catalog(&w).await {
                Ok(c) => c,
                // A binding left by a deleted warehouse hides nothing else.
                Err(e) if e.code == crate::error::Code::WAREHOUSE_NOT_FOUND => continue,
                Err(e) => return Err(e),
            };
            // Every page of this warehouse: the merged listing pages again.
            let keys = all_tables(&catalog, request.include_declared).await?;
            // Whether the whole of this warehouse may be listed, per warehouse.
            let all_here = !self.auth.required()
                || self
                    .allowed(&Access {
                        principal: principal.clone(),
                        action: op::ListAllTables.action,
                        warehouse: Some(w.clone()),
                        kind: Kind::Namespace,
                        id: vec![],
                        ..Default::default()
                    })
                    .await?;
            match all_here {
                true => tables.extend(keys),
                false => tables.extend(self.visible_table_keys(&principal, keys, &w).await?),
            }
        }
        tables.sort();
        tables.dedup();
        let (tables, page_token) =
            crate::api::page::page(&tables, request.page_token.as_deref(), request.limit, SPEC)?;
        Ok(models::ListTablesResponse {
            tables,
            page_token,
            ..Default::default()
        })
    }
}

/// Every table of one catalog (full ids as the manifest spells them).
async fn all_tables(
    catalog: &crate::core::Catalog,
    include_declared: Option<bool>,
) -> CatalogResult<Vec<String>> {
    let mut page = models::ListTablesRequest {
        include_declared,
        ..Default::default()
    };
    let mut keys = Vec::new();
    loop {
        let answer = catalog.list_all_tables(page.clone()).await?;
        keys.extend(answer.tables);
        page.page_token = answer.page_token.filter(|t| !t.is_empty());
        if page.page_token.is_none() {
            return Ok(keys);
        }
    }
}

/// Every top-level namespace of one catalog's root, over all its pages.
pub(super) async fn root_namespaces(catalog: &crate::core::Catalog) -> CatalogResult<Vec<String>> {
    let mut names = Vec::new();
    let mut page = models::ListNamespacesRequest::default();
    loop {
        let answer = catalog.list_namespaces(page.clone()).await?;
        names.extend(answer.namespaces);
        page.page_token = answer.page_token.filter(|t| !t.is_empty());
        if page.page_token.is_none() {
            return Ok(names);
        }
    }
}

/// The other objects an operation acts on, each authorized as well: a
/// rename's destination namespace (a batch's parts are authorized each as
/// its own operation, see `objects.rs`).
fn others(op: &str, request: &Value) -> Vec<(Kind, Vec<String>)> {
    if moves(op) {
        if let Ok(Some(mut dest)) = door_id(op, request) {
            dest.pop();
            return vec![(Kind::Namespace, dest)];
        }
    }
    Vec::new()
}

/// The id a door creates: the request's id, or a rename's destination.
fn door_id(op: &str, request: &Value) -> CatalogResult<Option<Vec<String>>> {
    if !moves(op) {
        return Ok(string_list(request.get("id")));
    }
    let mut id = match request.get("new_namespace_id") {
        Some(Value::Null) | None => {
            let mut source = string_list(request.get("id")).unwrap_or_default();
            source.pop();
            source
        }
        v => string_list(v).unwrap_or_default(),
    };
    let name = request
        .get("new_table_name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| CatalogError::invalid("rename_table needs new_table_name"))?;
    id.push(name.to_string());
    Ok(Some(id))
}

/// The trait impl: one method per inventory row, munched into plain
/// `async fn`s first so that `async_trait` sees them (as in
/// `grpc/client.rs`). The hierarchy's own six come first by name. Errors
/// stay the catalog's; `lance_edge!` converts them once, for the
/// transports that hold a `LanceNamespace`.
macro_rules! governed {
    (@acc [$($done:tt)*]) => {
        #[async_trait::async_trait]
        impl Spec for Governance {
            fn namespace_id(&self) -> String {
                format!("lance-catalog {{ root: {:?} }}", self.home.root())
            }
            $($done)*
        }
    };
    (@acc [$($done:tt)*] $Name:ident => create_namespace ($Req:ident -> $Resp:ident) $($row:tt)*) => {
        governed!(@special [$($done)*] create_namespace create_namespace_routed $Req $Resp; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => drop_namespace ($Req:ident -> $Resp:ident) $($row:tt)*) => {
        governed!(@special [$($done)*] drop_namespace drop_namespace_routed $Req $Resp; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => drop_table ($Req:ident -> $Resp:ident) $($row:tt)*) => {
        governed!(@special [$($done)*] drop_table drop_table_routed $Req $Resp; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => list_namespaces ($Req:ident -> $Resp:ident) $($row:tt)*) => {
        governed!(@special [$($done)*] list_namespaces list_namespaces_routed $Req $Resp; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => list_tables ($Req:ident -> $Resp:ident) $($row:tt)*) => {
        governed!(@special [$($done)*] list_tables list_tables_routed $Req $Resp; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => list_all_tables ($Req:ident -> $Resp:ident) $($row:tt)*) => {
        governed!(@special [$($done)*] list_all_tables list_all_tables_routed $Req $Resp; $($row)*);
    };
    (@special [$($done:tt)*] $method:ident $routed:ident $Req:ident $Resp:ident;
        $answer:ident, $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<models::$Resp> {
                self.$routed(request).await
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$e:ident $t:ident $g:ident $f:ident vends $($more:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, mut request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp> {
                let (route, access) = self.admit(stringify!($method), &mut request).await?;
                let declined = AsksCredentials::declines(&request);
                let mut answer = Spec::$method(route.catalog.as_ref(), request, data).await?;
                self.finish(&access).await;
                self.hand_credentials(&route, &access, declined, &mut answer).await?;
                Ok(answer)
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, mut request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp> {
                let (route, access) = self.admit(stringify!($method), &mut request).await?;
                let answer = Spec::$method(route.catalog.as_ref(), request, data).await?;
                self.finish(&access).await;
                Ok(answer)
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit $($row:tt)*) => {
        governed!(@plain [$($done)*] $method $Req (); $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal] $($row:tt)*) => {
        governed!(@plain [$($done)*] $method $Req Bytes; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal] $($row:tt)*) => {
        governed!(@plain [$($done)*] $method $Req i64; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal] $($row:tt)*) => {
        governed!(@plain [$($done)*] $method $Req String; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $($row:tt)*) => {
        governed!(@plain [$($done)*] $method $Req models::$Resp; $($row)*);
    };
    (@plain [$($done:tt)*] $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$e:ident $t:ident $g:ident $f:ident vends $($more:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, mut request: models::$Req) -> CatalogResult<$Ret> {
                let (route, access) = self.admit(stringify!($method), &mut request).await?;
                let declined = AsksCredentials::declines(&request);
                let mut answer = Spec::$method(route.catalog.as_ref(), request).await?;
                self.finish(&access).await;
                self.hand_credentials(&route, &access, declined, &mut answer).await?;
                Ok(answer)
            }
        ] $($rest)*);
    };
    (@plain [$($done:tt)*] $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, mut request: models::$Req) -> CatalogResult<$Ret> {
                let (route, access) = self.admit(stringify!($method), &mut request).await?;
                let answer = Spec::$method(route.catalog.as_ref(), request).await?;
                self.finish(&access).await;
                Ok(answer)
            }
        ] $($rest)*);
    };
    ($($rows:tt)*) => {
        governed!(@acc [] $($rows)*);
    };
}

crate::api::inventory::for_each_spec_op!(governed);
lance_edge!(Governance);
