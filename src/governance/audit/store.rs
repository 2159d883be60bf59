//! Where the audit trail lives: time-ordered segments of JSON lines on the
//! control root, `audit/<day>/<hour>/<slot>/<segment>.jsonl`, one slot per
//! 10 seconds. A page is one listing of the slot it starts in and the reads
//! of the few segments that hold its events, whatever the trail's length.
//!
//! - **Group commit**: a request's event is durable before its answer
//!   leaves. Events recorded while a segment is being written wait and go
//!   out together in the next one, so a busy replica writes one object per
//!   batch, not per event.
//! - **Names carry the range**: `<first_ms>-<last_ms>-<count>-<tag>.jsonl`,
//!   so a reader skips, without reading, segments that end before its page
//!   starts. A segment never spans two slots (a batch is split at slot
//!   boundaries), so slots in order give events in order.
//! - **Upkeep** (every minute, any replica): a closed slot's segments are
//!   merged into chunks of 250 events named by their content (two
//!   replicas merging the same slot write the same names), and slots past
//!   the retention are deleted. Readers drop duplicate ids and re-list a
//!   slot whose segment vanished under them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use chrono::{Datelike, TimeZone, Timelike};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use tokio::sync::oneshot;

use crate::api::audit::Event;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::unavailable;

/// Milliseconds a slot covers.
pub(in crate::governance) const SLOT_MS: u64 = 10_000;
/// Segments read at once.
const READS: usize = 16;

/// Where a time falls: `<yyyymmdd>/<hh>/<mmS>` (S: tens of seconds).
pub(in crate::governance) fn slot_key(ms: u64) -> (String, String, String) {
    let t = chrono::Utc
        .timestamp_millis_opt(ms.min(i64::MAX as u64) as i64)
        .single()
        .unwrap_or_default();
    (
        format!("{:04}{:02}{:02}", t.year(), t.month(), t.day()),
        format!("{:02}", t.hour()),
        format!("{:02}{}", t.minute(), t.second() / 10),
    )
}

/// A segment's name, parsed: its range and its event count.
#[derive(Debug, Clone)]
pub(in crate::governance) struct Segment {
    pub(in crate::governance) path: Path,
    pub(in crate::governance) first_ms: u64,
    pub(in crate::governance) last_ms: u64,
    pub(in crate::governance) count: usize,
}

impl Segment {
    fn parse(path: Path) -> Option<Self> {
        let name = path.filename()?.strip_suffix(".jsonl")?.to_string();
        let mut parts = name.splitn(4, '-');
        let first_ms = parts.next()?.parse().ok()?;
        let last_ms = parts.next()?.parse().ok()?;
        let count = parts.next()?.parse().ok()?;
        parts.next()?;
        Some(Self {
            path,
            first_ms,
            last_ms,
            count,
        })
    }
}

/// Answered with the stored event's id (stamped when its batch is written).
type Waiter = oneshot::Sender<Result<(String, u64), String>>;

/// The audit trail of one control root.
pub struct AuditStore {
    pub(in crate::governance) store: Arc<dyn ObjectStore>,
    pub(in crate::governance) root: Path,
    /// This process's tag in segment names (with `seq`, unique per store).
    writer: String,
    seq: AtomicU64,
    pending: std::sync::Mutex<Vec<(Event, Waiter)>>,
    /// Held by the request writing the current batch.
    flushing: tokio::sync::Mutex<()>,
    /// Since when upkeep passes found no event records to move in.
    quiet_since: std::sync::Mutex<Option<std::time::Instant>>,
}

impl std::fmt::Debug for AuditStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditStore")
            .field("root", &self.root)
            .finish()
    }
}

/// Which events a page holds: ids at or after `from`, after `after`.
#[derive(Debug, Clone, Default)]
pub(in crate::governance) struct Position {
    pub from: String,
    pub after: Option<String>,
}

impl Position {
    fn admits(&self, id: &str) -> bool {
        id >= self.from.as_str() && self.after.as_deref().is_none_or(|a| id > a)
    }

