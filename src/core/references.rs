//! What a dataset's manifests reference: every file of every manifest
//! under its location (every retained version of every branch: a cleanup
//! removes the manifests of the versions it removes), resolved through the
//! manifests' base paths to absolute keys, so a shallow clone's references
//! into another table's location are seen for what they are.
//!
//! A key is a URI without `file://`, percent-decoded, with no trailing
//! `/`: the one spelling both a listing and a base path come to.

use std::collections::{HashMap, HashSet};

use futures::TryStreamExt;
use lance::io::ObjectStore;
use lance_table::format::BasePath;
use lance_table::io::commit::{ManifestLocation, ManifestNamingScheme};
use lance_table::io::deletion::relative_deletion_file_path;
use lance_table::io::manifest::{read_manifest, read_manifest_indexes};
use object_store::path::Path;
use object_store::ObjectMeta;

use crate::api::orphans::TableRef;
use crate::core::engine;
use crate::error::{CatalogError, CatalogResult, Code};

/// A URI or path in the one spelling keys are compared in.
pub(crate) fn key_of(uri: &str) -> String {
    let uri = uri.strip_prefix("file://").unwrap_or(uri);
    let decoded = percent_encoding::percent_decode_str(uri).decode_utf8_lossy();
    let mut out = String::with_capacity(decoded.len());
    // Repeated separators name the same directory (not after a scheme's `//`).
    let (scheme, rest) = match decoded.find("://") {
        Some(i) => decoded.split_at(i + 3),
        None => ("", decoded.as_ref()),
    };
    out.push_str(scheme);
    let mut last_slash = false;
    for c in rest.chars() {
        if c == '/' && last_slash {
            continue;
        }
        last_slash = c == '/';
        out.push(c);
    }
    while out.len() > 1 && out.ends_with('/') && !out.ends_with("://") {
        out.pop();
    }
    out
}

/// `child`'s part below `parent` (both keys), if it lies there.
pub(crate) fn below<'a>(child: &'a str, parent: &str) -> Option<&'a str> {
    child
        .strip_prefix(parent)
        .and_then(|rest| rest.strip_prefix('/'))
}

