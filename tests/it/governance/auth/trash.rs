//! Recoverable drops under authorization: a drop into trash keeps the
//! table's grants (its owner is who needs to undrop it), undrop needs the
//! rights drop needed, and the trash shows each entry only to whoever
//! could read what it was.

use lance_catalog::auth::JwtConfig;
use lance_catalog::governance::TrashConfig;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{Server, SECRET};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_undrops_and_strangers_cannot() {
    let s = Server::start_with(
        None,
        JwtConfig {
            secret: Some(SECRET.into()),
            audience: Some("lance".into()),
            ..Default::default()
        },
        TrashConfig {
            grace_s: 3600,
            purge_expired: false,
        },
    )
    .await;
    s.ok("root", "POST", "/v1/namespace/team/create", json!({}))
        .await;
    s.grant("namespace", json!(["team"]), "alice", "writer")
        .await;
    s.create_table("alice", "team$t").await;
    // Alice's namespace grant goes: what she holds on the table is her
    // ownership alone.
    let grants = s
        .ok("root", "GET", "/v1/grants?principal=alice", Value::Null)
        .await;
    let on_ns = grants["grants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["resource"]["kind"] == "namespace")
        .unwrap()["grant_id"]
        .as_str()
        .unwrap()
        .to_string();
    s.ok(
        "root",
        "DELETE",
        &format!("/v1/grants/{on_ns}"),
        Value::Null,
    )
    .await;
    let dropped = s
        .ok("alice", "POST", "/v1/table/team$t/drop", Value::Null)
        .await;
    let trash_id = dropped["transaction_id"].as_str().unwrap().to_string();

    // Bob may neither see nor undrop nor purge it.
    let (code, _, _) = s
        .send(
            Some("bob"),
            "POST",
            "/v1/table/team$t/undrop",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    let (code, _, _) = s
        .send(
            Some("bob"),
            "DELETE",
            &format!("/v1/trash/{trash_id}"),
            None,
            None,
        )
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    let (code, listed, _) = s.send(Some("bob"), "GET", "/v1/trash", None, None).await;
    assert_eq!(
        (code, listed["entries"].clone()),
        (StatusCode::OK, json!([]))
    );
    let (code, _, _) = s
        .send(
            None,
            "POST",
            "/v1/table/team$t/undrop",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);

    // Alice sees it, with who dropped it, and brings it back.
    let listed = s.ok("alice", "GET", "/v1/trash", Value::Null).await;
    assert_eq!(listed["entries"][0]["dropped_by"], "alice");
    let back = s
        .ok("alice", "POST", "/v1/table/team$t/undrop", json!({}))
        .await;
    assert_eq!(back["trash_id"], trash_id.as_str());
    let d = s
        .ok("alice", "POST", "/v1/table/team$t/describe", json!({}))
        .await;
    assert!(d["location"].is_string(), "{d}");

    // Dropped again, and a new table made under the name: the grants kept
    // for the trashed one do not reach the new one.
    s.ok("alice", "POST", "/v1/table/team$t/drop", Value::Null)
        .await;
    s.create_table("root", "team$t").await;
    let (code, _, _) = s
        .send(
            Some("alice"),
            "POST",
            "/v1/table/team$t/drop?purge=true",
            None,
            None,
        )
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    s.ok("root", "POST", "/v1/table/team$t/describe", json!({}))
        .await;
}
