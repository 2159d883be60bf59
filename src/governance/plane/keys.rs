//! API keys: only the server admin mints them; a principal may list and revoke its own.

use super::prelude::*;
use crate::api::kind::Kind;

impl Plane<'_> {
    pub(super) async fn create_api_key(
        &self,
        request: CreateApiKeyRequest,
    ) -> CatalogResult<CreateApiKeyResponse> {
        // Only the server admin mints keys: a key outlives the token of
        // whoever asked for it, so it is never a caller's own to make.
        let server = vec![];
        self.gov
            .call_control(
                self.call,
                &op::CreateApiKey,
                Kind::Server,
                server,
                async |access| {
                    // A key for a local user's name is that user's: it holds the
                    // grants bound to it (and dies with it).
                    let user_uid = self
                        .auth
                        .users()
                        .identity_of(request.principal.trim())
                        .await?
                        .and_then(|i| i.user_uid().map(str::to_string));
                    let by = access.principal.as_ref().map(|c| c.id.clone());
                    let (info, key) = self
                        .auth
                        .keys()
                        .mint(&request.principal, request.description, by, user_uid)
                        .await?;
                    // Audited as the key it made (its id, never its secret).
                    access.kind = Kind::ApiKey;
                    access.id = vec![info.key_id.clone()];
                    Ok(CreateApiKeyResponse {
                        key_id: info.key_id,
                        key,
                        principal: info.principal,
                        description: info.description,
                        created_at_ms: info.created_at_ms,
                    })
                },
            )
            .await
    }

    pub(super) async fn list_api_keys(
        &self,
        request: ListApiKeysRequest,
    ) -> CatalogResult<ListApiKeysResponse> {
        self.call_as(self.call, async |sight| {
            let owner = request.principal.as_deref();
            sight.own_or_admin(&op::ListApiKeys, owner).await?;
            let keys = self.auth.keys().list(owner).await?;
            let (api_keys, page_token) = page_items(
                keys,
                |k| k.key_id.clone(),
                request.page_token.as_deref(),
                request.limit,
                CONTROL,
            )?;
            Ok(ListApiKeysResponse {
                api_keys,
                page_token,
            })
        })
        .await
    }

    pub(super) async fn revoke_api_key(
        &self,
        request: RevokeApiKeyRequest,
    ) -> CatalogResult<RevokeApiKeyResponse> {
        // Whose key it is decides who may revoke it; an unknown key is
        // told only to whoever could revoke any.
        let owner = self
            .auth
            .keys()
            .info(&request.key_id)
            .await
            .ok()
            .map(|k| k.principal);
        self.call_own(
            self.call,
            &op::RevokeApiKey,
            owner.as_deref(),
            async |access, _| {
                self.auth.keys().revoke(&request.key_id).await?;
                access.kind = Kind::ApiKey;
                access.id = vec![request.key_id.clone()];
                Ok(())
            },
        )
        .await?;
        Ok(RevokeApiKeyResponse {
            key_id: request.key_id,
        })
    }
}
