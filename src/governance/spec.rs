//! The spec's 54 operations over the hierarchy: each goes through the one
//! entry (`guard/entry.rs`: admission, the operation on its warehouse's
//! catalog, finish). Six operations are the hierarchy's own: creating a
//! top-level namespace (through its warehouse), dropping one (which
//! unbinds it), and the listings, whose root ones merge every warehouse.

use crate::api::op;
use crate::api::page::SPEC;
use crate::api::spec::{lance_edge, lance_edge_rows, Spec};
use bytes::Bytes;
use lance_namespace::models;

use super::guard::entry::{Admitted, Listing};
use super::guard::request::SpecRequest;
use super::guard::Access;
use super::once::{asked, Body};
use super::{Governance, DEFAULT_WAREHOUSE};
use crate::api::kind::Kind;
use crate::error::CatalogResult;

impl Governance {
    async fn create_namespace_routed(
        &self,
        request: models::CreateNamespaceRequest,
    ) -> CatalogResult<models::CreateNamespaceResponse> {
        let id = request.id.clone().unwrap_or_default();
        if self.warehouses && id.len() == 1 {
            let scope = self.scope_of(&request)?.map(str::to_string);
            let call = request.call();
            let shape = asked(request.shape());
            return self
                .kept(
                    &op::CreateNamespace,
                    &call,
                    || shape,
                    self.create_bound(&call, scope.as_deref(), request),
                )
                .await;
        }
        self.call_kept(
            &op::CreateNamespace,
            request,
            Body::None,
            async |a: &mut Admitted, request| a.route.catalog.create_namespace(request).await,
        )
        .await
    }

    /// A drop under a grace period keeps the table's bytes and grants
    /// (its owner is who needs to undrop it); they die at purge.
    async fn drop_table_routed(
        &self,
        request: models::DropTableRequest,
    ) -> CatalogResult<models::DropTableResponse> {
        self.call_kept(
            &op::DropTable,
            request,
            Body::None,
            async |a: &mut Admitted, mut request: models::DropTableRequest| {
                self.stamp_drop(&mut request.context, &a.route, &a.access)
                    .await?;
                let answer = a.route.catalog.drop_table(request).await?;
                if answer.transaction_id.is_some() {
                    a.access.kept_in_trash();
                }
                Ok(answer)
            },
        )
        .await
    }

    async fn drop_namespace_routed(
        &self,
        request: models::DropNamespaceRequest,
    ) -> CatalogResult<models::DropNamespaceResponse> {
        let id = request.id.clone().unwrap_or_default();
        self.call_kept(&op::DropNamespace, request, Body::None, async |a: &mut Admitted, mut request: models::DropNamespaceRequest| {
            let route = &a.route;
            self.stamp_drop(&mut request.context, route, &a.access)
                .await?;
            // What a drop that destroys takes with it.
            a.access.ended = route.catalog.subtree_object_ids(&id).await?;
            let answer = route.catalog.drop_namespace(request).await?;
            // Unbound once gone; a door's exist_ok create may have made it
            // again meanwhile, and then the binding is its.
            if self.warehouses && id.len() == 1 && !route.catalog.namespace_present(&id).await? {
                self.forget(&id[0]);
                if let Err(e) = self.registry.unbind(&id[0], &route.warehouse).await {
                    tracing::warn!(namespace = %id[0], error = %e.message, "namespace dropped but its binding stays (a later create reclaims it)");
                }
            }
            if answer.transaction_id.is_some() {
                a.access.kept_in_trash();
            }
            Ok(answer)
        })
        .await
    }

