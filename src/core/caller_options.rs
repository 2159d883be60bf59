//! What a caller may steer: storage options by who may set them.
//!
//! The server reaches storage with its own credentials at the endpoints
//! its operator configured (the root's options, a warehouse record's,
//! `--vend-sts-*`). A caller's options (a create's `storage_options`
//! query parameter, a namespace's `lance.storage.*` properties) are
//! merged over those, so any option that names where requests go (an
//! endpoint, a metadata or STS address, a proxy, a virtual-host style), how
//! they are trusted (plain HTTP, unchecked certificates) or where
//! credentials come from (a file, a role, a profile) would turn the
//! server's credentials against a place the operator never chose. So a
//! caller may set only what is on [`CALLER_SETTABLE`]: options that can
//! neither redirect a request nor widen what a credential reaches. Anything
//! else is refused (13) naming the option, and options a record holds from
//! before this rule are dropped when they are read. A caller's options
//! reach the server's stores only as a [`CallerOptions`], which nothing
//! but these two checks makes, laid over the operator's own
//! (`operator_options.rs`) in one place.

use std::collections::HashMap;

use crate::error::{CatalogError, CatalogResult};

/// What a caller-settable option's value must look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A credential the caller brings (replacing the server's; on its
    /// own it reaches nothing the server's would).
    Credential,
    /// An AWS region: lowercase letters, digits and `-` (without an
    /// endpoint it becomes part of the AWS host name, so nothing else).
    Region,
    /// A duration or a count (`30s`, `5`).
    Tuning,
}

/// The options a caller may set, and the shape of their values. Every
/// other key is the operator's alone.
pub const CALLER_SETTABLE: &[(&str, Shape)] = &[
    ("aws_access_key_id", Shape::Credential),
    ("access_key_id", Shape::Credential),
    ("aws_secret_access_key", Shape::Credential),
    ("secret_access_key", Shape::Credential),
    ("aws_session_token", Shape::Credential),
    ("session_token", Shape::Credential),
    ("aws_token", Shape::Credential),
    ("token", Shape::Credential),
    ("aws_region", Shape::Region),
    ("region", Shape::Region),
    ("aws_default_region", Shape::Region),
    ("timeout", Shape::Tuning),
    ("connect_timeout", Shape::Tuning),
    ("client_max_retries", Shape::Tuning),
    ("client_retry_timeout", Shape::Tuning),
    ("download_retry_count", Shape::Tuning),
];

fn shape_of(key: &str) -> Option<Shape> {
    CALLER_SETTABLE
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, shape)| *shape)
}

