//! `lance-catalog audit-fill` (hidden, for `scripts/bench_scale.py`): a
//! trail of N events at a steady rate ending now, written as the server
//! writes it (group-committed segments of a few events), so that pages can
//! be timed at 1,000 or 1,000,000 events without 1,000,000 requests.

use clap::Args;

use crate::api::audit::{Event, EventResource};
use crate::governance::Registry;

#[derive(Debug, Clone, Args)]
pub struct FillArgs {
    /// The control root (as `serve --control-root`; default layout:
    /// `<root>/_catalog/control`).
    #[arg(long)]
    pub control_root: String,
    /// Events to add.
    #[arg(long)]
    pub events: u64,
    /// Events per second of the trail's time.
    #[arg(long, default_value_t = 278)]
    pub rate: u64,
    /// Events per segment (a replica's group-commit batch).
    #[arg(long, default_value_t = 20)]
    pub per_segment: usize,
    /// Seconds before now the last event is (past the upkeep's settling
    /// time, the trail's slots are all closed).
    #[arg(long, default_value_t = 0)]
    pub ending_ago: u64,
}

pub async fn fill(args: FillArgs) -> Result<(), String> {
    let records = crate::core::open_records(&args.control_root, &Default::default())
        .await
        .map_err(|e| e.message)?;
    let trail = Registry::new(records).audit_store().clone();
    let rate = args.rate.max(1);
    let now = crate::records::now_ms().saturating_sub(args.ending_ago * 1000);
    let start = now.saturating_sub(args.events * 1000 / rate);
    let per = args.per_segment.max(1) as u64;
    let mut writes = Vec::new();
    let mut n = 0u64;
    while n < args.events {
        let batch: Vec<Event> = (n..(n + per).min(args.events))
            .map(|k| {
                let at_ms = start + k * 1000 / rate;
                Event {
                    event_id: format!("{at_ms:013}-{k:012x}"),
                    at_ms,
                    principal: Some("bench".into()),
                    action: crate::api::op::CreateTable.action.into(),
                    resource: EventResource {
                        kind: "table".into(),
                        id: vec!["bench".into(), format!("t{k}")],
                        ..Default::default()
                    },
                    outcome: "succeeded".into(),
                    ..Default::default()
                }
            })
            .collect();
        n += batch.len() as u64;
        let t = trail.clone();
        writes.push(tokio::spawn(async move { t.import(batch).await }));
        if writes.len() >= 64 {
            for w in writes.drain(..) {
                w.await.map_err(|e| e.to_string())?.map_err(|e| e.message)?;
            }
        }
    }
    for w in writes {
        w.await.map_err(|e| e.to_string())?.map_err(|e| e.message)?;
    }
    println!("filled {} events", args.events);
    Ok(())
}
