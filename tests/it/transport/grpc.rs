//! The gRPC service seen by generic gRPC tooling: health, reflection, and
//! the spec code carried with every error.

use lance_catalog::api::call::Call;
use lance_catalog::grpc::pb;
use lance_catalog::rest::RestConfig;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
use tonic_reflection::pb::v1::ServerReflectionRequest;

use crate::harness::Env;

async fn endpoint() -> (Env, String) {
    let env = Env::over_rest_with(RestConfig::default()).await;
    let base = env.base.clone().unwrap();
    (env, base)
}

async fn channel(base: String) -> tonic::transport::Channel {
    tonic::transport::Channel::from_shared(base)
        .unwrap()
        .connect()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_serving() {
    let (_env, base) = endpoint().await;
    let channel = channel(base).await;
    let mut health = HealthClient::new(channel);
    let service = "lance.catalog.v1.LanceNamespaceService".to_string();
    let mut status = ServingStatus::Unknown as i32;
    for _ in 0..50 {
        status = health
            .check(HealthCheckRequest {
                service: service.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .status;
        if status == ServingStatus::Serving as i32 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(status, ServingStatus::Serving as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_the_catalog_service() {
    let (_env, base) = endpoint().await;
    let channel = channel(base).await;
    let mut client = ServerReflectionClient::new(channel);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut answers = client
        .server_reflection_info(futures::stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner();
    let answer = answers.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = answer.message_response else {
        panic!("no service list: {answer:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(
        names.contains(&"lance.catalog.v1.LanceNamespaceService".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"grpc.health.v1.Health".to_string()),
        "{names:?}"
    );
}

/// Python's grpcio-reflection and older tools speak only v1alpha.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_v1alpha_lists_the_catalog_service() {
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient as Alpha;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest as Req;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse as Resp;
    let (_env, base) = endpoint().await;
    let mut client = Alpha::new(channel(base).await);
    let request = tonic_reflection::pb::v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(Req::ListServices(String::new())),
    };
    let answer = client
        .server_reflection_info(futures::stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap()
        .unwrap();
    let Some(Resp::ListServicesResponse(list)) = answer.message_response else {
        panic!("no service list: {answer:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(
        names.contains(&"lance.catalog.v1.LanceNamespaceService".to_string()),
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_carry_the_spec_code() {
    let (_env, base) = endpoint().await;
    let mut client =
        pb::lance_namespace_service_client::LanceNamespaceServiceClient::connect(base.clone())
            .await
            .unwrap();
    let status = client
        .describe_table(pb::DescribeTableRequest {
            id: vec!["nope".into(), "t".into()],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
    assert_eq!(status.metadata().get("lance-error-code").unwrap(), "4");
    assert_eq!(
        status.metadata().get("lance-error-name").unwrap(),
        "TableNotFound"
    );
    // The same code in the rich model, read with tonic-types.
    let info = tonic_types::StatusExt::get_details_error_info(&status).unwrap();
    assert_eq!(info.reason, "TableNotFound");
    assert_eq!(info.domain, "lance.catalog");
    assert_eq!(info.metadata.get("code").map(String::as_str), Some("4"));
    let status = client
        .create_namespace(pb::CreateNamespaceRequest {
            id: vec!["a".into(), "".into()],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert_eq!(status.metadata().get("lance-error-code").unwrap(), "13");
    let mut control =
        pb::catalog_control_service_client::CatalogControlServiceClient::connect(base)
            .await
            .unwrap();
    let info = control
        .get_server_info(pb::GetServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(info.features.contains(&"grpc".to_string()));
    assert_eq!(info.storage_roots.len(), 1);
}

/// The control plane, expanded from the same inventory, answers alike over
/// gRPC (the Rust client) and REST.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_plane_over_grpc_and_rest() {
    use lance_catalog::api::control::{ControlPlane, DescribeJobRequest, GetServerInfoRequest};
    use lance_catalog::grpc::control::GrpcControl;
    let (_env, base) = endpoint().await;
    let control = GrpcControl::connect(&base).await.unwrap();
    let info = control
        .get_server_info(&Call::default(), GetServerInfoRequest {})
        .await
        .unwrap();
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
    assert!(info.features.contains(&"jobs".to_string()), "{info:?}");
    let e = control
        .describe_job(
            &Call::default(),
            DescribeJobRequest {
                job_id: "no-such-job".into(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code.0, 10000, "{e:?}");

    let c = reqwest::Client::new();
    let rest: serde_json::Value = c
        .get(format!("{base}/v1/server/info"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rest, serde_json::to_value(&info).unwrap());
    let r = c
        .post(format!("{base}/v1/job/no-such-job/describe"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], 10000);
}

/// QueryTableStream sends the answer as IPC stream chunks, one per batch
/// Lance yields (not one gathered answer), and the chunks together are
/// the rows the buffered QueryTable answers; a filter naming no column is
/// refused with its code before any chunk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_query_sends_batch_by_batch() {
    use lance_namespace::models::{InsertIntoTableRequest, QueryTableRequest};
    let (env, base) = endpoint().await;
    let t = ["g", "t"];
    crate::harness::table(env.ns.as_ref(), &t, 10_000).await;
    for start in [10_000, 20_000] {
        let more = InsertIntoTableRequest {
            id: crate::harness::ids(&t),
            mode: Some("Append".into()),
            ..Default::default()
        };
        let rows = crate::harness::rows(start, 10_000);
        env.ns.insert_into_table(more, rows).await.unwrap();
    }
    let mut client = pb::lance_namespace_service_client::LanceNamespaceServiceClient::connect(base)
        .await
        .unwrap();
    let ask = |filter: &str| pb::QueryTableRequest {
        id: vec!["g".into(), "t".into()],
        k: 100_000,
        filter: Some(filter.into()),
        vector: Some(Default::default()),
        ..Default::default()
    };
    let mut answer = client
        .query_table_stream(ask("id >= 0"))
        .await
        .unwrap()
        .into_inner();
    let mut chunks = Vec::new();
    while let Some(chunk) = answer.message().await.unwrap() {
        chunks.push(chunk.data);
    }
    // 30,000 rows in three fragments come in batches of at most 8,192
    // rows (the schema rides with the first), then the end marker.
    assert!(chunks.len() >= 5, "{} chunks", chunks.len());
    let whole = chunks.concat();
    let reader =
        arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(whole), None).unwrap();
    let mut streamed: Vec<i64> = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let ids = batch.column_by_name("id").unwrap();
        let ids = ids
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        streamed.extend(ids.values().iter());
    }
    streamed.sort();
    let mut q = QueryTableRequest::new(100_000, Default::default());
    q.id = crate::harness::ids(&t);
    q.filter = Some("id >= 0".into());
    let buffered = env.ns.query_table(q).await.unwrap();
    let mut expected: Vec<i64> = Vec::new();
    for batch in crate::harness::read_file(&buffered) {
        let ids = batch.column_by_name("id").unwrap();
        let ids = ids
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        expected.extend(ids.values().iter());
    }
    expected.sort();
    assert_eq!(streamed.len(), 30_000);
    assert_eq!(streamed, expected);
    let status = client
        .query_table_stream(ask("no_such_column > 1"))
        .await
        .unwrap_err();
    // TableColumnNotFound, as the buffered query answers it.
    assert_eq!(status.code(), tonic::Code::NotFound);
    assert_eq!(status.metadata().get("lance-error-code").unwrap(), "12");
}

/// A served catalog holding `g.v`, a vector table of `rows` rows, and a
/// gRPC client of it.
async fn vector_table(
    rows: usize,
) -> (
    Env,
    pb::lance_namespace_service_client::LanceNamespaceServiceClient<tonic::transport::Channel>,
) {
    let (env, base) = endpoint().await;
    crate::harness::namespace(env.ns.as_ref(), &["g"]).await;
    crate::harness::create(env.ns.as_ref(), &["g", "v"], crate::harness::vectors(rows))
        .await
        .unwrap();
    let client = pb::lance_namespace_service_client::LanceNamespaceServiceClient::connect(base)
        .await
        .unwrap();
    (env, client)
}

/// A vector query's probe bounds (`minimum_nprobes`, `maximum_nprobes`,
/// which client 0.13.0 sends and the 0.11.1 spec YAML lacks) reach the
/// server over gRPC as they do over REST: a negative one is refused naming
/// it, sound ones answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_querys_probe_bounds_arrive_over_grpc() {
    let (_env, mut client) = vector_table(300).await;
    let ask = |minimum: Option<i64>, maximum: Option<i64>| pb::QueryTableRequest {
        id: vec!["g".into(), "v".into()],
        k: 5,
        vector: Some(pb::QueryTableRequestVector {
            single_vector: vec![0.5; 16],
            ..Default::default()
        }),
        vector_column: Some("v".into()),
        minimum_nprobes: minimum,
        maximum_nprobes: maximum,
        ..Default::default()
    };
    for (minimum, maximum, named) in [
        (Some(-1), None, "minimum_nprobes"),
        (None, Some(-1), "maximum_nprobes"),
    ] {
        let status = client.query_table(ask(minimum, maximum)).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert_eq!(status.metadata().get("lance-error-code").unwrap(), "13");
        assert!(status.message().contains(named), "{status:?}");
    }
    let answer = client
        .query_table(ask(Some(1), Some(4)))
        .await
        .unwrap()
        .into_inner();
    let rows: usize = crate::harness::read_file(&answer.data.unwrap().into())
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(rows, 5);
}

/// A message that does not fit its model is the caller's mistake: 13,
/// naming the field, and the table is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_does_not_fit_its_model_is_refused_naming_the_field() {
    use prost_types::value::Kind;
    let (env, mut client) = vector_table(10).await;
    let t = ["g", "v"];
    let refused = |status: tonic::Status, field: &str| {
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert_eq!(status.metadata().get("lance-error-code").unwrap(), "13");
        assert!(status.message().contains(field), "{status:?}");
    };
    let query = pb::QueryTableRequest {
        id: vec!["g".into(), "v".into()],
        k: i64::from(i32::MAX) + 1,
        vector: Some(pb::QueryTableRequestVector {
            single_vector: vec![0.5; 16],
            ..Default::default()
        }),
        ..Default::default()
    };
    refused(
        client.query_table(query.clone()).await.unwrap_err(),
        "k: 2147483648",
    );
    let no_vector = pb::QueryTableRequest {
        k: 5,
        vector: None,
        ..query
    };
    refused(
        client.query_table(no_vector).await.unwrap_err(),
        "vector: is required",
    );
    let alter = pb::AlterTableAlterColumnsRequest {
        id: vec!["g".into(), "v".into()],
        alterations: vec![pb::AlterColumnsEntry {
            path: "v".into(),
            nullable: Some(prost_types::Value {
                kind: Some(Kind::StringValue("yes".into())),
            }),
            ..Default::default()
        }],
        ..Default::default()
    };
    refused(
        client.alter_table_alter_columns(alter).await.unwrap_err(),
        "alterations[0].nullable",
    );
    let versions = env
        .ns
        .list_table_versions(lance_namespace::models::ListTableVersionsRequest {
            id: Some(t.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(versions.versions.len(), 1, "nothing was written");
}
