//! What bytes are live: the one answer every path that deletes storage
//! asks (a drop, a purge, trash expiry, the intents sweep, a failed
//! write's undo, the reconciler's repairs, reclaim, cleanup's pre-pass).
//!
//! A location is live when
//!
//! - a registered table, a trashed table or a create's intent claims it,
//!   or claims a directory it lies in (`table/locations.rs`, in any case);
//! - or any retained version of any table of the estate (every manifest
//!   of every branch; tags pin versions, so theirs are among them)
//!   references a file at or below it, or defines a base path overlapping
//!   it: a shallow clone's source, a multi-base table's data directory.
//!   A table in trash counts like a registered one.
//!
//! The second half needs every table's manifests, estate-wide. Reports,
//! repairs and reclaim read them afresh. A drop, a purge or a sweep uses
//! what was read within [`REFS_FRESH`] for each table's placement: a table
//! recorded (registered, declared, undropped) since is read at once,
//! since its placement is new, and a version committed through this
//! catalog forgets its table's entry; only a commit made straight to
//! storage that adds a base path waits up to [`REFS_FRESH`] to be seen.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::references::{key_of, list_and_read, ForeignRefs, Refs};
use crate::core::location::Location;
use crate::core::table::locations::{placed_name, Placed};
use crate::core::Catalog;
use crate::error::{CatalogError, CatalogResult, Code};

/// How long a table's references read for a drop or a sweep are used
/// before they are read again.
pub const REFS_FRESH: Duration = Duration::from_secs(60);

/// Tables' references by placement (key and location), as last read.
#[derive(Default)]
pub(crate) struct RefsCache {
    entries: Mutex<HashMap<(String, String), (Instant, Refs)>>,
}

impl RefsCache {
    fn get(&self, placed: &Placed) -> Option<Refs> {
        let entries = self.entries.lock().ok()?;
        let (at, refs) = entries.get(&(placed.key.clone(), placed.location.to_string()))?;
        (at.elapsed() < REFS_FRESH).then(|| refs.clone())
    }

    fn put(&self, placed: &Placed, refs: &Refs) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(
                (placed.key.clone(), placed.location.to_string()),
                (Instant::now(), refs.clone()),
            );
        }
    }

    /// Keep only the placements that still stand.
    fn retain(&self, standing: &[Placed]) {
        let keep: std::collections::HashSet<(&str, &str)> = standing
            .iter()
            .map(|p| (p.key.as_str(), p.location.as_str()))
            .collect();
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|(k, l), _| keep.contains(&(k.as_str(), l.as_str())));
        }
    }

    /// Forget what was read of the table keyed `key` (a version was
    /// committed to it through the catalog: it may name new bases).
    fn forget_table(&self, key: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|(k, _), _| k != key);
        }
    }
}

/// Whether references are read afresh or may come from [`RefsCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Every manifest read now (reports, repairs, reclaim).
    Now,
    /// Each table's as read within [`REFS_FRESH`], new placements now.
    Recent,
}

impl Catalog {
    /// A version was committed to table `id`: what its manifests reference
    /// is read again.
    pub(crate) fn forget_references(&self, id: &[String]) {
        self.refs_cache
            .forget_table(&crate::core::checks::manifest_key(id));
    }

