//! Projects: the top of the hierarchy, each owned by its creator.

use super::prelude::*;
use crate::api::kind::Kind;

impl Plane<'_> {
    pub(super) async fn create_project(
        &self,
        request: CreateProjectRequest,
    ) -> CatalogResult<Project> {
        crate::records::check_id("project", &request.project_id)?;
        if request.project_id == DEFAULT_PROJECT {
            return Err(CatalogError::new(
                Code::PROJECT_ALREADY_EXISTS,
                "project \"default\" is built in",
            ));
        }
        let server = vec![];
        self.gov
            .call_control(
                self.call,
                &op::CreateProject,
                Kind::Server,
                server,
                async |access| {
                    let made = self.registry.create_project(request).await?;
                    access.made(Kind::Project, &made.project_id);
                    Ok(made)
                },
            )
            .await
    }

    pub(super) async fn list_projects(
        &self,
        request: ListProjectsRequest,
    ) -> CatalogResult<ListProjectsResponse> {
        self.call_as(self.call, async |sight| {
            if !self.auth.required() || sight.may(&op::ListProjects, Kind::Server, vec![]).await {
                return self.registry.list_projects(request).await;
            }
            // Only what the caller may see, paged over that.
            let mut visible = Vec::new();
            for p in self.registry.all_projects().await? {
                let id = one(&p.project_id);
                if sight.may(&op::DescribeProject, Kind::Project, id).await {
                    visible.push(self.registry.shown_project(p).await?);
                }
            }
            let (projects, page_token) = page_items(
                visible,
                |p| p.project_id.clone(),
                request.page_token.as_deref(),
                request.limit,
                CONTROL,
            )?;
            Ok(ListProjectsResponse {
                projects,
                page_token,
            })
        })
        .await
    }

    pub(super) async fn describe_project(
        &self,
        request: DescribeProjectRequest,
    ) -> CatalogResult<Project> {
        let id = one(&request.project_id);
        self.gov
            .call_control(
                self.call,
                &op::DescribeProject,
                Kind::Project,
                id,
                async |_| {
                    if request.project_id == DEFAULT_PROJECT {
                        if let Err(e) = self.registry.project(DEFAULT_PROJECT).await {
                            if e.code == Code::PROJECT_NOT_FOUND {
                                let built_in = Project {
                                    project_id: DEFAULT_PROJECT.to_string(),
                                    description: Some("built in: the server's --root".to_string()),
                                    ..Default::default()
                                };
                                return self.registry.shown_project(built_in).await;
                            }
                        }
                    }
                    let found = self.registry.project(&request.project_id).await?;
                    self.registry.shown_project(found).await
                },
            )
            .await
    }

    pub(super) async fn update_project(
        &self,
        request: UpdateProjectRequest,
    ) -> CatalogResult<Project> {
        let id = one(&request.project_id);
        self.gov
            .call_control(
                self.call,
                &op::UpdateProject,
                Kind::Project,
                id,
                async |_| self.registry.update_project(request).await,
            )
            .await
    }

    pub(super) async fn delete_project(
        &self,
        request: DeleteProjectRequest,
    ) -> CatalogResult<DeleteProjectResponse> {
        let id = request.project_id.clone();
        self.gov
            .call_control(self.call, &op::DeleteProject, Kind::Project, one(&id), async |_| {
                if id == DEFAULT_PROJECT {
                    return Err(builtin("project", DEFAULT_PROJECT));
                }
                let done = self.registry.delete_project(request).await?;
                // A project made again under this id starts without it.
                if let Err(e) = self
                    .registry
                    .delete_policy_record(crate::api::policy::PolicyLevel::Project, &id)
                    .await
                {
                    tracing::warn!(project = %id, error = %e.message, "a deleted project's maintenance policy record stays");
                }
                Ok(done)
            })
            .await
    }

    pub(super) async fn set_project_protection(
        &self,
        request: SetProjectProtectionRequest,
    ) -> CatalogResult<Project> {
        let id = one(&request.project_id);
        self.gov
            .call_control(
                self.call,
                &op::SetProjectProtection,
                Kind::Project,
                id,
                async |_| self.registry.set_project_protection(request).await,
            )
            .await
    }
}
