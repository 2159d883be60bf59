//! Arrow IPC framing for streamed answers.

use arrow::ipc::reader::FileReader;
use arrow::ipc::writer::StreamWriter;
use bytes::Bytes;

use crate::error::{CatalogError, CatalogResult};

/// Re-frame an Arrow IPC file as IPC stream chunks: the first carries the
/// schema, then one chunk per record batch, then the end-of-stream marker.
/// Concatenated, the chunks are one valid IPC stream.
pub fn file_to_stream_chunks(file: &[u8]) -> CatalogResult<Vec<Bytes>> {
    let reader = FileReader::try_new(std::io::Cursor::new(file), None)
        .map_err(|e| CatalogError::internal(format!("query answer is not an Arrow file: {e}")))?;
    let schema = reader.schema();
    let mut writer = StreamWriter::try_new(Vec::new(), &schema)?;
    let mut chunks = Vec::new();
    let mut taken = 0;
    let cut = |buf: &Vec<u8>, taken: &mut usize, chunks: &mut Vec<Bytes>| {
        if buf.len() > *taken {
            chunks.push(Bytes::copy_from_slice(&buf[*taken..]));
            *taken = buf.len();
        }
    };
    cut(writer.get_ref(), &mut taken, &mut chunks);
    for batch in reader {
        writer.write(&batch?)?;
        cut(writer.get_ref(), &mut taken, &mut chunks);
    }
    writer.finish()?;
    cut(writer.get_ref(), &mut taken, &mut chunks);
    Ok(chunks)
}
