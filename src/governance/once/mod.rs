//! Idempotency keys: a change sent with an `Idempotency-Key` is done once,
//! however often it is sent, on whichever replica a retry reaches.
//!
//! Each key has a record on the control root, under its caller and the key
//! (hashed: the key is the caller's text, a record id one path segment).
//! It names the operation and a digest of the request the key was first
//! used for and, once that answered, the answer.
//!
//! - The first request claims the record (the store's conditional write)
//!   and renews the claim while it runs.
//! - A retry of the same request gets the first answer once there is one;
//!   while the first still runs it is refused with 14, so nothing runs
//!   twice. The same key with another request is refused with 13.
//! - A change that failed did nothing (a failed write removes what it
//!   wrote): its claim is given up, and a retry runs it again.
//! - A claim its holder stopped renewing (a replica killed mid-way) is
//!   taken over by the next retry. A change that holder finished but could
//!   not record runs again then: a create answers that its object exists.
//! - Records are kept `--idempotency-ttl` from their first use, then swept.
//!
//! A record keeps an answer as the operation gave it, before credentials
//! are handed with it and without a table's storage options (which may be
//! the operator's own, forwarded): a replayed table answer is handed them
//! again, its credentials fresh and authorized again (`vending.rs`). Of
//! the request it keeps only digests. An operation
//! whose request or answer holds a secret takes no key (`OpDef::secret`).

mod body;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub(in crate::governance) use body::{tapped, Body};
pub use body::{StreamedBody, Tap};

use super::Governance;
use crate::api::OpDef;
use crate::auth::Principal;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::{now_ms, Records};

/// The records' kind on the control root.
const KIND: &str = "idempotency";
/// A running claim not renewed for this long is its holder's no more.
const LEASE: Duration = Duration::from_secs(30);
/// How often a running claim is renewed.
const RENEW_EVERY: Duration = Duration::from_secs(10);
/// The longest key taken (the draft's keys are UUIDs; this leaves room).
const MAX_KEY: usize = 255;
/// How long a key is kept when the server is given no other setting.
pub(in crate::governance) const DEFAULT_TTL: Duration = Duration::from_secs(24 * 3600);

/// A key's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// The operation the key was first used for (its action).
    action: String,
    /// The digest of the request it was first used for.
    request: String,
    /// The digest of that request's data body, once read whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    /// When the key was first used (its time to live counts from here).
    made_ms: u64,
    #[serde(flatten)]
    state: State,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum State {
    /// A request holds the key and runs.
    Running { holder: String, renewed_ms: u64 },
    /// It answered this.
    Answered { answer: Value },
}

/// What a request presents: its caller's key for one operation.
pub(in crate::governance) struct Ask {
    id: String,
    key: String,
    action: &'static str,
    request: String,
    body: Body,
}

/// How a keyed request goes on.
pub(in crate::governance) enum Begun {
    /// It runs, holding the key.
    Run(Claim),
    /// It ran before: this was its answer.
    Replay(Value),
}

/// A running request's hold on its key.
pub(in crate::governance) struct Claim {
    records: Records,
    id: String,
    holder: String,
    body: Body,
}

/// One line naming a key in messages (never more than its start: it is
/// the caller's text).
fn named(key: &str) -> String {
    let shown: String = key.chars().take(40).collect();
    match shown.len() < key.len() {
        true => format!("{shown:?}…"),
        false => format!("{shown:?}"),
    }
}

/// A request's digest: its operation and its JSON with object keys sorted
/// (maps arrive in any order), so the same request has the same digest
/// on every replica.
fn digest_of(action: &str, shape: &Value) -> String {
    fn feed(h: &mut Sha256, v: &Value) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                h.update(b"{");
                for k in keys {
                    h.update(serde_json::to_string(k).unwrap_or_default().as_bytes());
                    h.update(b":");
                    feed(h, &map[k]);
                    h.update(b",");
                }
                h.update(b"}");
            }
            Value::Array(items) => {
                h.update(b"[");
                for item in items {
                    feed(h, item);
                    h.update(b",");
                }
                h.update(b"]");
            }
            other => h.update(other.to_string().as_bytes()),
        }
    }
    let mut h = Sha256::new();
    h.update(action.as_bytes());
    h.update(b"\n");
    feed(&mut h, shape);
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a spec request asks, without who asks (`identity`) and without
/// its call's headers (`header.*` context entries: a request id, a trace,
/// the key itself), which differ from one sending to the next.
pub(in crate::governance) fn asked(mut shape: Value) -> Value {
    if let Value::Object(map) = &mut shape {
        map.remove("identity");
        if let Some(Value::Object(ctx)) = map.get_mut("context") {
            ctx.retain(|k, _| {
                !k.get(..7)
                    .is_some_and(|p| p.eq_ignore_ascii_case("header."))
            });
        }
    }
    shape
}

