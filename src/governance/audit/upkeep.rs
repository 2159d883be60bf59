//! Keeping the audit trail small: closed slots' segments merged into
//! chunks, slots past the retention deleted. Any replica may run it at any
//! time; two at once write the same chunk names and delete the same
//! segments.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use sha2::Digest;

use crate::error::CatalogResult;
use crate::governance::audit::store::{AuditStore, Segment, UpkeepReport, SLOT_MS};
use crate::records::unavailable;

/// A slot is merged once this long past its end: writers stamp an event
/// before it is durable, so a slot can still gain a segment for a moment.
const SETTLE_MS: u64 = 60_000;
/// Events per merged chunk: a default page of 100 reads one or two, and
/// parses no more than it must (measured: 1,000-event chunks doubled a
/// page's time).
const CHUNK: usize = 250;
/// Where the next pass starts merging (a hint: a stale one re-walks).
const WATERMARK: &str = "upkeep.json";
/// Present once events older versions kept as records have moved in.
const RECORDS_MOVED: &str = "records-moved.json";

/// A stored line as it is (fields this version does not know are kept),
/// with the two it sorts by.
struct Line {
    id: String,
    at_ms: u64,
    raw: bytes::Bytes,
}

#[derive(serde::Deserialize)]
struct Key {
    event_id: String,
    at_ms: u64,
}

/// When a day, hour or slot directory begins, from its names.
fn start_ms(day: &str, hour: Option<&str>, slot: Option<&str>) -> Option<u64> {
    let date = NaiveDate::parse_from_str(day, "%Y%m%d").ok()?;
    let h: u32 = hour.map_or(Some(0), |h| h.parse().ok())?;
    let (m, tens): (u32, u32) = match slot {
        Some(s) if s.len() == 3 && s.is_ascii() => (s[..2].parse().ok()?, s[2..].parse().ok()?),
        Some(_) => return None,
        None => (0, 0),
    };
    let t = NaiveTime::from_hms_opt(h, m, tens * 10)?;
    let ms = NaiveDateTime::new(date, t).and_utc().timestamp_millis();
    u64::try_from(ms).ok()
}

impl AuditStore {
    /// One pass: delete what ended before `now - retention_ms`, merge the
    /// closed slots since the last pass.
    pub async fn upkeep(&self, now: u64, retention_ms: Option<u64>) -> CatalogResult<UpkeepReport> {
        let mut report = UpkeepReport::default();
        if let Some(keep) = retention_ms {
            report.expired_slots = self.expire(now.saturating_sub(keep)).await?;
        }
        let from = self.watermark().await;
        let closed = now.saturating_sub(SETTLE_MS);
        let mut walk = self.slots_from(from);
        // Everything closed is done unless an open slot stops the walk.
        let mut reached = closed / SLOT_MS * SLOT_MS;
        while let Some(slot) = walk.next().await? {
            let Some(start) = slot_start(&slot) else {
                continue;
            };
            if start + SLOT_MS > closed {
                reached = reached.min(start);
                break;
            }
            if self.merge(&slot).await? {
                report.merged_slots += 1;
            }
        }
        self.set_watermark(reached.max(from)).await;
        Ok(report)
    }

    /// Let the next pass start merging at `ms` again (events moved in).
    pub async fn rewind(&self, ms: u64) {
        if ms < self.watermark().await {
            self.set_watermark(ms).await;
        }
    }

    /// Whether events kept as records have all moved into segments.
    pub async fn records_moved(&self) -> bool {
        let path = self.root.clone().join(RECORDS_MOVED);
        self.store.head(&path).await.is_ok()
    }

    pub async fn set_records_moved(&self) -> CatalogResult<()> {
        let path = self.root.clone().join(RECORDS_MOVED);
        let body = PutPayload::from(crate::records::now_ms().to_string().into_bytes());
        self.store
            .put(&path, body)
            .await
            .map(|_| ())
            .map_err(|e| unavailable("write", e))
    }

    async fn watermark(&self) -> u64 {
        let path = self.root.clone().join(WATERMARK);
        match self.store.get(&path).await {
            Ok(got) => match got.bytes().await {
                Ok(b) => serde_json::from_slice::<u64>(&b).unwrap_or(0),
                Err(_) => 0,
            },
            Err(_) => 0,
        }
    }

    async fn set_watermark(&self, ms: u64) {
        let path = self.root.clone().join(WATERMARK);
        let body = PutPayload::from(ms.to_string().into_bytes());
        if let Err(e) = self.store.put(&path, body).await {
            tracing::warn!(error = %e, "the audit upkeep's watermark was not saved; the next pass re-walks");
        }
    }

