//! The one error type of the catalog and its status table.
//!
//! Every failure that leaves the core is a [`CatalogError`]: a spec code (the
//! 24 codes of `lance_namespace::ErrorCode`, plus control-plane codes that
//! later issues add) and a message meant for the caller. Adapters never invent
//! a status: they look the code up in [`Code::http_status`].

use lance_namespace::{ErrorCode, NamespaceError};

mod classify;

/// A spec error code. The numeric value is the cross-language contract that
/// Lance clients classify by; the HTTP status is advisory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Code(pub u32);

/// One row per code: (code, name, HTTP status, gRPC status code).
/// gRPC codes: 3 INVALID_ARGUMENT, 5 NOT_FOUND, 6 ALREADY_EXISTS,
/// 7 PERMISSION_DENIED, 8 RESOURCE_EXHAUSTED, 9 FAILED_PRECONDITION,
/// 10 ABORTED, 12 UNIMPLEMENTED, 13 INTERNAL, 14 UNAVAILABLE, 16 UNAUTHENTICATED.
/// Pinned against `lance_namespace::ErrorCode` by a test, so a new upstream
/// code fails a test rather than a client.
pub const STATUS_TABLE: &[(u32, &str, u16, i32)] = &[
    (0, "Unsupported", 406, 12),
    (1, "NamespaceNotFound", 404, 5),
    (2, "NamespaceAlreadyExists", 409, 6),
    (3, "NamespaceNotEmpty", 409, 9),
    (4, "TableNotFound", 404, 5),
    (5, "TableAlreadyExists", 409, 6),
    (6, "TableIndexNotFound", 404, 5),
    (7, "TableIndexAlreadyExists", 409, 6),
    (8, "TableTagNotFound", 404, 5),
    (9, "TableTagAlreadyExists", 409, 6),
    (10, "TransactionNotFound", 404, 5),
    (11, "TableVersionNotFound", 404, 5),
    (12, "TableColumnNotFound", 404, 5),
    (13, "InvalidInput", 400, 3),
    (14, "ConcurrentModification", 409, 10),
    (15, "PermissionDenied", 403, 7),
    (16, "Unauthenticated", 401, 16),
    (17, "ServiceUnavailable", 503, 14),
    (18, "Internal", 500, 13),
    (19, "InvalidTableState", 409, 9),
    (20, "TableSchemaValidationError", 400, 3),
    (21, "Throttling", 429, 8),
    (22, "TableBranchNotFound", 404, 5),
    (23, "TableBranchAlreadyExists", 409, 6),
];

/// Control-plane codes, beside the spec's: (code, name, HTTP, gRPC).
pub const CONTROL_TABLE: &[(u32, &str, u16, i32)] = &[
    (10000, "TaskNotFound", 404, 5),
    (10001, "TaskStateConflict", 409, 9),
    (10002, "TaskQuotaExceeded", 429, 8),
    (10003, "ProjectNotFound", 404, 5),
    (10004, "ProjectAlreadyExists", 409, 6),
    (10005, "ProjectNotEmpty", 409, 9),
    (10006, "WarehouseNotFound", 404, 5),
    (10007, "WarehouseAlreadyExists", 409, 6),
    (10008, "WarehouseNotEmpty", 409, 9),
    (10009, "WarehouseQuarantined", 409, 9),
    (10010, "ObjectProtected", 409, 9),
    (10011, "ApiKeyNotFound", 404, 5),
    (10012, "GrantNotFound", 404, 5),
    (10013, "TrashEntryNotFound", 404, 5),
    (10014, "UserNotFound", 404, 5),
    (10015, "UserAlreadyExists", 409, 6),
];

