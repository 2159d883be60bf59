//! The storage options a client gets for a table (Lance clients read and
//! write table data themselves): the root's, overlaid by the
//! `lance.storage.*` properties of the namespaces above the table, outermost
//! first so an inner namespace overrides. This is how a Gravitino-style
//! deployment puts a bucket's region and credentials on its catalog
//! namespace. The values travel only in the answers that hand a table to a
//! client (create, declare, describe), never in list answers or logs, and
//! not when the caller asks for no credentials (`vend_credentials: false`).
//!
//! What of them a client is handed (secret-like ones only where the
//! operator opted in) is decided in one place, `core/reach.rs`.

use std::collections::HashMap;

use crate::core::caller_options::CallerOptions;
use crate::core::checks::manifest_key;
use crate::core::manifest_tx::{row_object_id, row_properties, row_type, single_rows};
use crate::core::Catalog;
use crate::error::CatalogResult;

/// Namespace properties under this prefix are storage options.
pub(crate) const NAMESPACE_OPTION_PREFIX: &str = "lance.storage.";

/// Shown instead of a secret's value.
pub const REDACTED: &str = "********";

/// Whether a storage option holds a secret (credentials, tokens, keys).
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "secret",
        "password",
        "token",
        "credential",
        "session",
        "private",
    ]
    .iter()
    .any(|s| k.contains(s))
        || (k.contains("key") && !k.contains("key_id") && !k.ends_with("region"))
}

/// Whether a storage option is part of a credential: a secret, or what
/// names whose secret it is (an access key's id, a client's id). Without
/// its secret such a part grants nothing, but it names the server's
/// identity and account, so it goes wherever the secret does not.
pub(crate) fn is_credential_part(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    is_secret(&k) || k.contains("key_id") || k.contains("client_id")
}

impl Catalog {
    /// The effective storage options of table `id` (None when there are
    /// none), read from one manifest snapshot.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn table_storage_options(
        &self,
        id: &[String],
    ) -> CatalogResult<Option<HashMap<String, String>>> {
        Ok(self.reach.handed(self.table_source_options(id).await?))
    }

    /// Table `id`'s effective storage options, secrets included: what the
    /// server reaches its bytes with, never an answer.
    pub(crate) async fn table_source_options(
        &self,
        id: &[String],
    ) -> CatalogResult<HashMap<String, String>> {
        let ancestors: Vec<String> = (1..id.len()).map(|d| manifest_key(&id[..d])).collect();
        // Kept by the namespaces it is read from, not by the table: every
        // table of a namespace (a new one too) shares the answer.
        let key = crate::core::meta_cache::key_of("source_options", &ancestors);
        if ancestors.is_empty() {
            return Ok(self.reach.options().with(None));
        }
        let ds = self.manifest_snapshot().await?;
        let options = self.storage_options_of(&ds, &ancestors);
        self.cached_at(&ds, key, &ancestors, options).await
    }

    /// The server's options with those `ancestors` (outermost first) set.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn storage_options_of(
        &self,
        ds: &lance::Dataset,
        ancestors: &[String],
    ) -> CatalogResult<HashMap<String, String>> {
        let mut by_key = HashMap::new();
        let rows = self.manifest_rows(ds, ancestors).await?;
        for row in single_rows(&rows) {
            if row_type(&row).as_deref() == Some("namespace") {
                if let Some(k) = row_object_id(&row) {
                    by_key.insert(k, row_properties(&row)?);
                }
            }
        }
        // Outermost first: an inner namespace's option wins. A caller set
        // these, so only what a caller may set is taken (a record from
        // before the rule may hold more; see `caller_options.rs`).
        let set: Vec<CallerOptions> = ancestors
            .iter()
            .map(|key| {
                CallerOptions::from_record(
                    by_key
                        .remove(key)
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|(k, v)| {
                            let option = k.strip_prefix(NAMESPACE_OPTION_PREFIX)?;
                            (!option.is_empty()).then(|| (option.to_string(), v))
                        })
                        .collect(),
                )
            })
            .collect();
        Ok(self.reach.options().with(&set))
    }

    /// Credentials for table `id` at `location`, scoped to it and to
    /// `privilege`: `None` where this catalog does not vend or the table's
    /// store has no STS. The answer's options are the table's non-secret
    /// ones with the session over them.
    pub async fn vend(
        &self,
        id: &[String],
        location: &str,
        privilege: crate::core::vending::Privilege,
    ) -> CatalogResult<Option<crate::core::vending::Vended>> {
        let Some(vendor) = self.reach.vendor() else {
            return Ok(None);
        };
        let source = self.table_source_options(id).await?;
        let handed = self.reach.handed(source.clone()).unwrap_or_default();
        vendor.vend(location, privilege, &source, handed).await
    }
}

/// Namespace properties as answered to callers: the values of secret
/// storage options (`lance.storage.*` credentials, tokens, keys) hidden.
/// Tables get them, through `storage_options`, where a client needs them.
pub(crate) fn redact_namespace_properties(props: &mut Option<HashMap<String, String>>) {
    crate::core::checks::public_properties(props);
    for (k, v) in props.iter_mut().flatten() {
        let secret = k
            .strip_prefix(NAMESPACE_OPTION_PREFIX)
            .is_some_and(is_secret);
        if secret {
            *v = REDACTED.to_string();
        }
    }
}

/// Refuse (13) a namespace property under `lance.storage.` naming an
/// option a caller may not set.
pub(crate) fn check_namespace_properties(
    properties: Option<&HashMap<String, String>>,
) -> CatalogResult<()> {
    let options: HashMap<String, String> = properties
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            Some((
                k.strip_prefix(NAMESPACE_OPTION_PREFIX)?.to_string(),
                v.clone(),
            ))
        })
        .collect();
    crate::core::caller_options::check_caller_options(
        Some(&options),
        "a namespace's lance.storage.* property",
    )
}
