//! Arrow Flight round trips with the Rust arrow-flight client.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
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

use crate::harness::{batch, token, Env};

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
    namespace(env.base.as_ref().unwrap(), "f", None).await;
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
    let all = read(&mut client, ticket).await.unwrap();
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

    let listed = list(&mut client, "f").await;
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
    namespace(&base, "c", None).await;
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

/// A query descriptor for `spec` (a ScanSpec in JSON).
fn query(spec: &Value) -> FlightDescriptor {
    let mut cmd = spec.clone();
    cmd["op"] = json!("query");
    FlightDescriptor::new_cmd(cmd.to_string())
}

/// A schema's column names and types, as a client reads them.
fn shape(schema: &Schema) -> Vec<(String, DataType)> {
    schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect()
}

fn names(schema: &Schema) -> Vec<String> {
    shape(schema).into_iter().map(|(n, _)| n).collect()
}

/// The batches of a ticket, or the error however it came (refused at
/// once, or mid-stream).
pub(crate) async fn read(
    client: &mut FlightClient,
    ticket: Ticket,
) -> Result<Vec<RecordBatch>, FlightError> {
    match client.do_get(ticket).await {
        Ok(stream) => stream.try_collect().await,
        Err(e) => Err(e),
    }
}

/// Every Lance data file of the tables under `root` (not of the catalog's
/// own `_`-named records, `__manifest` among them).
fn data_files(root: &Path) -> BTreeSet<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let own = path
                .strip_prefix(root)
                .unwrap()
                .components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('_'));
            if own {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "lance")
                && path
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|d| d == "data")
            {
                out.insert(path);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// GetFlightInfo and GetSchema answer from the table's metadata: the schema
/// DoGet streams for the same ticket (a projection, row ids), the
/// manifest's row count for a whole table and -1 when a filter or limit
/// leaves it unknown; and they still answer with a table's data files
/// gone, which DoGet cannot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flight_info_and_schema_come_from_metadata() {
    let (env, mut client) = client().await;
    namespace(env.base.as_ref().unwrap(), "m", None).await;
    let path = FlightDescriptor::new_path(vec!["m".into(), "t".into()]);
    put(&mut client, path.clone(), vec![batch(0, 120)])
        .await
        .unwrap();
    put(&mut client, path.clone(), vec![batch(120, 30)])
        .await
        .unwrap();

    // A table never read, its data files removed: only a scan would miss them.
    let before = data_files(env.root());
    let gone = FlightDescriptor::new_path(vec!["m".into(), "gone".into()]);
    put(&mut client, gone.clone(), vec![batch(0, 40)])
        .await
        .unwrap();
    let removed: Vec<PathBuf> = data_files(env.root())
        .difference(&before)
        .cloned()
        .collect();
    assert!(!removed.is_empty(), "the new table wrote data files");
    for f in &removed {
        std::fs::remove_file(f).unwrap();
    }
    let info = client.get_flight_info(gone.clone()).await.unwrap();
    assert_eq!(info.total_records, 40);
    let schema = client
        .get_schema(query(&json!({"id": ["m", "gone"], "columns": ["id"]})))
        .await
        .unwrap();
    assert_eq!(names(&schema), vec!["id"]);
    let ticket = info.endpoint[0].ticket.clone().unwrap();
    assert!(
        read(&mut client, ticket).await.is_err(),
        "DoGet read a table whose data files were removed"
    );

    // For each ticket: GetFlightInfo's schema, GetSchema's and DoGet's agree.
    for (spec, total, count) in [
        (json!({"id": ["m", "t"]}), 150, 150),
        (json!({"id": ["m", "t"], "columns": ["s", "id"]}), 150, 150),
        (json!({"id": ["m", "t"], "with_row_id": true}), 150, 150),
        (
            json!({"id": ["m", "t"], "filter": "id >= 100", "columns": ["id"]}),
            -1,
            50,
        ),
        (json!({"id": ["m", "t"], "limit": 5}), -1, 5),
    ] {
        let info = client.get_flight_info(query(&spec)).await.unwrap();
        assert_eq!(info.total_records, total, "{spec}");
        let announced = info.clone().try_decode_schema().unwrap();
        let schema = client.get_schema(query(&spec)).await.unwrap();
        assert_eq!(shape(&announced), shape(&schema), "{spec}");
        let ticket = info.endpoint[0].ticket.clone().unwrap();
        let batches = read(&mut client, ticket).await.unwrap();
        assert_eq!(rows(&batches), count, "{spec}");
        assert_eq!(shape(&batches[0].schema()), shape(&schema), "{spec}");
        let mut columns = names(&schema);
        columns.sort();
        let expected: &[&str] = match spec.get("columns") {
            Some(_) if spec.get("filter").is_some() => &["id"],
            Some(_) => &["id", "s"],
            None if spec.get("with_row_id").is_some() => &["_rowid", "id", "s", "x"],
            None => &["id", "s", "x"],
        };
        assert_eq!(columns, expected, "{spec}");
    }
}

