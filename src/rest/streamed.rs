//! The data routes whose bodies stream, when the gateway serves the
//! catalog's governance: create and insert hand the core the Arrow body as
//! it arrives (it is decoded into Lance's writer batch by batch), and query
//! answers its Arrow file as the scan produces it. A router over another
//! namespace reads bodies whole (`mod.rs`).

use crate::api::{op, OpDef};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use futures::StreamExt;
use md5::Digest;
use serde_json::{Map, Value};

use super::problem::Problem;
use super::request::md5_mismatch;
use crate::core::data::rows::{run_ahead, Chunks};
use crate::error::CatalogError;
use crate::governance::Governance;
use crate::transport::dispatch::{json, model, Reply};

/// Why a streamed body could not be read (too large, stalled, cut, or not
/// what its Content-MD5 says), kept so that the answer has its own status.
#[derive(Clone, Default)]
pub(super) struct BodyFailure(Arc<Mutex<Option<Problem>>>);

impl BodyFailure {
    fn set(&self, problem: Problem) -> CatalogError {
        let err = problem.error.clone();
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(problem);
        }
        err
    }

    /// The body's own failure, which explains the core's error.
    pub(super) fn take(&self) -> Option<Problem> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

struct Reading {
    data: axum::body::BodyDataStream,
    seen: usize,
    limit: usize,
    md5: Option<(md5::Md5, Vec<u8>)>,
    instance: String,
}

impl Reading {
    /// The next chunk; `None` at the end; an error ends the body.
    async fn next(&mut self) -> Option<Result<bytes::Bytes, Problem>> {
        let failed = match self.data.next().await {
            Some(Ok(chunk)) => {
                self.seen += chunk.len();
                if self.seen <= self.limit {
                    if let Some((hasher, _)) = self.md5.as_mut() {
                        hasher.update(&chunk);
                    }
                    return Some(Ok(chunk));
                }
                super::too_large_problem(self.limit, &self.instance)
            }
            Some(Err(e)) => super::body_problem(&e, self.limit, &self.instance),
            None => match self.md5.take() {
                Some((hasher, sent)) => match hasher.finalize().as_slice() == sent.as_slice() {
                    true => return None,
                    false => md5_mismatch(&self.instance),
                },
                None => return None,
            },
        };
        Some(Err(failed))
    }
}

/// How many chunks the body reader keeps ahead of the decoder.
const CHUNKS_AHEAD: usize = 8;

/// The request body as chunks, counted against `limit` and checked
/// against the Content-MD5 digest `md5` at its end: a mismatch fails the
/// stream before it ends, so the writer commits nothing. The body is read
/// on its own task, which drains what the core does not read (an early
/// refusal), so that the client, still sending, gets the answer and not
/// a reset connection.
pub(super) fn body_chunks(
    body: Body,
    limit: usize,
    md5: Option<Vec<u8>>,
    instance: &str,
) -> (Chunks, BodyFailure) {
    let failure = BodyFailure::default();
    let mut reading = Reading {
        data: body.into_data_stream(),
        seen: 0,
        limit,
        md5: md5.map(|sent| (md5::Md5::new(), sent)),
        instance: instance.to_string(),
    };
    let (tx, rx) = tokio::sync::mpsc::channel(CHUNKS_AHEAD);
    let slot = failure.clone();
    tokio::spawn(async move {
        let mut listening = true;
        while let Some(item) = reading.next().await {
            let item = item.map_err(|problem| slot.set(problem));
            let failed = item.is_err();
            if listening && tx.send(item).await.is_err() {
                listening = false;
            }
            if failed {
                break;
            }
        }
    });
    let chunks = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    (chunks.boxed(), failure)
}

/// Run a streamed operation through the governance layer.
pub(super) async fn run(
    gov: &Governance,
    row: &OpDef,
    obj: Map<String, Value>,
    body: Chunks,
) -> Result<Reply, CatalogError> {
    Ok(if *row == op::CreateTable {
        Reply::Json(json(gov.create_table_streamed(model(obj)?, body).await?)?)
    } else if *row == op::InsertIntoTable {
        Reply::Json(json(gov.insert_streamed(model(obj)?, body).await?)?)
    } else {
        let framing = crate::core::data::ipc_out::Framing::File;
        Reply::ArrowStream(gov.query_streamed(model(obj)?, framing).await?)
    })
}

/// How many answer chunks (one record batch each) the scan runs ahead of
/// the socket.
const ANSWER_CHUNKS_AHEAD: usize = 4;

/// An answer body from chunks, produced on their own task: an HTTP/1
/// connection polls its body and writes its socket on one task, so without
/// it the scan and the encoding would wait for each write (HTTP/2, as
/// Flight's, already polls bodies apart). A failure after the first byte
/// can only cut the answer short (the client's reader then reports a
/// truncated file); it is logged and counted.
pub(super) fn answer_body(chunks: Chunks) -> Body {
    let chunks = run_ahead(chunks, ANSWER_CHUNKS_AHEAD);
    Body::from_stream(chunks.map(|chunk| {
        chunk.map_err(|e| {
            crate::telemetry::note_error(e.code);
            tracing::warn!(code = e.code.0, error = %e.message, "a streamed answer failed after it started");
            std::io::Error::other(e.message)
        })
    }))
}
