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
fn identity(who: &str) -> Option<Box<Identity>> {
    Some(Box::new(Identity {
        auth_token: Some(token(who, json!({}))),
        ..Default::default()
    }))
}

async fn grpc(s: &Server) -> GrpcNamespace {
    GrpcNamespace::connect(&s.base).await.unwrap()
}

async fn flight(s: &Server, who: &str) -> FlightClient {
    let mut client = crate::flight::connect(&s.base).await;
    client
        .add_header(
            "authorization",
            &format!("Bearer {}", token(who, json!({}))),
        )
        .unwrap();
    client
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_cannot_make_itself_admin_by_drop_and_recreate() {
    let s = Server::open(|c| c.trash = GRACE).await;
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a$t1").await;
    s.grant("table", json!(["a", "t1"]), "wendy", "writer")
        .await;
    s.grant("table", json!(["a", "t1"]), "rita", "reader").await;

    // Her writer grant lets her drop the table ...
    let dropped = s
        .ok("wendy", "POST", "/v1/table/a$t1/drop", Value::Null)
        .await;
    let original = dropped["transaction_id"].as_str().unwrap().to_string();
    // ... but not create one in its namespace: the grant was on that
    // table, which is in trash now, not on the name.
    let (st, b, _) = s
        .send(
            Some("wendy"),
            "POST",
            "/v1/table/a$t1/create",
            None,
            Some(crate::harness::rows(0, 1)),
        )
        .await;
    assert_eq!((st, b["code"].as_u64().unwrap_or(0)), DENIED, "{b}");

    // The admin makes another a$t1 and shares it: that grant is on the
    // newcomer only.
    let (st, b, _) = s
        .send(
            Some("root"),
            "POST",
            "/v1/table/a$t1/create",
            None,
            Some(crate::harness::rows(100, 1)),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{b}");
    s.grant("table", json!(["a", "t1"]), "third", "reader")
        .await;
    assert_eq!(s.rows_of("third", "a$t1").await, 1);
    s.ok("root", "POST", "/v1/table/a$t1/drop", Value::Null)
        .await;
    s.ok(
        "root",
        "POST",
        "/v1/table/a$t1/undrop",
        json!({"trash_id": original}),
    )
    .await;

    // The original is back with its own grants, and only those.
    let describe = "/v1/table/a$t1/describe";
    assert_eq!(s.status("third", "POST", describe, json!({})).await, DENIED);
    assert_eq!(s.rows_of("rita", "a$t1").await, 3, "the original's rows");
    let (st, _, _) = s
        .send(
            Some("wendy"),
            "POST",
            "/v1/table/a$t1/insert",
            None,
            Some(crate::harness::rows(3, 1)),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "the writer writes the original again");
    let granted = json!({"resource": {"kind": "table", "id": ["a", "t1"]}, "principal": "x", "relation": "reader"});
    assert_eq!(
        s.status("wendy", "POST", "/v1/grants", granted).await,
        DENIED
    );

    // The same over gRPC and Flight.
    let ns = grpc(&s).await;
    let over_grpc = ns
        .describe_table(DescribeTableRequest {
            id: Some(vec!["a".into(), "t1".into()]),
            identity: identity("third"),
            ..Default::default()
        })
        .await;
    assert_eq!(code(over_grpc), 15);
    let mut f = flight(&s, "third").await;
    let ticket = Ticket::new(Bytes::from(json!({"id": ["a", "t1"]}).to_string()));
    let got = match f.do_get(ticket).await {
        Ok(stream) => stream.try_collect::<Vec<_>>().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert_eq!(crate::flight::spec_code(got.unwrap_err()), "15");
    let mut f = flight(&s, "rita").await;
    let ticket = Ticket::new(Bytes::from(json!({"id": ["a", "t1"]}).to_string()));
    let batches: Vec<_> = f.do_get(ticket).await.unwrap().try_collect().await.unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 4);

    // Each refusal is in the audit trail, naming the object by its real id.
    let events = s
        .ok("root", "GET", "/v1/events?limit=1000", Value::Null)
        .await;
    let real = s.grant_id("rita").await[0]["resource"]["object_id"].clone();
    assert!(real.is_string(), "a grant names its object's real id");
    let refused = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["principal"] == "third" && e["outcome"] == "denied")
        .collect::<Vec<_>>();
    assert!(
        refused
            .iter()
            .any(|e| e["code"] == 15 && e["resource"]["object_id"] == real),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_onto_a_trashed_name_inherits_nothing() {
    let s = Server::open(|c| c.trash = GRACE).await;
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a$old1").await;
    s.create_table("root", "a$t3").await;
    s.grant("table", json!(["a", "old1"]), "pam", "reader")
        .await;
    s.grant("namespace", json!(["a"]), "walt", "writer").await;
    s.ok("root", "POST", "/v1/table/a$old1/drop", Value::Null)
        .await;
    s.ok(
        "walt",
        "POST",
        "/v1/table/a$t3/rename",
        json!({"new_table_name": "old1"}),
    )
    .await;
    let describe = "/v1/table/a$old1/describe";
    assert_eq!(s.status("pam", "POST", describe, json!({})).await, DENIED);
    // Over gRPC too.
    let over_grpc = grpc(&s)
        .await
        .describe_table(DescribeTableRequest {
            id: Some(vec!["a".into(), "old1".into()]),
            identity: identity("pam"),
            ..Default::default()
        })
        .await;
    assert_eq!(code(over_grpc), 15);

    // Her grant stayed with the trashed table: back under its name, she
    // reads it again; renamed, her grant follows it (and says so).
    s.ok(
        "walt",
        "POST",
        "/v1/table/a$old1/rename",
        json!({"new_table_name": "t3"}),
    )
    .await;
    s.ok("root", "POST", "/v1/table/a$old1/undrop", json!({}))
        .await;
    assert_eq!(s.status("pam", "POST", describe, json!({})).await, OK);
    s.ok(
        "root",
        "POST",
        "/v1/table/a$old1/rename",
        json!({"new_table_name": "moved"}),
    )
    .await;
    assert_eq!(
        s.status("pam", "POST", "/v1/table/a$moved/describe", json!({}))
            .await,
        OK
    );
    assert_eq!(
        s.status("pam", "POST", "/v1/table/a$t3/describe", json!({}))
            .await,
        DENIED
    );
    let grants = s.grant_id("pam").await;
    assert_eq!(grants[0]["resource"]["id"], json!(["a", "moved"]));

    // An undrop into a namespace made again since the drop needs the
    // right to create there: a table writer cannot move its table under
    // a namespace of her own making.
    s.ok("root", "POST", "/v1/namespace/b/create", json!({}))
        .await;
    s.create_table("root", "b$x").await;
    s.grant("table", json!(["b", "x"]), "vera", "writer").await;
    s.ok("vera", "POST", "/v1/table/b$x/drop", Value::Null)
        .await;
    s.ok(
        "root",
        "POST",
        "/v1/namespace/b/drop",
        json!({"behavior": "Cascade"}),
    )
    .await;
    s.ok("root", "POST", "/v1/namespace/b/create", json!({}))
        .await;
    assert_eq!(
        s.status("vera", "POST", "/v1/table/b$x/undrop", json!({}))
            .await,
        DENIED
    );
    // The namespace itself does not come back over its newcomer.
    let (st, b, _) = s
        .send(
            Some("root"),
            "POST",
            "/v1/namespace/b/undrop",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::CONFLICT, "{b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_secrets_leave_the_server_only_when_the_operator_opts_in() {
    let options = HashMap::from([
        (
            "aws_secret_access_key".to_string(),
            "s3cr3t-root".to_string(),
        ),
        ("aws_access_key_id".to_string(), "AKIAROOT".to_string()),
        ("aws_region".to_string(), "eu-west-1".to_string()),
    ]);
    // Every inventory row whose answer carries storage options is one this
    // test calls: a new one fails here until it is checked too.
    let answering: Vec<&str> = OPS
        .iter()
        .filter(|op| {
            lance_catalog::grpc::convert::message(op.response)
                .is_some_and(|m| m.get_field_by_name("storage_options").is_some())
        })
        .map(|op| op.name)
        .collect();
    assert_eq!(answering, ["DescribeTable", "CreateTable", "DeclareTable"]);

    for forward in [false, true] {
        let opts = options.clone();
        let s = Server::open(|c| {
            c.storage.storage_options = opts;
            c.storage.forward_secrets = forward;
        })
        .await;
        s.ok(
            "root",
            "POST",
            "/v1/namespace/so/create",
            json!({"properties": {"lance.storage.aws_session_token": "s3cr3t-ns", "lance.storage.endpoint_region": "x"}}),
        )
        .await;
        s.grant("namespace", json!(["so"]), "rita", "reader").await;
        let (st, created, _) = s
            .send(
                Some("root"),
                "POST",
                "/v1/table/so$t/create",
                None,
                Some(crate::harness::rows(0, 1)),
            )
            .await;
        assert_eq!(st, StatusCode::OK);
        let declared = s
            .ok("root", "POST", "/v1/table/so$d/declare", json!({}))
            .await;
        let described = s
            .ok("rita", "POST", "/v1/table/so$t/describe", json!({}))
            .await;
        let over_grpc = grpc(&s)
            .await
            .describe_table(DescribeTableRequest {
                id: Some(vec!["so".into(), "t".into()]),
                identity: identity("rita"),
                ..Default::default()
            })
            .await
            .unwrap();
        let over_grpc = json!({"storage_options": over_grpc.storage_options});
        for (name, answer) in [
            ("create", &created),
            ("declare", &declared),
            ("describe", &described),
            ("describe over gRPC", &over_grpc),
        ] {
            let o = &answer["storage_options"];
            assert_eq!(o["aws_region"], "eu-west-1", "{name}: {answer}");
            assert_eq!(o["aws_access_key_id"], "AKIAROOT", "{name}: {answer}");
            let text = answer.to_string();
            assert_eq!(
                text.contains("s3cr3t-root"),
                forward,
                "{name} (forward {forward}): {answer}"
            );
            assert_eq!(
                text.contains("s3cr3t-ns"),
                forward,
                "{name} (forward {forward}): {answer}"
            );
        }
        // A namespace's own answer hides its secret whatever the setting.
        let ns = s
            .ok("rita", "POST", "/v1/namespace/so/describe", json!({}))
            .await;
        assert!(!ns.to_string().contains("s3cr3t"), "{ns}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_issuer_and_audience_are_required() {
    let s = Server::open(|c| {
        c.auth.jwt = Some(JwtConfig {
            secret: Some(SECRET.into()),
            issuer: Some("https://idp.example".into()),
            audience: Some("lance".into()),
            ..Default::default()
        })
    })
    .await;
    let sign = |claims: Value| {
        encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
        )
        .unwrap()
    };
    let exp = now() + 60;
    for (claims, want) in [
        (
            json!({"sub": "root", "exp": exp, "iss": "https://idp.example", "aud": "lance"}),
            StatusCode::OK,
        ),
        (
            json!({"sub": "root", "exp": exp, "aud": "lance"}),
            StatusCode::UNAUTHORIZED,
        ),
        (
            json!({"sub": "root", "exp": exp, "iss": "https://idp.example"}),
            StatusCode::UNAUTHORIZED,
        ),
        (json!({"sub": "root", "exp": exp}), StatusCode::UNAUTHORIZED),
    ] {
        let r =
            s.c.get(format!("{}/v1/projects", s.base))
                .bearer_auth(sign(claims.clone()))
                .send()
                .await
                .unwrap();
        assert_eq!(r.status(), want, "{claims}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_learns_nothing_of_what_it_may_not_see() {
    let s = Server::open(|c| c.warehouses = true).await;
    s.ok("root", "POST", "/v1/projects", json!({"project_id": "p"}))
        .await;
    s.ok(
        "root",
        "POST",
        "/v1/warehouses/default/namespaces",
        json!({"namespace": "b"}),
    )
    .await;
    s.create_table("root", "b$secret").await;
    s.grant("namespace", json!(["b"]), "rhea", "reader").await;
    let rename = json!({"new_table_name": "t2"});
    let grant = |id: &[&str]| json!({"resource": {"kind": "table", "id": id}, "principal": "nosy", "relation": "admin"});
    let warehouse = |project: &str| json!({"warehouse_id": "w9", "project_id": project, "root": "/tmp/never-made"});
    // (what exists, what does not): the same refusal for both.
    let pairs = [
        (
            "POST",
            "/v1/table/b$secret/rename",
            "/v1/table/b$nope/rename",
            rename.clone(),
            rename,
        ),
        (
            "POST",
            "/v1/table/b$x/declare",
            "/v1/table/c$x/declare",
            json!({}),
            json!({}),
        ),
        (
            "POST",
            "/v1/namespace/b$n/create",
            "/v1/namespace/c$n/create",
            json!({}),
            json!({}),
        ),
        (
            "GET",
            "/v1/namespace/b/table/list",
            "/v1/namespace/c/table/list",
            json!({}),
            json!({}),
        ),
        (
            "GET",
            "/v1/namespace/b/list",
            "/v1/namespace/c/list",
            json!({}),
            json!({}),
        ),
        (
            "POST",
            "/v1/warehouses",
            "/v1/warehouses",
            warehouse("p"),
            warehouse("q"),
        ),
        (
            "POST",
            "/v1/grants",
            "/v1/grants",
            grant(&["b", "secret"]),
            grant(&["b", "nope"]),
        ),
    ];
    for (method, there, missing, body, other) in pairs {
        let a = s.status("nosy", method, there, body).await;
        let b = s.status("nosy", method, missing, other).await;
        assert_eq!((a, b), (DENIED, DENIED), "{method} {there} / {missing}");
    }
    // Over gRPC too.
    let ns = grpc(&s).await;
    for source in ["secret", "nope"] {
        let renamed = ns
            .rename_table(RenameTableRequest {
                id: Some(vec!["b".into(), source.into()]),
                new_table_name: "t2".into(),
                identity: identity("nosy"),
                ..Default::default()
            })
            .await;
        assert_eq!(code(renamed), 15, "{source}");
    }
    // A caller who may see where it would be is told it is missing.
    assert_eq!(
        s.status("rhea", "POST", "/v1/table/b$m$t/declare", json!({}))
            .await,
        (StatusCode::NOT_FOUND, 1)
    );
    assert_eq!(
        s.status(
            "rhea",
            "POST",
            "/v1/table/b$nope/rename",
            json!({"new_table_name": "z"})
        )
        .await,
        (StatusCode::NOT_FOUND, 4)
    );
    // Each hidden refusal is audited with its code.
    let events = s
        .ok("root", "GET", "/v1/events?limit=1000", Value::Null)
        .await;
    let denied = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["principal"] == "nosy" && e["outcome"] == "denied" && e["code"] == 15)
        .count();
    assert!(denied >= 16, "{denied} refusals audited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_allowed_exactly_when_each_part_is() {
    let s = Server::open(|_| {}).await;
    s.namespaces(&["a", "z"]).await;
    s.grant("namespace", json!(["a"]), "walt", "writer").await;
    let declare = |ns: &str, t: &str| json!({"declare_table": {"id": [ns, t]}});
    let batch = "/v1/table/batch-commit";
    let mine = json!({"operations": [declare("a", "b1"), declare("a", "b2")]});
    assert_eq!(s.status("walt", "POST", batch, mine).await, OK);
    // What he declared in a batch is his, as a single declare's would be.
    let share = json!({"resource": {"kind": "table", "id": ["a", "b1"]}, "principal": "x", "relation": "reader"});
    assert_eq!(s.status("walt", "POST", "/v1/grants", share).await, OK);
    let mixed = json!({"operations": [declare("a", "b3"), declare("z", "b3")]});
    assert_eq!(s.status("walt", "POST", batch, mixed).await, DENIED);
    assert_eq!(
        s.status("root", "POST", "/v1/table/a$b3/exists", json!({}))
            .await,
        (StatusCode::NOT_FOUND, 4),
        "a refused batch wrote nothing"
    );
    let versions = json!({"entries": [{"id": ["z", "t"], "version": 1, "manifest_path": "x"}]});
    assert_eq!(
        s.status("walt", "POST", "/v1/table/version/batch-create", versions)
            .await,
        DENIED
    );
    let versions = json!({"entries": [{"id": ["a", "b1"], "version": 1, "manifest_path": "x"}]});
    let (st, _) = s
        .status("walt", "POST", "/v1/table/version/batch-create", versions)
        .await;
    assert!(
        st != StatusCode::FORBIDDEN && st != StatusCode::UNAUTHORIZED,
        "his own table's part is his: {st}"
    );
    // Over gRPC.
    let ns = grpc(&s).await;
    let part = |ns: &str, t: &str| CommitTableOperation {
        declare_table: Some(Box::new(DeclareTableRequest {
            id: Some(vec![ns.into(), t.into()]),
            ..Default::default()
        })),
        ..Default::default()
    };
    let ok = ns
        .batch_commit_tables(BatchCommitTablesRequest {
            operations: vec![part("a", "g1")],
            identity: identity("walt"),
            ..Default::default()
        })
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    let refused = ns
        .batch_commit_tables(BatchCommitTablesRequest {
            operations: vec![part("a", "g2"), part("z", "g2")],
            identity: identity("walt"),
            ..Default::default()
        })
        .await;
    assert_eq!(code(refused), 15);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registering_bytes_no_table_owns_is_a_privilege_of_its_own() {
    let s = Server::open(|_| {}).await;
    s.namespaces(&["a", "b"]).await;
    s.create_table("root", "b$src").await;
    let gone = s
        .ok("root", "POST", "/v1/table/b$src/deregister", json!({}))
        .await;
    let location = gone["location"].as_str().unwrap().to_string();
    s.grant("namespace", json!(["a"]), "walt", "writer").await;
    let register = json!({"location": location});
    let path = "/v1/table/a$stolen/register";
    assert_eq!(
        s.status("walt", "POST", path, register.clone()).await,
        DENIED
    );
    // A grant the operator gives: registrar on the warehouse.
    let (st, b, _) = s
        .send(
            Some("root"),
            "POST",
            "/v1/grants",
            Some(json!({"resource": {"kind": "namespace", "id": ["a"]}, "principal": "walt", "relation": "registrar"})),
            None,
        )
        .await;
    assert_eq!(
        st,
        StatusCode::BAD_REQUEST,
        "registrar is held on a warehouse: {b}"
    );
    s.grant("warehouse", json!(["default"]), "walt", "registrar")
        .await;
    assert_eq!(s.status("walt", "POST", path, register).await, OK);
    assert_eq!(s.rows_of("walt", "a$stolen").await, 3);

    // A reader's task listing writes nothing (not even the table's id).
    s.grant("table", json!(["a", "stolen"]), "rita", "reader")
        .await;
    let versions = || {
        std::fs::read_dir(s.root().join("__manifest/_versions"))
            .unwrap()
            .count()
    };
    let before = versions();
    s.ok(
        "rita",
        "GET",
        "/lance/oss/v1/table/a$stolen/tasks?task_type=lance_compact",
        Value::Null,
    )
    .await;
    assert_eq!(versions(), before, "a read wrote the manifest");
}

/// A grant recorded before real ids existed (by name only), as the
/// previous release wrote it.
fn legacy_grant(root: &std::path::Path, grant_id: &str, id: &[&str], principal: &str) {
    let dir = root.join("_catalog/control/grant").join(grant_id);
    std::fs::create_dir_all(&dir).unwrap();
    let grant = json!({
        "grant_id": grant_id,
        "resource": {"kind": "table", "id": id, "warehouse": "default"},
        "principal": principal,
        "relation": "reader",
        "created_at_ms": 1,
    });
    std::fs::write(
        dir.join(format!("v{:020}.json", 1)),
        serde_json::to_vec(&json!({ "value": grant })).unwrap(),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_from_before_real_ids_bind_to_what_their_name_held() {
    let s = Server::open(|c| c.trash = GRACE).await;
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a$t").await;
    s.create_table("root", "a$dropped").await;
    s.ok("root", "POST", "/v1/table/a$dropped/drop", Value::Null)
        .await;
    legacy_grant(&s.root(), &"1".repeat(32), &["a", "t"], "leg");
    legacy_grant(&s.root(), &"2".repeat(32), &["a", "dropped"], "leg");
    legacy_grant(&s.root(), &"3".repeat(32), &["a", "never"], "leg");
    // Unbound, they reach nothing.
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(
        s.status("leg", "POST", "/v1/table/a$t/describe", json!({}))
            .await,
        DENIED
    );
    // The next server over the same root binds them.
    let root = s.root().to_string_lossy().into_owned();
    let s2 = Server::open(|c| {
        c.trash = GRACE;
        c.storage.root = root;
    })
    .await;
    assert_eq!(
        s2.status("leg", "POST", "/v1/table/a$t/describe", json!({}))
            .await,
        OK
    );
    s2.ok("root", "POST", "/v1/table/a$dropped/undrop", json!({}))
        .await;
    assert_eq!(
        s2.status("leg", "POST", "/v1/table/a$dropped/describe", json!({}))
            .await,
        OK,
        "a grant on a trashed table binds to it"
    );
    let grants = s2.grant_id("leg").await;
    assert_eq!(grants.len(), 3, "{grants:?}");
    let unbound: Vec<_> = grants
        .iter()
        .filter(|g| g["resource"]["object_id"].is_null())
        .collect();
    assert_eq!(unbound.len(), 1, "{grants:?}");
    assert_eq!(unbound[0]["resource"]["id"], json!(["a", "never"]));
    // A table made later under that name is not reached by it.
    s2.create_table("root", "a$never").await;
    assert_eq!(
        s2.status("leg", "POST", "/v1/table/a$never/describe", json!({}))
            .await,
        DENIED
    );
}
