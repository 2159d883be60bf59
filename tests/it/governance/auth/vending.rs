//! Vended credentials on a real S3 + STS server that enforces session
//! policies (SeaweedFS, `scripts/sts_server.py`; CI starts it and sets
//! `LANCE_CATALOG_TEST_STS=http://HOST:PORT/BUCKET`). With `--auth
//! required`: a reader's credentials read its table and nothing else, a
//! writer's also write it and still delete nothing, each hand-out is an
//! audit event, read and write sessions are kept apart, a revoked grant
//! stops the next describe, and the server's own secret is in no answer.

use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::{json, Value};

use super::Server;
use lance_catalog::api::vending::VendingSettings;
use lance_catalog::StorageConfig;
use lance_namespace::models::DescribeTableRequest;
use lance_namespace::LanceNamespace;

const ADMIN_SECRET: &str = "adminsecret";

/// The S3 endpoint and bucket of `LANCE_CATALOG_TEST_STS`.
fn sts() -> Option<(String, String)> {
    let spec = std::env::var("LANCE_CATALOG_TEST_STS").ok()?;
    let (scheme, rest) = spec.split_once("://").expect("a URL");
    let (host, bucket) = rest.split_once('/').expect("a bucket");
    Some((
        format!("{scheme}://{host}"),
        bucket.trim_matches('/').to_string(),
    ))
}

/// A server on a fresh root in the bucket, vending through the role, with
/// the operator's opt-in to forward secrets on: vending supersedes it.
async fn server(endpoint: &str, bucket: &str, max_seconds: Option<u64>) -> Server {
    let root = format!("s3://{bucket}/vending-{}", uuid::Uuid::new_v4().simple());
    let options = [
        ("aws_endpoint", endpoint),
        ("aws_access_key_id", "admin"),
        ("aws_secret_access_key", ADMIN_SECRET),
        ("aws_region", "us-east-1"),
        ("allow_http", "true"),
    ];
    Server::open(|config| {
        config.storage = StorageConfig {
            root,
            storage_options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            vending: Some(VendingSettings {
                role_arn: "arn:aws:iam::000000000000:role/LanceVendor".into(),
                ..Default::default()
            }),
            vend_max_seconds: max_seconds,
            forward_secrets: true,
        };
    })
    .await
}

/// A store speaking with the credentials an answer handed.
fn store_of(options: &Value, endpoint: &str, bucket: &str) -> impl ObjectStore {
    let o = |k: &str| {
        options[k]
            .as_str()
            .unwrap_or_else(|| panic!("no {k} in {options}"))
    };
    AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_bucket_name(bucket)
        .with_region("us-east-1")
        .with_allow_http(true)
        .with_access_key_id(o("aws_access_key_id"))
        .with_secret_access_key(o("aws_secret_access_key"))
        .with_token(o("aws_session_token"))
        .build()
        .unwrap()
}

/// The key prefix of a table location `s3://bucket/key`.
fn key_of(location: &str) -> Path {
    let key = location
        .split_once("://")
        .unwrap()
        .1
        .split_once('/')
        .unwrap()
        .1;
    Path::from(key.trim_end_matches('/'))
}

async fn lists(store: &impl ObjectStore, prefix: &Path) -> bool {
    store
        .list(Some(prefix))
        .try_collect::<Vec<_>>()
        .await
        .is_ok_and(|l| !l.is_empty())
}