    /// Add every reference this root's tables (trashed ones too) make
    /// outside their own locations.
    pub async fn collect_foreign_refs(
        &self,
        into: &mut ForeignRefs,
        fresh: Freshness,
    ) -> CatalogResult<()> {
        let placed = self.placed_tables().await?;
        let mut seen = BTreeSet::new();
        for placed in &placed {
            // By spelling: on a store that keeps case, `A` and `a` are
            // two directories, and each is read.
            if placed.location.is_root() || !seen.insert(placed.location.as_str()) {
                continue;
            }
            let own = key_of(&self.location_uri(placed.location.as_str()));
            let cached = match fresh {
                Freshness::Recent => self.refs_cache.get(placed),
                Freshness::Now => None,
            };
            let refs = match cached {
                Some(refs) => refs,
                None => {
                    let (store, base) = self.location_store(placed.location.as_str()).await?;
                    // Manifests live in `_versions/` and in branch trees only.
                    let listed = list_and_read(&store, &base, &own, &["_versions", "tree"])
                        .await
                        .map_err(|e| {
                            let message = format!(
                                "the manifests at {:?} could not be read, and what is live needs every table's references: {}",
                                placed.location, e.message
                            );
                            CatalogError::new(e.code, message)
                        })?;
                    let refs = listed.refs();
                    // A location with no manifest yet (declared, or
                    // being written) may be written any moment, by a
                    // client the catalog does not see: never kept.
                    if !listed.manifests.is_empty() {
                        self.refs_cache.put(placed, &refs);
                    }
                    refs
                }
            };
            into.add(placed.table_ref(), &own, refs);
        }
        self.refs_cache.retain(&placed);
        Ok(())
    }

    /// The estate's references where the governance layer answers them
    /// (every warehouse: a clone may live in another), this catalog's
    /// own otherwise.
    pub(crate) async fn estate_refs(&self, fresh: Freshness) -> CatalogResult<ForeignRefs> {
        if let Some(source) = self.estate.get() {
            if let Some(refs) = source.foreign_refs(fresh).await? {
                return Ok(refs);
            }
        }
        let mut own = ForeignRefs::default();
        self.collect_foreign_refs(&mut own, fresh).await?;
        Ok(own)
    }

    /// Refuse (19) deleting `relative` when a table other than those at
    /// `together` (relative locations deleted with it, itself among them)
    /// reads there (a clone of it, a multi-base table keeping files in
    /// it), naming them.
    pub(crate) fn refuse_reached(
        &self,
        relative: &str,
        together: &[String],
        refs: &ForeignRefs,
    ) -> CatalogResult<()> {
        let at = key_of(&self.location_uri(relative));
        let except: Vec<String> = together
            .iter()
            .map(|l| key_of(&self.location_uri(l)))
            .collect();
        let reaching = refs.reaching(&at, &except);
        if reaching.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = reaching.iter().map(table_ref_name).collect();
        Err(CatalogError::new(
            Code::INVALID_TABLE_STATE,
            format!(
                "the bytes at {relative:?} are read by {} (a shallow clone or a multi-base table): deleting them would break it. Drop or deregister that table first, or deregister this one to keep its bytes",
                names.join(", ")
            ),
        ))
    }

    /// Whether `relative` may be deleted as a leftover: no table or
    /// trashed table claims it, a directory it lies in or one inside it;
    /// no live create's intent but `own_intent` (the caller's) overlaps
    /// it; and no table reads there (`refs`, the estate's references).
    /// `Err` names why not.
    pub(crate) async fn check_dead(
        &self,
        relative: &Location,
        refs: &ForeignRefs,
        own_intent: Option<&str>,
    ) -> CatalogResult<()> {
        let tables = self
            .placed_tables_near(std::slice::from_ref(relative))
            .await?;
        if let Some(t) = crate::core::table::locations::find_overlap(relative, &tables, None) {
            return Err(CatalogError::new(
                Code::INVALID_TABLE_STATE,
                format!("{} owns {relative:?}", placed_name(&t.key)),
            ));
        }
        let now = crate::records::now_ms();
        let writing = self.create_intents().await?.into_iter().any(|(id, i)| {
            Some(id.as_str()) != own_intent
                && i.taken_ms.is_none()
                && !crate::core::table::intents::stale(&i, now)
                && Location::new(&i.location).overlaps(relative)
        });
        if writing {
            return Err(CatalogError::new(
                Code::INVALID_TABLE_STATE,
                format!("another create is writing at {relative:?}"),
            ));
        }
        self.refuse_reached(relative.as_str(), &[], refs)
    }