/// A server requiring authentication, `root` its admin, whose operator's
/// policy lets `meg` read metadata and nothing else (every shipped relation
/// that reads metadata reads data too); its base URL.
pub(crate) async fn governed(dir: &Path) -> String {
    let policies = dir.join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(
        policies.join("meg.cedar"),
        "permit (principal == User::\"meg\", action in [Action::\"read_metadata\"], resource);\n",
    )
    .unwrap();
    crate::harness::serve_governed(dir, |c| c.auth.policy_dir = Some(policies)).await
}

/// Create namespace `name` over REST (as `who`, when the server requires
/// a caller).
async fn namespace(base: &str, name: &str, who: Option<&str>) {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/v1/namespace/{name}/create"))
        .json(&json!({}));
    if let Some(who) = who {
        req = req.bearer_auth(token(who, json!({})));
    }
    req.send().await.unwrap().error_for_status().unwrap();
}

/// The flights `ListFlights` names in namespace `ns`.
async fn list(client: &mut FlightClient, ns: &str) -> Vec<arrow_flight::FlightInfo> {
    client
        .list_flights(json!({"id": [ns]}).to_string())
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// A Flight client sending `who`'s token on every call.
pub(crate) async fn signed_in(base: &str, who: &str) -> FlightClient {
    let mut client = connect(base).await;
    client
        .add_header(
            "authorization",
            &format!("Bearer {}", token(who, json!({}))),
        )
        .unwrap();
    client
}

/// GetFlightInfo, GetSchema and ListFlights are admitted as a describe
/// (read_metadata): a caller who may only read metadata gets them and is
/// refused the rows; a caller with no rights gets none of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flight_metadata_rights_describe_but_do_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let base = governed(dir.path()).await;
    namespace(&base, "m", Some("root")).await;
    let path = FlightDescriptor::new_path(vec!["m".into(), "t".into()]);
    let mut root = signed_in(&base, "root").await;
    put(&mut root, path.clone(), vec![batch(0, 70)])
        .await
        .unwrap();

    let mut meg = signed_in(&base, "meg").await;
    let info = meg.get_flight_info(path.clone()).await.unwrap();
    assert_eq!(info.total_records, 70);
    let projected = query(&json!({"id": ["m", "t"], "columns": ["id"]}));
    let schema = meg.get_schema(projected.clone()).await.unwrap();
    assert_eq!(names(&schema), vec!["id"]);
    let polled = meg.poll_flight_info(projected).await.unwrap();
    assert_eq!(polled.info.unwrap().total_records, 70);
    let listed = list(&mut meg, "m").await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].total_records, 70);
    let ticket = info.endpoint[0].ticket.clone().unwrap();
    let refused = read(&mut meg, ticket.clone()).await.unwrap_err();
    assert_eq!(spec_code(refused), "15");
    // The ticket itself is good: the admin reads it.
    assert_eq!(rows(&read(&mut root, ticket).await.unwrap()), 70);

    let mut nobody = signed_in(&base, "nobody").await;
    let err = nobody.get_flight_info(path.clone()).await.unwrap_err();
    assert_eq!(spec_code(err), "15");
    let err = nobody.get_schema(path).await.unwrap_err();
    assert_eq!(spec_code(err), "15");
}

/// GetFlightInfo on a table of a million rows: admitted under
/// read_metadata (meg may describe, not read) and answered from the
/// manifest, so it holds with every data file gone, which any scan would
/// need.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flight_info_of_a_million_rows_opens_no_scan() {
    let dir = tempfile::tempdir().unwrap();
    let base = governed(dir.path()).await;
    namespace(&base, "big", Some("root")).await;
    let path = FlightDescriptor::new_path(vec!["big".into(), "t".into()]);
    let mut root = signed_in(&base, "root").await;
    let before = data_files(dir.path());
    let batches: Vec<RecordBatch> = (0..10).map(|i| batch(i * 100_000, 100_000)).collect();
    put(&mut root, path.clone(), batches).await.unwrap();
    let written: Vec<PathBuf> = data_files(dir.path())
        .difference(&before)
        .cloned()
        .collect();
    assert!(!written.is_empty(), "the table wrote data files");
    for f in &written {
        std::fs::remove_file(f).unwrap();
    }
    let mut meg = signed_in(&base, "meg").await;
    let started = std::time::Instant::now();
    let info = meg.get_flight_info(path.clone()).await.unwrap();
    assert_eq!(info.total_records, 1_000_000);
    assert_eq!(
        names(&info.clone().try_decode_schema().unwrap()),
        vec!["id", "x", "s"]
    );
    eprintln!("GetFlightInfo on 1M rows: {:?}", started.elapsed());
    let ticket = info.endpoint[0].ticket.clone().unwrap();
    assert_eq!(
        spec_code(read(&mut meg, ticket.clone()).await.unwrap_err()),
        "15"
    );
    assert!(
        read(&mut root, ticket).await.is_err(),
        "a scan read a table whose data files are gone"
    );
}
