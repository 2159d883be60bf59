//! Local users over the real server: made by the admin, signed in with
//! HTTP Basic, granted through their groups, refused alike whatever the
//! reason, held off after failures, audited, and ended by a new password,
//! disabling or deletion, on this replica at once and on another within
//! the users' trust bound.

use std::time::{Duration, Instant};

use lance_catalog::auth::{UsersConfig, USER_TRUST};
use lance_catalog::governance::GovernanceConfig;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::Server;

/// Cheap hashes (tests are not a guesser's target) and a short fuse.
fn users(config: &mut GovernanceConfig) {
    config.auth.users = UsersConfig {
        memory_kib: 1024,
        passes: 1,
        max_failures: 3,
        hold_off: Duration::from_secs(60),
        ..Default::default()
    };
}

async fn status(
    s: &Server,
    who: &str,
    method: &str,
    path: &str,
    body: Value,
) -> (StatusCode, Value) {
    let body = (method != "GET" && method != "DELETE").then_some(body);
    let (status, b, _) = s.send(Some(who), method, path, body, None).await;
    (status, b)
}

async fn make_user(s: &Server, name: &str, password: &str, groups: Value) -> Value {
    s.ok(
        "root",
        "POST",
        "/v1/users",
        json!({"username": name, "password": password, "groups": groups}),
    )
    .await
}

