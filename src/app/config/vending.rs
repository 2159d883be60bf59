//! Vended credentials for the default warehouse (`--vend-*`): the role the
//! server assumes through STS for each table it hands out, and how long an
//! answer lasts.

use clap::Args;

use crate::api::vending::VendingSettings;

/// The "Vended credentials" flags. None is a secret: an external id names
/// the trust relationship and is not one (AWS says so), and the warehouse
/// record answers it too.
#[derive(Debug, Clone, Args)]
pub struct VendArgs {
    /// Vend table-scoped credentials for the default warehouse: the IAM
    /// role the server assumes through STS for each table it hands out,
    /// with a session policy allowing that table's prefix only, read-only
    /// or read-write by the caller's grants. Unset: no vending. (Other
    /// warehouses carry their own settings in their record.)
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_ROLE_ARN"
    )]
    pub vend_role_arn: Option<String>,

    /// The external id the vending role's trust policy asks for.
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_EXTERNAL_ID"
    )]
    pub vend_external_id: Option<String>,

    /// Seconds a vended session lives (STS: 900 to 43200).
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_DURATION_SECONDS"
    )]
    pub vend_duration_seconds: Option<u32>,

    /// The STS endpoint; unset: the root's aws_endpoint if set (S3-compatible
    /// stores serve STS beside S3), else AWS's.
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_STS_ENDPOINT"
    )]
    pub vend_sts_endpoint: Option<String>,

    /// The STS region; unset: the root's aws_region, else us-east-1.
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_STS_REGION"
    )]
    pub vend_sts_region: Option<String>,

    /// The longest a vended answer lasts before its client refreshes (and
    /// is authorized again), in seconds, on every warehouse. The session
    /// itself lives at least STS's 900 s; this bounds how long an honest
    /// client goes without asking again.
    #[arg(
        help_heading = "Vended credentials",
        long,
        env = "LANCE_CATALOG_VEND_MAX_SECONDS"
    )]
    pub vend_max_seconds: Option<u64>,
}

impl VendArgs {
    /// The vending settings, checked (`None`: no vending).
    pub fn settings(&self) -> Result<Option<VendingSettings>, String> {
        let vending = self.vend_role_arn.clone().map(|role_arn| VendingSettings {
            role_arn,
            external_id: self.vend_external_id.clone(),
            duration_seconds: self.vend_duration_seconds,
            sts_endpoint: self.vend_sts_endpoint.clone(),
            region: self.vend_sts_region.clone(),
        });
        VendingSettings::checked(vending)
            .map_err(|e| format!("the --vend-* settings: {}", e.message))
    }

    /// `--vend-max-seconds`, at least 1 when set.
    pub fn max_seconds(&self) -> Result<Option<u64>, String> {
        match self.vend_max_seconds {
            Some(0) => Err("--vend-max-seconds must be at least 1".to_string()),
            n => Ok(n),
        }
    }
}
