//! Shape and parent checks, run before anything touches storage: a rejected
//! request must leave nothing behind.

use lance_namespace::models::DescribeNamespaceRequest;
use lance_namespace::LanceNamespace;

use crate::core::{engine, Catalog};
use crate::error::{CatalogError, CatalogResult, Code};

/// Longest id segment we accept; longer names are almost certainly a mistake
/// and would make unwieldy directory names.
const MAX_SEGMENT_LEN: usize = 1024;

/// The id of a namespace: empty means the root.
pub(crate) fn namespace_id(id: &Option<Vec<String>>) -> CatalogResult<Vec<String>> {
    let id = id.clone().unwrap_or_default();
    check_segments(&id)?;
    Ok(id)
}

/// The id of a table: at least one segment, the last being the table name.
pub(crate) fn table_id(id: &Option<Vec<String>>) -> CatalogResult<Vec<String>> {
    let id = id.clone().unwrap_or_default();
    if id.is_empty() {
        return Err(CatalogError::invalid(
            "a table id needs at least one segment (the table name)",
        ));
    }
    check_segments(&id)?;
    Ok(id)
}

fn check_segments(id: &[String]) -> CatalogResult<()> {
    for seg in id {
        if seg.is_empty() {
            return Err(CatalogError::invalid(format!(
                "id {id:?} has an empty segment"
            )));
        }
        if seg.len() > MAX_SEGMENT_LEN {
            return Err(CatalogError::invalid(format!(
                "id segment is {} bytes long; the limit is {MAX_SEGMENT_LEN}",
                seg.len()
            )));
        }
        if seg.contains('$') {
            // `$` joins segments in the manifest: a segment containing it
            // would alias another object.
            return Err(CatalogError::invalid(format!(
                "id segment {seg:?} contains '$', which the catalog reserves as its internal separator"
            )));
        }
        if seg.chars().any(|c| c.is_control() || c == '/' || c == '\\') {
            return Err(CatalogError::invalid(format!(
                "id segment {seg:?} contains a control character or a path separator"
            )));
        }
        if seg == "." || seg == ".." || seg == "__manifest" {
            return Err(CatalogError::invalid(format!(
                "id segment {seg:?} is reserved"
            )));
        }
    }
    Ok(())
}

use crate::core::reserved::{PENDING, RESERVED_PREFIX};

/// Refuse caller-set properties that would forge the catalog's bookkeeping.
pub(crate) fn check_properties(
    props: Option<&std::collections::HashMap<String, String>>,
) -> CatalogResult<()> {
    match props.and_then(|p| p.keys().find(|k| k.starts_with(RESERVED_PREFIX))) {
        Some(k) => Err(CatalogError::invalid(format!(
            "property {k:?} is reserved: keys starting with {RESERVED_PREFIX:?} are the catalog's own"
        ))),
        None => Ok(()),
    }
}

/// Remove internal bookkeeping from properties shown to callers: a batch's
/// committed version or intent, and the real id (a client that copies a
/// table's properties into another create must not be refused for it).
pub(crate) fn public_properties(props: &mut Option<std::collections::HashMap<String, String>>) {
    if let Some(p) = props.as_mut() {
        p.remove(PENDING);
        p.remove(crate::core::reserved::BATCH_INTENT);
        p.remove(crate::core::reserved::TABLE_ID);
        p.remove(crate::core::reserved::NAMESPACE_ID);
    }
}

impl Catalog {
    /// Whether the namespace exists; the root always does.
    pub(crate) async fn namespace_present(&self, id: &[String]) -> CatalogResult<bool> {
        if id.is_empty() {
            return Ok(true);
        }
        self.recorded(id, "namespace").await
    }

    /// Whether an object of `kind` (`namespace` or `table`) is recorded at
    /// `id`: read from the manifest this process holds (not through the
    /// engine's own handle, which would reload it), and kept until a
    /// commit touches that row.
    pub(crate) async fn recorded(&self, id: &[String], kind: &str) -> CatalogResult<bool> {
        let ds = self.manifest_snapshot().await?;
        let kinds = self.kinds_at(&ds, &manifest_key(id)).await?;
        Ok(kinds.iter().any(|k| k == kind))
    }

    /// Fail with NamespaceNotFound (1) unless the namespace exists.
    pub(crate) async fn require_namespace(&self, id: &[String]) -> CatalogResult<()> {
        if self.namespace_present(id).await? {
            Ok(())
        } else {
            Err(missing_namespace(id))
        }
    }

    /// Whether `name` may be a namespace's name (one id segment).
    pub fn check_namespace_name(name: &str) -> CatalogResult<()> {
        check_segments(&[name.to_string()])
    }

    /// What a create door checks before authorization: the new object's
    /// id (shape, 13), then its parent namespace (1, naming how to create
    /// it). The root namespace answers for itself.
    pub async fn check_door(&self, table: bool, id: &Option<Vec<String>>) -> CatalogResult<()> {
        let id = match table {
            true => table_id(id)?,
            false => namespace_id(id)?,
        };
        if id.len() > 1 && !self.namespace_present(&id[..id.len() - 1]).await? {
            return Err(CatalogError::new(
                Code::NAMESPACE_NOT_FOUND,
                format!(
                    "namespace {} does not exist; create it first with create_namespace",
                    display_id(&id[..id.len() - 1])
                ),
            ));
        }
        Ok(())
    }