    /// The earliest time an admitted event can carry.
    fn start_ms(&self) -> u64 {
        let ms = |id: &str| id.get(..13).and_then(|s| s.parse::<u64>().ok());
        ms(&self.from)
            .unwrap_or(0)
            .max(self.after.as_deref().and_then(ms).unwrap_or(0))
    }
}

/// What an upkeep pass did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct UpkeepReport {
    pub merged_slots: usize,
    pub expired_slots: usize,
}

impl AuditStore {
    pub fn new(store: Arc<dyn ObjectStore>, root: Path) -> Self {
        Self {
            store,
            root,
            writer: uuid::Uuid::new_v4().simple().to_string()[..10].to_string(),
            seq: AtomicU64::new(0),
            pending: Default::default(),
            flushing: Default::default(),
            quiet_since: Default::default(),
        }
    }

    /// How long passes have found nothing to move in (zero when this one
    /// moved something).
    pub(in crate::governance) fn quiet_for(&self, moved: bool) -> std::time::Duration {
        let mut q = self.quiet_since.lock().unwrap_or_else(|e| e.into_inner());
        if moved {
            *q = None;
            return std::time::Duration::ZERO;
        }
        q.get_or_insert_with(std::time::Instant::now).elapsed()
    }

    /// Store one event; answers its id and time once it is durable. The
    /// time is when its batch is written, so ids sort in the order events
    /// became durable, give or take one write (what the sink's delay
    /// covers).
    pub(in crate::governance) async fn append(
        &self,
        event: Event,
    ) -> Result<(String, u64), String> {
        let (tx, mut rx) = oneshot::channel();
        self.pending
            .lock()
            .map_err(|_| "the audit queue is poisoned".to_string())?
            .push((event, tx));
        let turn = self.flushing.lock().await;
        // The writer before us may have taken our event with its batch.
        if let Ok(done) = rx.try_recv() {
            return done;
        }
        let batch = std::mem::take(
            &mut *self
                .pending
                .lock()
                .map_err(|_| "the audit queue is poisoned".to_string())?,
        );
        if !batch.is_empty() {
            let at_ms = crate::records::now_ms();
            let (mut events, waiters): (Vec<Event>, Vec<Waiter>) = batch.into_iter().unzip();
            for e in &mut events {
                let suffix = e.event_id.get(14..).unwrap_or_default().to_string();
                e.at_ms = at_ms;
                e.event_id = format!("{at_ms:013}-{suffix}");
            }
            let ids: Vec<String> = events.iter().map(|e| e.event_id.clone()).collect();
            events.sort_by(|a, b| a.event_id.cmp(&b.event_id));
            let tag = format!(
                "w{}{:08}",
                self.writer,
                self.seq.fetch_add(1, Ordering::Relaxed)
            );
            // Written and answered by a task of its own: the request that
            // took the batch may be cancelled (its client gone) and must
            // not take the others' events with it.
            let (store, root) = (self.store.clone(), self.root.clone());
            let write = tokio::spawn(async move {
                let outcome = write_events(&store, &root, &events, &tag)
                    .await
                    .map(|_| ())
                    .map_err(|e| match e.cause() {
                        Some(c) => format!("{}: {c}", e.message),
                        None => e.message.clone(),
                    });
                for (w, id) in waiters.into_iter().zip(ids) {
                    let _ = w.send(outcome.clone().map(|()| (id, at_ms)));
                }
            });
            let _ = write.await;
        }
        drop(turn);
        rx.await
            .unwrap_or_else(|_| Err("the audit batch was lost".to_string()))
    }

    /// One segment of raw lines, sorted, of one slot, named by `range`
    /// (first and last ms) and their count.
    pub(in crate::governance) async fn put_lines(
        &self,
        range: (u64, u64),
        count: usize,
        tag: &str,
        body: Vec<u8>,
    ) -> CatalogResult<Path> {
        put_segment(&self.store, &self.root, range, count, tag, body).await
    }

