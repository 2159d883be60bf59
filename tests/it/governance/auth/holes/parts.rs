//! Operations with more than one object in them: a batch is allowed
//! exactly when each part is, a registration also needs the right to
//! record bytes no table owns; and a read writes nothing.

use super::*;

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
