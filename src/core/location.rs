//! A place under a storage root, held with the one rule for telling two
//! places apart.
//!
//! Stores that fold case (SeaweedFS and other S3-compatibles in their
//! policies, case-insensitive file systems) and Unicode forms would let
//! `shared/VICTIM` reach `shared/victim`. So a [`Location`] keeps its own
//! spelling (what is written to storage and answered) and compares by its
//! key: segment by segment (`a/b` lies inside `a`, `ab` does not), each
//! segment composed (NFC) and case folded. `==` on two locations is this
//! comparison; there is no other.

use std::fmt;

/// A location relative to a storage root, in canonical form: empty and
/// `.` segments dropped (legacy records may hold `a//b/` or `./a`), no
/// leading or trailing `/`. The empty location is the root itself.
#[derive(Clone, Default)]
pub struct Location(String);

impl Location {
    /// A location as recorded or given, leniently made canonical (its
    /// text is not checked: see `table/locations.rs::check_relative`).
    pub fn new(text: &str) -> Self {
        Self(
            text.split('/')
                .filter(|s| !s.is_empty() && *s != ".")
                .collect::<Vec<_>>()
                .join("/"),
        )
    }

    /// Its own spelling, canonical.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the storage root itself.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Its segments (none for the root).
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|s| !s.is_empty())
    }

    /// How many segments it has.
    pub fn depth(&self) -> usize {
        self.segments().count()
    }

    /// Its first segment (empty for the root).
    pub fn first(&self) -> &str {
        self.segments().next().unwrap_or_default()
    }

    /// Its comparison key: each segment folded, joined by `/`.
    pub fn key(&self) -> String {
        self.segments().map(fold).collect::<Vec<_>>().join("/")
    }

    /// Whether the two overlap: the same place, or one inside the other.
    pub fn overlaps(&self, other: &Location) -> bool {
        self.segments()
            .zip(other.segments())
            .all(|(x, y)| same_segment(x, y))
    }

    /// Whether this is `at` or lies below it (everything lies at or below
    /// the root).
    pub fn inside_or_at(&self, at: &Location) -> bool {
        at.depth() <= self.depth() && self.overlaps(at)
    }

    /// Its part below `parent`, in its own spelling, when it lies
    /// strictly inside it.
    pub fn below(&self, parent: &Location) -> Option<Location> {
        let depth = parent.depth();
        (depth < self.depth() && self.overlaps(parent))
            .then(|| Location(self.segments().skip(depth).collect::<Vec<_>>().join("/")))
    }
}

impl PartialEq for Location {
    fn eq(&self, other: &Self) -> bool {
        self.depth() == other.depth() && self.overlaps(other)
    }
}

impl Eq for Location {}

impl std::hash::Hash for Location {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

/// Shown as its quoted text, as a string is (messages name it so).
impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Location {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<&String> for Location {
    fn from(text: &String) -> Self {
        Self::new(text)
    }
}

fn same_segment(x: &str, y: &str) -> bool {
    x == y || fold(x) == fold(y)
}

/// A segment's comparison key: composed (NFC) and lowercased, so two
/// spellings a store may take for one name compare equal.
pub fn fold(segment: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    // Through upper case first: `ſ` and `K` (Kelvin) meet `s` and `k`
    // there, as in the simple case folding some stores match with.
    let folded = segment
        .nfc()
        .collect::<String>()
        .to_uppercase()
        .to_lowercase();
    folded.nfc().collect()
}

/// Whether two storage roots (URIs or absolute paths) overlap: the same
/// scheme, and the same place or one inside the other, compared as
/// locations are (a bucket or directory in another case is the same one
/// to a store that folds it).
pub fn roots_overlap(a: &str, b: &str) -> bool {
    let split = |r: &str| match r.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), Location::new(rest)),
        None => ("file".to_string(), Location::new(r)),
    };
    let ((sa, la), (sb, lb)) = (split(a), split(b));
    sa == sb && la.overlaps(&lb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compared_by_segment_in_any_case_and_form() {
        let l = Location::new;
        assert_eq!(l("./a//b/"), l("a/b"));
        assert_eq!(l("./a//b/").as_str(), "a/b");
        assert_eq!(l("shared/VICTIM"), l("shared/victim/"));
        assert_eq!(l("\u{17f}hared/\u{212a}ey"), l("shared/key"));
        assert_eq!(l("shared/caf\u{e9}"), l("SHARED/CAFE\u{301}"));
        assert_ne!(l("a"), l("ab"));
        assert_ne!(l("a"), l("a/b"));
        assert!(l("a").overlaps(&l("A/b")) && l("A/b").overlaps(&l("a")));
        assert!(!l("a").overlaps(&l("ab")));
        assert!(l("").overlaps(&l("a")) && l("").is_root());
        assert!(l("a/B/c").inside_or_at(&l("A/b")));
        assert!(!l("a").inside_or_at(&l("a/b")));
        assert!(l("x").inside_or_at(&l("")));
        assert_eq!(l("T/Sub/x").below(&l("t")).unwrap().as_str(), "Sub/x");
        assert!(l("t").below(&l("T")).is_none() && l("tx/a").below(&l("t")).is_none());
        assert_eq!(l("AB/Cd").key(), "ab/cd");
        let set: std::collections::HashSet<Location> = [l("A/b"), l("a/B")].into();
        assert_eq!(set.len(), 1);
    }

    #[test]
    fn roots_overlap_by_whole_segments_in_any_case() {
        assert!(roots_overlap("/a/b", "/a/b/"));
        assert!(roots_overlap("/a/b", "/a/b/c"));
        assert!(roots_overlap("s3://x/a/b", "s3://x/a"));
        assert!(roots_overlap("s3://x/WEST", "S3://x/west/t"));
        assert!(!roots_overlap("/a/b", "/a/bc"));
        assert!(!roots_overlap("s3://x/a", "s3://y/a"));
        assert!(!roots_overlap("s3://x/a", "gs://x/a"));
    }
}