    /// Store events as they are, in one segment per slot (events kept
    /// before segments, and benchmarks' fills).
    pub async fn import(&self, mut events: Vec<Event>) -> CatalogResult<()> {
        events.sort_by(|a, b| a.event_id.cmp(&b.event_id));
        let tag = format!(
            "m{}{:08}",
            self.writer,
            self.seq.fetch_add(1, Ordering::Relaxed)
        );
        write_events(&self.store, &self.root, &events, &tag)
            .await
            .map(|_| ())
    }

    /// Names one level below `dir`, sorted.
    pub(in crate::governance) async fn children(&self, dir: &Path) -> CatalogResult<Vec<String>> {
        let listed = self
            .store
            .list_with_delimiter(Some(dir))
            .await
            .map_err(|e| unavailable("list", e))?;
        let mut names: Vec<String> = listed
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Every slot at or after `ms`, in time order, listed a level at a
    /// time as the walk reaches it.
    pub(in crate::governance) fn slots_from(&self, ms: u64) -> SlotWalk<'_> {
        SlotWalk {
            store: self,
            start: slot_key(ms),
            days: None,
            hours: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// A slot's segments, by first event.
    pub(in crate::governance) async fn segments(&self, slot: &Path) -> CatalogResult<Vec<Segment>> {
        let listed = self
            .store
            .list_with_delimiter(Some(slot))
            .await
            .map_err(|e| unavailable("list", e))?;
        let mut segs: Vec<Segment> = listed
            .objects
            .into_iter()
            .filter_map(|o| Segment::parse(o.location))
            .collect();
        segs.sort_by_key(|s| (s.first_ms, s.last_ms));
        Ok(segs)
    }

    /// A segment's events; `None` when it is gone (merged away).
    pub(in crate::governance) async fn read(
        &self,
        seg: &Segment,
    ) -> CatalogResult<Option<Vec<Event>>> {
        let bytes = match self.store.get(&seg.path).await {
            Ok(got) => got.bytes().await.map_err(|e| unavailable("read", e))?,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(unavailable("read", e)),
        };
        let mut events = Vec::with_capacity(seg.count);
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            match serde_json::from_slice::<Event>(line) {
                Ok(e) => events.push(e),
                Err(e) => {
                    tracing::warn!(segment = %seg.path, error = %e, "an unreadable audit line is skipped")
                }
            }
        }
        Ok(Some(events))
    }

    /// Up to `limit` events of one slot that `pos` admits, oldest first,
    /// reading only the segments that can hold them.
    async fn slot_page(
        &self,
        slot: &Path,
        pos: &Position,
        limit: usize,
    ) -> CatalogResult<Vec<Event>> {
        let start = pos.start_ms();
        'listing: for _ in 0..4 {
            let segs: Vec<Segment> = self
                .segments(slot)
                .await?
                .into_iter()
                .filter(|s| s.last_ms >= start)
                .collect();
            let mut got: Vec<Event> = Vec::new();
            let mut i = 0;
            while i < segs.len() {
                // Enough once `limit` events are in hand that no unread
                // segment can precede (same millisecond: it can).
                if limit == 0 || (got.len() >= limit && segs[i].first_ms > got[limit - 1].at_ms) {
                    break;
                }
                // As many segments as can hold what is still wanted.
                let mut end = i;
                let mut holds = 0;
                let wanted = limit.saturating_sub(got.len()).max(1);
                while end < segs.len() && end - i < READS && holds < wanted {
                    holds += segs[end].count;
                    end += 1;
                }
                let reads: Vec<_> = segs[i..end].iter().map(|s| self.read(s)).collect();
                let reads = futures::future::try_join_all(reads).await?;
                for events in reads {
                    let Some(events) = events else {
                        continue 'listing;
                    };
                    got.extend(events.into_iter().filter(|e| pos.admits(&e.event_id)));
                }
                got.sort_by(|a, b| a.event_id.cmp(&b.event_id));
                got.dedup_by(|a, b| a.event_id == b.event_id);
                i = end;
            }
            got.truncate(limit);
            return Ok(got);
        }
        Err(CatalogError::new(
            Code::SERVICE_UNAVAILABLE,
            "the audit trail is being reorganised under this page; try again",
        ))
    }

