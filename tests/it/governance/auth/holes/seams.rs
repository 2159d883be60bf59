//! The seams found from outside (issue 54), each reproduced over the real
//! server: callers steering the server's requests through storage options,
//! another table's bytes through a case, refusals naming the storage root,
//! register answering another location than it was given, a deleted
//! user's grants living on at another replica, and the bootstrap admin's
//! one rule. Over REST, and over gRPC where the operation exists there.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lance_catalog::governance::GovernanceConfig;
use lance_namespace::models::{CreateNamespaceRequest, DeclareTableRequest, RegisterTableRequest};
use lance_namespace::LanceNamespace;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{grpc, identity, Server};

/// A loopback listener counting the connections it is offered: where a
/// steered request would go.
async fn listener() -> (u16, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = hits.clone();
    tokio::spawn(async move {
        while let Ok((conn, _)) = l.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(conn);
        }
    });
    (port, hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_cannot_steer_the_servers_requests() {
    let s = Server::open(|_| {}).await;
    s.namespaces(&["a"]).await;
    s.grant("namespace", json!(["a"]), "bob", "writer").await;
    let (port, hits) = listener().await;
    let endpoint = format!("http://127.0.0.1:{port}");

    // A create's storage_options: refused before any request is made.
    let options = json!({"aws_endpoint": endpoint, "allow_http": "true"}).to_string();
    let path = format!(
        "/v1/table/a%24x/create?storage_options={}",
        urlencode(&options)
    );
    let (st, b, _) = s
        .send(
            Some("bob"),
            "POST",
            &path,
            None,
            Some(crate::harness::rows(0, 3)),
        )
        .await;
    assert_eq!(
        (st, b["code"].as_u64()),
        (StatusCode::BAD_REQUEST, Some(13)),
        "{b}"
    );
    assert!(b["error"].as_str().unwrap().contains("aws_endpoint"), "{b}");

    // A namespace's lance.storage.* properties, whatever redirects or
    // widens: the endpoint, a role, a token file, plain HTTP.
    for (k, v) in [
        ("lance.storage.aws_endpoint", endpoint.as_str()),
        ("lance.storage.aws_role_arn", "arn:aws:iam::1:role/x"),
        ("lance.storage.aws_web_identity_token_file", "/etc/passwd"),
        ("lance.storage.allow_http", "true"),
        ("lance.storage.aws_region", "x.evil.example#"),
    ] {
        let (st, b, _) = s
            .send(
                Some("bob"),
                "POST",
                "/v1/namespace/a$ep/create",
                Some(json!({"properties": {k: v}})),
                None,
            )
            .await;
        assert_eq!(
            (st, b["code"].as_u64()),
            (StatusCode::BAD_REQUEST, Some(13)),
            "{k}: {b}"
        );
        let option = k.trim_start_matches("lance.storage.");
        assert!(b["error"].as_str().unwrap().contains(option), "{b}");
        // ...and over gRPC.
        let e = grpc(&s)
            .await
            .create_namespace(CreateNamespaceRequest {
                id: Some(vec!["a".into(), "ep".into()]),
                properties: Some([(k.to_string(), v.to_string())].into()),
                identity: identity("bob"),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(crate::harness::code::<()>(Err(e)), 13, "{k} over gRPC");
    }
    // What a caller may set stays settable.
    s.ok(
        "bob",
        "POST",
        "/v1/namespace/a$ok/create",
        json!({"properties": {"lance.storage.aws_region": "eu-west-1"}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the listener was reached");
}

fn urlencode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tables_bytes_are_not_reached_through_a_case() {
    let s = Server::open(|_| {}).await;
    s.namespaces(&["a", "b"]).await;
    s.ok(
        "root",
        "POST",
        "/v1/table/b$vic/declare",
        json!({"location": "shared/victim"}),
    )
    .await;
    s.ok(
        "root",
        "POST",
        "/v1/table/b$cafe/declare",
        json!({"location": "shared/caf\u{e9}"}),
    )
    .await;
    s.grant("namespace", json!(["a"]), "bob", "writer").await;
    for (i, location) in [
        "shared/VICTIM",
        "SHARED/victim",
        "Shared",
        "shared/Victim/inner",
        // The same name decomposed (NFD) and in capitals, where it was
        // recorded composed (NFC).
        "SHARED/CAFE\u{301}",
    ]
    .iter()
    .enumerate()
    {
        let (st, b, _) = s
            .send(
                Some("bob"),
                "POST",
                &format!("/v1/table/a$case{i}/declare"),
                Some(json!({"location": location})),
                None,
            )
            .await;
        assert_eq!(
            (st, b["code"].as_u64()),
            (StatusCode::BAD_REQUEST, Some(13)),
            "{location}: {b}"
        );
        // Refused without naming the other table (bob may not see it).
        let error = b["error"].as_str().unwrap();
        assert!(error.contains("another table's location"), "{b}");
        assert!(!error.contains("b$"), "{b}");
    }
    // The same over gRPC.
    let e = grpc(&s)
        .await
        .declare_table(DeclareTableRequest {
            id: Some(vec!["a".into(), "grpc".into()]),
            location: Some("SHARED/VICTIM".into()),
            identity: identity("bob"),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(crate::harness::code::<()>(Err(e)), 13);
    // A create at a location in another case.
    let (st, b, _) = s
        .send(
            Some("bob"),
            "POST",
            "/v1/table/a$x/create",
            None,
            Some(crate::harness::rows(0, 2)),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{b}");
    let c = reqwest::Client::new();
    let r = c
        .post(format!("{}/v1/table/a$y/create", s.base))
        .bearer_auth(super::token("bob", json!({})))
        .header("x-lance-table-location", "shared/Victim")
        .header("content-type", "application/vnd.apache.arrow.stream")
        .body(crate::harness::rows(0, 2))
        .send()
        .await
        .unwrap();
    let st = r.status();
    let b: Value = r.json().await.unwrap();
    assert_eq!(
        (st, b["code"].as_u64()),
        (StatusCode::BAD_REQUEST, Some(13)),
        "{b}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_name_no_root_and_register_answers_what_it_was_given() {
    let s = Server::open(|_| {}).await;
    s.namespaces(&["ws"]).await;
    let root = s.root().to_string_lossy().into_owned();
    for (location, words) in [
        ("s3://bucket/table.lance", "Absolute URIs are not allowed"),
        ("/tmp/table.lance", "Absolute paths are not allowed"),
        ("../outside/table.lance", "Path traversal is not allowed"),
    ] {
        let (st, b, _) = s
            .send(
                Some("root"),
                "POST",
                "/v1/table/ws$r/register",
                Some(json!({"location": location})),
                None,
            )
            .await;
        assert_eq!(
            (st, b["code"].as_u64()),
            (StatusCode::BAD_REQUEST, Some(13)),
            "{b}"
        );
        let text = b.to_string();
        assert!(text.contains(words), "{location}: {b}");
        assert!(!text.contains(&root), "{location} names the root: {b}");
        let e = grpc(&s)
            .await
            .register_table(RegisterTableRequest {
                id: Some(vec!["ws".into(), "r".into()]),
                location: location.into(),
                identity: identity("root"),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(e.to_string().contains(words), "{e}");
        assert!(!e.to_string().contains(&root), "{e}");
    }
    // A dataset written, deregistered, and registered again under
    // another name by its relative location: answered as sent.
    s.create_table("root", "ws$physical").await;
    let gone = s
        .ok(
            "root",
            "POST",
            "/v1/table/ws$physical/deregister",
            json!({}),
        )
        .await;
    let relative = gone["location"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let relative = percent_encoding::percent_decode_str(&relative)
        .decode_utf8()
        .unwrap()
        .into_owned();
    let registered = s
        .ok(
            "root",
            "POST",
            "/v1/table/ws$registered/register",
            json!({"location": relative}),
        )
        .await;
    assert_eq!(registered["location"], relative.as_str(), "{registered}");
    let over_grpc = grpc(&s)
        .await
        .register_table(RegisterTableRequest {
            id: Some(vec!["ws".into(), "again".into()]),
            location: "elsewhere/t.lance".into(),
            identity: identity("root"),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(over_grpc.location.as_deref(), Some("elsewhere/t.lance"));
    assert_eq!(s.rows_of("root", "ws$registered").await, 3);
}

fn users(config: &mut GovernanceConfig) {
    config.auth.users = lance_catalog::auth::UsersConfig {
        memory_kib: 1024,
        passes: 1,
        ..Default::default()
    };
}

/// Replicas A and B share a root: on A user `phoenix`, a reader of
/// `team$t1`, is deleted and made again with no grants. B answers the new
/// user as the stranger it is at once, however fresh its grant cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_made_again_holds_nothing_of_the_old_one_on_any_replica() {
    let a = Server::open(users).await;
    let b = a.replica(users).await;
    a.namespaces(&["team"]).await;
    a.create_table("root", "team$t1").await;
    let made = |pw: &'static str| json!({"username": "phoenix", "password": pw});
    a.ok("root", "POST", "/v1/users", made("first password"))
        .await;
    a.grant("table", json!(["team", "t1"]), "phoenix", "reader")
        .await;
    let old = "basic:phoenix:first password";
    let count = "/v1/table/team$t1/count_rows";
    for server in [&a, &b] {
        assert_eq!(
            server.status(old, "POST", count, json!({})).await,
            super::OK
        );
    }
    // The grant is bound to the user, not the name.
    let grants = a.grant_id("phoenix").await;
    assert!(
        grants.iter().all(|g| g["principal_uid"].is_string()),
        "{grants:?}"
    );

    let (st, gone, _) = a
        .send(Some("root"), "DELETE", "/v1/users/phoenix", None, None)
        .await;
    assert_eq!(st, StatusCode::OK, "{gone}");
    assert_eq!(gone["grants_revoked"], 1, "{gone}");
    a.ok("root", "POST", "/v1/users", made("second password"))
        .await;
    let new = "basic:phoenix:second password";
    for server in [&b, &a] {
        assert_eq!(
            server.status(new, "POST", count, json!({})).await,
            super::DENIED
        );
    }
    // A grant made to the new user is the new user's.
    a.grant("table", json!(["team", "t1"]), "phoenix", "reader")
        .await;
    for server in [&a, &b] {
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        loop {
            let (st, _) = server.status(new, "POST", count, json!({})).await;
            if st == StatusCode::OK {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the new grant did not reach"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // An API key minted for the user is the user's: it holds the grant
    // bound to it.
    let minted = a
        .ok(
            "root",
            "POST",
            "/v1/api-keys",
            json!({"principal": "phoenix"}),
        )
        .await;
    let key = format!("key:{}", minted["key"].as_str().unwrap());
    assert_eq!(a.status(&key, "POST", count, json!({})).await, super::OK);
}

/// The one rule: the user `--bootstrap-admin-password-file` made is server
/// admin while it stands; deleting it retires it for good (no restart,
/// nor a user made again under the name, brings it back), and the name's
/// own grant stays with the name's other principals (tokens, keys).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retiring_the_bootstrap_user_keeps_the_names_own_grant() {
    let secrets = tempfile::tempdir().unwrap();
    let file = secrets.path().join("admin-password");
    std::fs::write(&file, "bootstrap password\n").unwrap();
    let with_file = |c: &mut GovernanceConfig| {
        users(c);
        c.auth.bootstrap_admin_password_file = Some(file.clone());
    };
    let s = Server::open(with_file).await;
    let local = "basic:root:bootstrap password";
    s.ok(local, "POST", "/v1/namespace/by_user/create", json!({}))
        .await;
    let (st, gone, _) = s
        .send(Some("root"), "DELETE", "/v1/users/root", None, None)
        .await;
    assert_eq!(st, StatusCode::OK, "{gone}");
    // The token named root is still the server admin, here and after a
    // restart (another process over the same root).
    s.ok("root", "POST", "/v1/namespace/by_token/create", json!({}))
        .await;
    let restarted = s.replica(with_file).await;
    restarted
        .ok("root", "POST", "/v1/namespace/after/create", json!({}))
        .await;
    let (st, _) = restarted
        .status(local, "GET", "/v1/users/root", json!({}))
        .await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    // A user made again under the name is not the admin.
    restarted
        .ok(
            "root",
            "POST",
            "/v1/users",
            json!({"username": "root", "password": "a new one"}),
        )
        .await;
    let again = "basic:root:a new one";
    assert_eq!(
        restarted
            .status(again, "POST", "/v1/namespace/nope/create", json!({}))
            .await,
        super::DENIED
    );
}