impl Code {
    pub const UNSUPPORTED: Code = Code(0);
    pub const NAMESPACE_NOT_FOUND: Code = Code(1);
    pub const NAMESPACE_ALREADY_EXISTS: Code = Code(2);
    pub const NAMESPACE_NOT_EMPTY: Code = Code(3);
    pub const TABLE_NOT_FOUND: Code = Code(4);
    pub const TABLE_ALREADY_EXISTS: Code = Code(5);
    pub const TABLE_INDEX_NOT_FOUND: Code = Code(6);
    pub const TABLE_INDEX_ALREADY_EXISTS: Code = Code(7);
    pub const TABLE_TAG_NOT_FOUND: Code = Code(8);
    pub const TABLE_TAG_ALREADY_EXISTS: Code = Code(9);
    pub const TRANSACTION_NOT_FOUND: Code = Code(10);
    pub const TABLE_VERSION_NOT_FOUND: Code = Code(11);
    pub const TABLE_COLUMN_NOT_FOUND: Code = Code(12);
    pub const INVALID_INPUT: Code = Code(13);
    pub const CONCURRENT_MODIFICATION: Code = Code(14);
    pub const PERMISSION_DENIED: Code = Code(15);
    pub const UNAUTHENTICATED: Code = Code(16);
    pub const SERVICE_UNAVAILABLE: Code = Code(17);
    pub const INTERNAL: Code = Code(18);
    pub const INVALID_TABLE_STATE: Code = Code(19);
    pub const SCHEMA_VALIDATION: Code = Code(20);
    pub const THROTTLING: Code = Code(21);
    pub const TABLE_BRANCH_NOT_FOUND: Code = Code(22);
    pub const TABLE_BRANCH_ALREADY_EXISTS: Code = Code(23);
    pub const TASK_NOT_FOUND: Code = Code(10000);
    pub const TASK_STATE_CONFLICT: Code = Code(10001);
    pub const TASK_QUOTA_EXCEEDED: Code = Code(10002);
    pub const PROJECT_NOT_FOUND: Code = Code(10003);
    pub const PROJECT_ALREADY_EXISTS: Code = Code(10004);
    pub const PROJECT_NOT_EMPTY: Code = Code(10005);
    pub const WAREHOUSE_NOT_FOUND: Code = Code(10006);
    pub const WAREHOUSE_ALREADY_EXISTS: Code = Code(10007);
    pub const WAREHOUSE_NOT_EMPTY: Code = Code(10008);
    pub const WAREHOUSE_QUARANTINED: Code = Code(10009);
    pub const OBJECT_PROTECTED: Code = Code(10010);
    pub const API_KEY_NOT_FOUND: Code = Code(10011);
    pub const GRANT_NOT_FOUND: Code = Code(10012);
    pub const TRASH_ENTRY_NOT_FOUND: Code = Code(10013);
    pub const USER_NOT_FOUND: Code = Code(10014);
    pub const USER_ALREADY_EXISTS: Code = Code(10015);

    fn row(self) -> Option<&'static (u32, &'static str, u16, i32)> {
        STATUS_TABLE
            .iter()
            .chain(CONTROL_TABLE)
            .find(|r| r.0 == self.0)
    }

    /// The code's name, e.g. `TableNotFound`; unknown codes are `Internal`.
    pub fn name(self) -> &'static str {
        self.row().map(|r| r.1).unwrap_or("Internal")
    }

    /// The HTTP status for this code; unknown codes are 500.
    pub fn http_status(self) -> u16 {
        self.row().map(|r| r.2).unwrap_or(500)
    }

    /// The gRPC status code for this code; unknown codes are INTERNAL (13).
    pub fn grpc_status(self) -> i32 {
        self.row().map(|r| r.3).unwrap_or(13)
    }
}

/// The catalog's error: a spec code, a message for the caller, and a cause
/// for the server log only. The message says what went wrong in the caller's
/// terms; the cause keeps what the engine or the store said (paths, endpoints,
/// source locations), which no answer carries.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct CatalogError {
    pub code: Code,
    pub message: String,
    cause: Option<String>,
}

/// Two errors are the same answer when code and message agree; the cause is
/// the log's business.
impl PartialEq for CatalogError {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.message == other.message
    }
}
impl Eq for CatalogError {}

pub type CatalogResult<T> = std::result::Result<T, CatalogError>;

