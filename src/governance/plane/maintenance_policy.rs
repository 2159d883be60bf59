//! Maintenance policy records of tables, namespaces and projects: the
//! effective policy with the record that won, and setting or removing an
//! object's own record. Tables and namespaces are routed and authorized
//! as the spec's operations are; projects as the registry's.

use super::prelude::*;
use crate::api::kind::Kind;
use crate::api::policy::PolicyLevel;
use crate::api::OpDef;
use crate::core::{missing_namespace, table_not_found};
use crate::governance::guard::entry::Admitted;
use crate::governance::guard::request::Named;
use crate::governance::policy_records::Candidate;
use crate::governance::Route;

/// What a table or namespace operation names: its level and spec action.
struct Object {
    level: PolicyLevel,
    action: &'static OpDef,
}

impl Plane<'_> {
    /// Run `run` on a table or namespace with its candidate chain,
    /// admitted for the object's action, refusing one that does not exist.
    /// `assign`: give the object a real id when it has none (a write that
    /// keys a record by it).
    async fn on_object<T: 'static>(
        &self,
        object: Object,
        id: &[String],
        assign: bool,
        run: impl AsyncFnOnce(&Admitted, Vec<Candidate>) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        if object.level == PolicyLevel::Table && id.is_empty() {
            return Err(CatalogError::invalid("a table id must not be empty"));
        }
        let named = Named::called(self.call, id);
        self.gov
            .call(object.action, named, async move |a: &mut Admitted, _| {
                let chain = self.chain(&a.route, object.level, id, assign).await?;
                run(a, chain).await
            })
            .await
    }

    /// The candidate chain of an admitted table or namespace.
    async fn chain(
        &self,
        route: &Route,
        level: PolicyLevel,
        id: &[String],
        assign: bool,
    ) -> CatalogResult<Vec<Candidate>> {
        let kind = match level {
            PolicyLevel::Table => "table",
            _ => "namespace",
        };
        if assign && id.is_empty() {
            return Err(CatalogError::invalid(
                "the root namespace has no policy record of its own: set its project's (POST /v1/projects/{project_id}/maintenance_policy)",
            ));
        }
        let mut chain = self.object_chain(route, level, id).await?;
        if chain[0].key.is_none() && !id.is_empty() {
            let present = match level {
                PolicyLevel::Table => route.catalog.table_present(id).await?,
                _ => route.catalog.namespace_present(id).await?,
            };
            if !present {
                return Err(match level {
                    PolicyLevel::Table => table_not_found(id),
                    _ => missing_namespace(id),
                });
            }
            if assign {
                chain[0].key = Some(route.catalog.assign_object_id(kind, id).await?);
            }
        }
        Ok(chain)
    }

    async fn get_policy(&self, object: Object, id: Vec<String>) -> CatalogResult<EffectivePolicy> {
        let level = object.level;
        self.on_object(object, &id, false, async |_, chain| {
            self.resolve_policy((level, id.clone()), &chain).await
        })
        .await
    }

    async fn set_object_policy(
        &self,
        object: Object,
        request: SetMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let level = object.level;
        crate::governance::policy_records::check_fields(&request.fields())?;
        self.on_object(object, &request.id, true, async |a, chain| {
            let by = a.access.principal.as_ref().map(|p| p.id.clone());
            self.set_policy(
                (level, request.id.clone()),
                &chain,
                request.fields(),
                Some(a.route.warehouse.clone()),
                by,
            )
            .await
        })
        .await
    }

    async fn delete_object_policy(
        &self,
        object: Object,
        id: Vec<String>,
    ) -> CatalogResult<DeleteMaintenancePolicyResponse> {
        let level = object.level;
        self.on_object(object, &id, false, async |_, chain| {
            let removed = match &chain[0].key {
                Some(key) => self.registry.delete_policy_record(level, key).await?,
                None => false,
            };
            Ok(DeleteMaintenancePolicyResponse { removed })
        })
        .await
    }

    pub(super) async fn get_table_maintenance_policy(
        &self,
        request: GetMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let object = Object {
            level: PolicyLevel::Table,
            action: &op::GetTableMaintenancePolicy,
        };
        self.get_policy(object, request.id).await
    }

    pub(super) async fn set_table_maintenance_policy(
        &self,
        request: SetMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let object = Object {
            level: PolicyLevel::Table,
            action: &op::SetTableMaintenancePolicy,
        };
        self.set_object_policy(object, request).await
    }

    pub(super) async fn delete_table_maintenance_policy(
        &self,
        request: DeleteMaintenancePolicyRequest,
    ) -> CatalogResult<DeleteMaintenancePolicyResponse> {
        let object = Object {
            level: PolicyLevel::Table,
            action: &op::DeleteTableMaintenancePolicy,
        };
        self.delete_object_policy(object, request.id).await
    }

    pub(super) async fn get_namespace_maintenance_policy(
        &self,
        request: GetMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let object = Object {
            level: PolicyLevel::Namespace,
            action: &op::GetNamespaceMaintenancePolicy,
        };
        self.get_policy(object, request.id).await
    }

    pub(super) async fn set_namespace_maintenance_policy(
        &self,
        request: SetMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let object = Object {
            level: PolicyLevel::Namespace,
            action: &op::SetNamespaceMaintenancePolicy,
        };
        self.set_object_policy(object, request).await
    }

    pub(super) async fn delete_namespace_maintenance_policy(
        &self,
        request: DeleteMaintenancePolicyRequest,
    ) -> CatalogResult<DeleteMaintenancePolicyResponse> {
        let object = Object {
            level: PolicyLevel::Namespace,
            action: &op::DeleteNamespaceMaintenancePolicy,
        };
        if request.id.is_empty() {
            return Err(CatalogError::invalid(
                "the root namespace has no policy record of its own; its project's is under /v1/projects/{project_id}/maintenance_policy",
            ));
        }
        self.delete_object_policy(object, request.id).await
    }

    /// Run `run` admitted for `action` on project `id`, refusing a
    /// project that does not exist.
    pub(super) async fn on_project<T: 'static>(
        &self,
        action: &'static OpDef,
        id: &str,
        run: impl AsyncFnOnce(&mut Access) -> CatalogResult<T>,
    ) -> CatalogResult<T> {
        self.gov
            .call_control(
                self.call,
                action,
                Kind::Project,
                one(id),
                async move |access| {
                    if id != DEFAULT_PROJECT {
                        self.registry.project(id).await?;
                    }
                    run(access).await
                },
            )
            .await
    }

    pub(super) async fn get_project_maintenance_policy(
        &self,
        request: GetProjectMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let id = request.project_id;
        self.on_project(&op::GetProjectMaintenancePolicy, &id, async |_| {
            self.resolve_policy((PolicyLevel::Project, one(&id)), &[Candidate::project(&id)])
                .await
        })
        .await
    }

    pub(super) async fn set_project_maintenance_policy(
        &self,
        request: SetProjectMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let id = request.project_id.clone();
        crate::governance::policy_records::check_fields(&request.fields())?;
        self.on_project(&op::SetProjectMaintenancePolicy, &id, async |access| {
            let by = access.principal.as_ref().map(|p| p.id.clone());
            self.set_policy(
                (PolicyLevel::Project, one(&id)),
                &[Candidate::project(&id)],
                request.fields(),
                None,
                by,
            )
            .await
        })
        .await
    }

    pub(super) async fn delete_project_maintenance_policy(
        &self,
        request: DeleteProjectMaintenancePolicyRequest,
    ) -> CatalogResult<DeleteMaintenancePolicyResponse> {
        let id = request.project_id;
        self.on_project(&op::DeleteProjectMaintenancePolicy, &id, async |_| {
            let removed = self
                .registry
                .delete_policy_record(PolicyLevel::Project, &id)
                .await?;
            Ok(DeleteMaintenancePolicyResponse { removed })
        })
        .await
    }
}
