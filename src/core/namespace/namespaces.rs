//! Namespace operations: the rules the engine leaves open (mode on create,
//! mode and behavior on drop, NamespaceNotFound on listing a missing parent).

use crate::api::op;
use lance_namespace::models::{
    CreateNamespaceRequest, CreateNamespaceResponse, DropNamespaceRequest, DropNamespaceResponse,
    ListNamespacesRequest, ListNamespacesResponse, ListTablesRequest, ListTablesResponse,
};
use lance_namespace::LanceNamespace;

use crate::core::body::parse_mode;
use crate::core::checks::{display_id, namespace_id};
use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

impl Catalog {
    pub(crate) async fn create_namespace_op(
        &self,
        mut req: CreateNamespaceRequest,
    ) -> CatalogResult<CreateNamespaceResponse> {
        let id = namespace_id(&req.id)?;
        crate::core::checks::check_properties(req.properties.as_ref())?;
        crate::core::namespace::storage_options::check_namespace_properties(
            req.properties.as_ref(),
        )?;
        if id.is_empty() {
            return Err(CatalogError::new(
                Code::NAMESPACE_ALREADY_EXISTS,
                "the root namespace always exists",
            ));
        }
        let mode = parse_mode(
            req.mode.as_deref(),
            &["create", "exist_ok", "overwrite"],
            "create",
            op::CreateNamespace.action,
        )?;
        self.require_namespace(&id[..id.len() - 1]).await?;
        // The new namespace's real id (an overwritten one keeps its own:
        // it is the same namespace with new properties).
        let mut real = crate::core::object_ids::new_object_id(req.context.as_ref());
        if self.namespace_present(&id).await? {
            match mode {
                "exist_ok" => {
                    let mut properties = self.namespace_properties(&id).await?;
                    crate::core::namespace::storage_options::redact_namespace_properties(
                        &mut properties,
                    );
                    return Ok(CreateNamespaceResponse {
                        properties,
                        ..Default::default()
                    });
                }
                "overwrite" => {
                    // Overwrite replaces the namespace's properties. It only
                    // applies to an empty namespace: replacing one that holds
                    // tables would silently orphan them.
                    let kind_id = [("namespace", id.clone())];
                    if let Some(kept) = self.object_ids(&kind_id).await?.remove(0) {
                        real = kept;
                    }
                    self.drop_namespace_op(DropNamespaceRequest {
                        id: Some(id.clone()),
                        ..Default::default()
                    })
                    .await?;
                }
                _ => {
                    return Err(CatalogError::new(
                        Code::NAMESPACE_ALREADY_EXISTS,
                        format!("namespace {} already exists", display_id(&id)),
                    ))
                }
            }
        }
        crate::core::object_ids::stamp(&mut req.properties, "namespace", real);
        self.record_namespace(&id, req.properties.clone().unwrap_or_default())
            .await?;
        let mut properties = req.properties;
        crate::core::namespace::storage_options::redact_namespace_properties(&mut properties);
        Ok(CreateNamespaceResponse {
            properties,
            ..Default::default()
        })
    }

    /// Record namespace `id` in the manifest: one appended row, refused if
    /// the id is taken or the parent is gone, and conflicting with a
    /// concurrent change to the parent (its drop) on any replica.
    async fn record_namespace(
        &self,
        id: &[String],
        properties: std::collections::HashMap<String, String>,
    ) -> CatalogResult<()> {
        let key = crate::core::checks::manifest_key(id);
        let parent = id[..id.len() - 1].to_vec();
        let guard: Vec<String> = match parent.is_empty() {
            true => Vec::new(),
            false => vec![crate::core::checks::manifest_key(&parent)],
        };
        let _held = self.hold_manifest().await;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let ds = self.manifest_snapshot().await?;
            let present = self
                .manifest_rows(&ds, std::slice::from_ref(&key))
                .await?
                .first()
                .and_then(crate::core::manifest_tx::row_type);
            match present.as_deref() {
                Some("table") => {
                    return Err(CatalogError::new(
                        Code::NAMESPACE_ALREADY_EXISTS,
                        format!("{} is a table, not a namespace", display_id(id)),
                    ))
                }
                Some(_) => {
                    return Err(CatalogError::new(
                        Code::NAMESPACE_ALREADY_EXISTS,
                        format!("namespace {} already exists", display_id(id)),
                    ))
                }
                None => {}
            }
            if !guard.is_empty() {
                let rows = self.manifest_rows(&ds, &guard).await?;
                let kind = rows.first().and_then(crate::core::manifest_tx::row_type);
                if kind.as_deref() != Some("namespace") {
                    return Err(crate::core::checks::missing_namespace(&parent));
                }
            }
            let schema = std::sync::Arc::new(arrow_schema::Schema::from(ds.schema()));
            let row =
                crate::core::manifest_tx::object_row(schema, "namespace", &key, None, &properties)?;
            let change = crate::core::manifest_commit::Change {
                rows: Some(row),
                remove: Vec::new(),
                replace_existing: false,
                guard: guard.clone(),
            };
            match self.manifest_commit(ds, change).await {
                // Another commit Lance would not rebase over: check again.
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION && attempt < 4 => {
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                other => return other.map(|_| ()),
            }
        }
    }

