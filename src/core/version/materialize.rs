//! The one step that makes a staged manifest version N: put it at version
//! N's final name only if nothing is there (Lance's own commit point, which
//! plain Lance writers race on too). A name already taken is the same
//! version resent (the same bytes: success) or another writer's (a
//! conflict); never decided by size alone, as lance-io's copy does.

use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode, PutOptions};

use crate::error::{CatalogError, CatalogResult, Code};

/// Whether `staging` is a staged copy of `final_path`: the same name plus
/// a suffix (`<final>-<uuid>`), in the same directory.
pub(crate) fn is_staged_name(staging: &Path, final_path: &Path) -> bool {
    staging
        .as_ref()
        .strip_prefix(final_path.as_ref())
        .is_some_and(|rest| rest.len() > 1 && rest.starts_with('-') && !rest.contains('/'))
}

/// Whether `placed` is a version manifest of the table at `table` (in its
/// own `_versions/`) and `staging` a staged copy of it: the only objects
/// the catalog removes when it undoes a version.
pub(crate) fn owned_version(table: &Path, staging: &Path, placed: &Path) -> bool {
    let versions = table.clone().join("_versions");
    placed.prefix_matches(&versions)
        && placed.parts().count() == versions.parts().count() + 1
        && is_staged_name(staging, placed)
}

/// What placing a staged manifest at its final name found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placed {
    /// This call put it there: its size and the store's e-tag for it (what
    /// a commit answers, known without asking the store again).
    New { size: u64, e_tag: Option<String> },
    /// It was there already, with the same bytes: a resent commit.
    Same,
}

/// Put `staging` at `final_path` unless something is there; the name taken
/// by other bytes is a conflict (14), a missing staging object the caller's
/// mistake (13). `size`: the size the caller says it staged, a fast "not
/// the same" before any bytes are read. `what` names the version in errors
/// (`version 3 of table a.t`): no answer names a storage path.
pub(crate) async fn materialize(
    store: &lance::io::ObjectStore,
    staging: &Path,
    final_path: &Path,
    size: Option<i64>,
    what: &str,
) -> CatalogResult<Placed> {
    let store = &store.inner;
    // A conditional put of the staged bytes, the very put Lance's own
    // commits race on: never the store's conditional copy. On S3 Lance
    // configures that copy as a multipart upload completed with
    // `If-None-Match`, which a store may not decide atomically (SeaweedFS
    // let two racing completions both land: one commit overwrote another).
    let copied = match store.get(staging).await {
        Ok(got) => {
            let bytes = got.bytes().await.map_err(io)?;
            let size = bytes.len() as u64;
            let create = PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            };
            store
                .put_opts(final_path, bytes.into(), create)
                .await
                .map(|put| Placed::New {
                    size,
                    e_tag: put.e_tag,
                })
        }
        Err(e) => Err(e),
    };
    match copied {
        Ok(placed) => Ok(placed),
        Err(object_store::Error::AlreadyExists { .. })
        | Err(object_store::Error::Precondition { .. }) => {
            match same_bytes(store.as_ref(), staging, final_path, size).await? {
                true => Ok(Placed::Same),
                false => Err(taken(what)),
            }
        }
        Err(object_store::Error::NotFound { .. }) => {
            // The staging object is gone: a commit whose staging was
            // removed may have been placed already, which only its bytes
            // could have shown; a conflict then, as in Lance's own
            // namespace, else the caller named nothing.
            match store.head(final_path).await {
                Ok(_) => Err(taken(what)),
                Err(_) => Err(CatalogError::invalid(format!(
                    "the staging manifest for {what} does not exist"
                ))),
            }
        }
        Err(e) => Err(io(e)),
    }
}

fn taken(what: &str) -> CatalogError {
    CatalogError::new(
        Code::CONCURRENT_MODIFICATION,
        format!("{what} already exists with other content"),
    )
}

fn io(e: object_store::Error) -> CatalogError {
    lance::Error::from(e).into()
}

