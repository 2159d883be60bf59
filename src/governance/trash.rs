//! Recoverable drops over the hierarchy: which grace period a drop gets
//! (its effective maintenance policy's), undrop routed and authorized
//! as the drop was, the trash listing across warehouses, purge, pending
//! deadlines, and the sweep that reports expired entries and purges them
//! only where a policy says so. The trash itself is the core's
//! (`core/trash.rs`).

use super::guard::entry::Admitted;
use super::guard::request::{asked, Named};
use super::guard::sight::Sight;
use crate::api::call::Call;
use crate::api::op;
pub use crate::api::trash::{
    ListTasksRequest, ListTasksResponse, ListTrashRequest, ListTrashResponse, PurgeTrashRequest,
    PurgeTrashResponse, SweepTrashRequest, SweepTrashResponse,
};
use crate::api::OpDef;
use std::collections::HashMap;

use super::duration::parse_duration;
use super::guard::{Access, ObjectRef};
use super::policy_records::Candidate;
use super::{Governance, Route, DEFAULT_PROJECT, DEFAULT_WAREHOUSE};
use crate::api::kind::Kind;
use crate::api::page::{page_items, CONTROL};
use crate::api::policy::{EffectivePolicy, PolicyLevel};
use crate::core::reserved::{PRINCIPAL, TRASH_GRACE};
use crate::core::trash::records::TrashEntry;
use crate::core::trash::undrop::{
    UndropNamespaceRequest, UndropNamespaceResponse, UndropTableRequest, UndropTableResponse,
};
use crate::error::{CatalogError, CatalogResult, Code};

/// The server's trash settings (`--trash-grace`, `--trash-purge-expired`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TrashConfig {
    /// Seconds a drop stays recoverable; 0: drops delete at once.
    pub grace_s: u64,
    /// Whether the sweep purges expired entries (a project may say
    /// otherwise).
    pub purge_expired: bool,
}

/// The trash settings of an effective policy.
fn trash_of(p: &EffectivePolicy) -> CatalogResult<TrashConfig> {
    Ok(TrashConfig {
        grace_s: parse_duration(&p.policy.trash_grace).map_err(CatalogError::internal)?,
        purge_expired: p.policy.purge_expired_trash,
    })
}

/// The policy candidates of a trash entry, innermost first: the object's
/// own record, the namespaces it was dropped from (by the real ids they
/// had then), its project.
fn entry_chain(e: &TrashEntry, project: &str) -> Vec<Candidate> {
    let level = match e.is_table() {
        true => PolicyLevel::Table,
        false => PolicyLevel::Namespace,
    };
    let mut chain = vec![Candidate {
        level,
        id: e.id.clone(),
        key: e.object_id().map(str::to_string),
    }];
    let depth = e.id.len().saturating_sub(1);
    for n in (1..=depth).rev() {
        let key = match e.ancestor_object_ids.get(n - 1) {
            Some(k) => Some(k.clone()).filter(|k| !k.is_empty()),
            // An entry from before ancestors were kept knows its parent.
            None if n == depth => e.parent_object_id.clone(),
            None => None,
        };
        chain.push(Candidate {
            level: PolicyLevel::Namespace,
            id: e.id[..n].to_vec(),
            key,
        });
    }
    chain.push(Candidate::project(project));
    chain
}

impl Governance {
    /// The trash settings that govern the table or namespace `id` of a
    /// route: its effective maintenance policy's.
    pub(super) async fn trash_policy(
        &self,
        route: &Route,
        kind: Kind,
        id: &[String],
    ) -> CatalogResult<TrashConfig> {
        let level = match kind {
            Kind::Table => PolicyLevel::Table,
            _ => PolicyLevel::Namespace,
        };
        let chain = self.object_chain(route, level, id).await?;
        trash_of(&self.resolve_policy((level, id.to_vec()), &chain).await?)
    }

    /// The trash settings that govern a trash entry now.
    async fn entry_trash_policy(
        &self,
        e: &TrashEntry,
        warehouse: &str,
    ) -> CatalogResult<TrashConfig> {
        let project = self.warehouse_project(warehouse).await?;
        let chain = entry_chain(e, &project);
        let level = chain[0].level;
        trash_of(&self.resolve_policy((level, e.id.clone()), &chain).await?)
    }