impl Governance {
    /// What a request with `key` presents for `op` by `principal`; none
    /// when it has no key or `op` reads (a read is its own retry). A key
    /// that is not one, or one sent with an operation whose request or
    /// answer holds a secret, is refused (13).
    pub(in crate::governance) fn ask(
        &self,
        op: &'static OpDef,
        principal: Option<&Principal>,
        key: Option<&str>,
        shape: impl FnOnce() -> Value,
        body: Body,
    ) -> CatalogResult<Option<Ask>> {
        let Some(key) = key else { return Ok(None) };
        if op.reads() {
            return Ok(None);
        }
        if key.is_empty()
            || key.len() > MAX_KEY
            || !key.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
        {
            return Err(CatalogError::invalid(format!(
                "the Idempotency-Key must be 1 to {MAX_KEY} printable ASCII characters (a UUID is a good one)"
            )));
        }
        if !op.replayable() {
            return Err(CatalogError::invalid(format!(
                "{op} does not take an Idempotency-Key: its request or answer holds a secret, which the catalog never keeps, so a retry could not be answered from a record; send it without the key"
            )));
        }
        let caller = principal
            .map(|p| serde_json::json!({ "id": p.id, "identity": p.identity, "task": p.task }));
        let mut h = Sha256::new();
        h.update(b"lance-catalog idempotency key\n");
        h.update(
            serde_json::to_string(&caller)
                .unwrap_or_default()
                .as_bytes(),
        );
        h.update(b"\n");
        h.update(key.as_bytes());
        Ok(Some(Ask {
            id: hex(&h.finalize()),
            key: key.to_string(),
            action: op.action,
            request: digest_of(op.action, &shape()),
            body,
        }))
    }

    fn once_records(&self) -> Records {
        self.registry.records.clone()
    }

    /// Claim `ask`'s key, or answer from its record.
    pub(in crate::governance) async fn begin(&self, ask: Ask) -> CatalogResult<Begun> {
        let records = self.once_records();
        let ttl_ms = self.idempotency_ttl.as_millis() as u64;
        let holder = uuid::Uuid::new_v4().to_string();
        let known_body = ask.body.known();
        let mut seen: Option<Entry> = None;
        let written = records
            .upsert::<Entry, _>(KIND, &ask.id, |current| {
                let now = now_ms();
                let live = current.filter(|e| e.made_ms.saturating_add(ttl_ms) > now);
                let claim = Entry {
                    action: ask.action.to_string(),
                    request: ask.request.clone(),
                    body: known_body.clone(),
                    made_ms: now,
                    state: State::Running {
                        holder: holder.clone(),
                        renewed_ms: now,
                    },
                };
                match live {
                    None => Some(claim),
                    Some(e) => {
                        let same = e.action == ask.action
                            && e.request == ask.request
                            && (e.body.is_none() || known_body.is_none() || e.body == known_body);
                        let stale = matches!(e.state, State::Running { renewed_ms, .. }
                            if now.saturating_sub(renewed_ms) > LEASE.as_millis() as u64);
                        seen = Some(e.clone());
                        // A dead holder's claim passes to the same request's
                        // retry; its time to live still counts from the first.
                        (same && stale).then(|| Entry {
                            made_ms: e.made_ms,
                            ..claim
                        })
                    }
                }
            })
            .await?;
        if written.is_some() {
            return Ok(Begun::Run(Claim {
                records,
                id: ask.id,
                holder,
                body: ask.body,
            }));
        }
        let Some(entry) = seen else {
            return Err(CatalogError::internal(
                "an idempotency record was neither claimed nor read",
            ));
        };
        let key = named(&ask.key);
        if entry.action != ask.action || entry.request != ask.request {
            return Err(CatalogError::invalid(format!(
                "the Idempotency-Key {key} was first used for another request ({}); a key names one request: send a new key for a new one",
                entry.action
            )));
        }
        let other_body = || {
            CatalogError::invalid(format!(
                "the Idempotency-Key {key} was first used with another request body; a key names one request: send a new key for a new one"
            ))
        };
        if let (Some(first), Some(now)) = (&entry.body, &known_body) {
            if first != now {
                return Err(other_body());
            }
        }
        match entry.state {
            State::Running { .. } => Err(CatalogError::new(
                Code::CONCURRENT_MODIFICATION,
                format!(
                    "the request with Idempotency-Key {key} is still running; retry once it has answered"
                ),
            )),
            State::Answered { answer } => {
                if let Some(first) = &entry.body {
                    if ask.body.digest().await?.as_ref() != Some(first) {
                        return Err(other_body());
                    }
                }
                Ok(Begun::Replay(answer))
            }
        }
    }

    /// Erase the keys kept longer than `--idempotency-ttl` (running ones
    /// only once their holder is gone): how many went.
    pub async fn sweep_idempotency_keys(&self) -> CatalogResult<usize> {
        let records = self.once_records();
        let ttl_ms = self.idempotency_ttl.as_millis() as u64;
        let mut swept = 0;
        for (id, entry) in records.all::<Entry>(KIND).await? {
            let now = now_ms();
            let expired = |e: &Entry| {
                e.made_ms.saturating_add(ttl_ms) <= now
                    && !matches!(e.state, State::Running { renewed_ms, .. }
                        if now.saturating_sub(renewed_ms) <= LEASE.as_millis() as u64)
            };
            if !expired(&entry) {
                continue;
            }
            let gone = records
                .delete::<Entry, _>(KIND, &id, |e| match expired(e) {
                    true => Ok(()),
                    false => Err(CatalogError::invalid("in use again")),
                })
                .await;
            if matches!(gone, Ok(true)) {
                records.erase::<Entry>(KIND, &id).await?;
                swept += 1;
            }
        }
        Ok(swept)
    }
}

