//! Lists show only what the caller may see. A caller allowed to list at
//! the parent sees every child; one that is not (it holds grants only on
//! some children) sees those it may describe, paged over what it sees.

use crate::api::op;
use crate::api::page::SPEC;
use crate::api::spec::Spec;
use crate::api::OpDef;
use crate::governance::guard::request::{asked, SpecRequest};
use lance_namespace::models;

use crate::api::kind::Kind;
use crate::auth::Principal;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::governance::guard::entry::Listing;
use crate::governance::guard::sight::Sight;
use crate::governance::guard::Access;
use crate::governance::{Governance, Route};

impl Governance {
    /// An access of `action` on the object `id` of `kind` in `warehouse`.
    fn probe(
        principal: &Option<Principal>,
        action: &'static OpDef,
        kind: Kind,
        warehouse: &str,
        id: Vec<String>,
    ) -> Access {
        Access {
            principal: principal.clone(),
            action,
            warehouse: Some(warehouse.to_string()),
            kind,
            id,
            ..Default::default()
        }
    }

    /// Whether the caller may see the object (describe it).
    pub(super) async fn may_see(
        &self,
        principal: &Option<Principal>,
        kind: Kind,
        warehouse: &str,
        id: Vec<String>,
    ) -> CatalogResult<bool> {
        let action = match kind {
            Kind::Namespace => &op::DescribeNamespace,
            _ => &op::DescribeTable,
        };
        self.allowed(&Self::probe(principal, action, kind, warehouse, id))
            .await
    }

    /// Route and authorize a list; `Ok(None)` when the caller may not list
    /// the parent but may still see some of its children.
    pub(super) async fn admit_list(
        &self,
        op: &'static OpDef,
        request: &dyn SpecRequest,
    ) -> CatalogResult<(Route, Option<Principal>, bool)> {
        let principal = self.principal_of(request).await?;
        let route = self.route(op, request).await?;
        let mut access = asked(op, &route.warehouse, request);
        access.principal = principal.clone();
        if !self.auth.required() {
            return Ok((route, principal, true));
        }
        if principal.is_none() {
            return Err(crate::auth::unauthenticated("authentication required"));
        }
        let whole = self.allowed(&access).await?;
        Ok((route, principal, whole))
    }

    /// The children of a namespace the caller may see, paged.
    pub(in crate::governance) async fn visible_namespaces(
        &self,
        listing: &Listing<'_>,
        request: &models::ListNamespacesRequest,
    ) -> CatalogResult<models::ListNamespacesResponse> {
        let (route, principal) = (&listing.route, &listing.sight.principal);
        let parent = request.id.clone().unwrap_or_default();
        let names = self
            .visible_children(route, principal, &parent, Kind::Namespace, |token| {
                let page = models::ListNamespacesRequest {
                    id: request.id.clone(),
                    page_token: token,
                    ..Default::default()
                };
                async move {
                    let answer = route.catalog.list_namespaces(page).await?;
                    Ok((answer.namespaces, answer.page_token))
                }
            })
            .await?;
        let (namespaces, page_token) =
            crate::api::page::page(&names, request.page_token.as_deref(), request.limit, SPEC)?;
        Ok(models::ListNamespacesResponse {
            namespaces,
            page_token,
            ..Default::default()
        })
    }

    /// The tables of a namespace the caller may see, paged.
    pub(in crate::governance) async fn visible_tables(
        &self,
        listing: &Listing<'_>,
        request: &models::ListTablesRequest,
    ) -> CatalogResult<models::ListTablesResponse> {
        let (route, principal) = (&listing.route, &listing.sight.principal);
        let parent = request.id.clone().unwrap_or_default();
        let names = self
            .visible_children(route, principal, &parent, Kind::Table, |token| {
                let page = models::ListTablesRequest {
                    id: request.id.clone(),
                    include_declared: request.include_declared,
                    page_token: token,
                    ..Default::default()
                };
                async move {
                    let answer = route.catalog.list_tables(page).await?;
                    Ok((answer.tables, answer.page_token))
                }
            })
            .await?;
        let (tables, page_token) =
            crate::api::page::page(&names, request.page_token.as_deref(), request.limit, SPEC)?;
        Ok(models::ListTablesResponse {
            tables,
            page_token,
            ..Default::default()
        })
    }

