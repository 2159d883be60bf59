//! Errors as gRPC statuses (the gRPC services and Arrow Flight): the status
//! code from the one table in `error.rs`, and the exact spec code and name
//! in the `lance-error-code` and `lance-error-name` metadata entries, and
//! the same again in the ecosystem's rich model: a `google.rpc.Status` in
//! `grpc-status-details-bin` holding an `ErrorInfo { reason: <code name>,
//! domain: "lance.catalog", metadata: {code} }`, which generic gRPC tooling
//! and clients in any language read without knowing our metadata keys.

use std::collections::HashMap;

use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code as GrpcCode, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::error::{CatalogError, Code};

pub const CODE_KEY: &str = "lance-error-code";
pub const NAME_KEY: &str = "lance-error-name";
/// `ErrorInfo.domain` of every error the catalog answers.
pub const DOMAIN: &str = "lance.catalog";

/// The status for an error. An internal error is logged under a fresh
/// request id, which the status carries in `x-request-id` and its message.
pub fn to_status(err: CatalogError) -> Status {
    crate::telemetry::note_error(err.code);
    let request_id =
        crate::telemetry::request_id().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let message = err.public_message(&request_id, "grpc");
    let mut meta = MetadataMap::new();
    if err.code == Code::INTERNAL {
        if let Ok(v) = MetadataValue::try_from(request_id.as_str()) {
            meta.insert("x-request-id", v);
        }
    }
    if let Ok(v) = MetadataValue::try_from(err.code.0.to_string()) {
        meta.insert(CODE_KEY, v);
    }
    if let Ok(v) = MetadataValue::try_from(err.code.name()) {
        meta.insert(NAME_KEY, v);
    }
    let info = ErrorDetails::with_error_info(
        err.code.name(),
        DOMAIN,
        HashMap::from([("code".to_string(), err.code.0.to_string())]),
    );
    Status::with_error_details_and_metadata(
        GrpcCode::from_i32(err.code.grpc_status()),
        message,
        info,
        meta,
    )
}

/// The spec code a status names in its `ErrorInfo`, when it has ours.
fn detailed_code(status: &Status) -> Option<Code> {
    let info = status.get_details_error_info()?;
    if info.domain != DOMAIN {
        return None;
    }
    info.metadata.get("code")?.parse::<u32>().ok().map(Code)
}

/// The spec error a status carries (its `ErrorInfo` code, else its
/// metadata code, else one derived from the gRPC code).
pub fn from_status(status: &Status) -> CatalogError {
    let code = detailed_code(status)
        .or_else(|| {
            status
                .metadata()
                .get(CODE_KEY)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u32>().ok())
                .map(Code)
        })
        .unwrap_or(match status.code() {
            GrpcCode::NotFound => Code::TABLE_NOT_FOUND,
            GrpcCode::InvalidArgument => Code::INVALID_INPUT,
            GrpcCode::Unimplemented => Code::UNSUPPORTED,
            GrpcCode::Unavailable => Code::SERVICE_UNAVAILABLE,
            GrpcCode::Unauthenticated => Code::UNAUTHENTICATED,
            GrpcCode::Aborted => Code::CONCURRENT_MODIFICATION,
            _ => Code::INTERNAL,
        });
    CatalogError::new(code, status.message().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{CONTROL_TABLE, STATUS_TABLE};

    #[test]
    fn every_code_travels_in_error_info_and_back() {
        for &(code, name, _, grpc) in STATUS_TABLE.iter().chain(CONTROL_TABLE) {
            let status = to_status(CatalogError::new(Code(code), "boom"));
            assert_eq!(status.code() as i32, grpc, "{name}");
            let info = status.get_details_error_info().expect(name);
            assert_eq!(info.reason, name);
            assert_eq!(info.domain, DOMAIN);
            assert_eq!(info.metadata.get("code"), Some(&code.to_string()));
            assert_eq!(status.metadata().get(CODE_KEY).unwrap(), &code.to_string());
            // A client that reads only the rich model (no metadata keys)
            // recovers the exact code.
            let bare = Status::with_error_details(
                status.code(),
                status.message(),
                status.get_error_details(),
            );
            assert_eq!(from_status(&bare).code, Code(code), "{name}");
        }
    }
}
