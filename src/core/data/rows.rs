//! Arrow bodies as streams. An IPC stream body is decoded as its bytes
//! arrive and its batches flow on to Lance's writer, and a query answer is
//! encoded batch by batch (`ipc_out.rs`), so neither a write nor a read holds
//! a whole body in memory. A body that is not Arrow, or breaks off, is a
//! clear InvalidInput (13), and since the writer sees the error before the
//! stream ends, nothing is committed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow::ipc::reader::StreamDecoder;
use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};
use bytes::Bytes;
use datafusion::error::DataFusionError;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};

use crate::core::body::Stream;
use crate::error::{CatalogError, CatalogResult};

/// A body as it arrives: chunks of bytes, or why the body could not be read.
pub type Chunks = BoxStream<'static, CatalogResult<Bytes>>;

/// Record batches with their schema, as they are decoded.
pub struct Rows {
    pub schema: SchemaRef,
    pub batches: BoxStream<'static, CatalogResult<RecordBatch>>,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// The decoding state of one body.
struct Decoding {
    chunks: Chunks,
    decoder: StreamDecoder,
    pending: arrow::buffer::Buffer,
    op: &'static str,
    /// Bytes seen so far (an empty body has its own message).
    seen: usize,
    /// The stream's end-of-stream marker was read: the rest is drained.
    finished: bool,
    /// The body ended, or failed.
    ended: bool,
}

impl Decoding {
    fn not_arrow(&self, e: ArrowError) -> CatalogError {
        match self.decoder.schema() {
            None => CatalogError::invalid(format!(
                "{}: the body is not an Arrow IPC stream ({e})",
                self.op
            )),
            Some(_) => CatalogError::invalid(format!(
                "{}: the Arrow IPC stream is truncated or corrupt ({e})",
                self.op
            )),
        }
    }

    /// The next batch, or `None` at the body's end.
    async fn next_batch(&mut self) -> CatalogResult<Option<RecordBatch>> {
        loop {
            if !self.pending.is_empty() && !self.finished {
                match self.decoder.decode(&mut self.pending) {
                    Ok(Some(batch)) => return Ok(Some(batch)),
                    Ok(None) => {}
                    // Bytes after the end-of-stream marker are ignored, as
                    // Arrow's own stream reader ignores them.
                    Err(e) if e.to_string().contains("Unexpected EOS") => self.finished = true,
                    Err(e) => return Err(self.fail(self.not_arrow(e))),
                }
                continue;
            }
            if self.ended {
                return Ok(None);
            }
            match self.chunks.next().await {
                Some(Ok(chunk)) => {
                    self.seen += chunk.len();
                    self.pending = arrow::buffer::Buffer::from(chunk);
                }
                Some(Err(e)) => return Err(self.fail(e)),
                None => {
                    self.ended = true;
                    if self.seen == 0 {
                        return Err(CatalogError::invalid(format!(
                            "{} needs an Arrow IPC stream body (Content-Type: application/vnd.apache.arrow.stream); the body is empty",
                            self.op
                        )));
                    }
                    if let Err(e) = self.decoder.finish() {
                        return Err(self.not_arrow(e));
                    }
                    return Ok(None);
                }
            }
        }
    }

