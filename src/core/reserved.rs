//! Every key the catalog reserves for its own bookkeeping, in one place:
//! table properties and request context under `lance-catalog.`, and field
//! metadata under `lance-catalog:`. Callers may not set table or namespace
//! properties under the prefix (see `checks::check_properties`).

/// Property keys under this prefix are the catalog's own.
pub(crate) const RESERVED_PREFIX: &str = "lance-catalog.";

/// Table and namespace property: the object refuses deletion unless forced.
pub const PROTECTED: &str = "lance-catalog.protected";

/// Request-context key: `"true"` overrides protection on a delete. The
/// REST gateway fills it from the `force` query parameter (a `Context`
/// parameter becomes `RESERVED_PREFIX` + its name).
pub const FORCE: &str = "lance-catalog.force";

/// Request-context key: the warehouse a request is scoped to (the REST
/// gateway fills it from a `/warehouses/{warehouse}/…` URL; a gRPC caller
/// sets it in the request's context).
pub const WAREHOUSE: &str = "lance-catalog.warehouse";

/// Request-context key: the trash grace period of a drop, in seconds
/// (`0` or absent: a drop deletes at once). Set by the governance layer
/// from `--trash-grace` and the project's own setting; a caller's value
/// is replaced.
pub const TRASH_GRACE: &str = "lance-catalog.trash_grace_s";

/// Request-context key: `"true"` makes a drop destroy the bytes now even
/// under a grace period (the `purge` query parameter).
pub const PURGE: &str = "lance-catalog.purge";

/// Request-context key: who asks (recorded as `dropped_by` in trash).
/// Set by the governance layer; a caller's value is replaced.
pub const PRINCIPAL: &str = "lance-catalog.principal";

/// Table property: the table's real id, given when it is created and kept
/// through renames, trash and undrop. Grants and maintenance tasks are
/// bound to it, never to a name another table can take.
pub const TABLE_ID: &str = "lance-catalog.table_id";

/// Namespace property: the namespace's real id (as [`TABLE_ID`]).
pub const NAMESPACE_ID: &str = "lance-catalog.namespace_id";

/// Request-context key: the real id the object a create makes is to get.
/// Minted by the governance layer before authorization (so that the
/// creator's ownership names that very object); a caller's value is
/// removed. Without it the core mints one itself.
pub const OBJECT_ID: &str = "lance-catalog.object_id";

/// Table property holding the last version a batch committed before it
/// placed it (written by earlier releases; read only to finish such a
/// batch after an upgrade).
pub const PENDING: &str = "lance-catalog.committed_version";

/// Table property: a batch's claim on the table's next version while it
/// places its manifests (`core/version/intent.rs`).
pub const BATCH_INTENT: &str = "lance-catalog.batch_intent";

/// Context key naming schema-metadata keys to delete (a JSON list of strings).
pub const UNSET_KEYS: &str = "lance-catalog.unset_keys";

/// Field-metadata key holding a computed column's SQL binding.
pub const COMPUTED_KEY: &str = "lance-catalog:computed";
/// Field-metadata key holding a virtual column's UDF definition (JSON).
pub const VIRTUAL_KEY: &str = "lance-catalog:virtual_column";

/// Materialized-view properties: its kind, definition, source versions of
/// the last refresh, and when that was.
pub const MV_KIND: &str = "lance-catalog.mv.kind";
pub const MV_SOURCE_QUERY: &str = "lance-catalog.mv.source_query";
pub const MV_UDTF_SPEC: &str = "lance-catalog.mv.udtf_spec";
pub const MV_SOURCE_VERSIONS: &str = "lance-catalog.mv.source_versions";
pub const MV_LAST_REFRESH: &str = "lance-catalog.mv.last_refresh";

#[cfg(test)]
mod tests {
    #[test]
    fn context_keys_carry_the_prefix() {
        assert_eq!(super::FORCE, format!("{}force", super::RESERVED_PREFIX));
    }
}
