//! Secrets kept as salted hashes (API keys, task keys): making them,
//! hashing them, comparing without leaking timing.

use sha2::{Digest, Sha256};

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn digest(salt: &str, secret: &str) -> String {
    let mut h = Sha256::new();
    h.update(salt.as_bytes());
    h.update(b":");
    h.update(secret.as_bytes());
    hex(&h.finalize())
}

/// Equal without an early exit, so timing tells nothing of the hash.
pub(super) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

pub(super) fn random_hex() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The cache's digest of a whole key (unsalted: it never leaves memory).
pub(super) fn cache_digest(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}