    fn fail(&mut self, e: CatalogError) -> CatalogError {
        self.ended = true;
        self.pending = arrow::buffer::Buffer::from(Vec::<u8>::new());
        e
    }
}

impl Rows {
    /// Decode an Arrow IPC stream body as it arrives. Answers once the
    /// schema and the first batch (if any) are read; later batches are
    /// decoded as the consumer pulls them.
    pub async fn decode(chunks: Chunks, op: &'static str) -> CatalogResult<Rows> {
        let mut state = Decoding {
            chunks,
            decoder: StreamDecoder::new(),
            pending: arrow::buffer::Buffer::from(Vec::<u8>::new()),
            op,
            seen: 0,
            finished: false,
            ended: false,
        };
        let first = state.next_batch().await?;
        let schema = state.decoder.schema().ok_or_else(|| {
            CatalogError::invalid(format!(
                "{op}: the body is not an Arrow IPC stream (it ends before its schema)"
            ))
        })?;
        if schema.fields().is_empty() {
            return Err(CatalogError::invalid(format!(
                "{op}: the Arrow stream's schema has no columns"
            )));
        }
        let rest = futures::stream::unfold(Some(state), |state| async move {
            let mut state = state?;
            match state.next_batch().await {
                Ok(Some(batch)) => Some((Ok(batch), Some(state))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        });
        let batches = futures::stream::iter(first.map(Ok)).chain(rest).boxed();
        Ok(Rows { schema, batches })
    }

    /// Decode a whole body held in memory (gRPC and in-process callers).
    pub async fn from_bytes(body: Bytes, op: &'static str) -> CatalogResult<Rows> {
        let chunks = futures::stream::iter((!body.is_empty()).then_some(Ok(body)));
        Self::decode(chunks.boxed(), op).await
    }

    /// All batches, in memory (for the paths that need the whole input).
    pub(crate) async fn collect(self) -> CatalogResult<Stream> {
        let batches = self.batches.try_collect().await?;
        Ok(Stream {
            schema: self.schema,
            batches,
        })
    }

    /// Re-encoded as one IPC stream, for the engine's own write paths.
    pub(crate) async fn into_bytes(self) -> CatalogResult<Bytes> {
        crate::core::body::encode_stream(&self.collect().await?)
    }

    /// The batches as Lance's writers take them, pulled on their own task
    /// (see [`read_ahead`]). Errors are wrapped as Lance errors so that
    /// Lance hands them back unchanged and their code (13 for a corrupt
    /// body) survives.
    pub(crate) fn into_source(self) -> SendableRecordBatchStream {
        let batches = self
            .batches
            .map_err(|e| DataFusionError::External(Box::new(e.into_lance())));
        read_ahead(Box::pin(RecordBatchStreamAdapter::new(
            self.schema,
            batches,
        )))
    }

    /// A stream with no batches gets one empty batch, so that a create
    /// writes the schema (the spec's meaning of a zero-batch create).
    pub fn or_empty_batch(self) -> Rows {
        let seen = Arc::new(AtomicBool::new(false));
        let mark = seen.clone();
        let schema = self.schema.clone();
        let batches = self
            .batches
            .inspect(move |_| mark.store(true, Ordering::Relaxed))
            .chain(futures::stream::iter([()]).filter_map(move |()| {
                let empty = (!seen.load(Ordering::Relaxed))
                    .then(|| Ok(RecordBatch::new_empty(schema.clone())));
                async move { empty }
            }))
            .boxed();
        Rows {
            schema: self.schema,
            batches,
        }
    }
}

/// How many decoded batches wait ahead of Lance's writer. Decoding the
/// incoming stream (Flight messages into record batches) runs on its own task
/// so that it overlaps with Lance's encoding; the bound keeps memory at a few
/// batches however long the stream.
pub(crate) const READ_AHEAD_BATCHES: usize = 2;

/// Pull `source` on its own task, at most [`READ_AHEAD_BATCHES`] ahead.
fn read_ahead(source: SendableRecordBatchStream) -> SendableRecordBatchStream {
    let schema = source.schema();
    let batches = run_ahead(source.boxed(), READ_AHEAD_BATCHES);
    Box::pin(RecordBatchStreamAdapter::new(schema, batches))
}

/// Pull `source` on its own task, at most `ahead` items before the
/// consumer, so that producing (decoding a body, scanning and encoding an
/// answer) overlaps with consuming (Lance's writer, the socket). The first
/// error ends the stream. When the consumer goes away the channel closes
/// and the task drops the source, which cancels it (an upload, a scan).
pub fn run_ahead<T, E>(
    source: BoxStream<'static, Result<T, E>>,
    ahead: usize,
) -> BoxStream<'static, Result<T, E>>
where
    T: Send + 'static,
    E: Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(ahead.max(1));
    tokio::spawn(async move {
        let mut source = source;
        while let Some(item) = source.next().await {
            let failed = item.is_err();
            if tx.send(item).await.is_err() || failed {
                break;
            }
        }
    });
    futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
    .boxed()
}

/// A whole answer in memory, for callers that take one (gRPC, in-process).
pub async fn gather(mut chunks: Chunks) -> CatalogResult<Bytes> {
    let mut out = Vec::new();
    while let Some(chunk) = chunks.next().await {
        out.extend_from_slice(&chunk?);
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;

    fn body(rows: &[i64]) -> Bytes {
        let batch = RecordBatch::try_from_iter([(
            "id",
            Arc::new(Int64Array::from(rows.to_vec())) as arrow_array::ArrayRef,
        )])
        .unwrap();
        crate::core::body::encode_stream(&Stream {
            schema: batch.schema(),
            batches: vec![batch],
        })
        .unwrap()
    }

    #[tokio::test]
    async fn a_body_split_anywhere_decodes_whole() {
        let whole = body(&[1, 2, 3, 4, 5]);
        for size in [1, 3, 7, 64, whole.len()] {
            let chunks: Vec<CatalogResult<Bytes>> = whole
                .chunks(size)
                .map(|c| Ok(Bytes::copy_from_slice(c)))
                .collect();
            let rows = Rows::decode(futures::stream::iter(chunks).boxed(), "insert")
                .await
                .unwrap();
            let got: Vec<RecordBatch> = rows.batches.try_collect().await.unwrap();
            assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 5);
        }
    }

    #[tokio::test]
    async fn a_cut_body_is_invalid_input() {
        let whole = body(&[1, 2, 3]);
        let cut = whole.slice(..whole.len() - 12);
        let rows = Rows::from_bytes(cut, "insert").await;
        let err = match rows {
            Err(e) => e,
            Ok(rows) => rows.batches.try_collect::<Vec<_>>().await.unwrap_err(),
        };
        assert_eq!(err.code.0, 13, "{}", err.message);
        let err = Rows::from_bytes(Bytes::new(), "insert").await.unwrap_err();
        assert!(err.message.contains("empty"), "{}", err.message);
        let err = Rows::from_bytes(Bytes::from_static(b"not arrow at all"), "insert")
            .await
            .unwrap_err();
        assert_eq!(err.code.0, 13);
    }

    #[tokio::test]
    async fn the_file_answer_reads_back() {
        let rows = Rows::from_bytes(body(&[7, 8, 9]), "query").await.unwrap();
        let file = gather(crate::core::data::ipc_out::ipc_file(
            rows.schema,
            rows.batches,
        ))
        .await
        .unwrap();
        let reader =
            arrow::ipc::reader::FileReader::try_new(std::io::Cursor::new(file.to_vec()), None)
                .unwrap();
        let n: usize = reader.map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(n, 3);
    }
}
