//! Asynchronous work through the spec: computed columns with backfill jobs,
//! and materialized views.

use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{code, ids, rows};
use crate::harness::{count_where as count, table};

/// Wait (bounded) until `predicate` matches `want` rows.
async fn eventually(ns: &dyn LanceNamespace, id: &[&str], predicate: &str, want: i64) {
    for _ in 0..200 {
        if count(ns, id, Some(predicate)).await == want {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{predicate} never matched {want} rows");
}

pub async fn computed_column_backfill(ns: &dyn LanceNamespace) {
    let t = ["c", "t"];
    table(ns, &t, 6).await;
    let added = ns
        .alter_table_add_columns(AlterTableAddColumnsRequest {
            id: ids(&t),
            new_columns: vec![AddColumnsEntry {
                name: "twice".into(),
                computed: Some(Some("id * 2".into())),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(added.version, 2);
    // The column starts all-null.
    assert_eq!(count(ns, &t, Some("twice IS NULL")).await, 6);
    let job = ns
        .alter_table_backfill_columns(AlterTableBackfillColumnsRequest {
            id: ids(&t),
            column: "twice".into(),
            r#where: Some(Some("id >= 2".into())),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!job.job_id.is_empty());
    eventually(ns, &t, "twice = id * 2", 4).await;
    assert_eq!(count(ns, &t, Some("twice IS NULL")).await, 2);

    // A binding naming a missing column is refused up front (12, as for a
    // plain expression).
    let r = ns
        .alter_table_add_columns(AlterTableAddColumnsRequest {
            id: ids(&t),
            new_columns: vec![AddColumnsEntry {
                name: "bad".into(),
                computed: Some(Some("nope + 1".into())),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 12);
    // A column with no binding cannot be backfilled; a missing one is 12.
    let r = ns
        .alter_table_backfill_columns(AlterTableBackfillColumnsRequest {
            id: ids(&t),
            column: "x".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);
    let r = ns
        .alter_table_backfill_columns(AlterTableBackfillColumnsRequest {
            id: ids(&t),
            column: "nope".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 12);

    // A Python UDF column is stored, but this server cannot run it.
    ns.alter_table_add_columns(AlterTableAddColumnsRequest {
        id: ids(&t),
        new_columns: vec![AddColumnsEntry {
            name: "emb".into(),
            virtual_column: Some(Some(Box::new(AddVirtualColumnEntry {
                input_columns: vec!["s".into()],
                outputs: vec![AddVirtualColumnOutputEntry {
                    column: "emb".into(),
                    struct_field: "emb".into(),
                    data_type: serde_json::json!({"type": "float64"}),
                    nullable: true,
                    ..Default::default()
                }],
                image: "registry.local/udf:1".into(),
                udf: "def f(s): ...".into(),
                udf_name: "embed".into(),
                udf_version: "1".into(),
                ..Default::default()
            }))),
            ..Default::default()
        }],
        ..Default::default()
    })
    .await
    .unwrap();
    let r = ns
        .alter_table_backfill_columns(AlterTableBackfillColumnsRequest {
            id: ids(&t),
            column: "emb".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 0);
}

pub async fn materialized_views(ns: &dyn LanceNamespace) {
    let src = ["mv", "orders"];
    table(ns, &src, 10).await;
    let view = |sql: &str, kind, no_data| {
        let mut r = CreateMaterializedViewRequest::new(kind, sql.to_string(), String::new());
        r.id = ids(&["mv", "big_orders"]);
        r.with_no_data = Some(no_data);
        r
    };
    let sql = r#"SELECT id, x FROM "mv$orders" WHERE id >= 6"#;
    let created = ns
        .create_materialized_view(view(
            sql,
            create_materialized_view_request::Kind::Query,
            false,
        ))
        .await
        .unwrap();
    assert!(created.job_id.flatten().is_some());
    let v = ["mv", "big_orders"];
    eventually(ns, &v, "id >= 6", 4).await;
    assert_eq!(count(ns, &v, None).await, 4);

    ns.insert_into_table(
        InsertIntoTableRequest {
            id: ids(&src),
            ..Default::default()
        },
        rows(10, 5),
    )
    .await
    .unwrap();
    let refresh = ns
        .refresh_materialized_view(RefreshMaterializedViewRequest {
            id: ids(&v),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!refresh.job_id.is_empty());
    eventually(ns, &v, "id >= 6", 9).await;
    // Describe shows the definition and the source versions it was built from.
    let mut props = Default::default();
    for _ in 0..100 {
        let d = ns
            .describe_table(DescribeTableRequest {
                id: ids(&v),
                ..Default::default()
            })
            .await
            .unwrap();
        props = d.properties.unwrap_or_default();
        if props
            .get("lance-catalog.mv.source_versions")
            .is_some_and(|s| s.contains("\"mv$orders\":2"))
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(props["lance-catalog.mv.source_query"], sql);
    assert!(
        props["lance-catalog.mv.source_versions"].contains("\"mv$orders\":2"),
        "{props:?}"
    );
    assert!(props.contains_key("lance-catalog.mv.last_refresh"));

    // Broken definitions are refused before anything is created.
    let mut bad = view(
        "SELEC nonsense",
        create_materialized_view_request::Kind::Query,
        true,
    );
    bad.id = ids(&["mv", "bad"]);
    assert_eq!(code(ns.create_materialized_view(bad).await), 13);
    let mut missing = view(
        r#"SELECT * FROM "mv$nope""#,
        create_materialized_view_request::Kind::Query,
        true,
    );
    missing.id = ids(&["mv", "bad"]);
    assert_eq!(code(ns.create_materialized_view(missing).await), 4);
    // Refreshing a plain table is invalid.
    let r = ns
        .refresh_materialized_view(RefreshMaterializedViewRequest {
            id: ids(&src),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);

    // A UDTF view is stored, but refreshing it needs a UDF runner: code 0.
    let schema_ipc = crate::harness::ipc(&crate::harness::schema(), &[]);
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&schema_ipc);
    let mut udtf = CreateMaterializedViewRequest::new(
        create_materialized_view_request::Kind::Udtf,
        r#"SELECT * FROM "mv$orders""#.into(),
        encoded,
    );
    udtf.id = ids(&["mv", "chunks"]);
    ns.create_materialized_view(udtf).await.unwrap();
    let r = ns
        .refresh_materialized_view(RefreshMaterializedViewRequest {
            id: ids(&["mv", "chunks"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 0);
}
