//! SQL text from requests (filters, predicates, expressions) checked
//! before it reaches Lance: Lance 14's SQL planner handles numbers,
//! quoted strings, hex, booleans and null as literals and panics (a
//! `todo!()`) on any other literal, e.g. a `$1` or `?` placeholder, `N'…'`,
//! `B'…'`, `E'…'` or `$$…$$`. Such text is refused as invalid input here.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{visit_expressions, Expr, Statement, Value as SqlValue};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
use serde_json::Value;

use crate::error::{CatalogError, CatalogResult};

/// Request fields that carry SQL (their strings, and the strings inside
/// their lists and maps). `updates` is special: its pairs are
/// `[column, expression]` and only the expression is SQL.
const SQL_FIELDS: [&str; 8] = [
    "filter",
    "predicate",
    "when_matched_update_all_filt",
    "when_not_matched_by_source_delete_filt",
    "expression",
    "computed",
    "where",
    "column_aliases",
];

/// Refuse `text` when it holds a literal Lance cannot plan.
pub(crate) fn check_sql(field: &str, text: &str) -> CatalogResult<()> {
    // Text that does not tokenize is left to Lance, which refuses it
    // with its own message.
    let Ok(mut tokens) = Tokenizer::new(&GenericDialect {}, text).tokenize() else {
        return Ok(());
    };
    let unsupported = tokens
        .iter()
        .find_map(unsupported_token)
        .or_else(|| unsupported_value(&mut tokens));
    match unsupported {
        None => Ok(()),
        Some(what) => Err(CatalogError::invalid(format!(
            "{field} {text:?} uses {what}, which Lance's SQL does not support; write literals as numbers, 'strings', X'hex', true/false or null"
        ))),
    }
}

/// A token that can only make a literal Lance cannot plan.
fn unsupported_token(t: &Token) -> Option<String> {
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
        | Token::TripleDoubleQuotedByteStringLiteral(_) => "a byte string literal (B'…')".into(),
        Token::SingleQuotedRawStringLiteral(_)
        | Token::DoubleQuotedRawStringLiteral(_)
        | Token::TripleSingleQuotedRawStringLiteral(_)
        | Token::TripleDoubleQuotedRawStringLiteral(_) => "a raw string literal".into(),
        Token::TripleSingleQuotedString(_)
        | Token::TripleDoubleQuotedString(_)
        | Token::QuoteDelimitedStringLiteral(_) => "a triple-quoted string".into(),
        _ => return None,
    })
}

/// A literal the parser builds from several tokens (`:name` is a
/// placeholder) that Lance cannot plan: the text is parsed as Lance parses
/// it (as a WHERE clause, else as a SELECT item) and every value visited.
/// Lance plans numbers, quoted strings, hex, booleans and null.
fn unsupported_value(tokens: &mut [Token]) -> Option<String> {
    // Lance reads `==` as `=` (for PyArrow-style filters).
    for t in tokens.iter_mut() {
        if *t == Token::DoubleEq {
            *t = Token::Eq;
        }
    }
    let parse = |before: &str, after: &str| -> Option<Statement> {
        let dialect = GenericDialect {};
        let mut all = Tokenizer::new(&dialect, before).tokenize().ok()?;
        all.push(Token::Whitespace(
            datafusion::sql::sqlparser::tokenizer::Whitespace::Space,
        ));
        all.extend(tokens.iter().cloned());
        all.extend(Tokenizer::new(&dialect, after).tokenize().ok()?);
        Parser::new(&dialect)
            .with_tokens(all)
            .parse_statement()
            .ok()
    };
    let statement = parse("SELECT 1 FROM t WHERE", "").or_else(|| parse("SELECT", " FROM t"))?;
    let mut found = None;
    let _ = visit_expressions(&statement, |e: &Expr| {
        if let Expr::Value(v) = e {
            match &v.value {
                SqlValue::Number(..)
                | SqlValue::SingleQuotedString(_)
                | SqlValue::DoubleQuotedString(_)
                | SqlValue::HexStringLiteral(_)
                | SqlValue::Boolean(_)
                | SqlValue::Null => {}
                other => {
                    found = Some(format!("the literal {other}"));
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    found
}

/// Check every SQL-bearing field of a request (see [`SQL_FIELDS`]).
pub(crate) fn check_request<T: serde::Serialize>(request: &T) -> CatalogResult<()> {
    match serde_json::to_value(request) {
        Ok(v) => walk(&v, None),
        Err(_) => Ok(()),
    }
}

fn walk(value: &Value, field: Option<&str>) -> CatalogResult<()> {
    if field == Some("updates") {
        // [[column, expression], ...]: only the expressions are SQL.
        for pair in value.as_array().into_iter().flatten() {
            if let Some(Value::String(expr)) = pair.get(1) {
                check_sql("update expression", expr)?;
            }
        }
        return Ok(());
    }
    match value {
        Value::String(s) => match field {
            Some(f) => check_sql(f, s),
            None => Ok(()),
        },
        Value::Array(items) => items.iter().try_for_each(|v| walk(v, field)),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            let inner = field.or_else(|| {
                SQL_FIELDS
                    .iter()
                    .copied()
                    .chain(["updates"])
                    .find(|f| f == k)
            });
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
        let req = serde_json::json!({"id": ["$1"], "updates": [["$price", "c + 1"]]});
        assert!(check_request(&req).is_ok());
        let req = serde_json::json!({"updates": [["c", "c + :x"]]});
        assert!(check_request(&req).is_err());
        let req = serde_json::json!({"new_columns": [{"name": "c", "computed": "id + $1"}]});
        assert!(check_request(&req).is_err());
    }
}