    async fn list_namespaces_routed(
        &self,
        request: models::ListNamespacesRequest,
    ) -> CatalogResult<models::ListNamespacesResponse> {
        let root = request.id.as_ref().is_none_or(Vec::is_empty);
        let merged = self.warehouses && root && self.scope_of(&request)?.is_none();
        self.call_list(
            &op::ListNamespaces,
            request,
            async |l: Listing<'_>, request| {
                if !merged {
                    return match l.whole {
                        true => l.route.catalog.list_namespaces(request).await,
                        false => self.visible_namespaces(&l, &request).await,
                    };
                }
                // The merged root: every bound namespace and what the default
                // warehouse's root holds. Across warehouses a listing right at
                // the default root proves nothing about the others: every name
                // is checked in its own.
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
                let mut seen = Vec::new();
                for name in names {
                    let w = self
                        .bound_to(&name)
                        .await?
                        .unwrap_or_else(|| DEFAULT_WAREHOUSE.to_string());
                    if l.sight
                        .sees(Kind::Namespace, &w, vec![name.clone()])
                        .await?
                    {
                        seen.push(name);
                    }
                }
                let (namespaces, page_token) = crate::api::page::page(
                    &seen,
                    request.page_token.as_deref(),
                    request.limit,
                    SPEC,
                )?;
                Ok(models::ListNamespacesResponse {
                    namespaces,
                    page_token,
                    ..Default::default()
                })
            },
        )
        .await
    }

    async fn list_tables_routed(
        &self,
        request: models::ListTablesRequest,
    ) -> CatalogResult<models::ListTablesResponse> {
        self.call_list(
            &op::ListTables,
            request,
            async |l: Listing<'_>, request| match l.whole {
                true => l.route.catalog.list_tables(request).await,
                false => self.visible_tables(&l, &request).await,
            },
        )
        .await
    }

    async fn list_all_tables_routed(
        &self,
        request: models::ListTablesRequest,
    ) -> CatalogResult<models::ListTablesResponse> {
        self.call_list(
            &op::ListAllTables,
            request,
            async |l: Listing<'_>, request| {
                let one_warehouse = !self.warehouses || self.scope_of(&request)?.is_some();
                let mut tables = Vec::new();
                match one_warehouse {
                    true if l.whole => return l.route.catalog.list_all_tables(request).await,
                    true => {
                        let keys = all_tables(&l.route.catalog, request.include_declared).await?;
                        tables = self
                            .visible_table_keys(&l.sight, keys, &l.route.warehouse)
                            .await?;
                    }
                    false => {
                        for w in self.table_warehouses().await? {
                            let catalog = match self.catalog(&w).await {
                                Ok(c) => c,
                                // A binding left by a deleted warehouse hides nothing else.
                                Err(e) if e.code == crate::error::Code::WAREHOUSE_NOT_FOUND => {
                                    continue
                                }
                                Err(e) => return Err(e),
                            };
                            // Every page of this warehouse: the merged listing pages again.
                            let keys = all_tables(&catalog, request.include_declared).await?;
                            // Whether the whole of this warehouse may be listed, per warehouse.
                            let whole_here = Access {
                                action: &op::ListAllTables,
                                warehouse: Some(w.clone()),
                                kind: Kind::Namespace,
                                ..Default::default()
                            };
                            match !self.auth.required() || l.sight.allows(&whole_here).await? {
                                true => tables.extend(keys),
                                false => tables
                                    .extend(self.visible_table_keys(&l.sight, keys, &w).await?),
                            }
                        }
                        tables.sort();
                        tables.dedup();
                    }
                }
                let (tables, page_token) = crate::api::page::page(
                    &tables,
                    request.page_token.as_deref(),
                    request.limit,
                    SPEC,
                )?;
                Ok(models::ListTablesResponse {
                    tables,
                    page_token,
                    ..Default::default()
                })
            },
        )
        .await
    }

    /// Every warehouse that holds a namespace, and the default one.
    async fn table_warehouses(&self) -> CatalogResult<Vec<String>> {
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
        Ok(warehouses)
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
            async fn $method(&self, request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp> {
                let body = Body::whole(&data);
                self.call_vending(&op::$Name, request, body, async move |a: &mut Admitted, request| {
                    Spec::$method(a.route.catalog.as_ref(), request, data).await
                })
                .await
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp> {
                let body = Body::whole(&data);
                self.call_kept(&op::$Name, request, body, async move |a: &mut Admitted, request| {
                    Spec::$method(a.route.catalog.as_ref(), request, data).await
                })
                .await
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit $($row:tt)*) => {
        governed!(@read [$($done)*] $Name $method $Req (); $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal] $($row:tt)*) => {
        governed!(@read [$($done)*] $Name $method $Req Bytes; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal] $($row:tt)*) => {
        governed!(@read [$($done)*] $Name $method $Req i64; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal] $($row:tt)*) => {
        governed!(@read [$($done)*] $Name $method $Req String; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $($row:tt)*) => {
        governed!(@plain [$($done)*] $Name $method $Req models::$Resp; $($row)*);
    };
    (@plain [$($done:tt)*] $Name:ident $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$e:ident $t:ident $g:ident $f:ident vends $($more:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<$Ret> {
                self.call_vending(&op::$Name, request, Body::None, async |a: &mut Admitted, request| {
                    Spec::$method(a.route.catalog.as_ref(), request).await
                })
                .await
            }
        ] $($rest)*);
    };
    (@plain [$($done:tt)*] $Name:ident $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<$Ret> {
                self.call_kept(&op::$Name, request, Body::None, async |a: &mut Admitted, request| {
                    Spec::$method(a.route.catalog.as_ref(), request).await
                })
                .await
            }
        ] $($rest)*);
    };
    // The answers that are not JSON models are reads' (exists, query,
    // count, plans), which take no key.
    (@read [$($done:tt)*] $Name:ident $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [read $($fact:ident)*]; $($rest:tt)*) => {
        governed!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<$Ret> {
                self.call(&op::$Name, request, async |a: &mut Admitted, request| {
                    Spec::$method(a.route.catalog.as_ref(), request).await
                })
                .await
            }
        ] $($rest)*);
    };
    ($($rows:tt)*) => {
        governed!(@acc [] $($rows)*);
    };
}

crate::api::inventory::for_each_spec_op!(governed);
lance_edge!(Governance);