    /// Events `pos` admits, oldest first, at most `limit`; and whether more
    /// follow.
    pub(in crate::governance) async fn page(
        &self,
        pos: &Position,
        limit: usize,
    ) -> CatalogResult<(Vec<Event>, bool)> {
        let mut out = Vec::new();
        let mut walk = self.slots_from(pos.start_ms());
        while let Some(slot) = walk.next().await? {
            let want = limit + 1 - out.len();
            out.extend(self.slot_page(&slot, pos, want).await?);
            if out.len() > limit {
                break;
            }
        }
        let more = out.len() > limit;
        out.truncate(limit);
        Ok((out, more))
    }
}

/// Write sorted `events` as one segment per slot they fall in.
async fn write_events(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    events: &[Event],
    tag: &str,
) -> CatalogResult<Vec<Path>> {
    let mut written = Vec::new();
    for group in events.chunk_by(|a, b| a.at_ms / SLOT_MS == b.at_ms / SLOT_MS) {
        written.push(write_segment(store, root, group, tag).await?);
    }
    Ok(written)
}

async fn write_segment(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    events: &[Event],
    tag: &str,
) -> CatalogResult<Path> {
    let range = (events[0].at_ms, events[events.len() - 1].at_ms);
    let mut body = Vec::with_capacity(events.len() * 256);
    for e in events {
        serde_json::to_writer(&mut body, e)
            .map_err(|e| CatalogError::internal(format!("an audit event: {e}")))?;
        body.push(b'\n');
    }
    put_segment(store, root, range, events.len(), tag, body).await
}

/// Store one segment. An existing name is the same content (names are
/// unique per writer, or name their content).
async fn put_segment(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    (first, last): (u64, u64),
    count: usize,
    tag: &str,
    body: Vec<u8>,
) -> CatalogResult<Path> {
    let (day, hour, slot) = slot_key(first);
    let path = root
        .clone()
        .join(day)
        .join(hour)
        .join(slot)
        .join(format!("{first:013}-{last:013}-{count:06}-{tag}.jsonl"));
    let opts = PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    match store.put_opts(&path, PutPayload::from(body), opts).await {
        Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(path),
        Err(e) => Err(unavailable("write", e)),
    }
}

/// A walk over slot directories in time order from a start slot.
pub(in crate::governance) struct SlotWalk<'a> {
    store: &'a AuditStore,
    start: (String, String, String),
    /// Days not yet entered (reversed: next at the end); `None` before the
    /// first listing.
    days: Option<Vec<String>>,
    /// The current day's hours not yet entered, as (day, hour), reversed.
    hours: Vec<(String, String)>,
    /// The current hour's slots not yet visited, reversed.
    slots: Vec<Path>,
}

impl SlotWalk<'_> {
    pub(in crate::governance) async fn next(&mut self) -> CatalogResult<Option<Path>> {
        let root = self.store.root.clone();
        let (d0, h0, s0) = self.start.clone();
        if self.days.is_none() {
            let mut days: Vec<String> = self
                .store
                .children(&root)
                .await?
                .into_iter()
                .filter(|d| *d >= d0)
                .collect();
            days.reverse();
            self.days = Some(days);
        }
        loop {
            if let Some(slot) = self.slots.pop() {
                return Ok(Some(slot));
            }
            if let Some((day, hour)) = self.hours.pop() {
                let dir = root.clone().join(day.as_str()).join(hour.as_str());
                let first = day == d0 && hour == h0;
                let mut slots: Vec<Path> = self
                    .store
                    .children(&dir)
                    .await?
                    .into_iter()
                    .filter(|s| !first || *s >= s0)
                    .map(|s| dir.clone().join(s.as_str()))
                    .collect();
                slots.reverse();
                self.slots = slots;
                continue;
            }
            let Some(day) = self.days.as_mut().and_then(Vec::pop) else {
                return Ok(None);
            };
            let dir = root.clone().join(day.as_str());
            let mut hours: Vec<(String, String)> = self
                .store
                .children(&dir)
                .await?
                .into_iter()
                .filter(|h| day != d0 || *h >= h0)
                .map(|h| (day.clone(), h))
                .collect();
            hours.reverse();
            self.hours = hours;
        }
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
