//! Arrow payloads: every stream is decoded and checked by the core before
//! the engine sees it, so a bad body is a clear InvalidInput (13) and never
//! reaches storage half-read.

use arrow::ipc::writer::StreamWriter;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;

use crate::error::{CatalogError, CatalogResult, Code};

/// A decoded Arrow IPC stream.
pub(crate) struct Stream {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

/// Encode batches as an Arrow IPC stream. A stream with no batches gets one
/// empty batch, so the engine sees the schema and creates an empty table (the
/// spec's meaning of a zero-batch create).
pub(crate) fn encode_stream(stream: &Stream) -> CatalogResult<Bytes> {
    let mut out = Vec::new();
    {
        let mut w = StreamWriter::try_new(&mut out, &stream.schema)
            .map_err(|e| CatalogError::internal(format!("cannot encode Arrow stream: {e}")))?;
        if stream.batches.is_empty() {
            w.write(&RecordBatch::new_empty(stream.schema.clone()))
                .map_err(|e| CatalogError::internal(format!("cannot encode Arrow stream: {e}")))?;
        }
        for b in &stream.batches {
            w.write(b)
                .map_err(|e| CatalogError::internal(format!("cannot encode Arrow stream: {e}")))?;
        }
        w.finish()
            .map_err(|e| CatalogError::internal(format!("cannot encode Arrow stream: {e}")))?;
    }
    Ok(Bytes::from(out))
}

/// Normalise a mode string: the spec says modes are case-insensitive, in
/// PascalCase or snake_case (`ExistOk`, `exist_ok`, `EXIST_OK`). Returns the
/// matching entry of `allowed` (written in snake_case).
pub(crate) fn parse_mode<'a>(
    value: Option<&str>,
    allowed: &[&'a str],
    default: &'a str,
    what: &str,
) -> CatalogResult<&'a str> {
    let Some(raw) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(default);
    };
    let squash = |s: &str| s.replace('_', "").to_ascii_lowercase();
    let wanted = squash(raw);
    allowed
        .iter()
        .find(|a| squash(a) == wanted)
        .copied()
        .ok_or_else(|| {
            CatalogError::invalid(format!(
                "{what} mode {raw:?} is not one of {}",
                allowed.join(", ")
            ))
        })
}

/// The merge-insert `on` columns, checked against the incoming data's
/// schema: at least one, none twice, each present (12 otherwise).
pub(crate) fn merge_on_columns(
    on: Option<Vec<String>>,
    schema: &arrow_schema::Schema,
) -> CatalogResult<Vec<String>> {
    let on: Vec<String> = on
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect();
    if on.is_empty() {
        return Err(CatalogError::invalid(
            "merge_insert needs at least one `on` column to match rows by",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = on.iter().find(|c| !seen.insert(c.as_str())) {
        return Err(CatalogError::invalid(format!(
            "merge_insert `on` names column {dup:?} twice"
        )));
    }
    if let Some(missing) = on.iter().find(|c| schema.field_with_name(c).is_err()) {
        return Err(CatalogError::new(
            Code::TABLE_COLUMN_NOT_FOUND,
            format!("merge_insert `on` column {missing:?} is not in the data's schema"),
        ));
    }
    Ok(on)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_case_insensitive() {
        let allowed = ["create", "exist_ok", "overwrite"];
        for v in ["ExistOk", "exist_ok", "EXIST_OK", "existok"] {
            assert_eq!(
                parse_mode(Some(v), &allowed, "create", "x").unwrap(),
                "exist_ok"
            );
        }
        assert_eq!(parse_mode(None, &allowed, "create", "x").unwrap(), "create");
        assert!(parse_mode(Some("bogus"), &allowed, "create", "x").is_err());
    }
}