impl CatalogError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            cause: None,
        }
    }

    /// The same error with a cause for the log (see [`Self::public_message`]).
    pub fn with_cause(mut self, cause: impl std::fmt::Display) -> Self {
        self.cause = Some(cause.to_string());
        self
    }

    /// What the log records beside the message, if anything.
    pub fn cause(&self) -> Option<&str> {
        self.cause.as_deref()
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Code::INVALID_INPUT, message)
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(Code::UNSUPPORTED, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Code::INTERNAL, message)
    }

    /// Classify any Lance error. Errors that already carry a namespace code
    /// keep it; the rest are mapped by kind, so that a client mistake is never
    /// reported as Internal.
    pub fn from_lance(err: &lance::Error) -> Self {
        // The catalog's own error comes back out as it went in: it was
        // classified where it arose, never twice.
        if let Some(own) = Self::own(err) {
            return own;
        }
        let classified = Self::classify_lance(err);
        let settled = match classify::settle(classified.code, &classified.message) {
            Some((code, message)) => Self::new(code, message),
            None => classified,
        };
        // The engine's own words, source locations and all, for the log.
        settled.with_cause(err)
    }

    /// The catalog's own error riding in a Lance error (its codes 10000
    /// and up travel so, see `into_lance`).
    fn own(err: &lance::Error) -> Option<Self> {
        match err {
            lance::Error::Namespace { source, .. } => {
                source.downcast_ref::<CatalogError>().cloned()
            }
            lance::Error::Shared { source } => Self::own(source),
            _ => None,
        }
    }

    fn classify_lance(err: &lance::Error) -> Self {
        use lance::Error as E;
        if let E::Namespace { source, .. } = err {
            if let Some(ns) = source.downcast_ref::<NamespaceError>() {
                return Self::new(Code(ns.code().as_u32()), ns.message());
            }
            return Self::internal(clean_message(&source.to_string()));
        }
        let msg = clean_message(&err.to_string());
        let code = match err {
            E::InvalidInput { .. } | E::Unprocessable { .. } | E::InvalidRef { .. } => {
                Code::INVALID_INPUT
            }
            E::InvalidTableLocation { .. } => Code::INVALID_INPUT,
            E::Arrow { .. } => Code::INVALID_INPUT,
            E::SchemaMismatch { .. } | E::Schema { .. } => Code::SCHEMA_VALIDATION,
            E::FieldNotFound { .. } => Code::TABLE_COLUMN_NOT_FOUND,
            E::DatasetAlreadyExists { .. } => Code::TABLE_ALREADY_EXISTS,
            E::DatasetNotFound { .. } => Code::TABLE_NOT_FOUND,
            E::NotSupported { .. } => Code::UNSUPPORTED,
            E::CommitConflict { .. }
            | E::RetryableCommitConflict { .. }
            | E::IncompatibleTransaction { .. }
            | E::TooMuchWriteContention { .. }
            | E::VersionConflict { .. }
            | E::RefConflict { .. } => Code::CONCURRENT_MODIFICATION,
            E::VersionNotFound { .. } => Code::TABLE_VERSION_NOT_FOUND,
            E::RefNotFound { .. } => Code::TABLE_TAG_NOT_FOUND,
            E::IndexNotFound { .. } => Code::TABLE_INDEX_NOT_FOUND,
            E::Timeout { .. } => Code::SERVICE_UNAVAILABLE,
            E::Backpressure { .. } => Code::THROTTLING,
            E::Shared { source } => return Self::classify_lance(source),
            _ => Code::INTERNAL,
        };
        Self::new(code, msg)
    }

    /// What a caller is shown of this error, on every transport. Internal
    /// errors are logged here, with the request id the caller also gets and
    /// what was asked (`instance`), and shown as a generic message naming
    /// that id: an answer never carries the server's internals. Any other
    /// error with a cause logs it under the same id, so an operator can join
    /// what the caller saw to what the store said.
    pub fn public_message(&self, request_id: &str, instance: &str) -> String {
        let cause = self.cause.as_deref().unwrap_or("");
        if self.code == Code::INTERNAL {
            tracing::error!(request_id, instance, error = %self.message, cause, "internal error");
            format!(
                "internal error while serving this request (request id {request_id}); the server log has the details"
            )
        } else {
            if self.cause.is_some() {
                let code = self.code.name();
                if self.code == Code::SERVICE_UNAVAILABLE {
                    tracing::warn!(request_id, instance, code, error = %self.message, cause, "request failed");
                } else {
                    tracing::debug!(request_id, instance, code, error = %self.message, cause, "request failed");
                }
            }
            redact_roots(&self.message)
        }
    }

    /// The form the `LanceNamespace` trait returns: a namespace error that any
    /// Lance client can downcast to read the code.
    pub fn into_lance(self) -> lance::Error {
        if ErrorCode::from_u32(self.code.0).is_some() {
            NamespaceError::from_code(self.code.0, self.message).into()
        } else {
            // A code Lance does not know (the catalog's 10000 range) rides
            // as the catalog's own error, which `from_lance` reads back.
            lance::Error::namespace_source(Box::new(self))
        }
    }
}

