//! The recorded locations near one location, kept per manifest snapshot.
//! A create reads them three times (`locations.rs`): before it writes,
//! under the manifest lock, and after its own commit. On one snapshot the
//! answer cannot differ, and this process's own commit changes it by
//! exactly the rows it wrote and removed, so one scan of `__manifest`
//! answers all three.
//!
//! Why it is safe: an entry belongs to one loaded snapshot (the very
//! `Dataset`, held weakly so its address is never another's), and is
//! carried to a commit's result only when that commit was made on it and
//! landed right after it (version + 1: nothing else came between). Any
//! other snapshot, a reload included, misses and scans.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, Weak};

use arrow_array::RecordBatch;
use lance::Dataset;

use crate::core::table::locations::{tables_in, Location, Placed};

/// Entries kept at most (creates in flight at once, each one or two).
const MAX_ENTRIES: usize = 32;

struct Entry {
    manifest: Weak<Dataset>,
    near: Box<[Location]>,
    placed: Arc<[Placed]>,
}

impl Entry {
    fn of(&self, ds: &Dataset, near: &[Location]) -> bool {
        std::ptr::eq(self.manifest.as_ptr(), ds) && same(&self.near, near)
    }
}

/// The same locations, spelled the same (a cached answer is never shared
/// between two spellings that merely compare equal).
fn same(a: &[Location], b: &[Location]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.as_str() == y.as_str())
}

#[derive(Default)]
pub(crate) struct PlacedKept {
    entries: Mutex<VecDeque<Entry>>,
}

impl std::fmt::Debug for PlacedKept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlacedKept").finish_non_exhaustive()
    }
}

/// Whether `near` is narrow enough to keep an answer for: not every
/// table (empty), nor the root (which overlaps every table).
fn keepable(near: &[Location]) -> bool {
    !near.is_empty() && !near.iter().any(Location::is_root)
}

impl PlacedKept {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The answer kept for exactly this snapshot and `near`.
    pub(crate) fn get(&self, ds: &Dataset, near: &[Location]) -> Option<Vec<Placed>> {
        self.lock()
            .iter()
            .find(|e| e.of(ds, near))
            .map(|e| e.placed.to_vec())
    }

    /// Keep `placed`, read from snapshot `ds` for `near`.
    pub(crate) fn keep(&self, ds: &Arc<Dataset>, near: &[Location], placed: &[Placed]) {
        if !keepable(near) {
            return;
        }
        let mut entries = self.lock();
        entries.retain(|e| e.manifest.strong_count() > 0 && !e.of(ds, near));
        if entries.len() >= MAX_ENTRIES {
            entries.pop_front();
        }
        entries.push_back(Entry {
            manifest: Arc::downgrade(ds),
            near: near.into(),
            placed: placed.into(),
        });
    }

    /// This process committed `next` on `base`, writing `rows` and
    /// removing or replacing the rows keyed `touched`: the answers kept
    /// for `base` are carried to `next`, when nothing else landed between
    /// the two.
    pub(crate) fn advance(
        &self,
        base: &Dataset,
        next: &Arc<Dataset>,
        touched: &[String],
        rows: Option<&RecordBatch>,
    ) {
        if next.version().version != base.version().version + 1 {
            return;
        }
        let touched: HashSet<&str> = touched.iter().map(String::as_str).collect();
        let mut entries = self.lock();
        let carried: Vec<Entry> = entries
            .iter()
            .filter(|e| std::ptr::eq(e.manifest.as_ptr(), base))
            .map(|e| {
                let kept = e
                    .placed
                    .iter()
                    .filter(|p| !touched.contains(p.key.as_str()))
                    .cloned();
                let new = rows.map(|r| tables_in(r, &e.near)).unwrap_or_default();
                Entry {
                    manifest: Arc::downgrade(next),
                    near: e.near.clone(),
                    placed: kept.chain(new).collect(),
                }
            })
            .collect();
        entries.retain(|e| e.manifest.strong_count() > 0);
        for e in carried {
            if entries.len() >= MAX_ENTRIES {
                entries.pop_front();
            }
            entries.push_back(e);
        }
    }
}

#[cfg(test)]
#[path = "placed_kept_tests.rs"]
mod tests;
