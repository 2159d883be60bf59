//! Opening the storage root: a local path, `file://`, `memory://` or an
//! object-store URI such as `s3://bucket/prefix` with storage options.

use std::sync::Arc;

use lance::io::ObjectStore;
use lance::session::Session;
use lance_namespace_impls::dir::manifest::ManifestNamespace;
use lance_namespace_impls::{DirectoryNamespace, DirectoryNamespaceBuilder};

use crate::core::derived::jobs::Jobs;
use crate::core::OperatorOptions;
use crate::error::{CatalogError, CatalogResult};

/// The bounds of Lance's caches in each catalog's session, in bytes: the
/// metadata cache (manifests, fragment metadata) and the index cache.
/// Lance's own defaults (1 GiB and 6 GiB) suit one process reading a few
/// tables; a catalog opens every table it serves, so it bounds them lower,
/// as the operator sets (`--metadata-cache-mib`, `--index-cache-mib`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    pub metadata_bytes: usize,
    pub index_bytes: usize,
}

impl Default for CacheLimits {
    fn default() -> Self {
        Self {
            metadata_bytes: 128 << 20,
            index_bytes: 1 << 30,
        }
    }
}

static CACHE_LIMITS: std::sync::OnceLock<CacheLimits> = std::sync::OnceLock::new();

/// Set the cache bounds for every catalog this process opens from now on
/// (the server sets them once from its configuration); the first call wins.
pub fn set_cache_limits(limits: CacheLimits) {
    let _ = CACHE_LIMITS.set(limits);
}

/// A fresh session within the configured cache bounds.
fn bounded_session() -> Session {
    let limits = CACHE_LIMITS.get().copied().unwrap_or_default();
    Session::new(
        limits.index_bytes,
        limits.metadata_bytes,
        Arc::new(lance::io::ObjectStoreRegistry::default()),
    )
}

/// Where the catalog keeps its tables.
#[derive(Clone, Default, Debug)]
pub struct StorageConfig {
    /// A plain path, `file://…`, `memory://…`, or `s3://bucket/prefix`.
    pub root: String,
    /// Object-store options (e.g. `aws_endpoint`, `aws_region`,
    /// `aws_access_key_id`, `allow_http`), passed to Lance unchanged.
    pub storage_options: OperatorOptions,
    /// Whether secret-like options (see [`is_secret`](crate::core::is_secret))
    /// may be handed to clients with a table (`--forward-storage-secrets`).
    pub forward_secrets: bool,
    /// Vend table-scoped credentials through STS (see `core/vending/`).
    pub vending: Option<crate::api::vending::VendingSettings>,
    /// `--vend-max-seconds`: the longest a vended answer lasts before its
    /// client must refresh.
    pub vend_max_seconds: Option<u64>,
}

/// Resolve the root to what Lance expects and open the namespace over it.
/// A local root is created when missing, so `serve` works on a fresh machine.
pub(super) async fn open_directory_namespace(config: &StorageConfig) -> CatalogResult<Opened> {
    let root = resolve_root(&config.root)?;
    // One session for the namespace and every dataset it opens: it shares
    // caches, and `memory://` needs it so all of them see one in-memory store.
    let session = Arc::new(bounded_session());
    let unavailable = |e: lance::Error| cannot_open("storage", &root, &e);
    let options = config.storage_options.for_lance();
    let params = config.storage_options.params(None);
    let (store, base) = ObjectStore::from_uri_and_params(session.store_registry(), &root, &params)
        .await
        .map_err(unavailable)?;
    let jobs = Jobs::new(store.clone(), base.clone());
    // The control root: a directory of the storage root that no spec id can
    // address and no table location may use (see `table/locations.rs`).
    let control = crate::records::Records::new(
        store.inner.clone(),
        base.clone().join("_catalog").join("control"),
    )
    .on_local_disk(store.is_local());
    let root_store = store.clone();
    // The `__manifest` table, created (with its indices) now rather than on
    // the first write, so reads of a fresh root behave like reads of any
    // other. The catalog's own commits go to it directly
    // (`manifest_commit.rs`); every read reloads its latest version.
    ManifestNamespace::from_directory(
        root.clone(),
        options,
        Some(session.clone()),
        store,
        base,
        false,
        false,
        None,
    )
    .await
    .map_err(unavailable)?;
    mark_manifest(&root, &session, &config.storage_options).await;
    let began = std::time::Instant::now();
    let dir = build_engine(&root, &config.storage_options, &session).await?;
    Ok(Opened {
        began,
        jobs,
        control,
        store: root_store,
        root,
        session,
        dir,
    })
}

