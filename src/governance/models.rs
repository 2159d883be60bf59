//! The hierarchy's records and the control plane's requests and answers,
//! named as their proto messages.

pub use crate::api::hierarchy::*;

pub use crate::api::access::*;
pub use crate::api::audit::*;

/// The built-in project and warehouse: every object has a governance
/// parent even with warehouses off.
pub const DEFAULT_PROJECT: &str = "default";
pub const DEFAULT_WAREHOUSE: &str = "default";

pub use crate::core::{is_secret, REDACTED};

impl Warehouse {
    /// The warehouse as answered to callers: secret option values hidden.
    pub fn redacted(mut self) -> Self {
        for (k, v) in self.storage_options.iter_mut() {
            if is_secret(k) {
                *v = REDACTED.to_string();
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn secrets_are_redacted() {
        let w = Warehouse {
            storage_options: HashMap::from([
                ("aws_secret_access_key".into(), "s3cr3t".into()),
                ("aws_access_key_id".into(), "AKIA".into()),
                ("aws_session_token".into(), "tok".into()),
                ("aws_region".into(), "eu-west-1".into()),
                ("aws_endpoint".into(), "http://127.0.0.1:9000".into()),
            ]),
            ..Default::default()
        }
        .redacted();
        assert_eq!(w.storage_options["aws_secret_access_key"], REDACTED);
        assert_eq!(w.storage_options["aws_session_token"], REDACTED);
        assert_eq!(w.storage_options["aws_access_key_id"], "AKIA");
        assert_eq!(w.storage_options["aws_region"], "eu-west-1");
        assert_eq!(w.storage_options["aws_endpoint"], "http://127.0.0.1:9000");
    }
}