    /// Merge a slot's segments into as few chunks as its events need;
    /// false when it already is.
    async fn merge(&self, slot: &Path) -> CatalogResult<bool> {
        let segs = self.segments(slot).await?;
        let total: usize = segs.iter().map(|s| s.count).sum();
        if segs.len() <= total.div_ceil(CHUNK).max(1) {
            return Ok(false);
        }
        let mut lines: Vec<Line> = Vec::with_capacity(total);
        for batch in segs.chunks(16) {
            let futs: Vec<_> = batch.iter().map(|s| self.read_lines(s)).collect();
            for got in futures::future::try_join_all(futs).await? {
                match got {
                    Some(Ok(got)) => lines.extend(got),
                    // Another pass is merging it: leave the slot to that one.
                    None => return Ok(false),
                    // Never rewrite what cannot be read: it stays as it is.
                    Some(Err(why)) => {
                        tracing::warn!(slot = %slot, why = %why, "an audit slot with an unreadable line is not merged");
                        return Ok(false);
                    }
                }
            }
        }
        lines.sort_by(|a, b| a.id.cmp(&b.id));
        lines.dedup_by(|a, b| a.id == b.id);
        let mut kept = Vec::new();
        for chunk in lines.chunks(CHUNK) {
            // Named by content: the same events always make the same name.
            let mut h = sha2::Sha256::new();
            let mut body = Vec::new();
            for l in chunk {
                h.update(l.id.as_bytes());
                body.extend_from_slice(&l.raw);
                body.push(b'\n');
            }
            let digest = h.finalize();
            let tag: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
            let range = (chunk[0].at_ms, chunk[chunk.len() - 1].at_ms);
            kept.push(
                self.put_lines(range, chunk.len(), &format!("c{tag}"), body)
                    .await?,
            );
        }
        let gone: Vec<&Segment> = segs.iter().filter(|s| !kept.contains(&s.path)).collect();
        for s in gone {
            match self.store.delete(&s.path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(unavailable("delete", e)),
            }
        }
        Ok(true)
    }

    /// A segment's lines, or why one cannot be read; `None` when it is
    /// gone.
    async fn read_lines(&self, seg: &Segment) -> CatalogResult<Option<Result<Vec<Line>, String>>> {
        let bytes = match self.store.get(&seg.path).await {
            Ok(got) => got.bytes().await.map_err(|e| unavailable("read", e))?,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(unavailable("read", e)),
        };
        let mut out = Vec::with_capacity(seg.count);
        let mut at = 0;
        for raw in bytes.split(|b| *b == b'\n') {
            let start = at;
            at += raw.len() + 1;
            if raw.is_empty() {
                continue;
            }
            match serde_json::from_slice::<Key>(raw) {
                Ok(k) => out.push(Line {
                    id: k.event_id,
                    at_ms: k.at_ms,
                    raw: bytes.slice(start..start + raw.len()),
                }),
                Err(e) => return Ok(Some(Err(format!("{}: {e}", seg.path)))),
            }
        }
        Ok(Some(Ok(out)))
    }

    /// Delete every slot that ended at or before `cutoff`; how many.
    async fn expire(&self, cutoff: u64) -> CatalogResult<usize> {
        let mut expired = 0;
        for day in self.children(&self.root).await? {
            let Some(day_start) = start_ms(&day, None, None) else {
                continue;
            };
            if day_start >= cutoff {
                break;
            }
            let day_dir = self.root.clone().join(day.as_str());
            for hour in self.children(&day_dir).await? {
                let Some(hour_start) = start_ms(&day, Some(&hour), None) else {
                    continue;
                };
                if hour_start >= cutoff {
                    break;
                }
                let hour_dir = day_dir.clone().join(hour.as_str());
                for slot in self.children(&hour_dir).await? {
                    let Some(s) = start_ms(&day, Some(&hour), Some(&slot)) else {
                        continue;
                    };
                    if s + SLOT_MS > cutoff {
                        break;
                    }
                    self.delete_all(&hour_dir.clone().join(slot.as_str()))
                        .await?;
                    expired += 1;
                }
            }
        }
        Ok(expired)
    }

    async fn delete_all(&self, dir: &Path) -> CatalogResult<usize> {
        let listed: Vec<_> = self
            .store
            .list(Some(dir))
            .try_collect()
            .await
            .map_err(|e| unavailable("list", e))?;
        let n = listed.len();
        for o in listed {
            match self.store.delete(&o.location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(unavailable("delete", e)),
            }
        }
        Ok(n)
    }
}

/// A slot directory's start, from its last three path segments.
fn slot_start(slot: &Path) -> Option<u64> {
    let parts: Vec<_> = slot.parts().collect();
    let n = parts.len();
    if n < 3 {
        return None;
    }
    start_ms(
        parts[n - 3].as_ref(),
        Some(parts[n - 2].as_ref()),
        Some(parts[n - 1].as_ref()),
    )
}