    pub(crate) async fn drop_namespace_op(
        &self,
        req: DropNamespaceRequest,
    ) -> CatalogResult<DropNamespaceResponse> {
        let id = namespace_id(&req.id)?;
        if id.is_empty() {
            return Err(CatalogError::invalid(
                "the root namespace cannot be dropped",
            ));
        }
        let mode = parse_mode(
            req.mode.as_deref(),
            &["fail", "skip"],
            "fail",
            op::DropNamespace.action,
        )?;
        let behavior = parse_mode(
            req.behavior.as_deref(),
            &["restrict", "cascade"],
            "restrict",
            "drop_namespace behavior",
        )?;
        let trash = crate::core::trash::records::TrashContext::of(req.context.as_ref());
        let detach = behavior == "cascade" && trash.keeps();
        if !self.namespace_present(&id).await? {
            // A cascade into trash that stopped after its commit: the same
            // call finishes it.
            if detach {
                if let Some(root) = self.unfinished_detach(&id).await? {
                    return self.finish_detach(&root).await;
                }
            }
            return match mode {
                "skip" => Ok(DropNamespaceResponse::default()),
                _ => Err(CatalogError::new(
                    Code::NAMESPACE_NOT_FOUND,
                    format!("namespace {} does not exist", display_id(&id)),
                )),
            };
        }
        // Protection first: the namespace itself, and for a cascade
        // everything below it (409, code 19, unless forced).
        let force = crate::core::protection::forced(req.context.as_ref());
        let cascade = behavior == "cascade";
        self.guard_namespace(&id, cascade, force).await?;
        if detach {
            return self.trash_namespace(&id, &trash).await;
        }
        let (children, tables) = self.children(&id).await?;
        if !children.is_empty() || !tables.is_empty() {
            if behavior == "restrict" {
                return Err(CatalogError::new(
                    Code::NAMESPACE_NOT_EMPTY,
                    format!(
                        "namespace {} is not empty: it holds namespaces {:?} and tables {:?}; drop them first or use behavior=cascade",
                        display_id(&id),
                        children,
                        tables
                    ),
                ));
            }
            // Nothing is deleted unless every table below may be: a cascade
            // refused half-way would leave a namespace half-dropped.
            // The tables below it, by a prefix lookup of their keys.
            let ds = self.manifest_snapshot().await?;
            let below: Vec<String> = self
                .subtree_rows(&ds, &id)
                .await?
                .iter()
                .filter(|r| crate::core::manifest_tx::row_type(r).as_deref() == Some("table"))
                .filter_map(crate::core::manifest_tx::row_object_id)
                .collect();
            let together: Vec<String> = self
                .deletable_locations(&ds, &below)
                .await?
                .into_values()
                .map(|l| l.to_string())
                .collect();
            // Nor bytes a table outside the subtree reads (`live.rs`);
            // the tables dropped together may read each other's.
            if !together.is_empty() {
                let refs = self
                    .estate_refs(crate::core::live::Freshness::Recent)
                    .await?;
                for location in &together {
                    self.refuse_reached(location, &together, &refs)?;
                }
            }
            // Cascade: deepest first, so no object is ever left without its parent.
            for table in &tables {
                let mut t = id.clone();
                t.push(table.clone());
                self.drop_table_by_id(&t, force, &together).await?;
            }
            for child in &children {
                let mut c = id.clone();
                c.push(child.clone());
                Box::pin(self.drop_namespace_op(DropNamespaceRequest {
                    id: Some(c),
                    behavior: Some("cascade".into()),
                    context: req.context.clone(),
                    ..Default::default()
                }))
                .await?;
            }
        }
        let inner_req = DropNamespaceRequest {
            id: Some(id),
            ..Default::default()
        };
        let dropped = engine(self.inner().await?.drop_namespace(inner_req).await)?;
        self.after_engine_write().await;
        Ok(dropped)
    }

