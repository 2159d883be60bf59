//! Readiness: the storage root and the control root answer. A check runs
//! every few seconds (see `app/server.rs`); `/readyz` and gRPC health
//! (`grpc.health.v1`) both answer from its latest outcome, so the two
//! agree, and a probe costs no storage request.

use std::time::Duration;

use super::Governance;

/// A check that takes longer than this counts as a failure: a probe must
/// answer before the kubelet's own timeout.
const CHECK_TIMEOUT: Duration = Duration::from_secs(4);

impl Governance {
    /// Check the storage root (its manifest loads) and the control root
    /// (it lists), and publish the outcome: `Err` with a reason that
    /// names no URI and no storage detail (the probe is unauthenticated;
    /// the log has the details).
    pub async fn check_ready(&self) -> Result<(), String> {
        let checks = async {
            if let Err(e) = self.home.probe().await {
                tracing::debug!(root = %self.home.root(), error = %e.message, "the storage root does not answer");
                return Err(("the storage root does not answer", e.message));
            }
            if let Err(e) = self.registry.records.probe().await {
                tracing::debug!(root = %self.control_root(), error = %e.message, "the control root does not answer");
                return Err(("the control root does not answer", e.message));
            }
            Ok(())
        };
        let outcome = match tokio::time::timeout(CHECK_TIMEOUT, checks).await {
            Ok(r) => r,
            Err(_) => Err((
                "the storage checks took longer than 4 s",
                String::from("timed out"),
            )),
        };
        let now = outcome.as_ref().err().map(|(reason, _)| reason.to_string());
        let was = self.ready.send_replace(now.clone());
        if was != now {
            match &outcome {
                Ok(()) => tracing::info!("ready: the storage root and the control root answer"),
                Err((reason, detail)) => tracing::warn!(%reason, %detail, "not ready"),
            }
        }
        outcome.map_err(|(reason, _)| reason.to_string())
    }

    /// The latest check's outcome, without a new check.
    pub fn ready_now(&self) -> Result<(), String> {
        match self.ready.borrow().clone() {
            None => Ok(()),
            Some(reason) => Err(reason),
        }
    }

    /// The latest readiness (`None`: ready; else why not), to follow (gRPC
    /// health does).
    pub fn readiness(&self) -> tokio::sync::watch::Receiver<Option<String>> {
        self.ready.subscribe()
    }
}
