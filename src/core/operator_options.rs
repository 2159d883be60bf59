//! What the operator set: the storage options the server reaches its own
//! stores with (the root's from `--storage-option` or the config file, a
//! warehouse record's from its administrator). They may name endpoints,
//! credentials and trust, which is why only the operator's paths make one
//! ([`OperatorOptions::new`]) and a caller's options meet them only as a
//! checked [`CallerOptions`] laid over them ([`OperatorOptions::with`]).
//! `Debug` redacts secrets, so printing a configuration never prints a
//! credential.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use lance::io::{ObjectStoreParams, StorageOptionsAccessor};

use crate::core::caller_options::CallerOptions;
use crate::core::namespace::storage_options::{is_secret, REDACTED};

/// The operator's storage options for one root.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OperatorOptions(HashMap<String, String>);

impl OperatorOptions {
    /// The operator's `options`, as configured (the serve flags, the config
    /// file, a warehouse record).
    pub fn new(options: HashMap<String, String>) -> Self {
        Self(options)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// One option's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// These options with each of `callers` set over them in turn (a later
    /// one wins): what the server reaches a table's bytes with. Never an
    /// answer as it stands; see `Reach::handed`.
    pub(crate) fn with<'a>(
        &self,
        callers: impl IntoIterator<Item = &'a CallerOptions>,
    ) -> HashMap<String, String> {
        let mut options = self.0.clone();
        for caller in callers {
            caller.over(&mut options);
        }
        options
    }

    /// As Lance takes them: `None` when there are none, because an empty
    /// map keys a different object store than no map (for `memory://`, a
    /// different, empty store).
    pub(crate) fn for_lance(&self) -> Option<HashMap<String, String>> {
        lance_options(&self.0)
    }

    /// Object-store parameters for these options with `caller`'s over them.
    pub(crate) fn params(&self, caller: Option<&CallerOptions>) -> ObjectStoreParams {
        params_of(self.with(caller))
    }
}

/// `options` as Lance takes them (see [`OperatorOptions::for_lance`]).
fn lance_options(options: &HashMap<String, String>) -> Option<HashMap<String, String>> {
    (!options.is_empty()).then(|| options.clone())
}

/// Object-store parameters carrying `options` (none when empty).
fn params_of(options: HashMap<String, String>) -> ObjectStoreParams {
    ObjectStoreParams {
        storage_options_accessor: (!options.is_empty())
            .then(|| Arc::new(StorageOptionsAccessor::with_static_options(options))),
        ..Default::default()
    }
}

impl From<HashMap<String, String>> for OperatorOptions {
    fn from(options: HashMap<String, String>) -> Self {
        Self::new(options)
    }
}

impl FromIterator<(String, String)> for OperatorOptions {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        Self::new(iter.into_iter().collect())
    }
}

impl From<OperatorOptions> for HashMap<String, String> {
    /// Back to a plain map, for a record the operator writes (a warehouse's
    /// options).
    fn from(options: OperatorOptions) -> Self {
        options.0
    }
}

impl std::fmt::Debug for OperatorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown: BTreeMap<&str, &str> = self
            .0
            .iter()
            .map(|(k, v)| match is_secret(k) {
                true => (k.as_str(), REDACTED),
                false => (k.as_str(), v.as_str()),
            })
            .collect();
        shown.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operator() -> OperatorOptions {
        OperatorOptions::new(HashMap::from([
            (
                "aws_endpoint".to_string(),
                "http://127.0.0.1:9000".to_string(),
            ),
            ("aws_secret_access_key".to_string(), "s3cr3t".to_string()),
            ("aws_region".to_string(), "us-east-1".to_string()),
        ]))
    }

    #[test]
    fn debug_never_prints_a_secret() {
        let shown = format!("{:?}", operator());
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains(REDACTED) && shown.contains("127.0.0.1:9000"));
    }

    #[test]
    fn a_caller_sets_only_what_it_may_over_the_operators() {
        let caller = CallerOptions::from_record(HashMap::from([
            ("aws_region".to_string(), "eu-west-1".to_string()),
            (
                "aws_endpoint".to_string(),
                "http://evil.example".to_string(),
            ),
        ]));
        let merged = operator().with([&caller]);
        assert_eq!(merged["aws_region"], "eu-west-1");
        assert_eq!(merged["aws_endpoint"], "http://127.0.0.1:9000");
    }

    #[test]
    fn none_for_lance_when_empty() {
        assert!(OperatorOptions::default().for_lance().is_none());
        assert!(operator().for_lance().is_some());
    }
}