impl From<lance::Error> for CatalogError {
    fn from(err: lance::Error) -> Self {
        Self::from_lance(&err)
    }
}

impl From<CatalogError> for lance::Error {
    fn from(err: CatalogError) -> Self {
        err.into_lance()
    }
}

/// Arrow failures inside the catalog's own processing are internal; request
/// data is decoded (and its errors classified) in `core/data.rs`.
impl From<arrow_schema::ArrowError> for CatalogError {
    fn from(err: arrow_schema::ArrowError) -> Self {
        Self::internal(format!("Arrow: {err}"))
    }
}

/// The storage roots this process serves (every warehouse's), which no
/// answer names: with an S3 root, its bucket and prefix.
static ROOTS: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Keep `root` out of every error a caller is shown (the engine's own
/// messages name full paths). Called as each catalog opens.
pub fn hide_root(root: &str) {
    let trimmed = root.trim_end_matches('/');
    if trimmed.is_empty() {
        return;
    }
    let mut spellings = vec![trimmed.to_string()];
    match trimmed.split_once("://") {
        // A store's messages name `bucket/prefix/key` without the scheme.
        Some((_, rest)) if rest.contains('/') => spellings.push(rest.to_string()),
        Some(_) => {}
        None => spellings.push(format!("file://{trimmed}")),
    }
    // A URI's percent-encoded spelling, as Lance prints locations.
    let encoded = percent_encoding::utf8_percent_encode(trimmed, ROOT_ESCAPES).to_string();
    if encoded != trimmed {
        spellings.push(encoded);
    }
    if let Ok(mut roots) = ROOTS.write() {
        for s in spellings {
            if !roots.contains(&s) {
                roots.push(s);
            }
        }
        // Longest first: `file:///r` before `/r`.
        roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    }
}

const ROOT_ESCAPES: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'$');

/// `msg` with every storage root replaced by `<root>`.
fn redact_roots(msg: &str) -> String {
    let Ok(roots) = ROOTS.read() else {
        return msg.to_string();
    };
    let mut out = msg.to_string();
    for root in roots.iter() {
        out = replace_whole(&out, root);
    }
    out
}