/// Why a caller's option is refused, if it is.
fn refusal(key: &str, value: &str) -> Option<String> {
    let Some(shape) = shape_of(key) else {
        return Some(format!(
            "storage option {key:?} may not be set by a caller: it could redirect the server's requests or widen what its credentials reach (the operator sets it on the root or the warehouse); a caller may set only {}",
            CALLER_SETTABLE
                .iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let ok = match shape {
        Shape::Credential => {
            !value.is_empty() && value.len() <= 4096 && !value.chars().any(char::is_control)
        }
        Shape::Region => {
            !value.is_empty()
                && value.len() <= 32
                && value
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        }
        Shape::Tuning => tuning_ok(value),
    };
    (!ok).then(|| match shape {
        // A credential's value is never repeated.
        Shape::Credential => format!("storage option {key:?} has an empty or malformed value"),
        Shape::Region => format!(
            "storage option {key:?} must be a region name (lowercase letters, digits and '-'), not {value:?}"
        ),
        Shape::Tuning => format!(
            "storage option {key:?} must be a count up to 100 or a duration up to 10 minutes (\"30s\", \"500ms\"), not {value:?}"
        ),
    })
}

/// A count up to 100, or a duration up to ten minutes (`500ms`, `30s`,
/// `2m`, or seconds alone): a caller's tuning may not hold the server's
/// own work on the namespace for long.
fn tuning_ok(value: &str) -> bool {
    let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || digits.len() > 9 {
        return false;
    }
    let Ok(n) = digits.parse::<u64>() else {
        return false;
    };
    let seconds = match &value[digits.len()..] {
        "" => return n <= 600,
        "ms" => n / 1000,
        "s" => n,
        "m" | "min" => n.saturating_mul(60),
        _ => return false,
    };
    seconds <= 600
}

/// Storage options a caller set, every one on [`CALLER_SETTABLE`] with a
/// value of its shape: only [`CallerOptions::checked`] (a request's,
/// refused whole) and [`CallerOptions::from_record`] (a stored record's,
/// the rest dropped) make one, and the server's stores take a caller's
/// options only as this type, so none reaches them unchecked. No `Debug`:
/// the values may be credentials.
#[derive(Clone, Default)]
pub(crate) struct CallerOptions(HashMap<String, String>);

impl CallerOptions {
    /// A request's options, refused (13, naming them) unless a caller may
    /// set every one. `what` says where they came from.
    pub(crate) fn checked(
        options: Option<&HashMap<String, String>>,
        what: &str,
    ) -> CatalogResult<Self> {
        check_caller_options(options, what)?;
        Ok(Self(options.cloned().unwrap_or_default()))
    }

    /// A stored record's options (written before the rule, it may hold
    /// more): those a caller may set, the others dropped with a warning.
    pub(crate) fn from_record(options: HashMap<String, String>) -> Self {
        Self(caller_only(options))
    }

    /// The operator's `options` with these set over them: only
    /// [`OperatorOptions::with`](crate::core::OperatorOptions) asks.
    pub(super) fn over(&self, options: &mut HashMap<String, String>) {
        options.extend(self.0.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

/// Refuse (13, naming the option) any option a caller may not set.
/// `what` says where they came from (`"the storage_options parameter"`).
pub(crate) fn check_caller_options(
    options: Option<&HashMap<String, String>>,
    what: &str,
) -> CatalogResult<()> {
    let mut keys: Vec<(&String, &String)> = options.into_iter().flatten().collect();
    keys.sort();
    // Every option no caller may set is named at once.
    let off_list: Vec<String> = keys
        .iter()
        .filter(|(k, _)| shape_of(k).is_none())
        .map(|(k, _)| format!("{k:?}"))
        .collect();
    if !off_list.is_empty() {
        return Err(CatalogError::invalid(format!(
            "{what}: storage option{} {} may not be set by a caller: {} could redirect the server's requests or widen what its credentials reach (the operator sets such options on the root or the warehouse); a caller may set only {}",
            if off_list.len() > 1 { "s" } else { "" },
            off_list.join(", "),
            if off_list.len() > 1 { "they" } else { "it" },
            CALLER_SETTABLE
                .iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    for (k, v) in keys {
        if let Some(why) = refusal(k, v) {
            return Err(CatalogError::invalid(format!("{what}: {why}")));
        }
    }
    Ok(())
}

/// The options of `options` a caller may set, the others dropped (with a
/// warning naming the key, never the value): how a record written before
/// the rule is read.
fn caller_only(options: HashMap<String, String>) -> HashMap<String, String> {
    options
        .into_iter()
        .filter(|(k, v)| match refusal(k, v) {
            None => true,
            Some(_) => {
                tracing::warn!(option = %k, "ignored a caller-set storage option the operator's alone may set");
                false
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(k: &str, v: &str) -> HashMap<String, String> {
        HashMap::from([(k.to_string(), v.to_string())])
    }

    #[test]
    fn nothing_that_redirects_or_widens() {
        for k in [
            "aws_endpoint",
            "endpoint",
            "aws_endpoint_url",
            "AWS_ENDPOINT",
            "allow_http",
            "allow_invalid_certificates",
            "aws_virtual_hosted_style_request",
            "virtual_hosted_style_request",
            "aws_metadata_endpoint",
            "aws_container_credentials_relative_uri",
            "aws_web_identity_token_file",
            "aws_role_arn",
            "aws_sts_endpoint",
            "proxy_url",
            "azure_storage_account_name",
            "azure_endpoint",
            "azure_federated_token_file",
            "google_service_account",
            "google_application_credentials",
            "aws_skip_signature",
            "endpoint_region",
            "Aws_Access_Key_Id",
        ] {
            let e = check_caller_options(Some(&one(k, "x")), "p").unwrap_err();
            assert_eq!(e.code, crate::error::Code::INVALID_INPUT, "{k}");
            assert!(e.message.contains(&format!("{k:?}")), "{}", e.message);
        }
    }

    #[test]
    fn a_caller_brings_credentials_a_region_and_timeouts() {
        for (k, v) in [
            ("aws_access_key_id", "AKIA"),
            ("aws_secret_access_key", "s3cr3t/+="),
            ("aws_session_token", "tok"),
            ("aws_region", "eu-west-1"),
            ("timeout", "30s"),
            ("client_max_retries", "3"),
        ] {
            check_caller_options(Some(&one(k, v)), "p").unwrap();
        }
        for bad in ["9999999999999999", "1h", "5d", "x", "30 s"] {
            check_caller_options(Some(&one("client_max_retries", bad)), "p").unwrap_err();
        }
        // A region is a host name's part without an endpoint.
        for bad in ["evil.com#", "x/y", "EU", ""] {
            check_caller_options(Some(&one("aws_region", bad)), "p").unwrap_err();
        }
        let e = check_caller_options(Some(&one("aws_secret_access_key", "")), "p").unwrap_err();
        assert!(!e.message.contains("s3cr3t"));
    }

    #[test]
    fn old_records_keep_only_what_a_caller_may_set() {
        let kept = CallerOptions::from_record(HashMap::from([
            ("aws_endpoint".to_string(), "http://127.0.0.1:1".to_string()),
            ("aws_region".to_string(), "eu-west-1".to_string()),
        ]));
        let mut operator = one("aws_endpoint", "http://store:8333");
        kept.over(&mut operator);
        assert_eq!(operator["aws_endpoint"], "http://store:8333");
        assert_eq!(operator["aws_region"], "eu-west-1");
    }

    #[test]
    fn a_request_s_options_are_taken_whole_or_refused() {
        let mut operator = one("aws_region", "us-east-1");
        CallerOptions::checked(Some(&one("aws_region", "eu-west-1")), "p")
            .unwrap()
            .over(&mut operator);
        assert_eq!(operator["aws_region"], "eu-west-1");
        let mixed = HashMap::from([
            ("aws_region".to_string(), "eu-west-1".to_string()),
            ("aws_endpoint".to_string(), "http://127.0.0.1:1".to_string()),
        ]);
        assert!(CallerOptions::checked(Some(&mixed), "p").is_err());
    }
}