/// Every file's text under `dir`.
fn all_text(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.push_str(&all_text(&path));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.push_str(&text);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_user_signs_in_with_basic_and_gets_its_groups_grants() {
    let s = Server::open(users).await;
    s.ok("root", "POST", "/v1/namespace/m/create", json!({}))
        .await;
    s.create_table("root", "m%24t").await;
    let made = make_user(&s, "ada", "correct horse", json!(["analysts"])).await;
    let shown = made.to_string();
    assert!(
        !shown.contains("correct horse") && !shown.contains("argon2"),
        "{shown}"
    );
    assert_eq!(made["groups"], json!(["analysts"]));
    s.grant("namespace", json!(["m"]), "group:analysts", "reader")
        .await;

    let ada = "basic:ada:correct horse";
    let (st, b) = status(&s, ada, "POST", "/v1/table/m%24t/describe", json!({})).await;
    assert_eq!(st, StatusCode::OK, "{b}");
    let (st, b) = status(&s, ada, "POST", "/v1/table/m%24t/count_rows", json!({})).await;
    assert_eq!(st, StatusCode::OK, "{b}");
    // A reader: no writes, no user administration.
    let (st, b) = status(&s, ada, "POST", "/v1/namespace/m%24mine/create", json!({})).await;
    assert_eq!(
        (st, b["code"].as_u64()),
        (StatusCode::FORBIDDEN, Some(15)),
        "{b}"
    );
    let (st, _) = status(&s, ada, "GET", "/v1/users", json!({})).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, b) = status(&s, ada, "GET", "/v1/users/ada", json!({})).await;
    assert_eq!(st, StatusCode::OK, "{b}");
    let listed = s.ok("root", "GET", "/v1/users", json!({})).await;
    assert_eq!(listed["users"][0]["username"], "ada");
    let (st, b) = status(
        &s,
        "root",
        "POST",
        "/v1/users",
        json!({"username": "ada", "password": "another one"}),
    )
    .await;
    assert_eq!(
        (st, b["code"].as_u64()),
        (StatusCode::CONFLICT, Some(10015)),
        "{b}"
    );
    let (st, b) = status(
        &s,
        "root",
        "POST",
        "/v1/users",
        json!({"username": "short", "password": "2short"}),
    )
    .await;
    assert_eq!(
        (st, b["code"].as_u64()),
        (StatusCode::BAD_REQUEST, Some(13)),
        "{b}"
    );
    let (st, b) = status(&s, "root", "GET", "/v1/users/nobody", json!({})).await;
    assert_eq!(
        (st, b["code"].as_u64()),
        (StatusCode::NOT_FOUND, Some(10014)),
        "{b}"
    );

    // The record on the control root holds the hash and its parameters.
    let stored = all_text(&s.root().join("_catalog"));
    assert!(
        stored.contains("$argon2id$v=19$m=1024,t=1,p=1$"),
        "no hash stored"
    );
    assert!(!stored.contains("correct horse"), "a password was stored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_looks_the_same_is_held_off_and_audited() {
    let s = Server::open(users).await;
    make_user(&s, "ada", "correct horse", json!([])).await;
    make_user(&s, "cy", "correct horse", json!([])).await;
    s.ok("root", "POST", "/v1/users/cy", json!({"disabled": true}))
        .await;
    let s = &s;
    let probe = |who: &'static str| async move {
        s.send(Some(who), "GET", "/v1/server/info", None, None)
            .await
    };
    let (ok, _, _) = probe("basic:ada:correct horse").await;
    assert_eq!(ok, StatusCode::OK);
    let mut answers = Vec::new();
    for who in [
        "basic:ada:wrong horse",
        "basic:nobody:correct horse",
        "basic:cy:correct horse",
    ] {
        let (st, b, headers) = probe(who).await;
        assert_eq!(
            (st, b["code"].as_u64()),
            (StatusCode::UNAUTHORIZED, Some(16)),
            "{who}: {b}"
        );
        // No Basic challenge: a browser on the console would pop a dialog.
        let challenge = headers["www-authenticate"].to_str().unwrap().to_lowercase();
        assert!(!challenge.contains("basic"), "{challenge}");
        answers.push(b["error"].clone());
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");

    // Three failures in a row hold the name off, the right password too;
    // an unknown name is held off the same way.
    for _ in 0..2 {
        probe("basic:ada:wrong horse").await;
    }
    let (st, b, _) = probe("basic:ada:correct horse").await;
    assert_eq!(
        (st, b["code"].as_u64()),
        (StatusCode::TOO_MANY_REQUESTS, Some(21)),
        "{b}"
    );
    for _ in 0..3 {
        probe("basic:ghost:whatever it is").await;
    }
    let (st, _, _) = probe("basic:ghost:whatever it is").await;
    assert_eq!(st, StatusCode::TOO_MANY_REQUESTS);

    let events = s
        .ok("root", "GET", "/v1/events?limit=1000", json!({}))
        .await;
    let refused: Vec<&Value> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "authenticate")
        .collect();
    let named = |name: &str| {
        refused
            .iter()
            .filter(|e| e["resource"]["kind"] == "user" && e["resource"]["id"] == json!([name]))
            .count()
    };
    assert_eq!(named("ada"), 4, "{refused:?}");
    assert_eq!(named("nobody"), 1);
    assert_eq!(named("cy"), 1);
    assert_eq!(named("ghost"), 4);
    assert!(refused
        .iter()
        .all(|e| e["outcome"] == "denied" && e["principal"].is_null()));
    let trail = events.to_string();
    assert!(!trail.contains("wrong horse") && !trail.contains("correct horse"));
    // Made and changed users are audited too.
    let made = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "create_user" && e["outcome"] == "succeeded")
        .count();
    assert_eq!(made, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_password_disabling_or_deleting_ends_access_here_and_on_another_replica() {
    let s = Server::open(users).await;
    let other = s.replica(users).await;
    make_user(&s, "ada", "correct horse", json!([])).await;
    let old = "basic:ada:correct horse";
    for server in [&s, &other] {
        let (st, b) = status(server, old, "GET", "/v1/users/ada", json!({})).await;
        assert_eq!(st, StatusCode::OK, "{b}");
    }

    // A session token (what the console and Flight's Handshake hold)
    // works on both replicas; only a name and password make one.
    let session = s.ok(old, "POST", "/v1/sessions", json!({})).await;
    assert_eq!(session["username"], "ada");
    let token = format!("bearer:{}", session["token"].as_str().unwrap());
    assert!(token.starts_with("bearer:lcs_"), "{token}");
    for server in [&s, &other] {
        let (st, b) = status(server, &token, "GET", "/v1/users/ada", json!({})).await;
        assert_eq!(st, StatusCode::OK, "{b}");
    }
    let (st, b) = status(&s, "root", "POST", "/v1/sessions", json!({})).await;
    assert_eq!(
        (st, b["code"].as_u64()),
        (StatusCode::BAD_REQUEST, Some(13)),
        "{b}"
    );

    // Her own change needs the password it replaces.
    let (st, b) = status(
        &s,
        old,
        "POST",
        "/v1/users/ada/password",
        json!({"password": "battery staple"}),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{b}");
    let (st, b) = status(
        &s,
        old,
        "POST",
        "/v1/users/ada/password",
        json!({"password": "battery staple", "current_password": "not it at all"}),
    )
    .await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{b}");
    let (st, b) = status(
        &s,
        old,
        "POST",
        "/v1/users/ada/password",
        json!({"password": "battery staple", "current_password": "correct horse"}),
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{b}");
    let changed = Instant::now();

    // Refused at once here, the token too; on the other replica within
    // the trust bound.
    let (st, _) = status(&s, old, "GET", "/v1/users/ada", json!({})).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (st, _) = status(&s, &token, "GET", "/v1/users/ada", json!({})).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    // (Each refused password counts as a failure: stop at the first.)
    for who in [old, token.as_str()] {
        loop {
            let (st, _) = status(&other, who, "GET", "/v1/users/ada", json!({})).await;
            if st == StatusCode::UNAUTHORIZED {
                break;
            }
            assert!(
                changed.elapsed() <= USER_TRUST + Duration::from_secs(1),
                "{who} still works on the other replica after {:?}",
                changed.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let new = "basic:ada:battery staple";
    let (st, _) = status(&other, new, "GET", "/v1/users/ada", json!({})).await;
    assert_eq!(st, StatusCode::OK);

    // Disabled: refused here at once, and after enabling she is back.
    s.ok("root", "POST", "/v1/users/ada", json!({"disabled": true}))
        .await;
    let (st, _) = status(&s, new, "GET", "/v1/users/ada", json!({})).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    s.ok("root", "POST", "/v1/users/ada", json!({"disabled": false}))
        .await;
    let (st, _) = status(&s, new, "GET", "/v1/users/ada", json!({})).await;
    assert_eq!(st, StatusCode::OK);

    // An admin's reset needs no current password; deletion ends her.
    s.ok(
        "root",
        "POST",
        "/v1/users/ada/password",
        json!({"password": "a reset one"}),
    )
    .await;
    let (st, _) = status(&s, new, "GET", "/v1/users/ada", json!({})).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let reset = "basic:ada:a reset one";
    let (st, _) = status(&other, reset, "GET", "/v1/users/ada", json!({})).await;
    assert_eq!(st, StatusCode::OK);
    // Deletion ends her grants too: a user made later under her name
    // starts with none.
    s.grant("server", json!([]), "ada", "reader").await;
    let key = s
        .ok("root", "POST", "/v1/api-keys", json!({"principal": "ada"}))
        .await["key"]
        .as_str()
        .unwrap()
        .to_string();
    let gone = s.ok("root", "DELETE", "/v1/users/ada", json!({})).await;
    assert_eq!(gone["grants_revoked"], 1, "{gone}");
    assert_eq!(gone["api_keys_revoked"], 1, "{gone}");
    let (st, _) = status(
        &s,
        &format!("key:{key}"),
        "GET",
        "/v1/server/info",
        json!({}),
    )
    .await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let left = s
        .ok("root", "GET", "/v1/grants?principal=ada", json!({}))
        .await;
    assert_eq!(left["grants"], json!([]), "{left}");
    let (st, _) = status(&s, reset, "GET", "/v1/server/info", json!({})).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let deleted = Instant::now();
    loop {
        let (st, _) = status(&other, reset, "GET", "/v1/server/info", json!({})).await;
        if st == StatusCode::UNAUTHORIZED {
            break;
        }
        assert!(deleted.elapsed() <= USER_TRUST + Duration::from_secs(1));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_users_can_be_turned_off() {
    let s = Server::open(|c| {
        users(c);
        c.auth.users.enabled = false;
    })
    .await;
    // The admin may still keep users; none of them may sign in.
    make_user(&s, "ada", "correct horse", json!([])).await;
    let (st, b) = status(
        &s,
        "basic:ada:correct horse",
        "GET",
        "/v1/server/info",
        json!({}),
    )
    .await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    assert!(
        b["error"].as_str().unwrap().contains("--local-users off"),
        "{b}"
    );
    let (st, b) = status(&s, "bearer:lcs_x.y.z", "GET", "/v1/server/info", json!({})).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED, "{b}");
}
