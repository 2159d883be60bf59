//! SQL text from requests (filters, predicates, expressions) checked
//! before it reaches Lance: Lance 14's SQL planner handles numbers,
//! quoted strings, hex, booleans and null as literals and panics (a
//! `todo!()`) on any other literal, e.g. a `$1` or `?` placeholder, `N'…'`,
//! `B'…'`, `E'…'` or `$$…$$`. Such text is refused as invalid input here.

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
use serde_json::Value;

use crate::error::{CatalogError, CatalogResult};

/// Request fields that carry SQL (their strings, and the strings inside
/// their lists and maps).
const SQL_FIELDS: [&str; 7] = [
    "filter",
    "predicate",
    "when_matched_update_all_filt",
    "when_not_matched_by_source_delete_filt",
    "expression",
    "updates",
    "column_aliases",
];

/// Refuse `text` when it holds a literal Lance cannot plan.
pub(crate) fn check_sql(field: &str, text: &str) -> CatalogResult<()> {
    // Text that does not tokenize is left to Lance, which refuses it
    // with its own message.
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, text).tokenize() else {
        return Ok(());
    };
    let unsupported = tokens.iter().find_map(|t| {
        Some(match t {
            Token::Placeholder(p) => format!("the placeholder {p}"),
            Token::DollarQuotedString(_) => "a dollar-quoted string".into(),
            Token::NationalStringLiteral(_) | Token::NationalQuoteDelimitedStringLiteral(_) => {
                "a national string literal (N'…')".into()
            }
            Token::EscapedStringLiteral(_) => "an escaped string literal (E'…')".into(),
            Token::UnicodeStringLiteral(_) => "a unicode string literal (U&'…')".into(),
            Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_) => {
                "a byte string literal (B'…')".into()
            }
            Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_) => "a raw string literal".into(),
            Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::QuoteDelimitedStringLiteral(_) => "a triple-quoted string".into(),
            _ => return None,
        })
    });
    match unsupported {
        None => Ok(()),
        Some(what) => Err(CatalogError::invalid(format!(
            "{field} {text:?} uses {what}, which Lance's SQL does not support; write literals as numbers, 'strings', X'hex', true/false or null"
        ))),
    }
}

/// Check every SQL-bearing field of a request (see [`SQL_FIELDS`]).
pub(crate) fn check_request<T: serde::Serialize>(request: &T) -> CatalogResult<()> {
    match serde_json::to_value(request) {
        Ok(v) => walk(&v, None),
        Err(_) => Ok(()),
    }
}

fn walk(value: &Value, field: Option<&str>) -> CatalogResult<()> {
    match value {
        Value::String(s) => match field {
            Some(f) => check_sql(f, s),
            None => Ok(()),
        },
        Value::Array(items) => items.iter().try_for_each(|v| walk(v, field)),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            let inner = field.or_else(|| SQL_FIELDS.iter().copied().find(|f| f == k));
            walk(v, inner)
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_lance_cannot_plan_are_refused() {
        for bad in [
            "$1 = 1",
            "id = ?",
            "s = N'a'",
            "b = B'01'",
            "s = E'x'",
            "s = $$a$$",
            "$a",
        ] {
            assert!(check_sql("filter", bad).is_err(), "{bad}");
        }
        for good in [
            "id > 1",
            "s = 'a$1?'",
            "x IS NULL",
            "b = X'0f'",
            "id IN (1, 2)",
            "\"c\" = 1",
        ] {
            assert!(check_sql("filter", good).is_ok(), "{good}");
        }
    }

    #[test]
    fn nested_fields_are_walked() {
        let req = serde_json::json!({"id": ["$1"], "columns": {"column_aliases": {"a": "$1"}}});
        assert!(check_request(&req).is_err());
        let req = serde_json::json!({"id": ["$1"], "updates": [["c", "c + 1"]]});
        assert!(check_request(&req).is_ok());
    }
}
