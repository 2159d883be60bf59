//! The audit sink: every stored event posted as a CloudEvent (structured
//! JSON over HTTP) to a URL the operator sets, signed with HMAC-SHA256.
//!
//! It reads the stored trail, never the request path: a request only waits
//! for its event to be durable, and an event stored by a replica that died
//! right after answering is still sent. One replica at a time sends (a
//! lease in a control record, renewed while it works); its cursor is the
//! last event id the receiver accepted, so delivery is at least once: after
//! a crash or a lost lease the next sender may repeat the events since the
//! cursor's last save (receivers deduplicate by the CloudEvent `id`).
//! Events are sent `delay` after their time, so that a segment still being
//! written elsewhere is not skipped.

use std::time::Duration;

use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};

use crate::api::audit::Event;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::governance::audit::store::Position;
use crate::governance::registry::now_ms;
use crate::governance::Governance;

const CURSOR_KIND: &str = "audit-sink";
const CURSOR_ID: &str = "cursor";
/// How long a sender's lease lasts unrenewed.
const LEASE_MS: u64 = 30_000;
/// Events taken per look at the trail.
const BATCH: usize = 100;
/// The longest pause between retries of one event.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// `--audit-sink-*`. Debug shows no secret.
#[derive(Clone)]
pub struct SinkConfig {
    pub url: url::Url,
    /// HMAC-SHA256 key of the `X-Lance-Catalog-Signature` header.
    pub secret: Option<String>,
    /// The CloudEvents `source` attribute.
    pub source: String,
    /// How long after its time an event is sent.
    pub delay: Duration,
}

impl std::fmt::Debug for SinkConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SinkConfig")
            .field("url", &self.url.as_str())
            .field("secret", &self.secret.as_ref().map(|_| "<set>"))
            .field("source", &self.source)
            .field("delay", &self.delay)
            .finish()
    }
}

impl SinkConfig {
    /// Checked settings; `None` when no URL is set.
    pub fn parse(
        url: Option<&str>,
        secret: Option<String>,
        source: &str,
        delay: Duration,
    ) -> Result<Option<Self>, String> {
        let Some(raw) = url.map(str::trim).filter(|u| !u.is_empty()) else {
            return Ok(None);
        };
        let url = url::Url::parse(raw).map_err(|e| format!("--audit-sink-url {raw:?}: {e}"))?;
        if !matches!(url.scheme(), "http" | "https")
            || !url.username().is_empty()
            || url.password().is_some()
        {
            return Err(format!(
                "--audit-sink-url {raw:?} must be an http or https URL without credentials in it"
            ));
        }
        Ok(Some(Self {
            url,
            secret: secret.filter(|s| !s.is_empty()),
            source: source.to_string(),
            delay,
        }))
    }
}

/// Who sends, and from where on.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Cursor {
    /// Events after this id are still to be sent.
    after: String,
    holder: String,
    until_ms: u64,
}

