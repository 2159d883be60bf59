//! How a warehouse vends table credentials: the role the server assumes
//! through AWS STS (or an S3-compatible store's STS) for each table handed
//! to a client.

use serde::{Deserialize, Serialize};

use crate::error::{CatalogError, CatalogResult};

/// AssumeRole settings. The server calls STS with its own credentials for
/// the warehouse (its storage options, the namespace's `lance.storage.*`
/// keys above the table, or its environment) and hands the caller the
/// session's temporary credentials, scoped to the table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VendingSettings {
    /// The role to assume, e.g. `arn:aws:iam::123456789012:role/lance-tables`.
    pub role_arn: String,
    /// The external id the role's trust policy asks for, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// The session's life in seconds (STS allows 900 to 43,200; 3,600 when
    /// unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_seconds: Option<u32>,
    /// The STS endpoint; unset: the storage's own `aws_endpoint` if it has
    /// one (S3-compatible stores serve STS beside S3), else AWS's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sts_endpoint: Option<String>,
    /// The STS region; unset: the storage's `aws_region`, else us-east-1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
}

impl VendingSettings {
    /// Vending settings as a warehouse records them: `None` for none or an
    /// empty role (vending off), refused when STS could not take them.
    pub fn checked(settings: Option<Self>) -> CatalogResult<Option<Self>> {
        let Some(mut s) = settings else {
            return Ok(None);
        };
        s.role_arn = s.role_arn.trim().to_string();
        if s.role_arn.is_empty() {
            return Ok(None);
        }
        if !s.role_arn.starts_with("arn:") {
            return Err(CatalogError::invalid(format!(
                "vending role_arn {:?} is not an ARN (arn:aws:iam::<account>:role/<name>)",
                s.role_arn
            )));
        }
        if let Some(d) = s.duration_seconds {
            if !(900..=43_200).contains(&d) {
                return Err(CatalogError::invalid(format!(
                    "vending duration_seconds {d} is outside what STS grants (900 to 43200)"
                )));
            }
        }
        if let Some(e) = &s.sts_endpoint {
            let ok = url::Url::parse(e).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
            if !ok {
                return Err(CatalogError::invalid(format!(
                    "vending sts_endpoint {e:?} is not an http(s) URL"
                )));
            }
        }
        Ok(Some(s))
    }

    /// The session life STS is asked for.
    pub fn duration(&self) -> u32 {
        self.duration_seconds.unwrap_or(3600).clamp(900, 43_200)
    }
}
