//! Answers encoded as Arrow IPC batch by batch, as the scan yields them:
//! an IPC file (REST's query answer, as the engine's) or an IPC stream
//! (gRPC's streamed query), each chunk sent before the next batch is read.

use arrow::ipc::writer::{FileWriter, StreamWriter};
use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;

use crate::core::data::rows::Chunks;
use crate::error::{CatalogError, CatalogResult};

/// An Arrow IPC writer into memory, emptied after every batch.
trait Encoder: Send + 'static {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError>;
    fn finish(&mut self) -> Result<(), ArrowError>;
    /// What was written since the last take.
    fn take(&mut self) -> Bytes;
}

macro_rules! encoder {
    ($writer:ident) => {
        impl Encoder for $writer<Vec<u8>> {
            fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
                $writer::write(self, batch)
            }
            fn finish(&mut self) -> Result<(), ArrowError> {
                $writer::finish(self)
            }
            fn take(&mut self) -> Bytes {
                Bytes::from(std::mem::take(self.get_mut()))
            }
        }
    };
}
encoder!(FileWriter);
encoder!(StreamWriter);

/// How an answer is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// An IPC file (REST's query answer, as the engine answers).
    File,
    /// An IPC stream (gRPC's streamed query).
    Stream,
}

impl Framing {
    /// `batches` framed so, chunk by chunk.
    pub fn encode(
        self,
        schema: SchemaRef,
        batches: BoxStream<'static, CatalogResult<RecordBatch>>,
    ) -> Chunks {
        match self {
            Framing::File => ipc_file(schema, batches),
            Framing::Stream => ipc_stream(schema, batches),
        }
    }
}

fn encode_error(e: ArrowError) -> CatalogError {
    CatalogError::internal(format!("cannot encode the Arrow answer: {e}"))
}

/// Encode batches as an Arrow IPC file, one chunk per batch as it comes:
/// the header with the first, the footer (which indexes every batch) at
/// the end. A scan that yields nothing answers one empty batch, as the
/// engine's query does.
pub fn ipc_file(
    schema: SchemaRef,
    batches: BoxStream<'static, CatalogResult<RecordBatch>>,
) -> Chunks {
    let writer = FileWriter::try_new(Vec::new(), &schema);
    encode(schema, batches, writer)
}

/// Encode batches as an Arrow IPC stream: the schema with the first chunk,
/// a chunk per batch, the end-of-stream marker last; concatenated, the
/// chunks are one valid IPC stream.
pub fn ipc_stream(
    schema: SchemaRef,
    batches: BoxStream<'static, CatalogResult<RecordBatch>>,
) -> Chunks {
    let writer = StreamWriter::try_new(Vec::new(), &schema);
    encode(schema, batches, writer)
}

fn encode<W: Encoder>(
    schema: SchemaRef,
    batches: BoxStream<'static, CatalogResult<RecordBatch>>,
    writer: Result<W, ArrowError>,
) -> Chunks {
    let state = (Some(writer.map_err(encode_error)), batches, false);
    futures::stream::unfold(state, move |(writer, mut batches, wrote)| {
        let schema = schema.clone();
        async move {
            let mut w = match writer? {
                Ok(w) => w,
                Err(e) => return Some((Err(e), (None, batches, wrote))),
            };
            let step = match batches.next().await {
                Some(Ok(batch)) => w.write(&batch),
                Some(Err(e)) => return Some((Err(e), (None, batches, wrote))),
                None => {
                    let empty = match wrote {
                        true => Ok(()),
                        false => w.write(&RecordBatch::new_empty(schema)),
                    };
                    return match empty.and_then(|()| w.finish()) {
                        Ok(()) => Some((Ok(w.take()), (None, batches, true))),
                        Err(e) => Some((Err(encode_error(e)), (None, batches, wrote))),
                    };
                }
            };
            match step {
                Ok(()) => {
                    let chunk = w.take();
                    Some((Ok(chunk), (Some(Ok(w)), batches, true)))
                }
                Err(e) => Some((Err(encode_error(e)), (None, batches, wrote))),
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;
    use std::sync::Arc;

    fn batch(rows: &[i64]) -> RecordBatch {
        RecordBatch::try_from_iter([(
            "id",
            Arc::new(Int64Array::from(rows.to_vec())) as arrow_array::ArrayRef,
        )])
        .unwrap()
    }

    #[tokio::test]
    async fn a_stream_answer_is_one_ipc_stream_chunk_by_chunk() {
        let batches = vec![batch(&[1, 2]), batch(&[3])];
        let schema = batches[0].schema();
        let source = futures::stream::iter(batches.into_iter().map(Ok)).boxed();
        let chunks: Vec<Bytes> = ipc_stream(schema, source)
            .map(Result::unwrap)
            .collect()
            .await;
        // The schema with the first batch, the second, the end marker.
        assert_eq!(chunks.len(), 3);
        let whole: Vec<u8> = chunks.concat();
        let reader =
            arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(whole), None).unwrap();
        let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows, 3);
    }
}