    /// Remove what a failed write or a dead create left at `relative`
    /// (true: removed), unless the live set says it is someone's: a
    /// recorded table's location overlaps it, or a table reads there
    /// (`live.rs`), or that cannot be told (the reconciler reports what
    /// is left).
    pub(crate) async fn remove_if_unowned(
        &self,
        relative: &Location,
        own_intent: Option<&str>,
    ) -> bool {
        let dead = match self.estate_refs(Freshness::Recent).await {
            Ok(refs) => self.check_dead(relative, &refs, own_intent).await,
            Err(e) => Err(e),
        };
        match dead {
            Ok(()) => self.remove_location(relative.as_str()).await,
            Err(e) => {
                tracing::warn!(
                    location = %relative,
                    why = %e.message,
                    "left a failed write's bytes in place: they are not certainly its alone"
                );
                false
            }
        }
    }
}

/// A table as messages name it.
pub(crate) fn table_ref_name(t: &crate::api::orphans::TableRef) -> String {
    let id = crate::core::checks::display_id(&t.id);
    match &t.trash_id {
        Some(trash) => format!("dropped table {id} (in trash as {trash})"),
        None => format!("table {id}"),
    }
}

/// Symbolic links under a local root. Listings follow them (object_store
/// walks a local directory with links followed), so a link inside a
/// table's directory or under the root would let a scan name, and a
/// deletion remove, files outside the root. Nothing is deleted through a
/// link: a path with a link anywhere below the root is reported as one.
pub(crate) struct Links {
    /// The root's directory, for a local root.
    root: Option<std::path::PathBuf>,
    /// Directories already looked at: whether one is a link.
    seen: HashMap<std::path::PathBuf, bool>,
}

impl Links {
    /// The first part of `relative` (a path below the root, its segments
    /// as the store names them) that is a symbolic link, relative to the
    /// root; none on a store without links (S3) or when there is none.
    /// A part that cannot be looked at counts as a link: nothing is
    /// deleted that could not be told apart from one.
    pub(crate) fn first_link(&mut self, relative: &str) -> Option<String> {
        let root = self.root.clone()?;
        let mut at = root;
        let mut so_far: Vec<&str> = Vec::new();
        for part in relative.split('/').filter(|s| !s.is_empty()) {
            at.push(part);
            so_far.push(part);
            let link = match self.seen.get(&at) {
                Some(link) => *link,
                None => {
                    let link = match std::fs::symlink_metadata(&at) {
                        Ok(meta) => meta.file_type().is_symlink(),
                        // Not there (yet): nothing to follow.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                        Err(_) => true,
                    };
                    self.seen.insert(at.clone(), link);
                    link
                }
            };
            if link {
                return Some(so_far.join("/"));
            }
        }
        None
    }
}

impl Links {
    /// The first symbolic link anywhere below `relative` (a directory
    /// under the root), walked without following any: what a deletion
    /// by listing (Lance's cleanup) would follow out of the root. None on
    /// a store without links.
    pub(crate) fn first_link_below(&mut self, relative: &str) -> Option<String> {
        let root = self.root.clone()?;
        if let Some(link) = self.first_link(relative) {
            return Some(link);
        }
        let mut pending = vec![root.join(relative)];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    return Some(entry.path().to_string_lossy().into_owned());
                };
                if kind.is_symlink() {
                    let path = entry.path();
                    let shown = path.strip_prefix(&root).unwrap_or(&path);
                    return Some(shown.to_string_lossy().into_owned());
                }
                if kind.is_dir() {
                    pending.push(entry.path());
                }
            }
        }
        None
    }
}

impl Catalog {
    /// A fresh look at the links under this root ([`Links`]).
    pub(crate) fn links(&self) -> Links {
        let root = match self.root.strip_prefix("file://") {
            // A URI's path is percent-encoded; the directory's is not.
            Some(path) => Some(
                percent_encoding::percent_decode_str(path)
                    .decode_utf8_lossy()
                    .into_owned(),
            ),
            None if !self.root.contains("://") => Some(self.root.clone()),
            None => None,
        };
        Links {
            root: root.map(std::path::PathBuf::from),
            seen: HashMap::new(),
        }
    }
}