    /// Fill a drop's context with what only the server may say: the grace
    /// period and who drops (a caller's own values are replaced).
    pub(super) async fn stamp_drop(
        &self,
        context: &mut Option<HashMap<String, String>>,
        route: &Route,
        access: &Access,
    ) -> CatalogResult<()> {
        let grace = self
            .trash_policy(route, access.kind, &access.id)
            .await?
            .grace_s;
        let ctx = context.get_or_insert_with(HashMap::new);
        ctx.insert(TRASH_GRACE.to_string(), grace.to_string());
        match &access.principal {
            Some(p) => ctx.insert(PRINCIPAL.to_string(), p.id.clone()),
            None => ctx.remove(PRINCIPAL),
        };
        Ok(())
    }

    /// Undrop is authorized on the trashed table itself (its grants are
    /// bound to it, not to whatever holds its name now), and, when the
    /// namespace it would come back into is not the one it was dropped
    /// from, on that namespace too: coming back there puts it under that
    /// namespace's grants, as a rename into it would.
    pub(super) async fn undrop_table_governed(
        &self,
        call: &Call,
        request: UndropTableRequest,
    ) -> CatalogResult<UndropTableResponse> {
        let id = request.id.clone();
        let resolve = async move |_: &Sight<'_>| {
            let named = Named::called(call, &request.id);
            let route = self.route(&op::UndropTable, &named).await?;
            let mut access = asked(&op::UndropTable, &route.warehouse, &named);
            let entry = match crate::core::checked_table_id(&Some(request.id.clone())) {
                Ok(id) => {
                    route
                        .catalog
                        .undrop_entry(&id, request.trash_id.as_deref())
                        .await?
                }
                Err(_) => None,
            };
            access.object = entry
                .as_ref()
                .and_then(|e| e.object_id())
                .map(|real| ObjectRef::Known(real.to_string()))
                .unwrap_or(ObjectRef::Absent);
            Ok((access, (route, entry, request)))
        };
        self.call_on(
            call,
            resolve,
            async |access, (route, entry, request), sight| {
                if let Some(e) = &entry {
                    let parent = id[..id.len() - 1].to_vec();
                    let now = match parent.is_empty() {
                        true => None,
                        false => route
                            .catalog
                            .object_ids(&[("namespace", parent.clone())])
                            .await?
                            .remove(0),
                    };
                    if e.parent_object_id.is_some() && now != e.parent_object_id {
                        sight
                            .require(&Access {
                                kind: Kind::Namespace,
                                id: parent,
                                object: ObjectRef::Standing,
                                ..access.clone()
                            })
                            .await?;
                    }
                }
                let route = self.for_write(&op::UndropTable, route).await?;
                let mut request: UndropTableRequest = request;
                // The very entry that was authorized, not a newer drop of the name.
                if let Some(e) = entry {
                    request.trash_id = Some(e.trash_id);
                }
                route.catalog.undrop_table(request).await
            },
        )
        .await
    }

    pub(super) async fn undrop_namespace_governed(
        &self,
        call: &Call,
        request: UndropNamespaceRequest,
    ) -> CatalogResult<UndropNamespaceResponse> {
        if !(self.warehouses && request.id.len() == 1) {
            let resolve = async move |_: &Sight<'_>| {
                let named = Named::called(call, &request.id);
                let route = self.route(&op::UndropNamespace, &named).await?;
                let mut access = asked(&op::UndropNamespace, &route.warehouse, &named);
                let mut request = request;
                access.object = self.trashed_namespace(&route.catalog, &mut request).await?;
                Ok((access, (route, request)))
            };
            return self
                .call_on(call, resolve, async |_, (route, request), _| {
                    let route = self.for_write(&op::UndropNamespace, route).await?;
                    route.catalog.undrop_namespace(request).await
                })
                .await;
        }
        // A top-level namespace: its binding went with it. Its warehouse
        // is the one named, the one it is bound to again, or the one whose
        // trash holds it.
        let name = request.id[0].clone();
        let resolve = async move |_: &Sight<'_>| {
            let warehouse = match (&request.warehouse_id, self.bound_to(&request.id[0]).await?) {
                (Some(w), Some(b)) if *w != b => {
                    return Err(CatalogError::new(
                        Code::NAMESPACE_ALREADY_EXISTS,
                        format!(
                            "namespace {:?} exists in warehouse {b:?} now",
                            request.id[0]
                        ),
                    ))
                }
                (Some(w), _) => w.clone(),
                (None, Some(b)) => b,
                (None, None) => self.trash_home(&request).await?,
            };
            let mut request = request;
            let object = match self.catalog(&warehouse).await {
                Ok(catalog) => self.trashed_namespace(&catalog, &mut request).await?,
                Err(_) => ObjectRef::Absent,
            };
            let access = Access {
                action: &op::UndropNamespace,
                warehouse: Some(warehouse.clone()),
                kind: Kind::Namespace,
                id: request.id.clone(),
                object,
                ..Default::default()
            };
            Ok((access, (warehouse, request)))
        };
        self.call_on(call, resolve, async |_, (warehouse, request), _| {
            let catalog = self.writable(&warehouse).await?;
            let bound_here = self.bound_to(&name).await?.is_some();
            if !bound_here {
                self.registry.bind(&name, &warehouse).await?;
                self.forget(&name);
            }
            let done = catalog.undrop_namespace(request.clone()).await;
            if done.is_err()
                && !bound_here
                && !catalog.namespace_present(&request.id).await.unwrap_or(true)
            {
                let _ = self.registry.unbind(&name, &warehouse).await;
                self.forget(&name);
            }
            done
        })
        .await
    }

    /// The trashed namespace an undrop restores (the entry its group was
    /// filed under), as the object its authorization is about; the request
    /// is pinned to that drop, so a newer drop of the name made meanwhile
    /// is not what comes back.
    async fn trashed_namespace(
        &self,
        catalog: &crate::Catalog,
        request: &mut UndropNamespaceRequest,
    ) -> CatalogResult<ObjectRef> {
        let Some(group) = catalog
            .undrop_group(&request.id, request.trash_id.as_deref())
            .await?
        else {
            return Ok(ObjectRef::Absent);
        };
        let own = catalog
            .trash_entries()
            .await?
            .into_iter()
            .rev()
            .find(|e| e.group == group && !e.is_table() && e.id == request.id);
        let Some(own) = own else {
            return Ok(ObjectRef::Absent);
        };
        request.trash_id = Some(own.trash_id.clone());
        Ok(own
            .object_id()
            .map(|real| ObjectRef::Known(real.to_string()))
            .unwrap_or(ObjectRef::Absent))
    }

    /// The one warehouse whose trash holds top-level namespace `id`.
    async fn trash_home(&self, request: &UndropNamespaceRequest) -> CatalogResult<String> {
        let mut homes = Vec::new();
        for (warehouse, catalog) in self.every_catalog(None, None).await? {
            let group = catalog
                .undrop_group(&request.id, request.trash_id.as_deref())
                .await?;
            if group.is_some() {
                homes.push(warehouse);
            }
        }
        match homes.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(CatalogError::new(
                Code::NAMESPACE_NOT_FOUND,
                format!("no dropped namespace {:?} is in any warehouse's trash", request.id[0]),
            )),
            many => Err(CatalogError::invalid(format!(
                "dropped namespace {:?} is in the trash of warehouses {many:?}; name one with warehouse_id",
                request.id[0]
            ))),
        }
    }

    /// Every warehouse (of `project`, or just `warehouse`) and its catalog.
    pub(super) async fn every_catalog(
        &self,
        project: Option<&str>,
        warehouse: Option<&str>,
    ) -> CatalogResult<Vec<(String, std::sync::Arc<crate::Catalog>)>> {
        let mut ids = Vec::new();
        if project.is_none_or(|p| p == DEFAULT_PROJECT) {
            ids.push(DEFAULT_WAREHOUSE.to_string());
        }
        if self.warehouses {
            for w in self.registry.all_warehouses(project).await? {
                ids.push(w.warehouse_id);
            }
        }
        let mut out = Vec::new();
        for id in ids.into_iter().filter(|i| warehouse.is_none_or(|w| w == i)) {
            match self.catalog(&id).await {
                Ok(c) => out.push((id, c)),
                Err(e) => {
                    tracing::warn!(warehouse = %id, error = %e.message, "a warehouse's trash could not be read")
                }
            }
        }
        Ok(out)
    }

    /// Every trash entry (of a project, a warehouse), with its place.
    pub(super) async fn all_trash(
        &self,
        project: Option<&str>,
        warehouse: Option<&str>,
    ) -> CatalogResult<Vec<TrashEntry>> {
        let mut out = Vec::new();
        for (w, catalog) in self.every_catalog(project, warehouse).await? {
            let project = self.warehouse_project(&w).await?;
            for mut e in catalog.trash_entries().await? {
                e.warehouse = Some(w.clone());
                e.project = Some(project.clone());
                out.push(e);
            }
        }
        out.sort_by(|a, b| a.trash_id.cmp(&b.trash_id));
        Ok(out)
    }

    /// The access an entry asks for `action`.
    fn entry_access(&self, action: &'static OpDef, e: &TrashEntry) -> Access {
        Access {
            action,
            warehouse: e.warehouse.clone(),
            kind: if e.is_table() {
                Kind::Table
            } else {
                Kind::Namespace
            },
            id: e.id.clone(),
            object: e
                .object_id()
                .map(|real| ObjectRef::Known(real.to_string()))
                .unwrap_or(ObjectRef::Absent),
            ..Default::default()
        }
    }

    pub(super) async fn list_trash_governed(
        &self,
        call: &Call,
        request: ListTrashRequest,
    ) -> CatalogResult<ListTrashResponse> {
        self.call_as(call, async |sight| {
            let mut entries = self
                .all_trash(
                    request.project_id.as_deref(),
                    request.warehouse_id.as_deref(),
                )
                .await?;
            entries.retain(|e| e.under(&request.namespace_id));
            // Each entry shows to whoever could read the object it was.
            let mut visible = Vec::new();
            for e in entries {
                let access = self.entry_access(&op::ListTrash, &e);
                if sight.allows(&access).await.unwrap_or(false) {
                    visible.push(e);
                }
            }
            let (entries, page_token) = page_items(
                visible,
                |e| e.trash_id.clone(),
                request.page_token.as_deref(),
                request.limit,
                CONTROL,
            )?;
            Ok(ListTrashResponse {
                entries,
                page_token,
            })
        })
        .await
    }

    /// The entry `trash_id` names, found in its warehouse.
    async fn find_entry(
        &self,
        trash_id: &str,
        warehouse: Option<&str>,
    ) -> CatalogResult<TrashEntry> {
        self.all_trash(None, warehouse)
            .await?
            .into_iter()
            .find(|e| e.trash_id == trash_id)
            .ok_or_else(|| crate::core::trash::records::not_in_trash(trash_id))
    }

    pub(super) async fn purge_trash_governed(
        &self,
        call: &Call,
        request: PurgeTrashRequest,
    ) -> CatalogResult<PurgeTrashResponse> {
        let resolve = async |sight: &Sight<'_>| {
            crate::records::check_id("trash entry", &request.trash_id)?;
            match self
                .find_entry(&request.trash_id, request.warehouse_id.as_deref())
                .await
            {
                Ok(entry) => Ok((self.entry_access(&op::PurgeTrash, &entry), entry)),
                // Told only to whoever could purge every entry.
                Err(e) => Err(sight.told_to_admin(e, &op::PurgeTrash).await),
            }
        };
        self.call_on(call, resolve, async |_, entry, _| {
            let warehouse = entry.warehouse.clone().unwrap_or(DEFAULT_WAREHOUSE.into());
            let purged = self.purge_in(&warehouse, &entry.trash_id).await?;
            Ok(PurgeTrashResponse { purged })
        })
        .await
    }

    /// Purge an entry of `warehouse`; the grants of what it was (bound to
    /// its real id) die with it.
    async fn purge_in(&self, warehouse: &str, trash_id: &str) -> CatalogResult<Vec<TrashEntry>> {
        let catalog = self.writable(warehouse).await?;
        let mut purged = catalog.purge_trash(trash_id).await?;
        for e in &mut purged {
            e.warehouse = Some(warehouse.to_string());
        }
        let reals: Vec<String> = purged
            .iter()
            .filter_map(|e| e.object_id().map(str::to_string))
            .collect();
        self.forget_objects(&reals).await;
        Ok(purged)
    }

    pub(super) async fn sweep_trash_governed(
        &self,
        call: &Call,
    ) -> CatalogResult<SweepTrashResponse> {
        self.call_control(call, &op::SweepTrash, Kind::Server, vec![], async |_| {
            self.sweep_trash().await
        })
        .await
    }

    /// Report every expired entry; purge those whose project's policy (or
    /// the server's) says so. Nothing else is deleted.
    pub async fn sweep_trash(&self) -> CatalogResult<SweepTrashResponse> {
        let mut answer = SweepTrashResponse::default();
        // Entries filed without a claim (by a replica of an earlier version
        // during a rolling update) get theirs: see `core/trash/claims.rs`.
        for (w, catalog) in self.every_catalog(None, None).await? {
            if let Err(e) = catalog.backfill_claims().await {
                tracing::warn!(warehouse = %w, error = %e.message, "trash claims backfill failed; the next sweep tries again");
            }
        }
        let entries = self.all_trash(None, None).await?;
        // Each expired entry's own say, by its own effective policy (one
        // that cannot be read keeps its entry).
        let mut says: HashMap<String, bool> = HashMap::new();
        for e in entries.iter().filter(|e| e.expired) {
            let warehouse = e.warehouse.clone().unwrap_or(DEFAULT_WAREHOUSE.into());
            let purge = match self.entry_trash_policy(e, &warehouse).await {
                Ok(p) => p.purge_expired,
                Err(err) => {
                    tracing::warn!(trash_id = %e.trash_id, error = %err.message, "an expired entry's policy could not be read; it stays");
                    false
                }
            };
            says.insert(e.trash_id.clone(), purge);
        }
        for e in entries.iter().filter(|e| e.expired) {
            let warehouse = e.warehouse.clone().unwrap_or(DEFAULT_WAREHOUSE.into());
            let mut purge = says.get(&e.trash_id).copied().unwrap_or(false);
            // A namespace entry's purge takes everything its drop put in
            // trash below it: only when each of those says purge too.
            if purge && !e.is_table() {
                purge = entries
                    .iter()
                    .filter(|o| o.group == e.group && o.under(&e.id))
                    .all(|o| says.get(&o.trash_id).copied().unwrap_or(false));
            }
            tracing::warn!(trash_id = %e.trash_id, kind = %e.kind, id = ?e.id, warehouse = %warehouse, purge, "trash entry expired");
            answer.expired.push(e.clone());
            if purge {
                match self.purge_in(&warehouse, &e.trash_id).await {
                    Ok(p) => answer.purged.extend(p),
                    // Purged already with its namespace.
                    Err(err) if err.code == Code::TRASH_ENTRY_NOT_FOUND => {}
                    Err(err) => {
                        tracing::warn!(trash_id = %e.trash_id, error = %err.message, "an expired entry could not be purged")
                    }
                }
            }
        }
        Ok(answer)
    }

    pub(super) async fn table_tasks_governed(
        &self,
        call: &Call,
        request: ListTasksRequest,
    ) -> CatalogResult<ListTasksResponse> {
        let named = Named::called(call, &request.id);
        self.call(&op::ListTableTasks, named, async |a: &mut Admitted, _| {
            let mut tasks = a.route.catalog.table_tasks(&request.id).await?;
            tasks.sort_by_key(|t| t.deadline_ms);
            Ok(ListTasksResponse { tasks })
        })
        .await
    }

    pub(super) async fn namespace_tasks_governed(
        &self,
        call: &Call,
        request: ListTasksRequest,
    ) -> CatalogResult<ListTasksResponse> {
        let named = Named::called(call, &request.id);
        self.call(
            &op::ListNamespaceTasks,
            named,
            async |a: &mut Admitted, _| {
                let mut tasks = a.route.catalog.namespace_tasks(&request.id).await?;
                tasks.sort_by_key(|t| t.deadline_ms);
                Ok(ListTasksResponse { tasks })
            },
        )
        .await
    }
}