/// Whether the staged manifest is the one at the final name, byte for
/// byte (an e-tag is opaque and changes across copies; sizes differ fast).
pub(crate) async fn same_bytes(
    store: &dyn object_store::ObjectStore,
    staging: &Path,
    final_path: &Path,
    size: Option<i64>,
) -> CatalogResult<bool> {
    let placed = store.head(final_path).await.map_err(io)?;
    if size.is_some_and(|s| s != placed.size as i64) {
        return Ok(false);
    }
    let staged = match store.get(staging).await {
        Ok(got) => got.bytes().await.map_err(io)?,
        Err(object_store::Error::NotFound { .. }) => return Ok(false),
        Err(e) => return Err(io(e)),
    };
    if staged.len() as u64 != placed.size {
        return Ok(false);
    }
    let there = store
        .get(final_path)
        .await
        .map_err(io)?
        .bytes()
        .await
        .map_err(io)?;
    Ok(staged == there)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store(dir: &std::path::Path) -> lance::io::ObjectStore {
        let uri = format!("file://{}", dir.display());
        let (store, _) = lance::io::ObjectStore::from_uri(&uri).await.unwrap();
        std::sync::Arc::try_unwrap(store).unwrap_or_else(|a| (*a).clone())
    }

    fn path(dir: &std::path::Path, name: &str) -> Path {
        Path::from_absolute_path(dir.join(name)).unwrap()
    }

    #[tokio::test]
    async fn a_resent_manifest_is_the_same_and_another_is_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path()).await;
        let (staging, other, fin) = (
            path(dir.path(), "1.manifest-a"),
            path(dir.path(), "1.manifest-b"),
            path(dir.path(), "1.manifest"),
        );
        s.inner
            .put(&staging, b"manifest-a".to_vec().into())
            .await
            .unwrap();
        // Same size, other bytes: a size check alone would call it the same.
        s.inner
            .put(&other, b"manifest-b".to_vec().into())
            .await
            .unwrap();
        let placed = materialize(&s, &staging, &fin, Some(10), "v1")
            .await
            .unwrap();
        // What the put answered is what the store says of the object.
        let meta = s.inner.head(&fin).await.unwrap();
        assert_eq!(
            placed,
            Placed::New {
                size: 10,
                e_tag: meta.e_tag
            }
        );
        assert_eq!(
            materialize(&s, &staging, &fin, Some(10), "v1")
                .await
                .unwrap(),
            Placed::Same
        );
        let e = materialize(&s, &other, &fin, Some(10), "v1")
            .await
            .unwrap_err();
        assert_eq!(e.code, Code::CONCURRENT_MODIFICATION, "{e:?}");
        let bytes = s.inner.get(&fin).await.unwrap().bytes().await.unwrap();
        assert_eq!(bytes.as_ref(), b"manifest-a");
    }

    #[test]
    fn only_a_tables_own_version_is_owned() {
        let table = Path::from("root/ns$t");
        let placed = Path::from("root/ns$t/_versions/2.manifest");
        let staging = Path::from("root/ns$t/_versions/2.manifest-uuid");
        assert!(owned_version(&table, &staging, &placed));
        let other = Path::from("root/ns$u/_versions/2.manifest");
        let other_staging = Path::from("root/ns$u/_versions/2.manifest-uuid");
        assert!(!owned_version(&table, &other_staging, &other));
        let data = Path::from("root/ns$t/data/x.lance");
        assert!(!owned_version(
            &table,
            &Path::from("root/ns$t/data/x.lance-y"),
            &data
        ));
        let deeper = Path::from("root/ns$t/_versions/a/2.manifest");
        assert!(!owned_version(
            &table,
            &Path::from("root/ns$t/_versions/a/2.manifest-u"),
            &deeper
        ));
        assert!(!owned_version(
            &table,
            &Path::from("root/ns$t/_versions/3.manifest-u"),
            &placed
        ));
    }

    #[tokio::test]
    async fn a_missing_staging_object_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path()).await;
        let fin = path(dir.path(), "2.manifest");
        let e = materialize(&s, &path(dir.path(), "2.manifest-x"), &fin, None, "v2")
            .await
            .unwrap_err();
        assert_eq!(e.code, Code::INVALID_INPUT, "{e:?}");
        assert!(e.message.contains("does not exist"), "{e:?}");
    }
}