/// 503: the `what` root (storage, control) does not answer.
fn cannot_open(what: &str, root: &str, e: &lance::Error) -> CatalogError {
    CatalogError::new(
        crate::error::Code::SERVICE_UNAVAILABLE,
        format!(
            "cannot open {what} root {root}: {}",
            CatalogError::from_lance(e).message
        ),
    )
}

/// The engine's namespace over `root` (see `engine_ns.rs`: built again
/// once its handle on `__manifest` is too old to trust).
pub(super) async fn build_engine(
    root: &str,
    options: &OperatorOptions,
    session: &Arc<Session>,
) -> CatalogResult<DirectoryNamespace> {
    let mut dir = DirectoryNamespaceBuilder::new(root.to_string());
    if let Some(options) = options.for_lance() {
        dir = dir.storage_options(options);
    }
    dir.session(session.clone())
        // The manifest is the only authority on what exists: a table renamed
        // or registered at the root must not be shadowed by a directory scan.
        .dir_listing_enabled(false)
        // The catalog is the authority for table versions: Lance clients
        // commit through create_table_version (see core/versions.rs).
        .table_version_tracking_enabled(true)
        .build()
        .await
        .map_err(|e| cannot_open("storage", root, &e))
}

/// Mark the root's `__manifest` as one whose old versions are removed
/// (`manifest_keeping.rs`), before the engine takes its handle on it. A
/// root that cannot take the write (read-only storage) opens unmarked; the
/// scheduler's keeping marks it before it removes anything.
async fn mark_manifest(root: &str, session: &Arc<Session>, options: &OperatorOptions) {
    let uri = super::uri_under(root, "__manifest");
    let marked = match super::dataset_builder(&uri, session, options).load().await {
        Ok(mut ds) => super::manifest_keeping::mark_unmarked(&mut ds).await,
        Err(e) => Err(e),
    };
    if let Err(e) = marked {
        tracing::warn!(root = %root, error = %CatalogError::from_lance(&e).message, "could not mark the manifest as kept; the scheduler will");
    }
}

pub(super) struct Opened {
    /// When the engine's namespace was built (it loaded the latest manifest).
    pub began: std::time::Instant,
    pub jobs: Jobs,
    pub control: crate::records::Records,
    pub store: Arc<ObjectStore>,
    pub root: String,
    pub session: Arc<Session>,
    pub dir: DirectoryNamespace,
}

/// A root as the engine names it: local paths made absolute (and created),
/// URIs without a trailing `/`.
pub fn resolve_root(root: &str) -> CatalogResult<String> {
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

/// Records kept at their own URI: the control root when `--control-root`
/// puts it outside the storage root.
pub async fn open_records(
    uri: &str,
    storage_options: &OperatorOptions,
) -> CatalogResult<crate::records::Records> {
    let root = resolve_root(uri)?;
    let session = Session::default();
    let params = storage_options.params(None);
    let (store, base) = ObjectStore::from_uri_and_params(session.store_registry(), &root, &params)
        .await
        .map_err(|e| cannot_open("control", &root, &e))?;
    Ok(crate::records::Records::new(store.inner.clone(), base).on_local_disk(store.is_local()))
}

/// Whether a root URI can be opened at all (its scheme and options), without
/// writing anything: a warehouse whose root names no usable store is refused
/// when it is created, not on every later request.
pub async fn probe_root(root: &str, storage_options: &OperatorOptions) -> CatalogResult<()> {
    if !root.contains("://") || root.starts_with("file://") {
        return Ok(());
    }
    let session = Session::default();
    let params = storage_options.params(None);
    let (store, base) = ObjectStore::from_uri_and_params(session.store_registry(), root, &params)
        .await
        .map_err(|e| {
            CatalogError::invalid(format!(
                "root {root:?} cannot be opened: {}",
                CatalogError::from_lance(&e).message
            ))
        })?;
    // Building an S3 store contacts nothing: one listing shows that the
    // bucket exists and the endpoint and credentials answer.
    let listed = tokio::time::timeout(PROBE_TIMEOUT, async {
        futures::StreamExt::next(&mut store.inner.list(Some(&base))).await
    })
    .await;
    match listed {
        Ok(None) | Ok(Some(Ok(_))) => Ok(()),
        Ok(Some(Err(e))) => Err(CatalogError::invalid(format!(
            "root {root:?} cannot be reached: {e}"
        ))),
        Err(_) => Err(CatalogError::invalid(format!(
            "root {root:?} did not answer within {} s",
            PROBE_TIMEOUT.as_secs()
        ))),
    }
}

/// How long a new root has to answer its first listing.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