/// A listed path's part below `base`, its segments decoded.
pub(crate) fn relative(base: &Path, path: &Path) -> String {
    match path.prefix_match(base) {
        Some(parts) => parts
            .map(|p| {
                percent_encoding::percent_decode_str(p.as_ref())
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .collect::<Vec<_>>()
            .join("/"),
        None => path.to_string(),
    }
}

/// A listed path's key, below the key of the location listed.
fn key_at(own: &str, base: &Path, path: &Path) -> String {
    format!("{own}/{}", relative(base, path))
}

/// Referenced files and directories, as keys.
#[derive(Debug, Default, Clone)]
pub(crate) struct Refs {
    /// Files referenced by name: data, deletion, transaction files and the
    /// manifests themselves.
    pub files: HashSet<String>,
    /// Directories referenced whole: an index's, a data file's blob
    /// sidecars (`data/<key>/` lives exactly when `data/<key>.lance` does).
    pub dirs: HashSet<String>,
    /// The base paths the manifests define (a shallow clone's source, a
    /// multi-base table's data directories): the directories a table's
    /// files may live in besides its own location, whole.
    pub bases: HashSet<String>,
}

impl Refs {
    /// Whether `key` is referenced: by name, or inside a referenced directory.
    pub(crate) fn covers(&self, key: &str) -> bool {
        if self.files.contains(key) {
            return true;
        }
        let mut at = key;
        while let Some(i) = at.rfind('/') {
            at = &at[..i];
            if self.dirs.contains(at) {
                return true;
            }
        }
        false
    }

    /// Every key, files and directories, for a test of what lies below a
    /// location.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &String> {
        self.files.iter().chain(self.dirs.iter())
    }

    /// Whether a file these name lies at or below `key`, or `key` lies
    /// in a directory they name (in any case, see `table/locations.rs`):
    /// deleting `key` would delete what a table reads.
    pub(crate) fn reach(&self, key: &str) -> bool {
        self.keys().any(|k| inside_or_at(k, key)) || self.dirs.iter().any(|d| inside_or_at(key, d))
    }

    /// Whether `key` belongs to a table's footprint: it holds what the
    /// table reads ([`Self::reach`]), or it overlaps a base path the table
    /// writes its files in (a base at `root`, the storage root itself,
    /// claims nothing of its own: only its files count).
    pub(crate) fn footprint(&self, key: &str, root: &str) -> bool {
        self.reach(key)
            || self
                .bases
                .iter()
                .any(|b| !inside_or_at(root, b) && (inside_or_at(key, b) || inside_or_at(b, key)))
    }

    fn extend(&mut self, other: &Refs) {
        self.files.extend(other.files.iter().cloned());
        self.dirs.extend(other.dirs.iter().cloned());
        self.bases.extend(other.bases.iter().cloned());
    }
}

/// Whether key `k` is `at` or lies below it, segment by segment in any
/// case.
pub(crate) fn inside_or_at(k: &str, at: &str) -> bool {
    use crate::core::location::Location;
    Location::new(k).inside_or_at(&Location::new(at))
}

/// The manifests of one dataset location: where each lives (its dataset
/// directory's key) and its listing entry.
pub(crate) struct ManifestFile {
    /// The key of the dataset directory the manifest belongs to (the
    /// table's location, or a branch's `tree/<name>` below it).
    pub dataset_key: String,
    pub meta: ObjectMeta,
}

/// The manifests in a listing of a dataset location: every `*.manifest`
/// directly in a `_versions/` directory (the table's own, or a branch's).
/// `key_at` turns a listed path into its key.
fn manifests_in(listing: &[ObjectMeta], key_at: impl Fn(&Path) -> String) -> Vec<ManifestFile> {
    listing
        .iter()
        .filter_map(|meta| {
            let key = key_at(&meta.location);
            let (dir, file) = key.rsplit_once('/')?;
            let dataset = dir.strip_suffix("/_versions")?;
            (file.ends_with(".manifest") && !file.starts_with('.')).then(|| ManifestFile {
                dataset_key: dataset.to_string(),
                meta: meta.clone(),
            })
        })
        .collect()
}

/// Where a file with `base_id` lives: its base's key and whether that base
/// is a dataset root (files then sit in its `data/`, `_indices/`...).
fn base_of(
    bases: &HashMap<u32, BasePath>,
    base_id: Option<u32>,
    own: &str,
) -> CatalogResult<(String, bool)> {
    match base_id {
        None => Ok((own.to_string(), true)),
        Some(id) => match bases.get(&id) {
            Some(b) => Ok((key_of(&b.path), b.is_dataset_root)),
            // A reference the scan cannot place: refusing is the only safe
            // answer, since a guess could call a live file an orphan.
            None => Err(CatalogError::internal(format!(
                "a manifest of {own:?} names base path {id}, which it does not define"
            ))),
        },
    }
}

/// Join a base key and a relative path.
fn join(base: &str, rel: &str) -> String {
    key_of(&format!("{base}/{rel}"))
}

/// Everything one manifest references, as keys, and its version; none
/// when the manifest is gone since it was listed (a concurrent cleanup).
async fn manifest_refs(
    store: &ObjectStore,
    file: &ManifestFile,
) -> CatalogResult<Option<(u64, Refs)>> {
    let path = &file.meta.location;
    let manifest = match read_manifest(store, path, Some(file.meta.size)).await {
        Ok(m) => m,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(CatalogError::from_lance(&e)),
    };
    let name = path.filename().unwrap_or_default();
    let location = ManifestLocation {
        version: manifest.version,
        path: path.clone(),
        size: Some(file.meta.size),
        naming_scheme: ManifestNamingScheme::detect_scheme(name)
            .unwrap_or(ManifestNamingScheme::V2),
        e_tag: None,
        identity: None,
    };
    let indices = match read_manifest_indexes(store, &location, &manifest).await {
        Ok(i) => i,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(CatalogError::from_lance(&e)),
    };
    let own = file.dataset_key.as_str();
    let bases = &manifest.base_paths;
    let mut refs = Refs::default();
    refs.bases.extend(bases.values().map(|b| key_of(&b.path)));
    refs.files.insert(join(own, &format!("_versions/{name}")));
    if let Some(txn) = &manifest.transaction_file {
        refs.files
            .insert(join(own, &format!("_transactions/{txn}")));
    }
    for fragment in manifest.fragments.iter() {
        for data in fragment.referenced_lance_files() {
            let (base, root) = base_of(bases, data.base_id, own)?;
            let rel = match root {
                true => format!("data/{}", data.path),
                false => data.path.clone(),
            };
            let key = join(&base, &rel);
            if let Some(stem) = key.strip_suffix(".lance") {
                refs.dirs.insert(stem.to_string());
            }
            refs.files.insert(key);
        }
        if let Some(deletion) = &fragment.deletion_file {
            let (base, _) = base_of(bases, deletion.base_id, own)?;
            let rel = relative_deletion_file_path(fragment.id, deletion);
            refs.files.insert(join(&base, &rel));
        }
    }
    for index in &indices {
        let (base, root) = base_of(bases, index.base_id, own)?;
        let dir = match root {
            true => format!("_indices/{}", index.uuid),
            false => index.uuid.to_string(),
        };
        refs.dirs.insert(join(&base, &dir));
    }
    Ok(Some((manifest.version, refs)))
}

/// How often a pass lists again when a manifest it listed is gone before
/// it was read (a concurrent cleanup): the version that replaced it may
/// be missing from the listing, and its references with it.
const RELISTS: usize = 5;

/// A location's listing and what each manifest in it references.
pub(crate) struct Listed {
    pub listing: Vec<ObjectMeta>,
    /// Each manifest, its version and its references.
    pub manifests: Vec<(ManifestFile, u64, Refs)>,
}

impl Listed {
    /// What all its manifests reference.
    pub(crate) fn refs(&self) -> Refs {
        let mut all = Refs::default();
        for (_, _, refs) in &self.manifests {
            all.extend(refs);
        }
        all
    }
}

/// List the location at `base` (key `own`; only its `subs` directories
/// when some are named) and read every manifest the listing holds. One
/// listing must hold every manifest it names: when one is gone before it
/// is read, the location is listed again.
pub(crate) async fn list_and_read(
    store: &ObjectStore,
    base: &Path,
    own: &str,
    subs: &[&str],
) -> CatalogResult<Listed> {
    for _ in 0..RELISTS {
        let mut listing: Vec<ObjectMeta> = Vec::new();
        let prefixes: Vec<Path> = match subs {
            [] => vec![base.clone()],
            _ => subs.iter().map(|s| base.clone().join(*s)).collect(),
        };
        for prefix in prefixes {
            let found: Vec<ObjectMeta> = engine(store.list(Some(prefix)).try_collect().await)?;
            listing.extend(found);
        }
        let mut manifests = Vec::new();
        let mut whole = true;
        for file in manifests_in(&listing, |p| key_at(own, base, p)) {
            match manifest_refs(store, &file).await? {
                Some((version, refs)) => manifests.push((file, version, refs)),
                None => {
                    whole = false;
                    break;
                }
            }
        }
        if whole {
            return Ok(Listed { listing, manifests });
        }
    }
    Err(CatalogError::new(
        Code::CONCURRENT_MODIFICATION,
        "a table's manifests kept changing while they were read; try the scan again",
    ))
}

/// Every reference any table makes into a location other than its own
/// (through base paths: shallow clones, multi-base tables, imported
/// files), with the tables that make them: the half of the live set
/// (`core/live.rs`) that only manifests tell.
#[derive(Debug, Default, Clone)]
pub struct ForeignRefs {
    pub(crate) refs: Refs,
    pub(crate) tables: Vec<Reacher>,
}

/// A table reaching outside its own location.
#[derive(Debug, Clone)]
pub(crate) struct Reacher {
    /// Who it is, as answers name it (a trashed one with its trash id).
    pub table: TableRef,
    /// Its own location's key: which table it is across warehouses (a
    /// placement key, `ns$t`, may repeat in another warehouse).
    pub own: String,
    /// What it references outside its own location.
    pub refs: Refs,
}

impl ForeignRefs {
    /// Add a table's references that lie outside its own location.
    pub(crate) fn add(&mut self, table: TableRef, own: &str, refs: Refs) {
        let outside = Refs {
            files: refs
                .files
                .into_iter()
                .filter(|k| !inside_or_at(k, own))
                .collect(),
            dirs: refs
                .dirs
                .into_iter()
                .filter(|k| !inside_or_at(k, own))
                .collect(),
            bases: refs
                .bases
                .into_iter()
                .filter(|k| !inside_or_at(k, own))
                .collect(),
        };
        if outside.files.is_empty() && outside.dirs.is_empty() && outside.bases.is_empty() {
            return;
        }
        self.refs.extend(&outside);
        self.tables.push(Reacher {
            table,
            own: own.to_string(),
            refs: outside,
        });
    }

    /// Whether `key` lies in some table's footprint ([`Refs::footprint`]).
    pub(crate) fn in_footprint(&self, key: &str, root: &str) -> bool {
        self.refs.footprint(key, root)
    }

    /// The tables (other than those whose own locations' keys are
    /// `except`: the ones deleted with it) that reference something at or
    /// below `location`: its shallow clones, the multi-base tables keeping
    /// files there.
    pub(crate) fn reaching(&self, location: &str, except: &[String]) -> Vec<TableRef> {
        use crate::core::location::Location;
        let own = |r: &&Reacher| Location::new(&r.own);
        let mut out: Vec<TableRef> = self
            .tables
            .iter()
            .filter(|r| !except.iter().any(|e| Location::new(e) == own(r)))
            .filter(|r| r.refs.reach(location))
            .map(|r| r.table.clone())
            .collect();
        out.sort_by(|a, b| (&a.id, &a.trash_id).cmp(&(&b.id, &b.trash_id)));
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_one_spelling() {
        assert_eq!(key_of("file:///tmp/a%20b//t.lance/"), "/tmp/a b/t.lance");
        assert_eq!(key_of("/tmp/a b/t.lance"), "/tmp/a b/t.lance");
        assert_eq!(key_of("s3://bucket/p//t.lance/"), "s3://bucket/p/t.lance");
        assert_eq!(below("/r/t.lance/data/x", "/r/t.lance"), Some("data/x"));
        assert_eq!(below("/r/t.lance2/data/x", "/r/t.lance"), None);
    }

    #[test]
    fn a_directory_reference_covers_what_lies_in_it() {
        let mut refs = Refs::default();
        refs.dirs.insert("/r/t/_indices/u".into());
        refs.files.insert("/r/t/data/a.lance".into());
        assert!(refs.covers("/r/t/_indices/u/index.idx"));
        assert!(refs.covers("/r/t/data/a.lance"));
        assert!(!refs.covers("/r/t/_indices/v/index.idx"));
        assert!(!refs.covers("/r/t/data/b.lance"));
    }
}