    /// Fail with NamespaceNotFound (1) unless the table's parent exists.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) async fn require_parent(&self, table: &[String]) -> CatalogResult<()> {
        self.require_namespace(&table[..table.len() - 1]).await
    }

    /// The properties of an existing namespace.
    pub(crate) async fn namespace_properties(
        &self,
        id: &[String],
    ) -> CatalogResult<Option<std::collections::HashMap<String, String>>> {
        let req = DescribeNamespaceRequest {
            id: Some(id.to_vec()),
            ..Default::default()
        };
        Ok(engine(self.inner().await?.describe_namespace(req).await)?.properties)
    }
}

/// The engine reports a table whose namespace is missing as
/// NamespaceNotFound; for an operation on a table, the table does not exist
/// (4), and the message says which object is missing.
pub(crate) fn missing_table(e: CatalogError, id: &[String]) -> CatalogError {
    if e.code != Code::NAMESPACE_NOT_FOUND {
        return e;
    }
    CatalogError::new(
        Code::TABLE_NOT_FOUND,
        format!(
            "table {} does not exist: its namespace {} does not exist",
            display_id(id),
            display_id(&id[..id.len().saturating_sub(1)])
        ),
    )
}

/// The manifest's key for an object id: its segments joined by `$` (which
/// segments may not contain, see `check_segments`).
/// The longest tag or branch name: each is one object name in storage,
/// and a file system allows 255 bytes (S3 keys 1024, in all), so every
/// backend takes the same names.
const MAX_REF_NAME: usize = 255;

/// Whether `name` may name a tag or branch (its other rules are Lance's).
pub(super) fn check_ref_name(what: &str, name: &str) -> CatalogResult<()> {
    if name.len() > MAX_REF_NAME {
        return Err(CatalogError::invalid(format!(
            "a {what} name is at most {MAX_REF_NAME} bytes; this one has {}",
            name.len()
        )));
    }
    Ok(())
}

pub fn manifest_key(id: &[String]) -> String {
    id.join(KEY_SEPARATOR)
}

/// The object id a manifest key names.
pub fn manifest_id(key: &str) -> Vec<String> {
    key.split(KEY_SEPARATOR).map(str::to_string).collect()
}

/// What joins the segments of a manifest key.
const KEY_SEPARATOR: &str = "$";

/// TableNotFound (4) for `id`, in the one wording every path uses.
pub(crate) fn table_not_found(id: &[String]) -> CatalogError {
    CatalogError::new(
        Code::TABLE_NOT_FOUND,
        format!("table {} does not exist", display_id(id)),
    )
}

/// TableAlreadyExists (5) for `id`, in the one wording every path uses.
pub(crate) fn table_already_exists(id: &[String]) -> CatalogError {
    CatalogError::new(
        Code::TABLE_ALREADY_EXISTS,
        format!("table {} already exists", display_id(id)),
    )
}

/// NamespaceNotFound (1) for `id`.
pub(crate) fn missing_namespace(id: &[String]) -> CatalogError {
    CatalogError::new(
        Code::NAMESPACE_NOT_FOUND,
        format!("namespace {} does not exist", display_id(id)),
    )
}

/// An id as people write it: segments joined by `.`-free `$`, root as `$`.
pub(crate) fn display_id(id: &[String]) -> String {
    if id.is_empty() {
        "$ (root)".to_string()
    } else {
        format!("'{}'", manifest_key(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(v: &[&str]) -> Option<Vec<String>> {
        Some(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn ids_are_checked_segment_by_segment() {
        assert_eq!(namespace_id(&None).unwrap(), Vec::<String>::new());
        assert_eq!(table_id(&id(&["a", "t"])).unwrap(), vec!["a", "t"]);
        assert_eq!(table_id(&id(&[])).unwrap_err().code, Code::INVALID_INPUT);
        let long = "x".repeat(MAX_SEGMENT_LEN + 1);
        for bad in [
            vec!["a", ""],
            vec!["a$b"],
            vec!["a/b"],
            vec!["a\\b"],
            vec!["tab\u{7}"],
            vec!["."],
            vec![".."],
            vec!["__manifest"],
            vec![long.as_str()],
        ] {
            let e = namespace_id(&id(&bad)).unwrap_err();
            assert_eq!(e.code, Code::INVALID_INPUT, "{bad:?}");
        }
    }

    #[test]
    fn reserved_properties_are_refused() {
        let ok = std::collections::HashMap::from([("owner".to_string(), "me".to_string())]);
        assert!(check_properties(Some(&ok)).is_ok());
        assert!(check_properties(None).is_ok());
        let bad = std::collections::HashMap::from([(PENDING.to_string(), "{}".to_string())]);
        assert_eq!(
            check_properties(Some(&bad)).unwrap_err().code,
            Code::INVALID_INPUT
        );
        let mut shown = Some(bad.clone());
        public_properties(&mut shown);
        assert!(shown.unwrap().is_empty());
    }

    #[test]
    fn keys_and_messages() {
        let id = vec!["a".to_string(), "b".to_string(), "t".to_string()];
        assert_eq!(manifest_key(&id), "a$b$t");
        assert_eq!(manifest_id("a$b$t"), id);
        assert_eq!(display_id(&[]), "$ (root)");
        assert_eq!(display_id(&id), "'a$b$t'");
        let e = missing_table(CatalogError::new(Code::NAMESPACE_NOT_FOUND, "x"), &id);
        assert_eq!(e.code, Code::TABLE_NOT_FOUND);
        assert!(e.message.contains("'a$b'"), "{}", e.message);
        let other = CatalogError::invalid("y");
        assert_eq!(missing_table(other.clone(), &id), other);
        assert_eq!(table_not_found(&id).code, Code::TABLE_NOT_FOUND);
    }
}
