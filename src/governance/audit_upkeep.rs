//! Keeping the audit trail small: closed slots' segments merged into
//! chunks, slots past the retention deleted. Any replica may run it at any
//! time; two at once write the same chunk names and delete the same
//! segments.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use sha2::Digest;

use super::audit_store::{AuditStore, Segment, UpkeepReport, SLOT_MS};
use crate::api::audit::Event;
use crate::error::CatalogResult;
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

/// When a day, hour or slot directory begins, from its names.
fn start_ms(day: &str, hour: Option<&str>, slot: Option<&str>) -> Option<u64> {
    let date = NaiveDate::parse_from_str(day, "%Y%m%d").ok()?;
    let h: u32 = hour.map_or(Some(0), |h| h.parse().ok())?;
    let (m, tens): (u32, u32) = match slot {
        Some(s) if s.len() == 3 => (s[..2].parse().ok()?, s[2..].parse().ok()?),
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
        let mut events: Vec<Event> = Vec::with_capacity(total);
        let mut reads = Vec::with_capacity(segs.len());
        for batch in segs.chunks(16) {
            let futs: Vec<_> = batch.iter().map(|s| self.read(s)).collect();
            reads.extend(futures::future::try_join_all(futs).await?);
        }
        for got in reads {
            // Another pass is merging it: leave the slot to that one.
            let Some(got) = got else { return Ok(false) };
            events.extend(got);
        }
        events.sort_by(|a, b| a.event_id.cmp(&b.event_id));
        events.dedup_by(|a, b| a.event_id == b.event_id);
        let mut kept = Vec::new();
        for chunk in events.chunks(CHUNK) {
            // Named by content: the same events always make the same name.
            let mut h = sha2::Sha256::new();
            for e in chunk {
                h.update(e.event_id.as_bytes());
            }
            let digest = h.finalize();
            let tag: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
            kept.push(self.write_segment(chunk, &format!("c{tag}")).await?);
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

    async fn delete_all(&self, dir: &Path) -> CatalogResult<()> {
        let listed: Vec<_> = self
            .store
            .list(Some(dir))
            .try_collect()
            .await
            .map_err(|e| unavailable("list", e))?;
        for o in listed {
            match self.store.delete(&o.location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(unavailable("delete", e)),
            }
        }
        Ok(())
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
