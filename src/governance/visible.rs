//! Lists show only what the caller may see. A caller allowed to list at
//! the parent sees every child; one that is not (it holds grants only on
//! some children) sees those it may describe, paged over what it sees.

use lance_namespace::models;
use lance_namespace::LanceNamespace;
use serde_json::Value;

use super::guard::Access;
use super::router::{Governance, Route};
use crate::auth::Principal;
use crate::error::{CatalogError, CatalogResult, Code};

impl Governance {
    /// An access of `action` on the object `id` of `kind` in `warehouse`.
    fn probe(
        principal: &Option<Principal>,
        action: &'static str,
        kind: &'static str,
        warehouse: &str,
        id: Vec<String>,
    ) -> Access {
        Access {
            principal: principal.clone(),
            action,
            warehouse: Some(warehouse.to_string()),
            kind,
            id,
            creates: false,
            moved_to: None,
        }
    }

    /// Whether the caller may see the object (describe it).
    pub(super) async fn may_see(
        &self,
        principal: &Option<Principal>,
        kind: &'static str,
        warehouse: &str,
        id: Vec<String>,
    ) -> CatalogResult<bool> {
        let action = match kind {
            "namespace" => "describe_namespace",
            _ => "describe_table",
        };
        self.allowed(&Self::probe(principal, action, kind, warehouse, id))
            .await
    }

    /// Route and authorize a list; `Ok(None)` when the caller may not list
    /// the parent but may still see some of its children.
    pub(super) async fn admit_list(
        &self,
        op: &'static str,
        value: &Value,
    ) -> CatalogResult<(Route, Option<Principal>, bool)> {
        let principal = self.principal_of(value).await?;
        let route = self.route(op, value).await?;
        let mut access = super::router::access(op, &route.warehouse, value);
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
    pub(super) async fn visible_namespaces(
        &self,
        route: &Route,
        principal: &Option<Principal>,
        request: &models::ListNamespacesRequest,
    ) -> CatalogResult<models::ListNamespacesResponse> {
        let parent = request.id.clone().unwrap_or_default();
        let mut page = models::ListNamespacesRequest {
            id: request.id.clone(),
            ..Default::default()
        };
        let mut names = Vec::new();
        loop {
            let answer = route.catalog.list_namespaces(page.clone()).await?;
            for name in answer.namespaces {
                let id: Vec<String> = parent.iter().cloned().chain([name.clone()]).collect();
                if self
                    .may_see(principal, "namespace", &route.warehouse, id)
                    .await?
                {
                    names.push(name);
                }
            }
            page.page_token = answer.page_token.filter(|t| !t.is_empty());
            if page.page_token.is_none() {
                break;
            }
        }
        self.refuse_if_nothing(&names, principal, "list_namespaces")?;
        let (namespaces, page_token) =
            super::registry::page(names, request.page_token.as_deref(), request.limit)?;
        Ok(models::ListNamespacesResponse {
            namespaces,
            page_token,
            ..Default::default()
        })
    }

    /// The tables of a namespace the caller may see, paged.
    pub(super) async fn visible_tables(
        &self,
        route: &Route,
        principal: &Option<Principal>,
        request: &models::ListTablesRequest,
    ) -> CatalogResult<models::ListTablesResponse> {
        let parent = request.id.clone().unwrap_or_default();
        let mut page = models::ListTablesRequest {
            id: request.id.clone(),
            include_declared: request.include_declared,
            ..Default::default()
        };
        let mut names = Vec::new();
        loop {
            let answer = route.catalog.list_tables(page.clone()).await?;
            for name in answer.tables {
                let id: Vec<String> = parent.iter().cloned().chain([name.clone()]).collect();
                if self
                    .may_see(principal, "table", &route.warehouse, id)
                    .await?
                {
                    names.push(name);
                }
            }
            page.page_token = answer.page_token.filter(|t| !t.is_empty());
            if page.page_token.is_none() {
                break;
            }
        }
        self.refuse_if_nothing(&names, principal, "list_tables")?;
        let (tables, page_token) =
            super::registry::page(names, request.page_token.as_deref(), request.limit)?;
        Ok(models::ListTablesResponse {
            tables,
            page_token,
            ..Default::default()
        })
    }

    /// Keep the full table ids (as the manifest spells them) the caller may
    /// see; `warehouse_of` names each one's warehouse.
    pub(super) async fn visible_table_keys(
        &self,
        principal: &Option<Principal>,
        keys: Vec<String>,
        warehouse: &str,
    ) -> CatalogResult<Vec<String>> {
        let mut out = Vec::new();
        for key in keys {
            let id = crate::core::manifest_id(&key);
            if self.may_see(principal, "table", warehouse, id).await? {
                out.push(key);
            }
        }
        Ok(out)
    }

    /// Nothing visible under a parent the caller may not list: that is a
    /// refusal, not an empty answer.
    fn refuse_if_nothing(
        &self,
        names: &[String],
        principal: &Option<Principal>,
        action: &str,
    ) -> CatalogResult<()> {
        if names.is_empty() {
            let who = principal.as_ref().map(|p| p.id.as_str()).unwrap_or("");
            return Err(CatalogError::new(
                Code::PERMISSION_DENIED,
                format!("{who:?} may not {action} here"),
            ));
        }
        Ok(())
    }
}
