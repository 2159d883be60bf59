//! Arrow Flight round trips with the Rust arrow-flight client.

use std::sync::Arc;

use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::{Action, FlightClient, FlightDescriptor, Ticket};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use futures::TryStreamExt;
use lance_catalog::rest::RestConfig;
use serde_json::{json, Value};

use crate::harness::{batch, Env};

async fn client() -> (Env, FlightClient) {
    let env = Env::over_rest_with(RestConfig::default()).await;
    let client = connect(env.base.as_ref().unwrap()).await;
    (env, client)
}

pub(crate) async fn connect(base: &str) -> FlightClient {
    let channel = tonic::transport::Channel::from_shared(base.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    FlightClient::new(channel)
}

pub(crate) async fn put(
    client: &mut FlightClient,
    descriptor: FlightDescriptor,
    batches: Vec<RecordBatch>,
) -> Result<Value, FlightError> {
    let input = futures::stream::iter(batches.into_iter().map(Ok));
    let data = FlightDataEncoderBuilder::new()
        .with_flight_descriptor(Some(descriptor))
        .build(input);
    let results: Vec<_> = client.do_put(data).await?.try_collect().await?;
    Ok(serde_json::from_slice(&results[0].app_metadata).unwrap())
}

async fn get(client: &mut FlightClient, spec: Value) -> Result<Vec<RecordBatch>, FlightError> {
    let ticket = Ticket::new(Bytes::from(spec.to_string()));
    client.do_get(ticket).await?.try_collect().await
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

pub(crate) fn spec_code(err: FlightError) -> String {
    match err {
        FlightError::Tonic(status) => status
            .metadata()
            .get("lance-error-code")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default(),
        other => panic!("not a status: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flight_round_trips() {
    let (env, mut client) = client().await;
    let rest = reqwest::Client::new();
    rest.post(format!(
        "{}/v1/namespace/f/create",
        env.base.as_ref().unwrap()
    ))
    .json(&json!({}))
    .send()
    .await
    .unwrap();
    let path = FlightDescriptor::new_path(vec!["f".into(), "t".into()]);
    // A path descriptor creates the table, then appends; each DoPut is one commit.
    let first = put(
        &mut client,
        path.clone(),
        vec![batch(0, 100), batch(100, 100)],
    )
    .await
    .unwrap();
    assert_eq!(first["version"], 1);
    assert_eq!(first["num_rows"], 200);
    assert_eq!(first["created"], true);
    let second = put(&mut client, path.clone(), vec![batch(200, 50)])
        .await
        .unwrap();
    assert_eq!(second["version"], 2);

    let info = client.get_flight_info(path.clone()).await.unwrap();
    assert_eq!(info.total_records, 250);
    let ticket = info.endpoint[0].ticket.clone().unwrap();
    let all: Vec<RecordBatch> = client
        .do_get(ticket)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rows(&all), 250);

    // Filter and projection.
    let some = get(
        &mut client,
        json!({"id": ["f", "t"], "filter": "id >= 240", "columns": ["id", "s"]}),
    )
    .await
    .unwrap();
    assert_eq!(rows(&some), 10);
    assert_eq!(some[0].num_columns(), 2);

    // Merge-insert by command: 10 rows update, 10 insert.
    let merge = FlightDescriptor::new_cmd(
        json!({"op": "merge_insert", "id": ["f", "t"], "on": ["id"],
               "when_matched_update_all": true, "when_not_matched_insert_all": true})
        .to_string(),
    );
    let merged = put(&mut client, merge, vec![batch(240, 20)]).await.unwrap();
    assert_eq!(merged["version"], 3);
    let count = client
        .do_action(Action::new(
            "count_rows",
            json!({"id": ["f", "t"]}).to_string(),
        ))
        .await
        .unwrap()
        .try_collect::<Vec<Bytes>>()
        .await
        .unwrap();
    assert_eq!(count[0], Bytes::from("260"));

    let listed: Vec<_> = client
        .list_flights(json!({"id": ["f"]}).to_string())
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].flight_descriptor.as_ref().unwrap().path,
        vec!["f", "t"]
    );

    // Errors carry the spec code: a missing table, and a schema that does not fit.
    let err = get(&mut client, json!({"id": ["f", "nope"]}))
        .await
        .unwrap_err();
    assert_eq!(spec_code(err), "4");
    let other = Arc::new(Schema::new(vec![Field::new("other", DataType::Utf8, true)]));
    let bad = RecordBatch::try_new(other, vec![Arc::new(StringArray::from(vec!["x"]))]).unwrap();
    let insert = FlightDescriptor::new_cmd(json!({"op": "insert", "id": ["f", "t"]}).to_string());
    let err = put(&mut client, insert, vec![bad]).await.unwrap_err();
    assert_eq!(spec_code(err), "20");
    // Nothing was committed by the failed put.
    let after = get(&mut client, json!({"id": ["f", "t"], "columns": ["id"]}))
        .await
        .unwrap();
    assert_eq!(rows(&after), 260);
    let ids: Vec<i64> = after
        .iter()
        .flat_map(|b| {
            let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            (0..a.len()).map(|i| a.value(i)).collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(ids.iter().max(), Some(&259));
}

/// Flight writes decide as the REST data ops do: the first data of a declared
/// table is its first version, and a merge-insert's `on` is checked the same
/// way before anything is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flight_writes_match_rest() {
    let (env, mut client) = client().await;
    let base = env.base.clone().unwrap();
    let rest = reqwest::Client::new();
    let post = |path: &str| rest.post(format!("{base}/v1/{path}"));
    post("namespace/w/create")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    post("table/w$declared/declare")
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    let insert = |table: &str| {
        FlightDescriptor::new_cmd(json!({"op": "insert", "id": ["w", table]}).to_string())
    };
    let written = put(&mut client, insert("declared"), vec![batch(0, 30)])
        .await
        .unwrap();
    assert_eq!(written["version"], 1);
    assert_eq!(written["created"], true);
    assert_eq!(
        rows(
            &get(&mut client, json!({"id": ["w", "declared"]}))
                .await
                .unwrap()
        ),
        30
    );

    // Insert into a table that does not exist: 4 over both.
    let err = put(&mut client, insert("missing"), vec![batch(0, 1)])
        .await
        .unwrap_err();
    assert_eq!(spec_code(err), "4");
    let body = crate::harness::ipc(&crate::harness::schema(), &[batch(0, 1)]);
    let answer = post("table/w$missing/insert")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    let problem: Value = answer.json().await.unwrap();
    assert_eq!(problem["code"], 4);

    // Merge-insert `on` a column the data lacks: 12; with an empty `on`, or
    // none at all (the key absent, over Flight and REST alike): 13.
    for (on, code) in [(json!(["nope"]), 12), (json!([]), 13), (Value::Null, 13)] {
        let mut cmd = json!({"op": "merge_insert", "id": ["w", "declared"],
                             "when_not_matched_insert_all": true});
        if !on.is_null() {
            cmd["on"] = on.clone();
        }
        let merge = FlightDescriptor::new_cmd(cmd.to_string());
        let err = put(&mut client, merge, vec![batch(100, 5)])
            .await
            .unwrap_err();
        assert_eq!(spec_code(err), code.to_string(), "on = {on}");
        let query: String = on
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|c| format!("&on={}", c.as_str().unwrap()))
            .collect();
        let answer = post(&format!(
            "table/w$declared/merge_insert?when_not_matched_insert_all=true{query}"
        ))
        .body(body.clone())
        .send()
        .await
        .unwrap();
        let problem: Value = answer.json().await.unwrap();
        assert_eq!(problem["code"], code, "REST, on = {on}");
    }
    // Nothing was written by the refused merges.
    assert_eq!(
        rows(
            &get(&mut client, json!({"id": ["w", "declared"]}))
                .await
                .unwrap()
        ),
        30
    );
}

/// Two DoPut creates of one table at once: one creates it, the other is
/// refused (5 when it saw the table, 14 when it lost the race to record it)
/// and leaves no directory behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_flight_creates() {
    let (env, client) = client().await;
    let base = env.base.clone().unwrap();
    reqwest::Client::new()
        .post(format!("{base}/v1/namespace/c/create"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let create = || {
        let base = base.clone();
        async move {
            let mut client = connect(&base).await;
            let cmd = json!({"op": "create", "id": ["c", "t"]}).to_string();
            put(
                &mut client,
                FlightDescriptor::new_cmd(cmd),
                vec![batch(0, 500)],
            )
            .await
        }
    };
    let (a, b) = tokio::join!(create(), create());
    let (won, lost): (Vec<_>, Vec<_>) = [a, b].into_iter().partition(|r| r.is_ok());
    assert_eq!(won.len(), 1, "exactly one create wins");
    let code = spec_code(lost.into_iter().next().unwrap().unwrap_err());
    assert!(
        code == "5" || code == "14",
        "the loser gets 5 or 14, not {code}"
    );
    let mut client = client;
    assert_eq!(
        rows(&get(&mut client, json!({"id": ["c", "t"]})).await.unwrap()),
        500
    );
    let dirs: Vec<String> = std::fs::read_dir(env.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "__manifest" && !n.starts_with('_'))
        .collect();
    assert_eq!(dirs.len(), 1, "one table directory, not {dirs:?}");
}
