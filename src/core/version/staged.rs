//! Staged manifests kept after their commit for a while, then removed.
//!
//! A committed version's staged manifest is what lets a resent commit (its
//! answer was lost) be told apart from another writer's: its bytes equal
//! the placed version's. So it stays for [`RETRY_WINDOW`] after the commit,
//! then one task per catalog removes it. On a local disk the placed version
//! is a hard link of it, so keeping it costs no space. A process that stops
//! forgets what it was keeping: those few stay until the table is dropped.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use object_store::path::Path;
use object_store::ObjectStoreExt;

/// How long a commit can be resent and still be recognised.
pub(crate) const RETRY_WINDOW: Duration = Duration::from_secs(5 * 60);

/// How often the removal task looks at what is due.
const TICK: Duration = Duration::from_secs(15);

/// Staged manifests kept at most (about 100 bytes each): past it the
/// oldest go before their window is over, so a commit rate no estate
/// expects (over 200 a second for five minutes) costs a shorter window,
/// never unbounded memory. A resend found without its staged manifest is
/// answered as a conflict, as in Lance's own namespace.
const MAX_KEPT: usize = 65_536;

/// The staged manifests waiting for removal, oldest first.
#[derive(Default)]
pub(crate) struct Staged {
    due: Mutex<VecDeque<(Instant, Path)>>,
    /// Whether the removal task runs.
    started: std::sync::OnceLock<()>,
}

impl Staged {
    /// Remove `staging` once the retry window is over.
    pub(crate) fn keep(self: &Arc<Self>, store: &Arc<lance::io::ObjectStore>, staging: Path) {
        if let Ok(mut due) = self.due.lock() {
            due.push_back((Instant::now() + RETRY_WINDOW, staging));
        }
        self.started.get_or_init(|| {
            let staged = Arc::downgrade(self);
            let store = store.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(remove_due(staged, store));
            }
        });
    }

    fn take_due(&self) -> Vec<Path> {
        let Ok(mut due) = self.due.lock() else {
            return Vec::new();
        };
        let now = Instant::now();
        let mut out = Vec::new();
        while due.front().is_some_and(|(at, _)| *at <= now) || due.len() > MAX_KEPT {
            if let Some((_, path)) = due.pop_front() {
                out.push(path);
            }
        }
        out
    }
}

/// The removal task: ends with its catalog.
async fn remove_due(staged: Weak<Staged>, store: Arc<lance::io::ObjectStore>) {
    loop {
        tokio::time::sleep(TICK).await;
        let Some(staged) = staged.upgrade() else {
            return;
        };
        for path in staged.take_due() {
            if let Err(e) = store.inner.delete(&path).await {
                if !matches!(e, object_store::Error::NotFound { .. }) {
                    tracing::debug!(error = %e, "a committed version's staged manifest was not removed");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_is_due_is_taken() {
        let staged = Staged::default();
        {
            let mut due = staged.due.lock().unwrap();
            due.push_back((Instant::now() - Duration::from_secs(1), Path::from("a")));
            due.push_back((Instant::now() + Duration::from_secs(60), Path::from("b")));
        }
        assert_eq!(staged.take_due(), vec![Path::from("a")]);
        assert!(staged.take_due().is_empty());
    }

    #[test]
    fn past_the_bound_the_oldest_go_early() {
        let staged = Staged::default();
        {
            let mut due = staged.due.lock().unwrap();
            let later = Instant::now() + Duration::from_secs(60);
            for i in 0..MAX_KEPT + 2 {
                due.push_back((later, Path::from(format!("s{i}"))));
            }
        }
        assert_eq!(staged.take_due(), vec![Path::from("s0"), Path::from("s1")]);
        assert!(staged.take_due().is_empty());
    }
}