    /// Every child namespace name and table name of a namespace (all pages).
    pub(crate) async fn children(
        &self,
        id: &[String],
    ) -> CatalogResult<(Vec<String>, Vec<String>)> {
        self.children_with(id, true).await
    }

    /// Child namespaces and tables; `include_declared` keeps tables that are
    /// declared but not yet written.
    pub(crate) async fn children_with(
        &self,
        id: &[String],
        include_declared: bool,
    ) -> CatalogResult<(Vec<String>, Vec<String>)> {
        let mut namespaces = Vec::new();
        let mut token = None;
        loop {
            let page = engine(
                self.inner()
                    .await?
                    .list_namespaces(ListNamespacesRequest {
                        id: Some(id.to_vec()),
                        page_token: token.take(),
                        ..Default::default()
                    })
                    .await,
            )?;
            namespaces.extend(page.namespaces);
            match page.page_token {
                Some(t) if !t.is_empty() => token = Some(t),
                _ => break,
            }
        }
        let mut tables = Vec::new();
        loop {
            let page = engine(
                self.inner()
                    .await?
                    .list_tables(ListTablesRequest {
                        id: Some(id.to_vec()),
                        page_token: token.take(),
                        include_declared: Some(include_declared),
                        ..Default::default()
                    })
                    .await,
            )?;
            tables.extend(page.tables);
            match page.page_token {
                Some(t) if !t.is_empty() => token = Some(t),
                _ => break,
            }
        }
        Ok((namespaces, tables))
    }

    pub(crate) async fn list_namespaces_op(
        &self,
        mut req: ListNamespacesRequest,
    ) -> CatalogResult<ListNamespacesResponse> {
        let id = namespace_id(&req.id)?;
        check_limit(req.limit)?;
        self.require_namespace(&id).await?;
        req.id = Some(id);
        engine(self.inner().await?.list_namespaces(req).await)
    }

    pub(crate) async fn list_tables_op(
        &self,
        mut req: ListTablesRequest,
    ) -> CatalogResult<ListTablesResponse> {
        let id = namespace_id(&req.id)?;
        check_limit(req.limit)?;
        self.require_namespace(&id).await?;
        req.id = Some(id);
        // With declared tables included the page is the manifest's alone
        // (without them, each table's data is looked at).
        if req.include_declared != Some(false) {
            let index = self.table_index().await?;
            return index.tables_of(
                req.id.as_deref().unwrap_or_default(),
                req.page_token.as_deref(),
                req.limit,
            );
        }
        engine(self.inner().await?.list_tables(req).await)
    }
}

impl Catalog {
    /// Every table of every namespace, as full ids joined by `$`, sorted, with
    /// a page token that is the last id of the page: a page boundary is a
    /// position in the sorted id space, so it survives concurrent creates.
    pub(crate) async fn list_all_tables_op(
        &self,
        req: ListTablesRequest,
    ) -> CatalogResult<ListTablesResponse> {
        check_limit(req.limit)?;
        if req.include_declared != Some(false) {
            let index = self.table_index().await?;
            return index.all_tables(req.page_token.as_deref(), req.limit);
        }
        let mut all = Vec::new();
        let mut pending = vec![Vec::<String>::new()];
        while let Some(ns) = pending.pop() {
            let (children, tables) = self
                .children_with(&ns, req.include_declared.unwrap_or(true))
                .await?;
            for t in tables {
                let mut id = ns.clone();
                id.push(t);
                all.push(crate::core::checks::manifest_key(&id));
            }
            for c in children {
                let mut id = ns.clone();
                id.push(c);
                pending.push(id);
            }
        }
        all.sort();
        let (tables, page_token) = crate::api::page::page(
            &all,
            req.page_token.as_deref(),
            req.limit,
            crate::api::page::SPEC,
        )?;
        Ok(ListTablesResponse {
            tables,
            page_token,
            ..Default::default()
        })
    }
}

/// A negative `limit` is refused before any listing work.
pub(crate) fn check_limit(limit: Option<i32>) -> CatalogResult<()> {
    crate::api::page::size(limit, crate::api::page::SPEC).map(|_| ())
}
