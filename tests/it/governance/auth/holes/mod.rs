//! The access holes an attacker found, each reproduced: grants that
//! followed names instead of objects (a writer made herself admin through
//! drop and re-create; a rename onto a trashed name inherited its grants),
//! storage secrets handed to readers, tokens accepted without their
//! configured issuer or audience, existence oracles, batches authorized
//! against the empty id, and registering bytes no table owns. Over REST,
//! and over gRPC and Flight where the operation exists there.

use std::collections::HashMap;

use arrow_flight::{FlightClient, Ticket};
use bytes::Bytes;
use futures::TryStreamExt;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use lance_catalog::auth::JwtConfig;
use lance_catalog::governance::TrashConfig;
use lance_catalog::grpc::client::GrpcNamespace;
use lance_catalog::rest::OPS;
use lance_namespace::models::{
    BatchCommitTablesRequest, CommitTableOperation, DeclareTableRequest, DescribeTableRequest,
    Identity, RenameTableRequest,
};
use lance_namespace::LanceNamespace;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{now, token, Server, SECRET};

pub(super) const GRACE: TrashConfig = TrashConfig {
    grace_s: 3600,
    purge_expired: false,
};

/// A spec request's identity for `who`'s token.
pub(super) fn identity(who: &str) -> Option<Box<Identity>> {
    Some(Box::new(Identity {
        auth_token: Some(token(who, json!({}))),
        ..Default::default()
    }))
}

pub(super) async fn grpc(s: &Server) -> GrpcNamespace {
    GrpcNamespace::connect(&s.base).await.unwrap()
}

async fn flight(s: &Server, who: &str) -> FlightClient {
    crate::transport::flight::signed_in(&s.base, who).await
}

/// The spec code of a failed call.
fn code<T: std::fmt::Debug>(r: lance::Result<T>) -> u32 {
    crate::harness::code(r)
}

impl Server {
    /// `method path` as `who`: the status and the spec code (0 on success).
    async fn status(&self, who: &str, method: &str, path: &str, body: Value) -> (StatusCode, u64) {
        let body = (method != "GET" && method != "DELETE").then_some(body);
        let (st, b, _) = self.send(Some(who), method, path, body, None).await;
        (st, b["code"].as_u64().unwrap_or(0))
    }

    /// Top-level namespaces made by the admin.
    pub(super) async fn namespaces(&self, names: &[&str]) {
        for ns in names {
            self.ok(
                "root",
                "POST",
                &format!("/v1/namespace/{ns}/create"),
                json!({}),
            )
            .await;
        }
    }

    async fn rows_of(&self, who: &str, id: &str) -> i64 {
        let b = self
            .ok(
                who,
                "POST",
                &format!("/v1/table/{id}/count_rows"),
                json!({}),
            )
            .await;
        b.as_i64().unwrap()
    }

    async fn grant_id(&self, principal: &str) -> Vec<Value> {
        let listed = self
            .ok(
                "root",
                "GET",
                &format!("/v1/grants?principal={principal}"),
                Value::Null,
            )
            .await;
        listed["grants"].as_array().cloned().unwrap_or_default()
    }
}

const DENIED: (StatusCode, u64) = (StatusCode::FORBIDDEN, 15);
const OK: (StatusCode, u64) = (StatusCode::OK, 0);

mod exposure;
mod grants;
mod parts;
mod seams;
