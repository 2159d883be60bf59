//! Fault points for crash tests: `LANCE_CATALOG_FAULT=<point>:<n>` makes the
//! process exit, as abruptly as a `kill -9`, the n-th time it passes the
//! named point (e.g. `trash.detach:3`: after the third object a cascade drop
//! put in trash). Unset, a point costs one relaxed load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The armed point and after how many passes it fires.
fn armed() -> Option<&'static (String, u64)> {
    static ARMED: OnceLock<Option<(String, u64)>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let spec = std::env::var("LANCE_CATALOG_FAULT").ok()?;
            let (name, n) = spec.rsplit_once(':')?;
            Some((name.to_string(), n.parse().ok()?))
        })
        .as_ref()
}

/// Pass fault point `name`.
pub fn point(name: &str) {
    static PASSES: AtomicU64 = AtomicU64::new(0);
    let Some((armed, n)) = armed() else { return };
    if armed != name {
        return;
    }
    if PASSES.fetch_add(1, Ordering::Relaxed) + 1 >= *n {
        eprintln!("fault point {name} reached {n} times: exiting now (LANCE_CATALOG_FAULT)");
        // No destructors, no flushing of anything but stderr: a crash.
        std::process::abort();
    }
}

/// Pause at point `name` when `LANCE_CATALOG_HOLD=<point>:<ms>` names it:
/// a crash test's window to kill the process while it is inside the step
/// (e.g. `maintenance.run:5000`: a worker holds each task for 5 s before
/// running it, lease renewed, so a `kill -9` lands mid-task).
pub async fn hold(name: &str) {
    static HOLD: OnceLock<Option<(String, u64)>> = OnceLock::new();
    let held = HOLD.get_or_init(|| {
        let spec = std::env::var("LANCE_CATALOG_HOLD").ok()?;
        let (name, ms) = spec.rsplit_once(':')?;
        Some((name.to_string(), ms.parse().ok()?))
    });
    if let Some((point, ms)) = held {
        if point == name {
            tokio::time::sleep(std::time::Duration::from_millis(*ms)).await;
        }
    }
}