/// The signature header's value: `sha256=<hex>` of `<timestamp>.<body>`.
fn signature(secret: &str, timestamp: u64, body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let tag = mac.finalize().into_bytes();
    let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// An event as a structured-mode CloudEvent.
fn cloud_event(source: &str, e: &Event) -> serde_json::Value {
    let time = chrono::DateTime::from_timestamp_millis(e.at_ms as i64)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut subject = e.resource.kind.clone();
    if !e.resource.id.is_empty() {
        subject = format!("{subject}/{}", e.resource.id.join("/"));
    }
    serde_json::json!({
        "specversion": "1.0",
        "id": e.event_id,
        "source": source,
        "type": format!("dev.lance-catalog.audit.{}", e.outcome),
        "subject": subject,
        "time": time,
        "datacontenttype": "application/json",
        "data": e,
    })
}

/// What one attempt to send came to.
enum Sent {
    Accepted,
    /// Worth another try (network, 3xx, 401, 403, 404, 408, 410, 429, 5xx).
    Retry(String),
    /// The receiver refused this event for good (400, 413, 422, ...).
    Refused(String),
}

impl Governance {
    /// One upkeep pass of the audit trail (see `upkeep.rs`).
    pub async fn audit_upkeep(
        &self,
        retention_ms: Option<u64>,
    ) -> CatalogResult<crate::governance::UpkeepReport> {
        self.registry.audit_upkeep(retention_ms).await
    }

    /// Send the trail to the sink, forever (a task of its own).
    pub async fn run_audit_sink(&self, cfg: SinkConfig) {
        let me = uuid::Uuid::new_v4().simple().to_string();
        // Where a first sender starts: before this server took requests.
        let started = now_ms();
        // No redirects: a 3xx would turn the POST into a GET that "accepts".
        let client = match reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
        {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "the audit sink cannot start its HTTP client");
                return;
            }
        };
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            match self.sink_round(&cfg, &client, &me, started).await {
                Ok(sent) if sent > 0 => tracing::debug!(sent, "audit sink"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e.message, "the audit sink paused; it tries again")
                }
            }
        }
    }

    /// Take or renew the lease and move the cursor to `after` (when set);
    /// `None` while another replica holds it.
    async fn sink_lease(
        &self,
        me: &str,
        after: Option<&str>,
        started: u64,
    ) -> CatalogResult<Option<Cursor>> {
        let records = &self.registry.records;
        let now = now_ms();
        let current = records.get::<Cursor>(CURSOR_KIND, CURSOR_ID).await?;
        if current.is_none() {
            // The first sender starts where its server did: the trail
            // from before the sink was set is not replayed.
            let start = Cursor {
                after: format!("{started:013}"),
                holder: me.to_string(),
                until_ms: now + LEASE_MS,
            };
            return match records
                .create(
                    CURSOR_KIND,
                    CURSOR_ID,
                    &start,
                    Code::CONCURRENT_MODIFICATION,
                )
                .await
            {
                Ok(c) => Ok(Some(c.value)),
                Err(e) if e.code == Code::CONCURRENT_MODIFICATION => Ok(None),
                Err(e) => Err(e),
            };
        }
        // Renewed when half spent, so an idle sender writes every 15 s.
        if let Some(c) = current.map(|c| c.value) {
            let fresh = c.holder == me && c.until_ms > now + LEASE_MS / 2;
            if fresh && after.is_none_or(|a| a <= c.after.as_str()) {
                return Ok(Some(c));
            }
            if c.holder != me && c.until_ms > now {
                return Ok(None);
            }
        }
        let held = CatalogError::new(Code::CONCURRENT_MODIFICATION, "held");
        match records
            .update::<Cursor, _>(CURSOR_KIND, CURSOR_ID, Code::INTERNAL, |mut c| {
                if c.holder != me && c.until_ms > now {
                    return Err(held.clone());
                }
                c.holder = me.to_string();
                c.until_ms = now + LEASE_MS;
                if let Some(a) = after.filter(|a| *a > c.after.as_str()) {
                    c.after = a.to_string();
                }
                Ok(c)
            })
            .await
        {
            Ok(c) => Ok(Some(c.value)),
            Err(e) if e.code == Code::CONCURRENT_MODIFICATION => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One look at the trail: send what is due; how many were sent.
    async fn sink_round(
        &self,
        cfg: &SinkConfig,
        client: &reqwest::Client,
        me: &str,
        started: u64,
    ) -> CatalogResult<usize> {
        let Some(cursor) = self.sink_lease(me, None, started).await? else {
            return Ok(0);
        };
        let pos = Position {
            from: String::new(),
            after: Some(cursor.after.clone()),
        };
        // Before the read, so a slow read does not eat into the delay.
        let due = now_ms().saturating_sub(cfg.delay.as_millis() as u64);
        let (events, _) = self.registry.audit.page(&pos, BATCH).await?;
        let mut renewed = std::time::Instant::now();
        let mut sent = 0;
        let mut done: Option<String> = None;
        for e in events.iter().take_while(|e| e.at_ms <= due) {
            let mut attempt = 0u32;
            loop {
                match send(client, cfg, e).await {
                    Sent::Accepted => break,
                    Sent::Refused(why) => {
                        tracing::warn!(event = %e.event_id, why = %why, "the audit sink's receiver refused an event; it is skipped");
                        break;
                    }
                    Sent::Retry(why) => {
                        attempt += 1;
                        tracing::info!(event = %e.event_id, attempt, why = %why, "the audit sink retries");
                        // Save progress and keep the lease while waiting.
                        if self
                            .sink_lease(me, done.as_deref(), started)
                            .await?
                            .is_none()
                        {
                            return Ok(sent);
                        }
                        tokio::time::sleep(backoff(attempt)).await;
                    }
                }
            }
            sent += 1;
            done = Some(e.event_id.clone());
            // A long round keeps its lease (and saves its progress).
            if renewed.elapsed() > Duration::from_millis(LEASE_MS / 3) {
                renewed = std::time::Instant::now();
                if self
                    .sink_lease(me, done.as_deref(), started)
                    .await?
                    .is_none()
                {
                    return Ok(sent);
                }
            }
        }
        if done.is_some() {
            self.sink_lease(me, done.as_deref(), started).await?;
        }
        Ok(sent)
    }
}

/// 250 ms doubling to [`MAX_BACKOFF`], with up to a quarter of jitter.
fn backoff(attempt: u32) -> Duration {
    let base = Duration::from_millis(250).saturating_mul(1 << attempt.min(8));
    let base = base.min(MAX_BACKOFF);
    let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0]) * base.as_millis() as u64 / 1024;
    base + Duration::from_millis(jitter)
}

