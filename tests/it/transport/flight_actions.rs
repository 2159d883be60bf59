//! Flight's actions are the inventory's rows, admitted as over REST.

use arrow_flight::error::FlightError;
use arrow_flight::{Action, FlightClient, FlightDescriptor};
use bytes::Bytes;
use futures::TryStreamExt;
use serde_json::{json, Value};

use super::flight::{governed, put, signed_in, spec_code};
use crate::harness::{batch, token};

/// The answers of action `kind` with `body`, as JSON (none: an empty body).
async fn act(
    client: &mut FlightClient,
    kind: &str,
    body: Value,
) -> Result<Option<Value>, FlightError> {
    let out: Vec<Bytes> = client
        .do_action(Action::new(kind.to_string(), body.to_string()))
        .await?
        .try_collect()
        .await?;
    Ok(out
        .first()
        .filter(|b| !b.is_empty())
        .map(|b| serde_json::from_slice(b).unwrap()))
}

/// Flight's actions are the inventory's rows, by method, admitted as over
/// REST: the JSON ones are offered and served (the first names too), the
/// Arrow ones are not actions, and a caller gets exactly its rights.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flight_actions_are_the_inventorys_rows() {
    let dir = tempfile::tempdir().unwrap();
    let base = governed(dir.path()).await;
    let mut root = signed_in(&base, "root").await;
    let offered: Vec<String> = root
        .list_actions()
        .await
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.r#type)
        .collect();
    for served in [
        "create_namespace",
        "describe_table",
        "count_table_rows",
        "count_rows",
    ] {
        assert!(offered.iter().any(|a| a == served), "{served}: {offered:?}");
    }
    for stream in ["query_table", "create_table", "insert_into_table"] {
        assert!(!offered.iter().any(|a| a == stream), "{stream}");
    }
    // A write through an action, seen over REST.
    act(&mut root, "create_namespace", json!({"id": ["a"]}))
        .await
        .unwrap();
    let exists = reqwest::Client::new()
        .post(format!("{base}/v1/namespace/a/exists"))
        .bearer_auth(token("root", json!({})))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(exists.status(), 200);
    let path = FlightDescriptor::new_path(vec!["a".into(), "t".into()]);
    put(&mut root, path, vec![batch(0, 30)]).await.unwrap();
    let t = json!({"id": ["a", "t"]});
    let n = act(&mut root, "count_table_rows", t.clone()).await.unwrap();
    assert_eq!(n, Some(json!(30)));
    assert_eq!(act(&mut root, "count_rows", t.clone()).await.unwrap(), n);
    // An operation that answers nothing: an empty result.
    assert_eq!(
        act(&mut root, "table_exists", t.clone()).await.unwrap(),
        None
    );
    let missing = act(&mut root, "table_exists", json!({"id": ["a", "u"]}))
        .await
        .unwrap_err();
    assert_eq!(spec_code(missing), "4");
    // Arrow-bodied rows are streams, not actions.
    let err = act(&mut root, "query_table", t.clone()).await.unwrap_err();
    assert!(err.to_string().contains("ListActions"), "{err}");

    // meg may read metadata: a describe, not a count (read_data) nor a
    // write, exactly as over REST.
    let mut meg = signed_in(&base, "meg").await;
    let described = act(&mut meg, "describe_table", t.clone())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(described["table"], "t", "{described}");
    let err = act(&mut meg, "count_table_rows", t.clone())
        .await
        .unwrap_err();
    assert_eq!(spec_code(err), "15");
    let err = act(&mut meg, "create_namespace", json!({"id": ["b"]}))
        .await
        .unwrap_err();
    assert_eq!(spec_code(err), "15");
    // An identity in the body does not stand in for the call's own.
    let err = act(
        &mut meg,
        "count_table_rows",
        json!({"id": ["a", "t"], "identity": {"auth_token": token("root", json!({}))}}),
    )
    .await
    .unwrap_err();
    assert_eq!(spec_code(err), "15");
}
