//! Local users: the server admin makes, lists, changes, disables and
//! deletes them and resets their passwords; a user may read itself and
//! change its own password, proving the current one. Deleting a user ends
//! the grants and API keys naming it: a user made later under the name is
//! someone else.

use super::prelude::*;
use crate::api::kind::Kind;

impl Plane<'_> {
    pub(super) async fn create_user(&self, request: CreateUserRequest) -> CatalogResult<UserInfo> {
        self.on_server(&op::CreateUser, async |access| {
            let by = access.principal.as_ref().map(|c| c.id.clone());
            let made = self
                .auth
                .users()
                .create(
                    &request.username,
                    &request.password,
                    request.groups,
                    request.description,
                    request.disabled.unwrap_or(false),
                    by,
                )
                .await?;
            about_user(access, &made.username);
            Ok(made)
        })
        .await
    }

    pub(super) async fn list_users(
        &self,
        request: ListUsersRequest,
    ) -> CatalogResult<ListUsersResponse> {
        self.on_server(&op::ListUsers, async |_| {
            let users = self.auth.users().list().await?;
            let (users, page_token) = page_items(
                users,
                |u| u.username.clone(),
                request.page_token.as_deref(),
                request.limit,
                CONTROL,
            )?;
            Ok(ListUsersResponse { users, page_token })
        })
        .await
    }

    pub(super) async fn get_user(&self, request: GetUserRequest) -> CatalogResult<UserInfo> {
        self.call_as(self.call, async |sight| {
            sight
                .own_or_admin(&op::GetUser, Some(&request.username))
                .await?;
            self.auth.users().get(&request.username).await
        })
        .await
    }

    pub(super) async fn update_user(&self, request: UpdateUserRequest) -> CatalogResult<UserInfo> {
        self.on_server(&op::UpdateUser, async |access| {
            about_user(access, &request.username);
            self.auth
                .users()
                .update(
                    &request.username,
                    request.disabled,
                    request.groups,
                    request.description,
                )
                .await
        })
        .await
    }

    pub(super) async fn delete_user(
        &self,
        request: DeleteUserRequest,
    ) -> CatalogResult<DeleteUserResponse> {
        self.on_server(&op::DeleteUser, async |access| {
            about_user(access, &request.username);
            self.end_user(request).await
        })
        .await
    }

    /// Delete a user and what its name holds.
    async fn end_user(&self, request: DeleteUserRequest) -> CatalogResult<DeleteUserResponse> {
        let users = self.auth.users();
        // What the name holds ends first: a retry after a failure here
        // still finds the user, and nothing is left for whoever takes the
        // name later.
        users.get(&request.username).await?;
        let uid = users
            .identity_of(&request.username)
            .await?
            .and_then(|i| i.user_uid().map(str::to_string))
            .unwrap_or_default();
        let grants_revoked = self
            .registry
            .forget_grants_to(&request.username, &uid)
            .await?;
        self.grants.invalidate().await;
        let keys = self.auth.keys();
        let mut api_keys_revoked = 0;
        for key in keys.list(Some(&request.username)).await? {
            keys.revoke(&key.key_id).await?;
            api_keys_revoked += 1;
        }
        users.delete(&request.username).await?;
        Ok(DeleteUserResponse {
            username: request.username,
            grants_revoked: grants_revoked as u64,
            api_keys_revoked,
        })
    }

    /// A user's own change needs its current password, whoever else it
    /// is; anyone else's is the server admin's reset.
    pub(super) async fn set_user_password(
        &self,
        request: SetUserPasswordRequest,
    ) -> CatalogResult<UserInfo> {
        let username = Some(request.username.as_str());
        self.call_own(self.call, &op::SetUserPassword, username, async |access, sight| {
            let users = self.auth.users();
            if sight.is(&request.username) {
                let current = request.current_password.as_deref().ok_or_else(|| {
                    CatalogError::invalid(
                        "changing your own password needs current_password (the password it replaces)",
                    )
                })?;
                users.confirm(&request.username, current).await?;
            }
            let changed = users
                .set_password(&request.username, &request.password)
                .await?;
            about_user(access, &request.username);
            Ok(changed)
        })
        .await
    }
}

impl Plane<'_> {
    /// Sign in with the call's own `Authorization: Basic` credentials: a
    /// session token for the console and other clients that would rather
    /// not keep a password. Any local user may, for itself alone.
    pub(super) async fn create_session(
        &self,
        _request: CreateSessionRequest,
    ) -> CatalogResult<Session> {
        if !self.auth.required() {
            return Err(CatalogError::invalid(
                "authentication is off on this server (--auth none): there is no session to make",
            ));
        }
        self.sign_in(&self.call.credentials).await?.ok_or_else(|| {
            CatalogError::invalid(
                "a session is made from a local user's name and password: send them as Authorization: Basic",
            )
        })
    }

    /// Sign out: end the session whose token the call carries.
    pub(super) async fn delete_session(
        &self,
        _request: DeleteSessionRequest,
    ) -> CatalogResult<DeleteSessionResponse> {
        self.sign_out(&self.call.credentials).await?;
        Ok(DeleteSessionResponse {})
    }
}

/// A change to a user is audited as the user it changed.
fn about_user(access: &mut Access, username: &str) {
    access.kind = Kind::User;
    access.id = one(username);
}
