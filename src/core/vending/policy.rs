//! What vended credentials may touch: one table's prefix in its bucket,
//! read-only or read-write, never delete. The session policy is the
//! narrowing AWS STS intersects with the role's own policy, so the
//! credentials reach at most the table's bytes whatever the role allows.

use serde_json::{json, Value};

use crate::error::{CatalogError, CatalogResult};

/// What a caller may do with a table's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Privilege {
    /// List and read the table's objects.
    Read,
    /// Also write new objects (Lance's appends and commits write new
    /// files; they delete nothing). Deletion stays with the catalog's own
    /// maintenance, which uses the server's credentials.
    Write,
}

impl Privilege {
    pub fn as_str(self) -> &'static str {
        match self {
            Privilege::Read => "read",
            Privilege::Write => "read_write",
        }
    }
}

/// A table's place in its bucket: the bucket and the key prefix, ending
/// in `/` so that `ns/t` never covers `ns/t2`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    pub bucket: String,
    pub prefix: String,
}

impl Scope {
    /// The scope of a table location, `None` for a store without STS
    /// (local paths, `memory://`, other clouds). A location that would give
    /// a scope wider than one table is refused: the bucket root, or a key
    /// holding what a policy reads as a wildcard (`*`, `?`) or a variable
    /// (`${`). A bare `$` is literal (the engine's table directories hold
    /// one).
    pub fn of(location: &str) -> CatalogResult<Option<Self>> {
        let Some(rest) = ["s3://", "s3a://"]
            .iter()
            .find_map(|s| location.strip_prefix(s))
        else {
            return Ok(None);
        };
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        // A location is a URI, each segment percent-encoded (`t%3Fx`); the
        // store keeps the bytes under the decoded key (`t?x`), which is
        // what a policy must name. Decoded once, as the store does.
        let Ok(key) = percent_encoding::percent_decode_str(key).decode_utf8() else {
            return Err(refused(location, "its key is not UTF-8 once decoded"));
        };
        let key = key.trim_matches('/');
        if bucket.is_empty() || key.is_empty() {
            return Err(refused(location, "it is a bucket's root"));
        }
        if let Some(c) = key.chars().find(|c| matches!(c, '*' | '?')) {
            return Err(refused(
                location,
                &format!("its key holds {c:?}, which a session policy reads as a wildcard"),
            ));
        }
        if key.contains("${") {
            return Err(refused(
                location,
                "its key holds \"${\", which a session policy reads as a variable",
            ));
        }
        if key
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return Err(refused(
                location,
                "its key has an empty or relative segment",
            ));
        }
        Ok(Some(Self {
            bucket: bucket.to_string(),
            prefix: format!("{key}/"),
        }))
    }

    /// The session policy for this scope and privilege.
    pub fn session_policy(&self, privilege: Privilege) -> String {
        let bucket = format!("arn:aws:s3:::{}", self.bucket);
        let objects = format!("{bucket}/{}*", self.prefix);
        let mut statements = vec![
            json!({
                "Sid": "ListTheTable",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": bucket,
                "Condition": {"StringLike": {"s3:prefix": [format!("{}*", self.prefix)]}},
            }),
            json!({
                "Sid": "ReadTheTable",
                "Effect": "Allow",
                "Action": ["s3:GetObject", "s3:GetObjectVersion"],
                "Resource": objects,
            }),
        ];
        if privilege == Privilege::Write {
            // A multipart upload is written with s3:PutObject; aborting one
            // removes only its unfinished parts.
            statements.push(json!({
                "Sid": "WriteTheTable",
                "Effect": "Allow",
                "Action": ["s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
                "Resource": objects,
            }));
        }
        let policy: Value = json!({"Version": "2012-10-17", "Statement": statements});
        policy.to_string()
    }
}

/// The location itself is not repeated: with the root's bucket and
/// prefix in it, it would name the storage root.
fn refused(_location: &str, why: &str) -> CatalogError {
    CatalogError::new(
        crate::error::Code::INVALID_TABLE_STATE,
        format!("cannot vend credentials for this table: {why}; its readers bring their own"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_is_one_table() {
        let s = Scope::of("s3://b/root/ns/t.lance").unwrap().unwrap();
        assert_eq!(s.bucket, "b");
        assert_eq!(s.prefix, "root/ns/t.lance/");
        assert_eq!(Scope::of("s3://b/ns/t/").unwrap().unwrap().prefix, "ns/t/");
        assert_eq!(Scope::of("/data/ns/t.lance").unwrap(), None);
        assert_eq!(Scope::of("memory://x/t").unwrap(), None);
        let engine = Scope::of("s3://b/root/706dacc6_a$t1").unwrap().unwrap();
        assert_eq!(engine.prefix, "root/706dacc6_a$t1/");
        // The store's real keys: the location's segments decoded once.
        for (uri, key) in [
            ("s3://b/r/h_a$t%2525x", "r/h_a$t%25x/"),
            ("s3://b/r/h_a$t%252Fx", "r/h_a$t%2Fx/"),
            ("s3://b/r/h_a$t%7Bx%7D", "r/h_a$t{x}/"),
            ("s3://b/r/h_a$t%C3%A9", "r/h_a$t\u{e9}/"),
            ("s3://b/r/h_a$t%20x", "r/h_a$t x/"),
            ("s3://b/r/h_a$t%23x", "r/h_a$t#x/"),
        ] {
            assert_eq!(Scope::of(uri).unwrap().unwrap().prefix, key, "{uri}");
        }
        // What is a wildcard or a variable once decoded is refused.
        for wild in [
            "s3://b/r/h_a$t%3Fx",
            "s3://b/r/h_a$t%2Ax",
            "s3://b/r/h_a$t%24%7Bx%7D",
        ] {
            Scope::of(wild).unwrap_err();
        }
        for wide in [
            "s3://b",
            "s3://b/",
            "s3://b//",
            "s3://b/ns/t*",
            "s3://b/a?/t",
            "s3://b/${aws:username}/t",
            "s3://b/ns//t",
            "s3://b/ns/../t",
        ] {
            let e = Scope::of(wide).unwrap_err();
            assert_eq!(e.code, crate::error::Code::INVALID_TABLE_STATE, "{wide}");
        }
    }

    #[test]
    fn read_cannot_write_and_nothing_deletes() {
        let s = Scope::of("s3://b/ns/t.lance").unwrap().unwrap();
        let read = s.session_policy(Privilege::Read);
        assert!(read.contains("arn:aws:s3:::b/ns/t.lance/*"), "{read}");
        assert!(read.contains("\"ns/t.lance/*\""), "{read}");
        assert!(!read.contains("PutObject"), "{read}");
        let write = s.session_policy(Privilege::Write);
        assert!(write.contains("s3:PutObject"), "{write}");
        assert!(!write.contains("Delete") && !read.contains("Delete"));
    }
}
