//! A keyed request's data body, as its record compares it: a digest of
//! the bytes a body read whole had, or of a streamed body's bytes as the
//! write reads them. A retry of a streamed write whose first sending
//! answered is read to its end (and written nowhere) to compare it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt};
use sha2::{Digest, Sha256};

use crate::error::CatalogResult;

/// A request's data body, for its key's record.
#[derive(Clone, Default)]
pub(in crate::governance) enum Body {
    /// None: the request is all there is.
    #[default]
    None,
    /// Read whole: its digest.
    Whole(String),
    /// Streamed: digested as it is read.
    Streamed(Arc<dyn Drain>),
}

impl Body {
    /// A body read whole.
    pub(in crate::governance) fn whole(bytes: &[u8]) -> Body {
        Body::Whole(super::hex(&Sha256::digest(bytes)))
    }

    /// The digest known before anything is read.
    pub(super) fn known(&self) -> Option<String> {
        match self {
            Body::Whole(d) => Some(d.clone()),
            _ => None,
        }
    }

    /// The body's digest, reading what is still unread of a stream
    /// (a replayed write's, never handed to a writer).
    pub(super) async fn digest(&self) -> CatalogResult<Option<String>> {
        match self {
            Body::None => Ok(None),
            Body::Whole(d) => Ok(Some(d.clone())),
            Body::Streamed(s) => {
                s.drain().await?;
                Ok(s.tap().digest())
            }
        }
    }
}

/// The digest of a stream's bytes, fed by whoever reads the raw body.
#[derive(Default)]
pub struct Tap {
    hasher: Mutex<Sha256>,
    ended: AtomicBool,
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap")
            .field("ended", &self.ended.load(Ordering::SeqCst))
            .finish()
    }
}

impl Tap {
    pub fn feed(&self, bytes: &[u8]) {
        if let Ok(mut h) = self.hasher.lock() {
            h.update(bytes);
        }
    }

    /// The body ended: every byte was fed.
    pub fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
    }

    /// The digest, once the whole body was read.
    fn digest(&self) -> Option<String> {
        if !self.ended.load(Ordering::SeqCst) {
            return None;
        }
        let h = self.hasher.lock().ok()?.clone();
        Some(super::hex(&h.finalize()))
    }
}

/// A streamed body that can be read to its end for its digest.
#[async_trait::async_trait]
pub(in crate::governance) trait Drain: Send + Sync {
    fn tap(&self) -> &Tap;
    /// Read what is left (nothing, once a writer took the stream).
    async fn drain(&self) -> CatalogResult<()>;
}

/// A stream of a body's items whose raw bytes feed `tap`: handed to the
/// writer, or, for a replay, drained.
pub struct StreamedBody<S> {
    tap: Arc<Tap>,
    stream: Mutex<Option<S>>,
}

impl<S> std::fmt::Debug for StreamedBody<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamedBody")
            .field("tap", &self.tap)
            .finish()
    }
}

impl<S> StreamedBody<S> {
    pub fn new(tap: Arc<Tap>, stream: S) -> Arc<Self> {
        Arc::new(StreamedBody {
            tap,
            stream: Mutex::new(Some(stream)),
        })
    }

    /// The stream, for the writer (once).
    pub fn take(&self) -> Option<S> {
        self.stream.lock().ok()?.take()
    }
}

#[async_trait::async_trait]
impl<S, T> Drain for StreamedBody<S>
where
    S: Stream<Item = CatalogResult<T>> + Send + Unpin + 'static,
    T: Send,
{
    fn tap(&self) -> &Tap {
        &self.tap
    }

    async fn drain(&self) -> CatalogResult<()> {
        let Some(mut stream) = self.take() else {
            return Ok(());
        };
        while let Some(item) = stream.next().await {
            item?;
        }
        Ok(())
    }
}

/// A byte stream that feeds `tap` as it is read, and ends it at its end.
pub(in crate::governance) fn tapped<S>(
    tap: Arc<Tap>,
    bytes: S,
) -> impl Stream<Item = CatalogResult<bytes::Bytes>>
where
    S: Stream<Item = CatalogResult<bytes::Bytes>>,
{
    let end = tap.clone();
    bytes
        .map(move |chunk| {
            if let Ok(b) = &chunk {
                tap.feed(b);
            }
            chunk
        })
        .chain(futures::stream::poll_fn(move |_| {
            end.end();
            std::task::Poll::Ready(None)
        }))
}
