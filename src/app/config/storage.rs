//! Storage: the root, the control root, warehouses, the operator's storage
//! options and Lance's caches (`--root`, `--control-root`, `--warehouses`,
//! `--storage-option`, `--forward-storage-secrets`, `--*-cache-mib`), with
//! the vending flags (`vending.rs`) beside them.

use std::collections::HashMap;

use clap::Args;

use crate::app::config::switch::Switch;
use crate::app::config::vending::VendArgs;
use crate::core::StorageConfig;

/// The "Storage" flags. Debug shows the storage options' keys only.
#[derive(Clone, Args)]
pub struct StorageArgs {
    /// Storage root: a path, file://…, memory://…, or s3://bucket/prefix.
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_ROOT",
        default_value = "./lance-catalog-data"
    )]
    pub root: String,

    /// Where the registries (projects, warehouses, bindings) live: a path
    /// or URI. Default: `<root>/_catalog/control`, which no spec id can
    /// address. Several replicas must share one.
    #[arg(help_heading = "Storage", long, env = "LANCE_CATALOG_CONTROL_ROOT")]
    pub control_root: Option<String>,

    /// `on`: top-level namespaces are created through their warehouse
    /// (`POST /v1/warehouses/{id}/namespaces`, or a client pointed at
    /// `/warehouses/{id}`) and routed to its root. `off`: one root.
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_WAREHOUSES",
        default_value = "off"
    )]
    pub warehouses: Switch,

    /// Object-store option for the root, KEY=VALUE (repeatable), e.g.
    /// aws_endpoint=http://127.0.0.1:9000. The environment variable takes a
    /// comma-separated list.
    #[arg(
        help_heading = "Storage",
        long = "storage-option",
        env = "LANCE_CATALOG_STORAGE_OPTIONS",
        value_delimiter = ','
    )]
    pub storage_options: Vec<String>,

    /// Hand secret-like storage options (keys, tokens, passwords: the
    /// root's own, a warehouse's and namespaces' `lance.storage.*`) to
    /// clients in create, declare and describe answers. Off: they never
    /// leave the server, and clients bring their own credentials. On:
    /// every caller allowed to describe one table holds what those
    /// credentials reach; opt in only where that is meant.
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_FORWARD_STORAGE_SECRETS",
        default_value_t = false
    )]
    pub forward_storage_secrets: bool,

    /// MiB of Lance's metadata cache (manifests, fragment metadata) per
    /// warehouse: repeated reads of a table skip storage within it.
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_METADATA_CACHE_MIB",
        default_value_t = 128
    )]
    pub metadata_cache_mib: usize,

    /// MiB of Lance's index cache per warehouse (vector and scalar index
    /// pages that searches read).
    #[arg(
        help_heading = "Storage",
        long,
        env = "LANCE_CATALOG_INDEX_CACHE_MIB",
        default_value_t = 1024
    )]
    pub index_cache_mib: usize,

    /// Table-scoped credentials for the default warehouse (`vending.rs`).
    #[command(flatten)]
    pub vend: VendArgs,
}

impl StorageArgs {
    /// The cache bounds of each warehouse's Lance session.
    pub fn cache_limits(&self) -> crate::core::CacheLimits {
        crate::core::CacheLimits {
            metadata_bytes: self.metadata_cache_mib.saturating_mul(1 << 20),
            index_bytes: self.index_cache_mib.saturating_mul(1 << 20),
        }
    }

    /// The default warehouse's root and how it is reached.
    pub fn config(&self) -> Result<StorageConfig, String> {
        let mut options = HashMap::new();
        for kv in self.storage_options.iter().filter(|s| !s.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("storage option {kv:?} is not KEY=VALUE"))?;
            options.insert(k.trim().to_string(), v.trim().to_string());
        }
        Ok(StorageConfig {
            root: self.root.clone(),
            storage_options: options.into(),
            forward_secrets: self.forward_storage_secrets,
            vending: self.vend.settings()?,
            vend_max_seconds: self.vend.max_seconds()?,
        })
    }
}

impl std::fmt::Debug for StorageArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let option_keys: Vec<&str> = self
            .storage_options
            .iter()
            .map(|kv| kv.split_once('=').map_or(kv.as_str(), |(k, _)| k))
            .collect();
        f.debug_struct("StorageArgs")
            .field("root", &self.root)
            .field("control_root", &self.control_root)
            .field("warehouses", &self.warehouses)
            .field("storage_options", &option_keys)
            .field("forward_storage_secrets", &self.forward_storage_secrets)
            .field("metadata_cache_mib", &self.metadata_cache_mib)
            .field("index_cache_mib", &self.index_cache_mib)
            .field("vend", &self.vend)
            .finish()
    }
}
