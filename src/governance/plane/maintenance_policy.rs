//! Maintenance policy records of tables, namespaces and projects: the
//! effective policy with the record that won, and setting or removing an
//! object's own record. Tables and namespaces are routed and authorized
//! as the spec's operations are; projects as the registry's.

use super::prelude::*;
use crate::api::kind::Kind;
use crate::api::policy::PolicyLevel;
use crate::api::OpDef;
use crate::core::{missing_namespace, table_not_found};
use crate::governance::guard::request::Named;
use crate::governance::policy_records::Candidate;
use crate::governance::Route;

/// What a table or namespace operation names: its level and spec action.
struct Object {
    level: PolicyLevel,
    action: &'static OpDef,
}

impl Plane<'_> {
    /// The route, access and candidate chain of a table or namespace,
    /// refusing one that does not exist. `assign`: give the object a real
    /// id when it has none (a write that keys a record by it).
    async fn policy_target(
        &self,
        object: Object,
        id: &[String],
        assign: bool,
    ) -> CatalogResult<(Route, Access, Vec<Candidate>)> {
        if object.level == PolicyLevel::Table && id.is_empty() {
            return Err(CatalogError::invalid("a table id must not be empty"));
        }
        let (route, access) = self
            .admit(object.action, &mut Named::called(self.call, id))
            .await?;
        let kind = match object.level {
            PolicyLevel::Table => "table",
            _ => "namespace",
        };
        if assign && id.is_empty() {
            return Err(CatalogError::invalid(
                "the root namespace has no policy record of its own: set its project's (POST /v1/projects/{project_id}/maintenance_policy)",
            ));
        }
        let mut chain = self.object_chain(&route, object.level, id).await?;
        if chain[0].key.is_none() && !id.is_empty() {
            let present = match object.level {
                PolicyLevel::Table => route.catalog.table_present(id).await?,
                _ => route.catalog.namespace_present(id).await?,
            };
            if !present {
                return Err(match object.level {
                    PolicyLevel::Table => table_not_found(id),
                    _ => missing_namespace(id),
                });
            }
            if assign {
                chain[0].key = Some(route.catalog.assign_object_id(kind, id).await?);
            }
        }
        Ok((route, access, chain))
    }

    async fn get_policy(&self, object: Object, id: Vec<String>) -> CatalogResult<EffectivePolicy> {
        let level = object.level;
        let (_, _, chain) = self.policy_target(object, &id, false).await?;
        self.resolve_policy((level, id), &chain).await
    }

    async fn set_object_policy(
        &self,
        object: Object,
        request: SetMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let level = object.level;
        crate::governance::policy_records::check_fields(&request.fields())?;
        let (route, access, chain) = self.policy_target(object, &request.id, true).await?;
        let by = access.principal.as_ref().map(|p| p.id.clone());
        let done = self
            .set_policy(
                (level, request.id.clone()),
                &chain,
                request.fields(),
                Some(route.warehouse.clone()),
                by,
            )
            .await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    async fn delete_object_policy(
        &self,
        object: Object,
        id: Vec<String>,
    ) -> CatalogResult<DeleteMaintenancePolicyResponse> {
        let level = object.level;
        let (_, access, chain) = self.policy_target(object, &id, false).await?;
        let removed = match &chain[0].key {
            Some(key) => self.registry.delete_policy_record(level, key).await?,
            None => false,
        };
        self.succeeded(&access).await;
        Ok(DeleteMaintenancePolicyResponse { removed })
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

    /// Authorize `action` on project `id` and refuse a project that does
    /// not exist.
    pub(super) async fn project_target(
        &self,
        action: &'static OpDef,
        id: &str,
    ) -> CatalogResult<Access> {
        let access = self
            .control(self.call, action, Kind::Project, one(id))
            .await?;
        if id != DEFAULT_PROJECT {
            self.registry.project(id).await?;
        }
        Ok(access)
    }

    pub(super) async fn get_project_maintenance_policy(
        &self,
        request: GetProjectMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let id = request.project_id;
        self.project_target(&op::GetProjectMaintenancePolicy, &id)
            .await?;
        self.resolve_policy((PolicyLevel::Project, one(&id)), &[Candidate::project(&id)])
            .await
    }

    pub(super) async fn set_project_maintenance_policy(
        &self,
        request: SetProjectMaintenancePolicyRequest,
    ) -> CatalogResult<EffectivePolicy> {
        let id = request.project_id.clone();
        crate::governance::policy_records::check_fields(&request.fields())?;
        let access = self
            .project_target(&op::SetProjectMaintenancePolicy, &id)
            .await?;
        let by = access.principal.as_ref().map(|p| p.id.clone());
        let done = self
            .set_policy(
                (PolicyLevel::Project, one(&id)),
                &[Candidate::project(&id)],
                request.fields(),
                None,
                by,
            )
            .await?;
        self.succeeded(&access).await;
        Ok(done)
    }

    pub(super) async fn delete_project_maintenance_policy(
        &self,
        request: DeleteProjectMaintenancePolicyRequest,
    ) -> CatalogResult<DeleteMaintenancePolicyResponse> {
        let id = request.project_id;
        let access = self
            .project_target(&op::DeleteProjectMaintenancePolicy, &id)
            .await?;
        let removed = self
            .registry
            .delete_policy_record(PolicyLevel::Project, &id)
            .await?;
        self.succeeded(&access).await;
        Ok(DeleteMaintenancePolicyResponse { removed })
    }
}
