//! Settling errors the storage engine reports as Internal although the
//! caller made the mistake. The engine wraps many Lance failures into
//! `NamespaceError::Internal` with the inner error's debug text (a bad
//! filter, an index on the wrong column type, a missing dataset); a client
//! mistake must never answer 500, so those texts are read back here.
//! Only Internal errors are looked at, and only recognised shapes change:
//! anything else stays Internal.

use crate::error::Code;

/// A better code for an engine error's text, when it has one: Internal
/// errors that show the caller's mistake, and TableNotFound answers that
/// are really about a missing branch or version of an existing table.
pub(super) fn settle(code: Code, msg: &str) -> Option<(Code, String)> {
    match code {
        Code::INTERNAL => settle_internal(msg),
        Code::INVALID_INPUT if names_missing_column(&msg.to_ascii_lowercase()) => {
            Some((Code::TABLE_COLUMN_NOT_FOUND, clean(msg)))
        }
        Code::TABLE_NOT_FOUND => {
            let lower = msg.to_ascii_lowercase();
            if lower.starts_with("branch '") && lower.contains("' not found") {
                Some((Code::TABLE_BRANCH_NOT_FOUND, super::clean_message(msg)))
            } else if lower.contains(".manifest was not found") {
                Some((Code::TABLE_VERSION_NOT_FOUND, clean(msg)))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The spec code and a cleaned message for an Internal error's text, when
/// the text shows the caller's mistake.
fn settle_internal(msg: &str) -> Option<(Code, String)> {
    let lower = msg.to_ascii_lowercase();
    // The catalog's own manifest failing is the server's fault, whatever
    // the inner error says.
    if [
        "__manifest",
        "overwrite manifest",
        "from manifest",
        "into manifest",
        "to manifest",
    ]
    .iter()
    .any(|p| lower.contains(p))
    {
        return None;
    }
    let cleaned = || clean(msg);
    // A version that does not exist (restore, checkout of version N).
    if lower.contains(".manifest was not found") || lower.contains("version not found") {
        return Some((Code::TABLE_VERSION_NOT_FOUND, cleaned()));
    }
    // A branch to start from that does not exist.
    if lower.contains("branch operation failed")
        && lower.contains("/tree/")
        && lower.contains("not found")
    {
        return Some((Code::TABLE_BRANCH_NOT_FOUND, cleaned()));
    }
    // A recorded table whose location holds no dataset.
    if lower.contains("failed to open dataset") && lower.contains("was not found") {
        return Some((
            Code::TABLE_NOT_FOUND,
            format!("the table's location holds no Lance dataset: {}", cleaned()),
        ));
    }
    if names_missing_column(&lower) {
        return Some((Code::TABLE_COLUMN_NOT_FOUND, cleaned()));
    }
    let invalid = [
        "invalidinput {",
        "invalid user input",
        "duplicate field name",
        "field  not found",
        "file name too long",
        "illegal character sequence",
        "cannot drop all columns",
        "error parsing statement",
    ];
    if invalid.iter().any(|p| lower.contains(p)) {
        return Some((Code::INVALID_INPUT, cleaned()));
    }
    None
}

/// Whether a (lower-cased) engine text says a named column does not exist.
fn names_missing_column(lower: &str) -> bool {
    lower.contains("fieldnotfound")
        || lower.contains("no field named")
        || lower.contains("does not exist in the dataset schema")
        || (lower.contains("column") && lower.contains("does not exist in schema"))
        || (lower.contains("column") && lower.contains("does not exist in dataset schema"))
}

/// The human part of a Lance error's debug text: the `source: "..."` string
/// when there is one, without locations, backtraces or schema dumps.
fn clean(msg: &str) -> String {
    let mut out = match quoted_source(msg) {
        Some(source) => {
            let prefix = msg.split("InvalidInput {").next().unwrap_or("").trim();
            if prefix.is_empty() {
                source
            } else {
                format!("{prefix} {source}")
            }
        }
        None => msg.to_string(),
    };
    // A schema dump after the message (`... in schema:\n Schema { ...`,
    // an update's `... in dataset schema: Schema { ...`).
    for dump in [" in schema:", " in dataset schema:"] {
        if let Some(i) = out.find(dump) {
            out.truncate(i);
        }
    }
    for cut in [
        ", location: Location",
        " location: Location",
        ", backtrace:",
    ] {
        if let Some(i) = out.find(cut) {
            out.truncate(i);
        }
    }
    out = out
        .replace("Schema { message: \"", "")
        .replace("\\\"", "\"");
    if let Some(field) = field_not_found(msg) {
        out = format!("column {field:?} does not exist");
    }
    super::clean_message(out.trim())
}

/// The string in `source: "..."`, unescaped.
fn quoted_source(msg: &str) -> Option<String> {
    let start = msg.find("source: \"")? + "source: \"".len();
    let mut out = String::new();
    let mut chars = msg[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '"' => return Some(out),
            c => out.push(c),
        }
    }
    None
}

/// The column in DataFusion's `FieldNotFound { field: Column { ..., name: "x" }`.
fn field_not_found(msg: &str) -> Option<String> {
    let at = msg.find("FieldNotFound { field: Column {")?;
    let rest = &msg[at..];
    let start = rest.find("name: \"")? + "name: \"".len();
    let end = rest[start..].find('"')?;
    Some(rest[start..start + end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_texts_settle_to_spec_codes() {
        let (c, m) = settle_internal(r#"add_columns: InvalidInput { source: "Expression is not valid: 1 +", location: Location { file: "/x/sql.rs", line: 76, column: 13 }, backtrace: MaybeBacktrace }"#).unwrap();
        assert_eq!(c, Code::INVALID_INPUT);
        assert_eq!(m, "add_columns: Expression is not valid: 1 +");
        let (c, m) = settle_internal(r#"Failed to execute query: InvalidInput { source: SchemaError(FieldNotFound { field: Column { relation: None, name: "nope" }, valid_fields: [] }, Some("")), location: Location { file: "/x/projection.rs", line: 428, column: 21 }"#).unwrap();
        assert_eq!(c, Code::TABLE_COLUMN_NOT_FOUND);
        assert_eq!(m, "column \"nope\" does not exist");
        let (c, _) = settle_internal("Failed to checkout version 0 for restore at 'file:///t': Dataset at path t/_versions/0.manifest was not found: Not found: t/_versions/0.manifest").unwrap();
        assert_eq!(c, Code::TABLE_VERSION_NOT_FOUND);
        let (c, _) = settle_internal("LanceError(IO): Failed to open dataset: Dataset at path t was not found: Not found: t/_versions").unwrap();
        assert_eq!(c, Code::TABLE_NOT_FOUND);
        let (c, m) = settle_internal("alter_columns: Schema { message: \"Duplicate field name \\\"a\\\" in schema:\\n Schema {\\n fields: [").unwrap();
        assert_eq!(c, Code::INVALID_INPUT);
        assert!(!m.contains("fields"), "{m}");
        assert!(settle_internal("disk on fire").is_none());
        assert!(
            settle_internal(r#"Failed to overwrite manifest: InvalidInput { source: "x" }"#)
                .is_none()
        );
        let (c, _) = settle(
            Code::TABLE_NOT_FOUND,
            "branch 'nope' not found for table at 'file:///t': Not found: t/tree/nope/_versions",
        )
        .unwrap();
        assert_eq!(c, Code::TABLE_BRANCH_NOT_FOUND);
        assert!(settle(Code::TABLE_NOT_FOUND, "table 'a$b' does not exist").is_none());
    }
}
