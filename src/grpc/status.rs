//! Errors over gRPC: the status code from the one table in `error.rs`, and
//! the exact spec code and name in the `lance-error-code` and
//! `lance-error-name` metadata entries, so a client can always recover them.

use tonic::metadata::MetadataValue;
use tonic::{Code as GrpcCode, Status};

use crate::error::{CatalogError, Code};

pub const CODE_KEY: &str = "lance-error-code";
pub const NAME_KEY: &str = "lance-error-name";

pub fn to_status(err: CatalogError) -> Status {
    let message = if err.code == Code::INTERNAL {
        tracing::error!(error = %err.message, "internal error");
        "internal error while serving this request; the server log has the details".to_string()
    } else {
        err.message
    };
    let mut status = Status::new(GrpcCode::from_i32(err.code.grpc_status()), message);
    let meta = status.metadata_mut();
    if let Ok(v) = MetadataValue::try_from(err.code.0.to_string()) {
        meta.insert(CODE_KEY, v);
    }
    if let Ok(v) = MetadataValue::try_from(err.code.name()) {
        meta.insert(NAME_KEY, v);
    }
    status
}

/// The spec error a status carries (its metadata code, else one derived
/// from the gRPC code).
pub fn from_status(status: &Status) -> CatalogError {
    let code = status
        .metadata()
        .get(CODE_KEY)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u32>().ok())
        .map(Code)
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