/// `text` with `root` replaced by `<root>` where it stands whole: followed
/// by a separator, a quote, a space or the end (`/data` is not the start
/// of `/database`).
fn replace_whole(text: &str, root: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(root) {
        let after = &rest[i + root.len()..];
        let whole = after
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')));
        out.push_str(&rest[..i]);
        out.push_str(if whole { "<root>" } else { root });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Lance messages carry the source locations that raised them
/// (`, /path/to/file.rs:12:34`), at the end or in the middle; callers need
/// the message, not our internals.
pub fn clean_message(msg: &str) -> String {
    let is_location = |part: &str| {
        let part = part.trim();
        part.contains(".rs:")
            && part
                .rsplit(':')
                .take(2)
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    };
    msg.split(", ")
        .filter(|part| !is_location(part))
        .collect::<Vec<_>>()
        .join(", ")
        .replace(
            "Encountered internal error. Please file a bug report at https://github.com/lance-format/lance/issues. ",
            "",
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_table_matches_every_upstream_code() {
        for n in 0..64u32 {
            let upstream = ErrorCode::from_u32(n);
            let ours = STATUS_TABLE.iter().find(|r| r.0 == n);
            match (upstream, ours) {
                (Some(u), Some(o)) => assert_eq!(u.to_string(), o.1, "name of code {n}"),
                (None, None) => {}
                _ => panic!("code {n}: upstream {upstream:?} vs ours {ours:?}"),
            }
        }
        assert_eq!(STATUS_TABLE.len(), 24);
    }

    #[test]
    fn statuses_follow_the_contract() {
        assert_eq!(Code(1).http_status(), 404);
        assert_eq!(Code(5).http_status(), 409);
        assert_eq!(Code(13).http_status(), 400);
        assert_eq!(Code(0).http_status(), 406);
        assert_eq!(Code(18).http_status(), 500);
        assert_eq!(Code(999).http_status(), 500);
        assert_eq!(Code(4).grpc_status(), 5);
        assert_eq!(Code(5).grpc_status(), 6);
        assert_eq!(Code(14).grpc_status(), 10);
        assert_eq!(Code(0).grpc_status(), 12);
    }

    #[test]
    fn internal_errors_show_only_the_request_id() {
        let e = CatalogError::internal("disk /secret/path on fire");
        let shown = e.public_message("req-42", "/v1/table/t/describe");
        assert!(shown.contains("req-42"), "{shown}");
        assert!(!shown.contains("secret"), "{shown}");
        let e = CatalogError::invalid("bad id");
        assert_eq!(e.public_message("req-42", "/x"), "bad id");
    }

    #[test]
    fn no_answer_names_a_storage_root() {
        hide_root("/srv/lake-test-root/");
        hide_root("s3://bucket-test/prefix");
        for raw in [
            "Not found: /srv/lake-test-root/ab_t/_versions",
            "Dataset at file:///srv/lake-test-root/ab_t was not found",
            "table at s3://bucket-test/prefix/x: denied",
        ] {
            let shown = CatalogError::invalid(raw).public_message("r", "/x");
            assert!(shown.contains("<root>"), "{shown}");
            assert!(
                !shown.contains("lake-test-root") && !shown.contains("bucket-test"),
                "{shown}"
            );
        }
        // Only the root itself, never a longer name that starts alike.
        let shown = CatalogError::invalid("/srv/lake-test-rootless/x").public_message("r", "/x");
        assert_eq!(shown, "/srv/lake-test-rootless/x");
        let shown =
            CatalogError::invalid("key bucket-test/prefix/t/1.manifest").public_message("r", "/x");
        assert_eq!(shown, "key <root>/t/1.manifest");
    }

    #[test]
    fn the_cause_stays_out_of_the_answer() {
        let e = CatalogError::new(
            Code::SERVICE_UNAVAILABLE,
            "cannot read the catalog's records",
        )
        .with_cause("connect to http://10.0.0.7:9000/bucket refused");
        let shown = e.public_message("req-7", "/x");
        assert_eq!(shown, "cannot read the catalog's records");
        assert_eq!(e.to_string(), "cannot read the catalog's records");
        assert!(e.cause().unwrap().contains("10.0.0.7"));
        let engine = lance::Error::invalid_input("bad filter");
        let e = CatalogError::from_lance(&engine);
        assert_eq!(e.code, Code::INVALID_INPUT);
        assert!(e.cause().is_some());
        assert_eq!(e, CatalogError::new(e.code, e.message.clone()));
    }

    #[test]
    fn lance_locations_are_stripped() {
        let m = clean_message("Not found: foo, /root/.cargo/x/src/a.rs:12:34");
        assert_eq!(m, "Not found: foo");
        let m = clean_message(
            "open failed: Not found: t/_versions, /x/commit.rs:653:26, /x/builder.rs:921:29",
        );
        assert_eq!(m, "open failed: Not found: t/_versions");
    }
}
