//! Readiness: the storage root and the control root answer. `/readyz` and
//! gRPC health (`grpc.health.v1`) both follow the latest check, so the two
//! never disagree for longer than one check.

use std::time::Duration;

use super::Governance;

/// A check that takes longer than this counts as a failure: a probe must
/// answer before the kubelet's own timeout.
const CHECK_TIMEOUT: Duration = Duration::from_secs(4);

impl Governance {
    /// Check the storage root (its manifest loads) and the control root
    /// (it lists), publish the outcome to gRPC health, and return it: the
    /// reason when not ready.
    pub async fn check_ready(&self) -> Result<(), String> {
        let checks = async {
            self.home.probe().await.map_err(|e| {
                format!(
                    "the storage root {} does not answer: {}",
                    self.home.root(),
                    e.message
                )
            })?;
            self.registry.records.probe().await.map_err(|e| {
                format!(
                    "the control root {} does not answer: {}",
                    self.control_root(),
                    e.message
                )
            })
        };
        let outcome = match tokio::time::timeout(CHECK_TIMEOUT, checks).await {
            Ok(r) => r,
            Err(_) => Err(format!(
                "the storage checks took longer than {} s",
                CHECK_TIMEOUT.as_secs()
            )),
        };
        let ready = outcome.is_ok();
        let was = self.ready.send_replace(ready);
        if was != ready {
            match &outcome {
                Ok(()) => tracing::info!("ready: the storage root and the control root answer"),
                Err(reason) => tracing::warn!(%reason, "not ready"),
            }
        }
        outcome
    }

    /// The latest readiness, to follow (gRPC health does).
    pub fn readiness(&self) -> tokio::sync::watch::Receiver<bool> {
        self.ready.subscribe()
    }
}
