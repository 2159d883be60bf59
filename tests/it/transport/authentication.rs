//! One authentication per request, on every transport: the credentials a
//! request carries are verified once, however many steps below the
//! transport ask who is calling (the transport's early check, admission,
//! a door's parent check, the finish).

use arrow_flight::FlightDescriptor;
use lance_catalog::grpc::client::GrpcNamespace;
use lance_namespace::models::{DescribeTableRequest, Identity, ListTablesRequest};
use lance_namespace::LanceNamespace;
use reqwest::{Client, StatusCode};
use serde_json::json;

use crate::harness::{rows, serve_governed_with, token};
use crate::transport::flight::{read, signed_in};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_is_authenticated_once() {
    let dir = tempfile::tempdir().unwrap();
    let (base, gov) = serve_governed_with(dir.path(), |_| {}).await;
    let verified = || gov.credentials_verified();
    let bearer = format!("Bearer {}", token("root", json!({})));
    let c = Client::new();

    // REST: a JSON body, a streamed Arrow body, a read.
    let rest: [(&str, &str, Option<bytes::Bytes>); 4] = [
        ("create namespace", "/v1/namespace/a/create", None),
        ("create table", "/v1/table/a$t/create", Some(rows(0, 10))),
        ("describe table", "/v1/table/a$t/describe", None),
        ("count rows", "/v1/table/a$t/count_rows", None),
    ];
    for (what, path, arrow) in rest {
        let before = verified();
        let req = c
            .post(format!("{base}{path}"))
            .header("authorization", &bearer);
        let req = match arrow {
            Some(body) => req
                .header("content-type", "application/vnd.apache.arrow.stream")
                .body(body),
            None => req.json(&json!({})),
        };
        let resp = req.send().await.unwrap();
        assert!(resp.status().is_success(), "{what}: {}", resp.status());
        assert_eq!(verified() - before, 1, "REST {what}");
    }
    // A refused credential is verified once too.
    let before = verified();
    let resp = c
        .post(format!("{base}/v1/table/a$t/describe"))
        .header("authorization", "Bearer not-a-token")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(verified() - before, 1, "REST refusal");

    // gRPC.
    let ns = GrpcNamespace::connect(&base).await.unwrap();
    let identity = || {
        Some(Box::new(Identity {
            auth_token: Some(token("root", json!({}))),
            ..Default::default()
        }))
    };
    let before = verified();
    ns.describe_table(DescribeTableRequest {
        id: Some(vec!["a".into(), "t".into()]),
        identity: identity(),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(verified() - before, 1, "gRPC describe table");
    let before = verified();
    ns.list_tables(ListTablesRequest {
        id: Some(vec!["a".into()]),
        identity: identity(),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(verified() - before, 1, "gRPC list tables");

    // Flight.
    let mut flight = signed_in(&base, "root").await;
    let before = verified();
    let info = flight
        .get_flight_info(FlightDescriptor::new_path(vec!["a".into(), "t".into()]))
        .await
        .unwrap();
    assert_eq!(verified() - before, 1, "Flight GetFlightInfo");
    let before = verified();
    let ticket = info.endpoint[0].ticket.clone().unwrap();
    let batches = read(&mut flight, ticket).await.unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 10);
    assert_eq!(verified() - before, 1, "Flight DoGet");
}
