//! Arrow payloads: every stream is decoded and checked by the core before
//! the engine sees it, so a bad body is a clear InvalidInput (13) and never
//! reaches storage half-read.

use arrow::ipc::writer::StreamWriter;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;

use crate::error::{CatalogError, CatalogResult};

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
