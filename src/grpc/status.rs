//! Errors as gRPC statuses (the gRPC services and Arrow Flight): the status
//! code from the one table in `error.rs`, and the exact spec code and name
//! in the `lance-error-code` and `lance-error-name` metadata entries, so a
//! client can always recover them.

use tonic::metadata::MetadataValue;
use tonic::{Code as GrpcCode, Status};

use crate::error::{CatalogError, Code};

pub const CODE_KEY: &str = "lance-error-code";
pub const NAME_KEY: &str = "lance-error-name";

/// The status for an error. An internal error is logged under a fresh
/// request id, which the status carries in `x-request-id` and its message.
pub fn to_status(err: CatalogError) -> Status {
    crate::telemetry::note_error(err.code);
    let request_id =
        crate::telemetry::request_id().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let message = err.public_message(&request_id, "grpc");
    let mut status = Status::new(GrpcCode::from_i32(err.code.grpc_status()), message);
    let meta = status.metadata_mut();
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
