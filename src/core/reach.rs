//! How this root's storage is reached, and what of that a client is
//! handed: the operator's storage options, whether their secrets may be
//! forwarded, and the vendor of table-scoped credentials. The catalog
//! holds one and asks it (the engine's builder keeps the options it was
//! opened with, to build itself again alike).
//!
//! Secret-like options ([`is_secret`](crate::core::is_secret): keys,
//! tokens, passwords) and the ids naming them never leave the server
//! unless the operator opts in (`--forward-storage-secrets`), and never
//! where the warehouse vends: a bucket-wide secret handed with one table
//! would let its reader read, overwrite and delete every table in the
//! bucket, past every grant.

use std::collections::HashMap;
use std::sync::Arc;

use crate::core::namespace::storage_options::is_credential_part;
use crate::core::vending::Vendor;
use crate::core::{OperatorOptions, StorageConfig};

pub(crate) struct Reach {
    options: OperatorOptions,
    /// `--forward-storage-secrets`.
    forward_secrets: bool,
    /// Table-scoped credentials, where the warehouse vends them.
    vendor: Option<Vendor>,
    /// `--vend-max-seconds`, which warehouses opened later share.
    vend_max_seconds: Option<u64>,
}

impl Reach {
    pub(crate) fn new(config: &StorageConfig) -> Arc<Self> {
        Arc::new(Self {
            options: config.storage_options.clone(),
            forward_secrets: config.forward_secrets,
            vendor: config
                .vending
                .clone()
                .map(|s| Vendor::new(s, config.vend_max_seconds)),
            vend_max_seconds: config.vend_max_seconds,
        })
    }

    /// The operator's options: what the server reaches the root with.
    pub(crate) fn options(&self) -> &OperatorOptions {
        &self.options
    }

    /// The vendor, where this warehouse vends.
    pub(crate) fn vendor(&self) -> Option<&Vendor> {
        self.vendor.as_ref()
    }

    /// Storage options as a client may get them: without the server's
    /// credential (its secrets and the ids naming them) unless the
    /// operator opted in, and never where this catalog vends (the session
    /// replaces them). `None` when nothing is left.
    pub(crate) fn handed(
        &self,
        mut options: HashMap<String, String>,
    ) -> Option<HashMap<String, String>> {
        if !self.forward_secrets || self.vendor.is_some() {
            options.retain(|k, _| !is_credential_part(k));
        }
        (!options.is_empty()).then_some(options)
    }

    pub(crate) fn forwards_secrets(&self) -> bool {
        self.forward_secrets
    }

    pub(crate) fn vend_max_seconds(&self) -> Option<u64> {
        self.vend_max_seconds
    }
}