async fn send(client: &reqwest::Client, cfg: &SinkConfig, e: &Event) -> Sent {
    let body = match serde_json::to_vec(&cloud_event(&cfg.source, e)) {
        Ok(b) => b,
        Err(err) => return Sent::Refused(err.to_string()),
    };
    let ts = now_ms() / 1000;
    let mut req = client
        .post(cfg.url.clone())
        .header("content-type", "application/cloudevents+json")
        .header("x-lance-catalog-timestamp", ts.to_string());
    if let Some(secret) = &cfg.secret {
        req = req.header("x-lance-catalog-signature", signature(secret, ts, &body));
    }
    match req.body(body).send().await {
        Ok(r) if r.status().is_success() => Sent::Accepted,
        Ok(r) => {
            let s = r.status();
            let why = format!("status {s}");
            // A receiver down, moved or refusing our key is retried (the
            // operator fixes it); only a refusal of the event itself skips.
            if s.is_server_error()
                || s.is_redirection()
                || matches!(s.as_u16(), 401 | 403 | 404 | 408 | 410 | 429)
            {
                Sent::Retry(why)
            } else {
                Sent::Refused(why)
            }
        }
        // reqwest's error names the URL, which the operator set; no secret.
        Err(err) => Sent::Retry(err.without_url().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_timestamp_dot_body() {
        // Python: hmac.new(b"key", b'1700000000.{"a":1}', hashlib.sha256)
        assert_eq!(
            signature("key", 1_700_000_000, br#"{"a":1}"#),
            "sha256=a438e398bfafc57e4396bb7fc2304422f0f768e965d073ca313cb52e22e6ad03"
        );
        assert_ne!(signature("key", 1, b"x"), signature("kez", 1, b"x"));
    }

    #[test]
    fn sink_urls_are_checked_and_the_secret_is_never_shown() {
        let d = Duration::from_secs(1);
        assert!(SinkConfig::parse(None, None, "s", d).unwrap().is_none());
        assert!(SinkConfig::parse(Some("ftp://x"), None, "s", d).is_err());
        assert!(SinkConfig::parse(Some("http://u:p@x/"), None, "s", d).is_err());
        assert!(SinkConfig::parse(Some("http://:p@x/"), None, "s", d).is_err());
        let c = SinkConfig::parse(Some("http://127.0.0.1:9/e"), Some("hush".into()), "s", d)
            .unwrap()
            .unwrap();
        assert!(!format!("{c:?}").contains("hush"));
    }
}