impl Claim {
    /// Run `work` holding the key: the claim is renewed while it runs, so
    /// no retry takes it over from a live holder.
    pub(in crate::governance) async fn hold<F: std::future::Future>(&self, work: F) -> F::Output {
        let mut work = std::pin::pin!(work);
        let mut tick = tokio::time::interval(RENEW_EVERY);
        tick.tick().await;
        loop {
            tokio::select! {
                out = &mut work => return out,
                _ = tick.tick() => self.renew().await,
            }
        }
    }

    /// Whether `entry` is still this request's running claim.
    fn holds(&self, entry: &Entry) -> bool {
        matches!(&entry.state, State::Running { holder, .. } if *holder == self.holder)
    }

    async fn renew(&self) {
        let renewed = self
            .records
            .update::<Entry, _>(KIND, &self.id, Code::INTERNAL, |mut e| {
                if !self.holds(&e) {
                    return Err(CatalogError::internal(
                        "the key's claim passed to another request",
                    ));
                }
                e.state = State::Running {
                    holder: self.holder.clone(),
                    renewed_ms: now_ms(),
                };
                Ok(e)
            })
            .await;
        if let Err(e) = renewed {
            tracing::warn!(error = %e.message, "an idempotency key's claim could not be renewed");
        }
    }

    /// Record how the request ended: its answer, or, when it failed (and
    /// so did nothing), no record, so that a retry runs again.
    /// `hands_table`: the answer hands a table, whose storage options
    /// are not kept (they may be the operator's own secrets).
    pub(in crate::governance) async fn end<T: Serialize>(
        self,
        answer: Option<&T>,
        hands_table: bool,
    ) {
        let Some(answer) = answer else {
            return self.give_up().await;
        };
        let answer = match serde_json::to_value(answer) {
            Ok(Value::Object(mut fields)) if hands_table => {
                fields.remove("storage_options");
                Value::Object(fields)
            }
            Ok(v) => v,
            Err(e) => {
                tracing::error!(error = %e, "an answer could not be kept for its idempotency key");
                return self.give_up().await;
            }
        };
        let body = match self.body.digest().await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e.message, "a request body's digest is unknown; its key is given up");
                return self.give_up().await;
            }
        };
        let kept = self
            .records
            .update::<Entry, _>(KIND, &self.id, Code::INTERNAL, |mut e| {
                if !self.holds(&e) {
                    return Err(CatalogError::internal(
                        "the key's claim passed to another request",
                    ));
                }
                e.body = body.clone();
                e.state = State::Answered {
                    answer: answer.clone(),
                };
                Ok(e)
            })
            .await;
        if let Err(e) = kept {
            // A retry then finds the claim dead and runs the change again.
            tracing::error!(error = %e.message, "a change was made but its idempotency key could not record the answer");
        }
    }

    async fn give_up(self) {
        let gone = self
            .records
            .delete::<Entry, _>(KIND, &self.id, |e| match self.holds(e) {
                true => Ok(()),
                false => Err(CatalogError::internal("not this request's claim")),
            })
            .await;
        match gone {
            Ok(true) => {
                let _ = self.records.erase::<Entry>(KIND, &self.id).await;
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(error = %e.message, "a failed request's idempotency key stays claimed until its lease ends")
            }
        }
    }
}

/// Run `claim`'s work holding it (or just the work, when unkeyed).
pub(in crate::governance) async fn held<F: std::future::Future>(
    claim: Option<&Claim>,
    work: F,
) -> F::Output {
    match claim {
        Some(c) => c.hold(work).await,
        None => work.await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_digest_does_not_depend_on_map_order() {
        let a: Value = serde_json::from_str(r#"{"id":["a"],"context":{"x":"1","y":"2"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"context":{"y":"2","x":"1"},"id":["a"]}"#).unwrap();
        assert_eq!(digest_of("one", &a), digest_of("one", &b));
        assert_ne!(digest_of("one", &a), digest_of("another", &a));
    }

    #[test]
    fn the_caller_and_the_headers_are_not_what_a_request_asks() {
        let sent: Value = serde_json::from_str(
            r#"{"id":["t"],"identity":{"api_key":"k"},"context":{"header.x-request-id":"r1","header.idempotency-key":"k1","lance-catalog.force":"true"}}"#,
        )
        .unwrap();
        let shape = asked(sent);
        assert!(shape.get("identity").is_none());
        assert_eq!(
            shape["context"],
            serde_json::json!({"lance-catalog.force": "true"})
        );
    }
}
