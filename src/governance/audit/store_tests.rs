//! The trail on a real directory: group commit, pages across slots and
//! days, merges that change no page, retention.

use std::sync::Arc;

use object_store::path::Path;

use super::{AuditStore, Position, SLOT_MS};
use crate::api::audit::Event;

fn local() -> (Arc<AuditStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    let trail = AuditStore::new(Arc::new(store), Path::from("control/audit"));
    (Arc::new(trail), dir)
}

fn event(at_ms: u64, n: usize) -> Event {
    Event {
        event_id: format!("{at_ms:013}-{n:012x}"),
        at_ms,
        action: crate::api::op::CreateTable.action.into(),
        outcome: "succeeded".into(),
        ..Default::default()
    }
}

/// Every event from `pos` on, a page of `limit` at a time.
async fn all_pages(trail: &AuditStore, from: &str, limit: usize) -> (Vec<String>, usize) {
    let mut pos = Position {
        from: from.to_string(),
        after: None,
    };
    let (mut ids, mut pages) = (Vec::new(), 0);
    loop {
        let (events, more) = trail.page(&pos, limit).await.unwrap();
        pages += 1;
        assert!(events.len() <= limit);
        ids.extend(events.iter().map(|e| e.event_id.clone()));
        if !more {
            return (ids, pages);
        }
        pos.after = Some(ids.last().cloned().unwrap());
    }
}

/// Every segment file below `root`.
fn segments_under(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut segs = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                segs.push(p);
            }
        }
    }
    segs
}

fn files(dir: &std::path::Path) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        n += if p.is_dir() { files(&p) } else { 1 };
    }
    n
}

#[tokio::test]
async fn concurrent_events_share_segments_and_every_one_is_listed_once() {
    let (trail, dir) = local();
    let tasks: Vec<_> = (0..64)
        .map(|n| {
            let t = trail.clone();
            tokio::spawn(async move { t.append(event(0, n)).await.unwrap() })
        })
        .collect();
    let mut stored = Vec::new();
    for t in tasks {
        stored.push(t.await.unwrap().0);
    }
    stored.sort();
    let (listed, _) = all_pages(&trail, "", 10).await;
    assert_eq!(
        listed, stored,
        "every answered event is listed, in id order, once"
    );
    let segments = files(&dir.path().join("control/audit"));
    assert!(segments < 64, "64 events at once took {segments} writes");
}

#[tokio::test]
async fn pages_cross_slots_and_days_in_order_and_since_skips_what_is_older() {
    let (trail, _dir) = local();
    // Three days, events in many slots, several segments per slot.
    let day = 86_400_000u64;
    let t0 = 1_764_000_000_000u64;
    let mut want = Vec::new();
    for (k, at) in [
        0,
        1,
        2,
        SLOT_MS,
        SLOT_MS + 5,
        3 * SLOT_MS,
        day,
        day + 1,
        2 * day + 7,
    ]
    .into_iter()
    .enumerate()
    {
        let batch: Vec<Event> = (0..5).map(|n| event(t0 + at, k * 10 + n)).collect();
        want.extend(batch.iter().map(|e| e.event_id.clone()));
        trail.import(batch).await.unwrap();
    }
    want.sort();
    for limit in [1, 4, 7, 45, 1000] {
        let (ids, pages) = all_pages(&trail, "", limit).await;
        assert_eq!(ids, want, "limit {limit}");
        assert_eq!(pages, want.len().div_ceil(limit).max(1), "limit {limit}");
    }
    let since = format!("{:013}", t0 + day);
    let (ids, _) = all_pages(&trail, &since, 3).await;
    let newer: Vec<String> = want.iter().filter(|i| **i >= since).cloned().collect();
    assert_eq!(ids, newer);
    assert_eq!(ids.len(), 15);
}

