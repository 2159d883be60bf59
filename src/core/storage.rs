//! Opening the storage root: a local path, `file://`, `memory://` or an
//! object-store URI such as `s3://bucket/prefix` with storage options.

use std::collections::HashMap;
use std::sync::Arc;

use lance::session::Session;
use lance_namespace_impls::{DirectoryNamespace, DirectoryNamespaceBuilder};

use crate::error::{CatalogError, CatalogResult};

/// Where the catalog keeps its tables.
#[derive(Debug, Clone, Default)]
pub struct StorageConfig {
    /// A plain path, `file://…`, `memory://…`, or `s3://bucket/prefix`.
    pub root: String,
    /// Object-store options (e.g. `aws_endpoint`, `aws_region`,
    /// `aws_access_key_id`, `allow_http`), passed to Lance unchanged.
    pub storage_options: HashMap<String, String>,
}

/// Resolve the root to what Lance expects and open the namespace over it.
/// A local root is created when missing, so `serve` works on a fresh machine.
pub(super) async fn open_directory_namespace(
    config: &StorageConfig,
) -> CatalogResult<(String, Arc<Session>, DirectoryNamespace)> {
    let root = resolve_root(&config.root)?;
    // One session for the namespace and every dataset it opens: it shares
    // caches, and `memory://` needs it so all of them see one in-memory store.
    let session = Arc::new(Session::default());
    let ns = DirectoryNamespaceBuilder::new(root.clone())
        .storage_options(config.storage_options.clone())
        .session(session.clone())
        .build()
        .await
        .map_err(|e| {
            CatalogError::new(
                crate::error::Code::SERVICE_UNAVAILABLE,
                format!(
                    "cannot open storage root {root}: {}",
                    CatalogError::from_lance(&e).message
                ),
            )
        })?;
    Ok((root, session, ns))
}

fn resolve_root(root: &str) -> CatalogResult<String> {
    let root = root.trim();
    if root.is_empty() {
        return Err(CatalogError::invalid("the storage root is empty"));
    }
    let local = if let Some(path) = root.strip_prefix("file://") {
        Some(path.to_string())
    } else if root.contains("://") {
        None
    } else {
        Some(root.to_string())
    };
    match local {
        Some(path) => {
            std::fs::create_dir_all(&path).map_err(|e| {
                CatalogError::invalid(format!("cannot create storage root {path}: {e}"))
            })?;
            let abs = std::fs::canonicalize(&path).map_err(|e| {
                CatalogError::invalid(format!("cannot resolve storage root {path}: {e}"))
            })?;
            Ok(abs.to_string_lossy().trim_end_matches('/').to_string())
        }
        None => Ok(root.trim_end_matches('/').to_string()),
    }
}