    /// The names of `parent`'s children of `kind` the caller may see,
    /// over every page `list` answers (a page's names and the next token);
    /// none at all is refused as the parent's listing would be.
    async fn visible_children<F, Fut>(
        &self,
        route: &Route,
        principal: &Option<Principal>,
        parent: &[String],
        kind: Kind,
        list: F,
    ) -> CatalogResult<Vec<String>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: std::future::Future<Output = CatalogResult<(Vec<String>, Option<String>)>>,
    {
        let op = match kind {
            Kind::Namespace => &op::ListNamespaces,
            _ => &op::ListTables,
        };
        let mut names = Vec::new();
        let mut token = None;
        loop {
            let (page, next) = self
                .hidden_list(list(token).await, principal, &route.warehouse, parent, op)
                .await?;
            // Every child's real id in one lookup, not one per check.
            let ids: Vec<_> = page
                .iter()
                .map(|name| (kind.as_str(), child(parent, name)))
                .collect();
            route.catalog.object_ids(&ids).await?;
            for name in page {
                let id = child(parent, &name);
                if self.may_see(principal, kind, &route.warehouse, id).await? {
                    names.push(name);
                }
            }
            token = next.filter(|t| !t.is_empty());
            if token.is_none() {
                break;
            }
        }
        if names.is_empty() {
            return Err(self.refusal(principal, op, &route.warehouse, parent).await);
        }
        Ok(names)
    }

    /// Keep the full table ids (as the manifest spells them) the caller may
    /// see; `warehouse_of` names each one's warehouse.
    pub(in crate::governance) async fn visible_table_keys(
        &self,
        sight: &Sight<'_>,
        keys: Vec<String>,
        warehouse: &str,
    ) -> CatalogResult<Vec<String>> {
        let principal = &sight.principal;
        let mut out = Vec::new();
        let ids: Vec<(&str, Vec<String>)> = keys
            .iter()
            .map(|k| ("table", crate::core::manifest_id(k)))
            .collect();
        // Every table's real id in one lookup, not one per check.
        self.catalog(warehouse).await?.object_ids(&ids).await?;
        for key in keys {
            let id = crate::core::manifest_id(&key);
            if self.may_see(principal, Kind::Table, warehouse, id).await? {
                out.push(key);
            }
        }
        Ok(out)
    }

    /// A listing of a namespace that is not there, for a caller who may
    /// not list where it would be: refused as if it were (what a caller
    /// may not see it learns nothing of, not even whether it exists).
    async fn hidden_list<T>(
        &self,
        listed: CatalogResult<T>,
        principal: &Option<Principal>,
        warehouse: &str,
        parent: &[String],
        action: &'static OpDef,
    ) -> CatalogResult<T> {
        let e = match listed {
            Ok(answer) => return Ok(answer),
            Err(e) => e,
        };
        if e.code != Code::NAMESPACE_NOT_FOUND
            || self
                .may_see(principal, Kind::Namespace, warehouse, parent.to_vec())
                .await?
        {
            return Err(e);
        }
        Err(self.refusal(principal, action, warehouse, parent).await)
    }

    /// Nothing visible under a parent the caller may not list: that is a
    /// refusal (audited as any), not an empty answer.
    async fn refusal(
        &self,
        principal: &Option<Principal>,
        action: &'static OpDef,
        warehouse: &str,
        parent: &[String],
    ) -> CatalogError {
        let access = Self::probe(
            principal,
            action,
            Kind::Namespace,
            warehouse,
            parent.to_vec(),
        );
        match self.authorize(&access).await {
            Err(e) => e,
            Ok(()) => {
                let who = principal.as_ref().map(|p| p.id.as_str()).unwrap_or("");
                CatalogError::new(
                    Code::PERMISSION_DENIED,
                    format!("{who:?} may not {action} here"),
                )
            }
        }
    }
}

/// A child's id: its parent's and its name.
fn child(parent: &[String], name: &str) -> Vec<String> {
    parent.iter().cloned().chain([name.to_string()]).collect()
}