#[tokio::test]
async fn a_merge_changes_no_page_and_the_retention_deletes_only_what_expired() {
    let (trail, dir) = local();
    let t0 = 1_764_000_000_000u64;
    let mut want = Vec::new();
    // 2,500 events in one slot as 250 segments, and a few in a later one.
    for s in 0..250usize {
        let batch: Vec<Event> = (0..10).map(|n| event(t0 + s as u64, s * 10 + n)).collect();
        want.extend(batch.iter().map(|e| e.event_id.clone()));
        trail.import(batch).await.unwrap();
    }
    let late: Vec<Event> = (0..3)
        .map(|n| event(t0 + 5 * SLOT_MS, 90_000 + n))
        .collect();
    want.extend(late.iter().map(|e| e.event_id.clone()));
    trail.import(late).await.unwrap();
    want.sort();
    let before = all_pages(&trail, "", 100).await.0;
    assert_eq!(before, want);

    let report = trail.upkeep(t0 + 3_600_000, None).await.unwrap();
    assert_eq!(
        report.merged_slots, 1,
        "only the slot of many segments merges"
    );
    let root = dir.path().join("control/audit");
    // 10 chunks of the big slot, 1 segment of the small one, the watermark.
    assert_eq!(files(&root), 12);
    assert_eq!(
        all_pages(&trail, "", 100).await.0,
        want,
        "a merge changes no page"
    );
    let again = trail.upkeep(t0 + 3_600_000, None).await.unwrap();
    assert_eq!(again.merged_slots, 0, "a merged slot is left alone");

    // Keep 1 h at t0 + 1 h + 3 slots: the first slot expired, not the late one.
    let report = trail
        .upkeep(t0 + 3_600_000 + 3 * SLOT_MS, Some(3_600_000))
        .await
        .unwrap();
    assert_eq!(report.expired_slots, 1);
    let left = all_pages(&trail, "", 100).await.0;
    assert_eq!(left, want[2500..].to_vec());
}

#[tokio::test]
async fn a_since_past_what_ids_can_spell_admits_nothing() {
    let (trail, _dir) = local();
    trail
        .import(vec![event(1_764_000_000_000, 1)])
        .await
        .unwrap();
    for since in [
        "10000000000000",
        "18446744073709551615",
        "9999-12-31T00:00:00Z",
    ] {
        let ms = crate::governance::audit::since_ms(Some(since)).unwrap();
        let (ids, _) = all_pages(&trail, &format!("{ms:013}"), 10).await;
        assert!(ids.is_empty(), "since {since}");
    }
    assert!(crate::governance::audit::since_ms(Some("soon")).is_err());
}

#[tokio::test]
async fn a_slot_with_an_unreadable_line_is_never_rewritten() {
    let (trail, dir) = local();
    let t0 = 1_764_000_000_000u64;
    for n in 0..3 {
        trail.import(vec![event(t0 + n, n as usize)]).await.unwrap();
    }
    // A line this version cannot read, as another writer could leave one.
    let seg = segments_under(&dir.path().join("control/audit"))
        .into_iter()
        .next()
        .unwrap();
    let mut text = std::fs::read_to_string(&seg).unwrap();
    text.push_str("{not json\n");
    std::fs::write(&seg, &text).unwrap();
    let report = trail.upkeep(t0 + 3_600_000, None).await.unwrap();
    assert_eq!(report.merged_slots, 0);
    assert_eq!(
        std::fs::read_to_string(&seg).unwrap(),
        text,
        "left as it was"
    );
    assert_eq!(
        all_pages(&trail, "", 10).await.0.len(),
        3,
        "the readable events still list"
    );
}

#[tokio::test]
async fn a_merge_keeps_fields_this_version_does_not_know() {
    let (trail, dir) = local();
    let t0 = 1_764_000_000_000u64;
    for n in 0..3 {
        trail.import(vec![event(t0 + n, n as usize)]).await.unwrap();
    }
    let root = dir.path().join("control/audit");
    let segs = segments_under(&root);
    // A newer version's field on every line.
    for p in &segs {
        let text = std::fs::read_to_string(p)
            .unwrap()
            .replace("\"at_ms\"", "\"future\":7,\"at_ms\"");
        std::fs::write(p, text).unwrap();
    }
    assert_eq!(
        trail
            .upkeep(t0 + 3_600_000, None)
            .await
            .unwrap()
            .merged_slots,
        1
    );
    let merged: String = segments_under(&root)
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(merged.matches("\"future\":7").count(), 3, "{merged}");
}