async fn puts(store: &impl ObjectStore, path: Path) -> bool {
    store
        .put(&path, PutPayload::from_static(b"x"))
        .await
        .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vended_credentials_reach_one_table_for_what_the_caller_may_do() {
    let Some((endpoint, bucket)) = sts() else {
        eprintln!("LANCE_CATALOG_TEST_STS is not set: skipped");
        return;
    };
    let s = server(&endpoint, &bucket, None).await;
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a%24t1").await;
    s.create_table("root", "a%24t2").await;
    s.grant("table", json!(["a", "t1"]), "ann", "reader").await;
    s.grant("table", json!(["a", "t1"]), "wes", "writer").await;

    let describe = |who: &'static str| {
        let s = &s;
        async move {
            s.ok(who, "POST", "/v1/table/a%24t1/describe", json!({}))
                .await
        }
    };
    let ann = describe("ann").await;
    let text = ann.to_string();
    assert!(
        !text.contains(ADMIN_SECRET),
        "the server's secret left: {text}"
    );
    let options = &ann["storage_options"];
    assert_ne!(options["aws_access_key_id"], "admin", "{options}");
    let expires: u64 = options["expires_at_millis"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let now = chrono::Utc::now().timestamp_millis() as u64;
    assert!(
        expires > now && expires <= now + 3_600_000 + 60_000,
        "{expires}"
    );
    let t1 = key_of(ann["location"].as_str().unwrap());
    let t2 = key_of(
        s.ok("root", "POST", "/v1/table/a%24t2/describe", json!({}))
            .await["location"]
            .as_str()
            .unwrap(),
    );

    // The reader: its table, read-only; nothing of the other table.
    let reader = store_of(options, &endpoint, &bucket);
    assert!(lists(&reader, &t1).await, "the reader lists its table");
    let file = reader
        .list(Some(&t1))
        .try_next()
        .await
        .unwrap()
        .unwrap()
        .location;
    assert!(
        reader.get(&file).await.is_ok(),
        "the reader reads its table"
    );
    assert!(
        !puts(&reader, t1.clone().join("x.bin")).await,
        "a reader cannot write"
    );
    assert!(
        !lists(&reader, &t2).await,
        "a reader cannot list another table"
    );
    let other = admin_first(&endpoint, &bucket, &t2).await;
    assert!(reader.get(&other).await.is_err(), "nor read it");

    // gRPC's describe hands the same session (kept per privilege).
    let over_grpc = super::holes::grpc(&s)
        .await
        .describe_table(DescribeTableRequest {
            id: Some(vec!["a".into(), "t1".into()]),
            identity: super::holes::identity("ann"),
            ..Default::default()
        })
        .await
        .unwrap()
        .storage_options
        .unwrap();
    assert_eq!(
        over_grpc["aws_access_key_id"],
        options["aws_access_key_id"].as_str().unwrap()
    );
    assert!(!over_grpc.values().any(|v| v == ADMIN_SECRET));

    // The writer: writes its table, deletes nothing, reaches no other.
    let wes = describe("wes").await;
    let writer = store_of(&wes["storage_options"], &endpoint, &bucket);
    assert_ne!(
        wes["storage_options"]["aws_access_key_id"], options["aws_access_key_id"],
        "a read session never serves a writer"
    );
    assert!(
        puts(&writer, t1.clone().join("w.bin")).await,
        "a writer writes"
    );
    assert!(
        writer.delete(&file).await.is_err(),
        "a writer deletes nothing"
    );
    assert!(
        !puts(&writer, t2.clone().join("w.bin")).await,
        "nor writes another table"
    );

    // Sessions are kept per privilege: the reader's again is the same.
    let again = describe("ann").await;
    assert_eq!(
        again["storage_options"]["aws_access_key_id"],
        options["aws_access_key_id"]
    );
    // Asked for none, none.
    let none = s
        .ok(
            "ann",
            "POST",
            "/v1/table/a%24t1/describe",
            json!({"vend_credentials": false}),
        )
        .await;
    assert!(
        none["storage_options"].get("aws_session_token").is_none(),
        "{none}"
    );

    // Each hand-out is an audit event: who, which key, for what; no secret.
    let events = s
        .ok("root", "GET", "/v1/events?limit=1000", json!({}))
        .await;
    let vended: Vec<&Value> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e["vended"].is_null())
        .collect();
    let of_ann = vended
        .iter()
        .find(|e| e["principal"] == "ann")
        .expect("an event for ann's credentials");
    assert_eq!(of_ann["vended"]["privilege"], "read");
    assert_eq!(
        of_ann["vended"]["access_key_id"],
        options["aws_access_key_id"]
    );
    assert!(vended
        .iter()
        .any(|e| e["principal"] == "wes" && e["vended"]["privilege"] == "read_write"));
    let text = events.to_string();
    assert!(!text.contains(options["aws_secret_access_key"].as_str().unwrap()));
    assert!(!text.contains(ADMIN_SECRET));

    // Revoking the grant stops the next refresh.
    let grants = s
        .ok("root", "GET", "/v1/grants?principal=ann", json!({}))
        .await;
    let id = grants["grants"][0]["grant_id"]
        .as_str()
        .unwrap()
        .to_string();
    s.ok("root", "DELETE", &format!("/v1/grants/{id}"), json!({}))
        .await;
    let (status, _, _) = s
        .send(
            Some("ann"),
            "POST",
            "/v1/table/a%24t1/describe",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(status, 403);
}

/// The first object under `prefix`, listed with the server's own
/// credentials.
async fn admin_first(endpoint: &str, bucket: &str, prefix: &Path) -> Path {
    let admin = AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_bucket_name(bucket)
        .with_region("us-east-1")
        .with_allow_http(true)
        .with_access_key_id("admin")
        .with_secret_access_key(ADMIN_SECRET)
        .build()
        .unwrap();
    admin
        .list(Some(prefix))
        .try_next()
        .await
        .unwrap()
        .unwrap()
        .location
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operators_cap_shortens_what_an_answer_lasts() {
    let Some((endpoint, bucket)) = sts() else {
        eprintln!("LANCE_CATALOG_TEST_STS is not set: skipped");
        return;
    };
    let s = server(&endpoint, &bucket, Some(5)).await;
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a%24t").await;
    let a = s
        .ok("root", "POST", "/v1/table/a%24t/describe", json!({}))
        .await;
    let o = &a["storage_options"];
    let expires: u64 = o["expires_at_millis"].as_str().unwrap().parse().unwrap();
    let now = chrono::Utc::now().timestamp_millis() as u64;
    assert!(
        expires <= now + 5_000 && expires + 10_000 > now,
        "{expires} vs {now}"
    );
    let offset: u64 = o["refresh_offset_millis"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(offset < 5_000, "a short life gets a short lead: {offset}");
}

/// A namespace's `lance.storage.*` credentials are the source the role is
/// assumed with, never a value handed on; the right key id with another
/// secret shares nothing made with the right one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaces_credentials_assume_the_role_and_never_leave() {
    let Some((endpoint, bucket)) = sts() else {
        eprintln!("LANCE_CATALOG_TEST_STS is not set: skipped");
        return;
    };
    let s = server(&endpoint, &bucket, None).await;
    let ns = |name: &'static str, id: &'static str, secret: &'static str| {
        let s = &s;
        async move {
            s.ok(
                "root",
                "POST",
                &format!("/v1/namespace/{name}/create"),
                json!({"properties": {
                    "lance.storage.aws_access_key_id": id,
                    "lance.storage.aws_secret_access_key": secret,
                }}),
            )
            .await;
        }
    };
    // The server's own source first, so its STS client is made and kept.
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a%24t").await;
    let own = s
        .ok("root", "POST", "/v1/table/a%24t/describe", json!({}))
        .await;
    assert!(own["storage_options"]["aws_session_token"].is_string());

    ns("team", "team", "teamsecret").await;
    s.create_table("root", "team%24t").await;
    s.grant("table", json!(["team", "t"]), "ann", "reader")
        .await;
    let ann = s
        .ok("ann", "POST", "/v1/table/team%24t/describe", json!({}))
        .await;
    let text = ann.to_string();
    assert!(
        !text.contains("teamsecret"),
        "the namespace's secret left: {text}"
    );
    assert!(
        !text.contains(ADMIN_SECRET),
        "the server's secret left: {text}"
    );
    let options = &ann["storage_options"];
    assert_ne!(options["aws_access_key_id"], "team", "{options}");
    let reader = store_of(options, &endpoint, &bucket);
    let t = key_of(ann["location"].as_str().unwrap());
    assert!(lists(&reader, &t).await, "the session reads its table");
    assert!(!puts(&reader, t.join("x.bin")).await, "read-only");

    // The server's key id with a wrong secret: STS refuses it, rather than
    // the client made with the server's secret answering for it.
    ns("forged", "admin", "not-the-secret").await;
    s.ok(
        "root",
        "POST",
        "/v1/table/forged%24t/declare",
        json!({"vend_credentials": false}),
    )
    .await;
    let (status, body, _) = s
        .send(
            Some("root"),
            "POST",
            "/v1/table/forged%24t/describe",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(status, 503, "{body}");
    assert!(!body.to_string().contains("not-the-secret"), "{body}");
}
