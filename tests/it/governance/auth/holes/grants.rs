//! Grants follow objects, not names: a writer cannot make herself admin
//! through drop and re-create, a rename onto a trashed name inherits
//! nothing, and grants from before real ids bind to what their name held.

use super::*;

/// A grant recorded before real ids existed (by name only), as the
/// previous release wrote it.
fn legacy_grant(root: &std::path::Path, grant_id: &str, id: &[&str], principal: &str) {
    let dir = root.join("_catalog/control/grant").join(grant_id);
    std::fs::create_dir_all(&dir).unwrap();
    let grant = json!({
        "grant_id": grant_id,
        "resource": {"kind": "table", "id": id, "warehouse": "default"},
        "principal": principal,
        "relation": "reader",
        "created_at_ms": 1,
    });
    std::fs::write(
        dir.join(format!("v{:020}.json", 1)),
        serde_json::to_vec(&json!({ "value": grant })).unwrap(),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_cannot_make_itself_admin_by_drop_and_recreate() {
    let s = Server::open(|c| c.trash = GRACE).await;
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a$t1").await;
    s.grant("table", json!(["a", "t1"]), "wendy", "writer")
        .await;
    s.grant("table", json!(["a", "t1"]), "rita", "reader").await;

    // Her writer grant lets her drop the table ...
    let dropped = s
        .ok("wendy", "POST", "/v1/table/a$t1/drop", Value::Null)
        .await;
    let original = dropped["transaction_id"].as_str().unwrap().to_string();
    // ... but not create one in its namespace: the grant was on that
    // table, which is in trash now, not on the name.
    let (st, b, _) = s
        .send(
            Some("wendy"),
            "POST",
            "/v1/table/a$t1/create",
            None,
            Some(crate::harness::rows(0, 1)),
        )
        .await;
    assert_eq!((st, b["code"].as_u64().unwrap_or(0)), DENIED, "{b}");

    // The admin makes another a$t1 and shares it: that grant is on the
    // newcomer only.
    let (st, b, _) = s
        .send(
            Some("root"),
            "POST",
            "/v1/table/a$t1/create",
            None,
            Some(crate::harness::rows(100, 1)),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{b}");
    s.grant("table", json!(["a", "t1"]), "third", "reader")
        .await;
    assert_eq!(s.rows_of("third", "a$t1").await, 1);
    s.ok("root", "POST", "/v1/table/a$t1/drop", Value::Null)
        .await;
    s.ok(
        "root",
        "POST",
        "/v1/table/a$t1/undrop",
        json!({"trash_id": original}),
    )
    .await;

    // The original is back with its own grants, and only those.
    let describe = "/v1/table/a$t1/describe";
    assert_eq!(s.status("third", "POST", describe, json!({})).await, DENIED);
    assert_eq!(s.rows_of("rita", "a$t1").await, 3, "the original's rows");
    let (st, _, _) = s
        .send(
            Some("wendy"),
            "POST",
            "/v1/table/a$t1/insert",
            None,
            Some(crate::harness::rows(3, 1)),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "the writer writes the original again");
    let granted = json!({"resource": {"kind": "table", "id": ["a", "t1"]}, "principal": "x", "relation": "reader"});
    assert_eq!(
        s.status("wendy", "POST", "/v1/grants", granted).await,
        DENIED
    );

    // The same over gRPC and Flight.
    let ns = grpc(&s).await;
    let over_grpc = ns
        .describe_table(DescribeTableRequest {
            id: Some(vec!["a".into(), "t1".into()]),
            identity: identity("third"),
            ..Default::default()
        })
        .await;
    assert_eq!(code(over_grpc), 15);
    let mut f = flight(&s, "third").await;
    let ticket = Ticket::new(Bytes::from(json!({"id": ["a", "t1"]}).to_string()));
    let got = match f.do_get(ticket).await {
        Ok(stream) => stream.try_collect::<Vec<_>>().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert_eq!(crate::transport::flight::spec_code(got.unwrap_err()), "15");
    let mut f = flight(&s, "rita").await;
    let ticket = Ticket::new(Bytes::from(json!({"id": ["a", "t1"]}).to_string()));
    let batches: Vec<_> = f.do_get(ticket).await.unwrap().try_collect().await.unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 4);

    // Each refusal is in the audit trail, naming the object by its real id.
    let events = s
        .ok("root", "GET", "/v1/events?limit=1000", Value::Null)
        .await;
    let real = s.grant_id("rita").await[0]["resource"]["object_id"].clone();
    assert!(real.is_string(), "a grant names its object's real id");
    let refused = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["principal"] == "third" && e["outcome"] == "denied")
        .collect::<Vec<_>>();
    assert!(
        refused
            .iter()
            .any(|e| e["code"] == 15 && e["resource"]["object_id"] == real),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_onto_a_trashed_name_inherits_nothing() {
    let s = Server::open(|c| c.trash = GRACE).await;
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a$old1").await;
    s.create_table("root", "a$t3").await;
    s.grant("table", json!(["a", "old1"]), "pam", "reader")
        .await;
    s.grant("namespace", json!(["a"]), "walt", "writer").await;
    s.ok("root", "POST", "/v1/table/a$old1/drop", Value::Null)
        .await;
    s.ok(
        "walt",
        "POST",
        "/v1/table/a$t3/rename",
        json!({"new_table_name": "old1"}),
    )
    .await;
    let describe = "/v1/table/a$old1/describe";
    assert_eq!(s.status("pam", "POST", describe, json!({})).await, DENIED);
    // Over gRPC too.
    let over_grpc = grpc(&s)
        .await
        .describe_table(DescribeTableRequest {
            id: Some(vec!["a".into(), "old1".into()]),
            identity: identity("pam"),
            ..Default::default()
        })
        .await;
    assert_eq!(code(over_grpc), 15);

    // Her grant stayed with the trashed table: back under its name, she
    // reads it again; renamed, her grant follows it (and says so).
    s.ok(
        "walt",
        "POST",
        "/v1/table/a$old1/rename",
        json!({"new_table_name": "t3"}),
    )
    .await;
    s.ok("root", "POST", "/v1/table/a$old1/undrop", json!({}))
        .await;
    assert_eq!(s.status("pam", "POST", describe, json!({})).await, OK);
    s.ok(
        "root",
        "POST",
        "/v1/table/a$old1/rename",
        json!({"new_table_name": "moved"}),
    )
    .await;
    assert_eq!(
        s.status("pam", "POST", "/v1/table/a$moved/describe", json!({}))
            .await,
        OK
    );
    assert_eq!(
        s.status("pam", "POST", "/v1/table/a$t3/describe", json!({}))
            .await,
        DENIED
    );
    let grants = s.grant_id("pam").await;
    assert_eq!(grants[0]["resource"]["id"], json!(["a", "moved"]));

    // An undrop into a namespace made again since the drop needs the
    // right to create there: a table writer cannot move its table under
    // a namespace of her own making.
    s.ok("root", "POST", "/v1/namespace/b/create", json!({}))
        .await;
    s.create_table("root", "b$x").await;
    s.grant("table", json!(["b", "x"]), "vera", "writer").await;
    s.ok("vera", "POST", "/v1/table/b$x/drop", Value::Null)
        .await;
    s.ok(
        "root",
        "POST",
        "/v1/namespace/b/drop",
        json!({"behavior": "Cascade"}),
    )
    .await;
    s.ok("root", "POST", "/v1/namespace/b/create", json!({}))
        .await;
    assert_eq!(
        s.status("vera", "POST", "/v1/table/b$x/undrop", json!({}))
            .await,
        DENIED
    );
    // The namespace itself does not come back over its newcomer.
    let (st, b, _) = s
        .send(
            Some("root"),
            "POST",
            "/v1/namespace/b/undrop",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::CONFLICT, "{b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_from_before_real_ids_bind_to_what_their_name_held() {
    let s = Server::open(|c| c.trash = GRACE).await;
    s.ok("root", "POST", "/v1/namespace/a/create", json!({}))
        .await;
    s.create_table("root", "a$t").await;
    s.create_table("root", "a$dropped").await;
    s.ok("root", "POST", "/v1/table/a$dropped/drop", Value::Null)
        .await;
    legacy_grant(&s.root(), &"1".repeat(32), &["a", "t"], "leg");
    legacy_grant(&s.root(), &"2".repeat(32), &["a", "dropped"], "leg");
    legacy_grant(&s.root(), &"3".repeat(32), &["a", "never"], "leg");
    // Unbound, they reach nothing.
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(
        s.status("leg", "POST", "/v1/table/a$t/describe", json!({}))
            .await,
        DENIED
    );
    // The next server over the same root binds them.
    let root = s.root().to_string_lossy().into_owned();
    let s2 = Server::open(|c| {
        c.trash = GRACE;
        c.storage.root = root;
    })
    .await;
    assert_eq!(
        s2.status("leg", "POST", "/v1/table/a$t/describe", json!({}))
            .await,
        OK
    );
    s2.ok("root", "POST", "/v1/table/a$dropped/undrop", json!({}))
        .await;
    assert_eq!(
        s2.status("leg", "POST", "/v1/table/a$dropped/describe", json!({}))
            .await,
        OK,
        "a grant on a trashed table binds to it"
    );
    let grants = s2.grant_id("leg").await;
    assert_eq!(grants.len(), 3, "{grants:?}");
    let unbound: Vec<_> = grants
        .iter()
        .filter(|g| g["resource"]["object_id"].is_null())
        .collect();
    assert_eq!(unbound.len(), 1, "{grants:?}");
    assert_eq!(unbound[0]["resource"]["id"], json!(["a", "never"]));
    // A table made later under that name is not reached by it.
    s2.create_table("root", "a$never").await;
    assert_eq!(
        s2.status("leg", "POST", "/v1/table/a$never/describe", json!({}))
            .await,
        DENIED
    );
}

/// Flight writes run the same finish step as REST and gRPC: a table a
/// DoPut creates is its creator's, bound to the object it made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_made_by_doput_is_owned_by_its_creator() {
    let s = Server::open(|_| {}).await;
    s.namespaces(&["a"]).await;
    s.grant("namespace", json!(["a"]), "walt", "writer").await;
    let mut f = flight(&s, "walt").await;
    let made = crate::transport::flight::put(
        &mut f,
        arrow_flight::FlightDescriptor::new_path(vec!["a".into(), "fl".into()]),
        vec![crate::harness::batch(0, 2)],
    )
    .await
    .unwrap();
    assert_eq!(made["created"], true, "{made}");
    let owned = s.grant_id("walt").await;
    let mine = owned
        .iter()
        .find(|g| g["resource"]["id"] == json!(["a", "fl"]))
        .unwrap_or_else(|| panic!("no ownership grant: {owned:?}"));
    assert_eq!(mine["relation"], "admin");
    assert!(mine["resource"]["object_id"].is_string(), "{mine}");
    // An admin of it may share it.
    let share = json!({"resource": {"kind": "table", "id": ["a", "fl"]}, "principal": "x", "relation": "reader"});
    assert_eq!(s.status("walt", "POST", "/v1/grants", share).await, OK);
    // An append by DoPut owns nothing new.
    crate::transport::flight::put(
        &mut f,
        arrow_flight::FlightDescriptor::new_path(vec!["a".into(), "fl".into()]),
        vec![crate::harness::batch(2, 1)],
    )
    .await
    .unwrap();
    assert_eq!(s.grant_id("walt").await.len(), owned.len());
}
