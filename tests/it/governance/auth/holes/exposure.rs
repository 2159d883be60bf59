//! What leaves the server and who is let in: storage secrets only on the
//! operator's opt-in, tokens only with their configured issuer and
//! audience, and nothing of what a caller may not see.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_secrets_leave_the_server_only_when_the_operator_opts_in() {
    let options = HashMap::from([
        (
            "aws_secret_access_key".to_string(),
            "s3cr3t-root".to_string(),
        ),
        ("aws_access_key_id".to_string(), "AKIAROOT".to_string()),
        ("aws_region".to_string(), "eu-west-1".to_string()),
    ]);
    // Every inventory row whose answer carries storage options is one this
    // test calls: a new one fails here until it is checked too.
    let answering: Vec<&str> = OPS
        .iter()
        .filter(|op| {
            lance_catalog::grpc::descriptors::message(op.response)
                .is_some_and(|m| m.get_field_by_name("storage_options").is_some())
        })
        .map(|op| op.name)
        .collect();
    assert_eq!(answering, ["DescribeTable", "CreateTable", "DeclareTable"]);
    // ...and each is a row whose facts say it hands a table (and vends).
    let vending: Vec<&str> = OPS.iter().filter(|op| op.vends).map(|op| op.name).collect();
    assert_eq!(answering, vending);

    for forward in [false, true] {
        let opts = options.clone();
        let s = Server::open(|c| {
            c.storage.storage_options = opts.into();
            c.storage.forward_secrets = forward;
        })
        .await;
        s.ok(
            "root",
            "POST",
            "/v1/namespace/so/create",
            json!({"properties": {"lance.storage.aws_session_token": "s3cr3t-ns", "lance.storage.aws_region": "eu-west-1"}}),
        )
        .await;
        s.grant("namespace", json!(["so"]), "rita", "reader").await;
        let (st, created, _) = s
            .send(
                Some("root"),
                "POST",
                "/v1/table/so$t/create",
                None,
                Some(crate::harness::rows(0, 1)),
            )
            .await;
        assert_eq!(st, StatusCode::OK);
        let declared = s
            .ok("root", "POST", "/v1/table/so$d/declare", json!({}))
            .await;
        let described = s
            .ok("rita", "POST", "/v1/table/so$t/describe", json!({}))
            .await;
        let over_grpc = grpc(&s)
            .await
            .describe_table(DescribeTableRequest {
                id: Some(vec!["so".into(), "t".into()]),
                identity: identity("rita"),
                ..Default::default()
            })
            .await
            .unwrap();
        let over_grpc = json!({"storage_options": over_grpc.storage_options});
        for (name, answer) in [
            ("create", &created),
            ("declare", &declared),
            ("describe", &described),
            ("describe over gRPC", &over_grpc),
        ] {
            let o = &answer["storage_options"];
            assert_eq!(o["aws_region"], "eu-west-1", "{name}: {answer}");
            // The key's id goes with its secret: alone it grants nothing
            // but names the server's identity and account.
            assert_eq!(
                o.get("aws_access_key_id").is_some(),
                forward,
                "{name}: {answer}"
            );
            let text = answer.to_string();
            assert_eq!(
                text.contains("s3cr3t-root"),
                forward,
                "{name} (forward {forward}): {answer}"
            );
            assert_eq!(
                text.contains("s3cr3t-ns"),
                forward,
                "{name} (forward {forward}): {answer}"
            );
        }
        // A namespace's own answer hides its secret whatever the setting.
        let ns = s
            .ok("rita", "POST", "/v1/namespace/so/describe", json!({}))
            .await;
        assert!(!ns.to_string().contains("s3cr3t"), "{ns}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_issuer_and_audience_are_required() {
    let s = Server::open(|c| {
        c.auth.jwt = Some(JwtConfig {
            secret: Some(SECRET.into()),
            issuer: Some("https://idp.example".into()),
            audience: Some("lance".into()),
            ..Default::default()
        })
    })
    .await;
    let sign = |claims: Value| {
        encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
        )
        .unwrap()
    };
    let exp = now() + 60;
    for (claims, want) in [
        (
            json!({"sub": "root", "exp": exp, "iss": "https://idp.example", "aud": "lance"}),
            StatusCode::OK,
        ),
        (
            json!({"sub": "root", "exp": exp, "aud": "lance"}),
            StatusCode::UNAUTHORIZED,
        ),
        (
            json!({"sub": "root", "exp": exp, "iss": "https://idp.example"}),
            StatusCode::UNAUTHORIZED,
        ),
        (json!({"sub": "root", "exp": exp}), StatusCode::UNAUTHORIZED),
    ] {
        let r =
            s.c.get(format!("{}/v1/projects", s.base))
                .bearer_auth(sign(claims.clone()))
                .send()
                .await
                .unwrap();
        assert_eq!(r.status(), want, "{claims}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_learns_nothing_of_what_it_may_not_see() {
    let s = Server::open(|c| c.warehouses = true).await;
    s.ok("root", "POST", "/v1/projects", json!({"project_id": "p"}))
        .await;
    s.ok(
        "root",
        "POST",
        "/v1/warehouses/default/namespaces",
        json!({"namespace": "b"}),
    )
    .await;
    s.create_table("root", "b$secret").await;
    s.grant("namespace", json!(["b"]), "rhea", "reader").await;
    let rename = json!({"new_table_name": "t2"});
    let grant = |id: &[&str]| json!({"resource": {"kind": "table", "id": id}, "principal": "nosy", "relation": "admin"});
    let warehouse = |project: &str| json!({"warehouse_id": "w9", "project_id": project, "root": "/tmp/never-made"});
    // (what exists, what does not): the same refusal for both.
    let pairs = [
        (
            "POST",
            "/v1/table/b$secret/rename",
            "/v1/table/b$nope/rename",
            rename.clone(),
            rename,
        ),
        (
            "POST",
            "/v1/table/b$x/declare",
            "/v1/table/c$x/declare",
            json!({}),
            json!({}),
        ),
        (
            "POST",
            "/v1/namespace/b$n/create",
            "/v1/namespace/c$n/create",
            json!({}),
            json!({}),
        ),
        (
            "GET",
            "/v1/namespace/b/table/list",
            "/v1/namespace/c/table/list",
            json!({}),
            json!({}),
        ),
        (
            "GET",
            "/v1/namespace/b/list",
            "/v1/namespace/c/list",
            json!({}),
            json!({}),
        ),
        (
            "POST",
            "/v1/warehouses",
            "/v1/warehouses",
            warehouse("p"),
            warehouse("q"),
        ),
        (
            "POST",
            "/v1/grants",
            "/v1/grants",
            grant(&["b", "secret"]),
            grant(&["b", "nope"]),
        ),
    ];
    for (method, there, missing, body, other) in pairs {
        let a = s.status("nosy", method, there, body).await;
        let b = s.status("nosy", method, missing, other).await;
        assert_eq!((a, b), (DENIED, DENIED), "{method} {there} / {missing}");
    }
    // Over gRPC too.
    let ns = grpc(&s).await;
    for source in ["secret", "nope"] {
        let renamed = ns
            .rename_table(RenameTableRequest {
                id: Some(vec!["b".into(), source.into()]),
                new_table_name: "t2".into(),
                identity: identity("nosy"),
                ..Default::default()
            })
            .await;
        assert_eq!(code(renamed), 15, "{source}");
    }
    // A caller who may see where it would be is told it is missing.
    assert_eq!(
        s.status("rhea", "POST", "/v1/table/b$m$t/declare", json!({}))
            .await,
        (StatusCode::NOT_FOUND, 1)
    );
    assert_eq!(
        s.status(
            "rhea",
            "POST",
            "/v1/table/b$nope/rename",
            json!({"new_table_name": "z"})
        )
        .await,
        (StatusCode::NOT_FOUND, 4)
    );
    // Each hidden refusal is audited with its code.
    let events = s
        .ok("root", "GET", "/v1/events?limit=1000", Value::Null)
        .await;
    let denied = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["principal"] == "nosy" && e["outcome"] == "denied" && e["code"] == 15)
        .count();
    assert!(denied >= 16, "{denied} refusals audited");
}
