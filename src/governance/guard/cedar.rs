//! Cedar as the [`Authorizer`]: the policy files decide on the access's
//! action, its object chain and the relations the caller's grants give it
//! there ([`Facts`], looked up by governance). No second path beside the
//! authorizer chain: Cedar is its first member when authentication is
//! required.

use async_trait::async_trait;

use crate::auth::cedar::{denied, CedarAuthorizer};
use crate::auth::unauthenticated;
use crate::error::{CatalogError, CatalogResult};
use crate::governance::guard::{Access, Authorizer, Facts};

#[async_trait]
impl Authorizer for CedarAuthorizer {
    fn needs_facts(&self) -> bool {
        true
    }

    async fn authorize(&self, access: &Access, facts: Option<&Facts>) -> CatalogResult<()> {
        let Some(p) = &access.principal else {
            return Err(unauthenticated("authentication required"));
        };
        let Some(facts) = facts else {
            return Err(CatalogError::internal(
                "Cedar was asked to decide without the object's chain",
            ));
        };
        match self.is_allowed(
            &p.id,
            &p.groups,
            access.action.action,
            &facts.chain,
            &facts.relations,
        )? {
            true => Ok(()),
            false => Err(denied(&p.id, access.action.action, &facts.chain)),
        }
    }
}
