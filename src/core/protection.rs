//! Deletion protection of tables and namespaces: a flag in the object's
//! properties ([`PROTECTED`], shown in describe answers, settable only
//! through the protection operations). A protected object refuses drop
//! and deregister (and a cascade that would reach it) with 409 and a
//! message naming the flag; `force` (the `force=true` query parameter,
//! carried in the request context as [`FORCE`]) overrides the flag and
//! nothing else. The code is the spec's InvalidTableState (19): these are
//! spec operations, and Lance clients know only the spec's codes (the
//! control plane's own deletes answer ObjectProtected, 10010).

pub use crate::api::protection::{ProtectionResponse, SetProtectionRequest};
use std::collections::HashMap;

use crate::core::checks::{display_id, manifest_key};
use crate::core::manifest_tx::{literal, row_object_id, row_properties, row_type, single_rows};
use crate::core::reserved::{FORCE, PROTECTED};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// Whether a request's context asks to override protection.
pub(crate) fn forced(context: Option<&HashMap<String, String>>) -> bool {
    context
        .and_then(|c| c.get(FORCE))
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

fn is_protected(row: &arrow_array::RecordBatch) -> bool {
    row_properties(row)
        .map(|p| p.get(PROTECTED).is_some_and(|v| v == "true"))
        .unwrap_or(false)
}

fn protected_error(kind: &str, id: &[String]) -> CatalogError {
    CatalogError::new(
        Code::INVALID_TABLE_STATE,
        format!(
            "{kind} {} is protected (deletion protection); unset its protection first, or use force=true",
            display_id(id)
        ),
    )
}

impl Catalog {
    /// Set the protected flag of object `id` of `kind` (`table` or
    /// `namespace`). Re-applied on a lost race (setting a flag is safe to
    /// repeat).
    pub(crate) async fn set_protection(
        &self,
        kind: &str,
        req: SetProtectionRequest,
    ) -> CatalogResult<ProtectionResponse> {
        let id = match kind {
            "table" => crate::core::checks::table_id(&Some(req.id.clone()))?,
            _ => crate::core::checks::namespace_id(&Some(req.id.clone()))?,
        };
        if id.is_empty() {
            return Err(CatalogError::invalid(
                "the root namespace cannot be protected",
            ));
        }
        let missing = || match kind {
            "table" => crate::core::checks::table_not_found(&id),
            _ => CatalogError::new(
                Code::NAMESPACE_NOT_FOUND,
                format!("namespace {} does not exist", display_id(&id)),
            ),
        };
        self.update_properties(&manifest_key(&id), kind, missing, |p| {
            if req.protected {
                p.insert(PROTECTED.to_string(), "true".to_string());
            } else {
                p.remove(PROTECTED);
            }
        })
        .await?;
        Ok(ProtectionResponse {
            id,
            protected: req.protected,
        })
    }

    /// Refuse (19) unless `force`: table `id` is protected.
    pub(crate) async fn guard_table(
        &self,
        ds: &lance::Dataset,
        id: &[String],
        force: bool,
    ) -> CatalogResult<()> {
        if force {
            return Ok(());
        }
        let rows = self.manifest_rows(ds, &[manifest_key(id)]).await?;
        let protected = single_rows(&rows)
            .any(|r| row_type(&r).as_deref() == Some("table") && is_protected(&r));
        match protected {
            true => Err(protected_error("table", id)),
            false => Ok(()),
        }
    }

    /// Refuse (19) unless `force`: namespace `id`, or anything below it
    /// (when `subtree`), is protected. Names the first protected object.
    pub(crate) async fn guard_namespace(
        &self,
        id: &[String],
        subtree: bool,
        force: bool,
    ) -> CatalogResult<()> {
        if force || id.is_empty() {
            return Ok(());
        }
        let ds = self.manifest_snapshot().await?;
        let key = manifest_key(id);
        let prefix = manifest_key(&[id.to_vec(), vec![String::new()]].concat());
        let mut filter = format!("object_id = {}", literal(&key));
        if subtree {
            filter = format!("{filter} OR starts_with(object_id, {})", literal(&prefix));
        }
        let mut scan = ds.scan();
        scan.filter(&filter)?;
        use futures::TryStreamExt;
        let batches: Vec<arrow_array::RecordBatch> =
            scan.try_into_stream().await?.try_collect().await?;
        for b in &batches {
            for i in 0..b.num_rows() {
                let row = b.slice(i, 1);
                if is_protected(&row) {
                    let kind = row_type(&row).unwrap_or_else(|| "object".into());
                    let object =
                        crate::core::checks::manifest_id(&row_object_id(&row).unwrap_or_default());
                    return Err(protected_error(&kind, &object));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn force_comes_from_the_context() {
        assert!(!forced(None));
        let c = HashMap::from([(FORCE.to_string(), "true".to_string())]);
        assert!(forced(Some(&c)));
        let c = HashMap::from([(FORCE.to_string(), "no".to_string())]);
        assert!(!forced(Some(&c)));
    }
}
