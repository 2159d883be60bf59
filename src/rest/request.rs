//! Turning an HTTP request into a spec request model: the id from the path,
//! query parameters, the JSON body, identity and context from headers.
//! Parsing only: every rule about what the values mean lives in the core.

use axum::http::{header, HeaderMap};

pub(super) use crate::transport::headers::apply_headers;
use serde_json::{Map, Value};

use super::problem::Problem;
use crate::api::Kind;

/// The raw query string, decoded, keeping repeated keys (merge-insert's `on`).
pub(super) struct Query(pub Vec<(String, String)>);

impl Query {
    pub(super) fn parse(raw: Option<&str>) -> Self {
        Self(
            raw.map(|q| {
                url::form_urlencoded::parse(q.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default(),
        )
    }

    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn all(&self, key: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// The id delimiter: `?delimiter=`, `$` by default.
    pub(super) fn delimiter(&self, instance: &str) -> Result<String, Problem> {
        match self.get("delimiter") {
            None => Ok("$".to_string()),
            Some("") => Err(Problem::invalid("delimiter must not be empty", instance)),
            Some(d) => Ok(d.to_string()),
        }
    }

    /// The maintenance API's delimiter: absent or empty is `$`; it may be
    /// several characters but none of `/`, `:` or `-`.
    pub(super) fn oss_delimiter(&self, instance: &str) -> Result<String, Problem> {
        match self.get("delimiter") {
            None | Some("") => Ok("$".to_string()),
            Some(d) if d.contains(['/', ':', '-']) => Err(Problem::invalid(
                format!("delimiter {d:?} may not contain '/', ':' or '-'"),
                instance,
            )),
            Some(d) => Ok(d.to_string()),
        }
    }
}

/// Split a path id into segments; the delimiter alone is the root.
pub(super) fn split_id(raw: &str, delimiter: &str) -> Vec<String> {
    if raw == delimiter {
        return Vec::new();
    }
    raw.split(delimiter).map(str::to_string).collect()
}

/// Copy the operation's query parameters into the request object, typed.
pub(super) fn apply_query(
    params: &[(&str, Kind)],
    query: &Query,
    obj: &mut Map<String, Value>,
    instance: &str,
) -> Result<(), Problem> {
    for (key, kind) in params {
        let value = match kind {
            Kind::List => {
                let all = query.all(key);
                if all.is_empty() {
                    continue;
                }
                // Spec 0.11.1 sends one comma-free value, client 0.13.0
                // repeats the key; both arrive here as a list.
                Value::from(all)
            }
            Kind::Context => {
                let Some(raw) = query.get(key) else { continue };
                let ctx = obj
                    .entry("context")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(ctx) = ctx {
                    // The core names it (`core::reserved`, e.g. FORCE).
                    let name = format!("{}{key}", crate::core::reserved::RESERVED_PREFIX);
                    ctx.insert(name, Value::from(raw));
                }
                continue;
            }
            _ => {
                let Some(raw) = query.get(key) else { continue };
                typed(key, *kind, raw).map_err(|m| Problem::invalid(m, instance))?
            }
        };
        obj.insert((*key).to_string(), value);
    }
    Ok(())
}

fn typed(key: &str, kind: Kind, raw: &str) -> Result<Value, String> {
    match kind {
        Kind::Str | Kind::List | Kind::Context => Ok(Value::from(raw)),
        Kind::Bool => match raw.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!("query parameter {key}={raw:?} is not a boolean")),
        },
        Kind::Int => raw
            .parse::<i64>()
            .ok()
            .filter(|n| i32::try_from(*n).is_ok())
            .map(Value::from)
            .ok_or_else(|| format!("query parameter {key}={raw:?} is not a 32-bit integer")),
        Kind::JsonMap => {
            let v: Value = serde_json::from_str(raw)
                .map_err(|e| format!("query parameter {key} is not valid JSON: {e}"))?;
            match &v {
                Value::Object(m) if m.values().all(Value::is_string) => Ok(v),
                _ => Err(format!(
                    "query parameter {key} must be a JSON object of string values"
                )),
            }
        }
    }
}

/// Parse a JSON body into an object; an empty body and `null` are `{}`:
/// Lance's clients send either for a request whose model has no required
/// field (lancedb's `version/list`).
pub(super) fn json_body(
    headers: &HeaderMap,
    body: &[u8],
    instance: &str,
) -> Result<Map<String, Value>, Problem> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    if let Some(ct) = content_type(headers) {
        if !(ct.is_empty() || ct == "application/json" || ct.ends_with("+json")) {
            return Err(Problem::invalid(
                format!(
                    "this operation takes a JSON body (Content-Type: application/json), not {ct}"
                ),
                instance,
            ));
        }
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(_) => Err(Problem::invalid(
            "the JSON body must be an object",
            instance,
        )),
        Err(e) => Err(Problem::invalid(
            format!("malformed JSON body: {e}"),
            instance,
        )),
    }
}

/// The digest a `Content-MD5` header (RFC 1864: the base64 MD5 of the
/// body) promises, when one is sent.
pub(super) fn content_md5(headers: &HeaderMap, instance: &str) -> Result<Option<Vec<u8>>, Problem> {
    use base64::Engine;
    let Some(sent) = headers.get("content-md5") else {
        return Ok(None);
    };
    let sent = sent.to_str().unwrap_or("").trim();
    base64::engine::general_purpose::STANDARD
        .decode(sent)
        .ok()
        .filter(|d| d.len() == 16)
        .map(Some)
        .ok_or_else(|| {
            Problem::invalid(
                format!("Content-MD5 {sent:?} is not the base64 of a 16-byte MD5 digest"),
                instance,
            )
        })
}

pub(super) fn md5_mismatch(instance: &str) -> Problem {
    Problem::invalid(
        "Content-MD5 does not match the request body; the body was not accepted",
        instance,
    )
}

/// Check a `Content-MD5` header against a whole body, when one is sent.
pub(super) fn check_content_md5(
    headers: &HeaderMap,
    body: &[u8],
    instance: &str,
) -> Result<(), Problem> {
    use md5::Digest;
    match content_md5(headers, instance)? {
        Some(sent) if md5::Md5::digest(body).as_slice() != sent.as_slice() => {
            Err(md5_mismatch(instance))
        }
        _ => Ok(()),
    }
}

/// Check an Arrow body's content type: an IPC stream, octet-stream or none.
pub(super) fn check_arrow_content_type(headers: &HeaderMap, instance: &str) -> Result<(), Problem> {
    match content_type(headers).as_deref() {
        None
        | Some("")
        | Some("application/vnd.apache.arrow.stream")
        | Some("application/octet-stream") => Ok(()),
        Some(ct) => Err(Problem::invalid(
            format!(
                "this operation takes an Arrow IPC stream body (Content-Type: application/vnd.apache.arrow.stream), not {ct}"
            ),
            instance,
        )),
    }
}

fn content_type(headers: &HeaderMap) -> Option<String> {
    headers.get(header::CONTENT_TYPE).map(|v| {
        v.to_str()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    })
}

/// Put the path id into the request, refusing a body id that disagrees.
pub(super) fn set_id(
    obj: &mut Map<String, Value>,
    key: &str,
    value: Value,
    instance: &str,
) -> Result<(), Problem> {
    match obj.get(key) {
        Some(existing) if !existing.is_null() && *existing != value => Err(Problem::invalid(
            format!("the body's {key} {existing} disagrees with the path's {value}"),
            instance,
        )),
        _ => {
            obj.insert(key.to_string(), value);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_nested_ids() {
        assert!(split_id("$", "$").is_empty());
        assert_eq!(split_id("a$b", "$"), vec!["a", "b"]);
        assert_eq!(split_id("a.b", "."), vec!["a", "b"]);
        assert_eq!(split_id("a$$b", "$"), vec!["a", "", "b"]);
    }

    #[test]
    fn repeated_on_is_a_list() {
        let q = Query::parse(Some("on=a&on=b&delimiter=%24"));
        let mut m = Map::new();
        apply_query(&[("on", Kind::List)], &q, &mut m, "/").unwrap();
        assert_eq!(m["on"], serde_json::json!(["a", "b"]));
        assert_eq!(q.delimiter("/").unwrap(), "$");
    }

    #[test]
    fn bad_query_values_are_invalid_input() {
        let q = Query::parse(Some("limit=ten"));
        let mut m = Map::new();
        let e = apply_query(&[("limit", Kind::Int)], &q, &mut m, "/").unwrap_err();
        assert_eq!(e.error.code.0, 13);
    }
}
