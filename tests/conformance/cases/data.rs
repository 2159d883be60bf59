use arrow_array::{Array, Int64Array};
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{code, ids, read_file, rows};

async fn table(ns: &dyn LanceNamespace, id: &[&str], n: usize) {
    ns.create_namespace(CreateNamespaceRequest {
        id: ids(&id[..id.len() - 1]),
        ..Default::default()
    })
    .await
    .unwrap();
    ns.create_table(
        CreateTableRequest {
            id: ids(id),
            ..Default::default()
        },
        rows(0, n),
    )
    .await
    .unwrap();
}

async fn count(ns: &dyn LanceNamespace, id: &[&str], predicate: Option<&str>) -> i64 {
    ns.count_table_rows(CountTableRowsRequest {
        id: ids(id),
        predicate: predicate.map(str::to_string),
        ..Default::default()
    })
    .await
    .unwrap()
}

fn query(id: &[&str], filter: &str, columns: &[&str]) -> QueryTableRequest {
    let mut q = QueryTableRequest::new(100, QueryTableRequestVector::default());
    q.id = ids(id);
    q.filter = Some(filter.to_string());
    q.columns = Some(Box::new(QueryTableRequestColumns {
        column_names: Some(columns.iter().map(|c| c.to_string()).collect()),
        ..Default::default()
    }));
    q
}

pub async fn data_round_trip(ns: &dyn LanceNamespace) {
    let t = ["d", "t"];
    table(ns, &t, 10).await;
    let ins = ns
        .insert_into_table(
            InsertIntoTableRequest {
                id: ids(&t),
                mode: Some("Append".into()),
                ..Default::default()
            },
            rows(10, 5),
        )
        .await
        .unwrap();
    assert_eq!(ins.version, Some(2));
    assert_eq!(count(ns, &t, None).await, 15);
    assert_eq!(count(ns, &t, Some("id >= 12")).await, 3);

    let answer = ns
        .query_table(query(&t, "id >= 12", &["id", "s"]))
        .await
        .unwrap();
    let batches = read_file(&answer);
    let got: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            assert_eq!(b.num_columns(), 2);
            let col = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            (0..col.len()).map(|i| col.value(i)).collect::<Vec<_>>()
        })
        .collect();
    let mut got = got;
    got.sort();
    assert_eq!(got, vec![12, 13, 14]);

    // Merge-insert on `id`: 2 rows update, 3 rows insert.
    let m = ns
        .merge_insert_into_table(
            MergeInsertIntoTableRequest {
                id: ids(&t),
                on: Some(vec!["id".into()]),
                when_matched_update_all: Some(true),
                when_not_matched_insert_all: Some(true),
                ..Default::default()
            },
            rows(13, 5),
        )
        .await
        .unwrap();
    assert_eq!(m.num_inserted_rows, Some(3));
    assert_eq!(m.num_updated_rows, Some(2));
    assert_eq!(count(ns, &t, None).await, 18);

    let u = ns
        .update_table(UpdateTableRequest {
            id: ids(&t),
            predicate: Some("id < 2".into()),
            updates: vec![vec!["s".into(), "'updated'".into()]],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(u.updated_rows, 2);
    assert_eq!(count(ns, &t, Some("s = 'updated'")).await, 2);
    ns.delete_from_table(DeleteFromTableRequest {
        id: ids(&t),
        predicate: "id >= 15".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(count(ns, &t, None).await, 15);

    let plan = ns
        .explain_table_query_plan(ExplainTableQueryPlanRequest {
            id: ids(&t),
            query: Box::new(query(&t, "id > 1", &["id"])),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!plan.is_empty());

    // Merge-insert without `on` is rejected before any write.
    let r = ns
        .merge_insert_into_table(
            MergeInsertIntoTableRequest {
                id: ids(&t),
                on: Some(vec!["nope".into()]),
                ..Default::default()
            },
            rows(0, 1),
        )
        .await;
    assert_eq!(code(r), 12);
}

pub async fn versions_tags_restore(ns: &dyn LanceNamespace) {
    let t = ["v", "t"];
    table(ns, &t, 3).await;
    ns.insert_into_table(
        InsertIntoTableRequest {
            id: ids(&t),
            ..Default::default()
        },
        rows(3, 3),
    )
    .await
    .unwrap();
    let versions = ns
        .list_table_versions(ListTableVersionsRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut nums: Vec<i64> = versions.versions.iter().map(|v| v.version).collect();
    nums.sort();
    assert_eq!(nums, vec![1, 2]);
    let v1 = ns
        .describe_table_version(DescribeTableVersionRequest {
            id: ids(&t),
            version: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(v1.version.version, 1);
    let r = ns
        .describe_table_version(DescribeTableVersionRequest {
            id: ids(&t),
            version: Some(99),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 11);

    let tag = |name: &str, version| CreateTableTagRequest {
        id: ids(&t),
        tag: name.to_string(),
        version,
        ..Default::default()
    };
    ns.create_table_tag(tag("first", 1)).await.unwrap();
    assert_eq!(code(ns.create_table_tag(tag("first", 2)).await), 9);
    let tags = ns
        .list_table_tags(ListTableTagsRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(tags.tags["first"].version, 1);
    ns.update_table_tag(UpdateTableTagRequest {
        id: ids(&t),
        tag: "first".into(),
        version: 2,
        ..Default::default()
    })
    .await
    .unwrap();
    let v = ns
        .get_table_tag_version(GetTableTagVersionRequest {
            id: ids(&t),
            tag: "first".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(v.version, 2);
    ns.delete_table_tag(DeleteTableTagRequest {
        id: ids(&t),
        tag: "first".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let r = ns
        .get_table_tag_version(GetTableTagVersionRequest {
            id: ids(&t),
            tag: "first".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 8);

    ns.restore_table(RestoreTableRequest {
        id: ids(&t),
        version: 1,
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(count(ns, &t, None).await, 3);
}

pub async fn branches(ns: &dyn LanceNamespace) {
    let t = ["b", "t"];
    table(ns, &t, 3).await;
    ns.create_table_branch(CreateTableBranchRequest {
        id: ids(&t),
        name: "dev".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let dup = ns
        .create_table_branch(CreateTableBranchRequest {
            id: ids(&t),
            name: "dev".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(dup), 23);
    let list = ns
        .list_table_branches(ListTableBranchesRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(list.branches.contains_key("dev"));
    ns.delete_table_branch(DeleteTableBranchRequest {
        id: ids(&t),
        name: "dev".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let r = ns
        .delete_table_branch(DeleteTableBranchRequest {
            id: ids(&t),
            name: "dev".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 22);
}

pub async fn indexes_and_stats(ns: &dyn LanceNamespace) {
    let t = ["i", "t"];
    table(ns, &t, 50).await;
    ns.create_table_scalar_index(CreateTableIndexRequest {
        id: ids(&t),
        column: "id".into(),
        index_type: "BTREE".into(),
        name: Some("id_idx".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let list = ns
        .list_table_indices(ListTableIndicesRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(list.indexes.len(), 1);
    assert_eq!(list.indexes[0].index_name, "id_idx");
    let stats = ns
        .describe_table_index_stats(DescribeTableIndexStatsRequest {
            id: ids(&t),
            index_name: Some("id_idx".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(stats.num_indexed_rows, Some(50));
    let r = ns
        .describe_table_index_stats(DescribeTableIndexStatsRequest {
            id: ids(&t),
            index_name: Some("nope".into()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 6);
    let s = ns
        .get_table_stats(GetTableStatsRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(s.num_rows, 50);
    ns.drop_table_index(DropTableIndexRequest {
        id: ids(&t),
        index_name: Some("id_idx".into()),
        ..Default::default()
    })
    .await
    .unwrap();
}

pub async fn schema_evolution(ns: &dyn LanceNamespace) {
    let t = ["s", "t"];
    table(ns, &t, 4).await;
    ns.alter_table_add_columns(AlterTableAddColumnsRequest {
        id: ids(&t),
        new_columns: vec![AddColumnsEntry {
            name: "y".into(),
            expression: Some(Some("id * 2".into())),
            ..Default::default()
        }],
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(count(ns, &t, Some("y = 6")).await, 1);
    ns.alter_table_alter_columns(AlterTableAlterColumnsRequest {
        id: ids(&t),
        alterations: vec![AlterColumnsEntry {
            path: "s".into(),
            rename: Some(Some("label".into())),
            ..Default::default()
        }],
        ..Default::default()
    })
    .await
    .unwrap();
    let dropped = ns
        .alter_table_drop_columns(AlterTableDropColumnsRequest {
            id: ids(&t),
            columns: vec!["x".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(dropped.version >= 4);
    let d = ns
        .describe_table(DescribeTableRequest {
            id: ids(&t),
            load_detailed_metadata: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let fields: Vec<String> = d
        .schema
        .unwrap()
        .fields
        .iter()
        .map(|f| f.name.clone())
        .collect();
    assert_eq!(fields, vec!["id", "label", "y"]);
    let meta = ns
        .update_table_schema_metadata(UpdateTableSchemaMetadataRequest {
            id: ids(&t),
            metadata: Some([("owner".to_string(), "me".to_string())].into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(meta.metadata.unwrap()["owner"], "me");
}

pub async fn transactions_and_version_cleanup(ns: &dyn LanceNamespace) {
    let t = ["x", "t"];
    table(ns, &t, 3).await;
    for start in [3, 6] {
        ns.insert_into_table(
            InsertIntoTableRequest {
                id: ids(&t),
                ..Default::default()
            },
            rows(start, 3),
        )
        .await
        .unwrap();
    }
    // The transaction that made version 2.
    let tx = ids(&["x", "t", "2"]);
    let d = ns
        .describe_transaction(DescribeTransactionRequest {
            id: tx.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(d.status.to_ascii_uppercase(), "SUCCEEDED");
    let altered = ns
        .alter_transaction(AlterTransactionRequest {
            id: tx.clone(),
            actions: vec![AlterTransactionAction {
                set_property_action: Some(Box::new(AlterTransactionSetProperty {
                    key: Some("reviewed".into()),
                    value: Some("yes".into()),
                    ..Default::default()
                })),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(altered.properties.unwrap()["reviewed"], "yes");
    let r = ns
        .describe_transaction(DescribeTransactionRequest {
            id: ids(&["x", "t", "99"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 10);

    let plan = ns
        .analyze_table_query_plan(AnalyzeTableQueryPlanRequest {
            id: ids(&t),
            filter: Some("id > 2".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!plan.is_empty());

    ns.batch_delete_table_versions(BatchDeleteTableVersionsRequest {
        id: ids(&t),
        ranges: vec![VersionRange {
            // Start inclusive, end exclusive: deletes version 1.
            start_version: 1,
            end_version: 2,
        }],
        ..Default::default()
    })
    .await
    .unwrap();
    let versions = ns
        .list_table_versions(ListTableVersionsRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut nums: Vec<i64> = versions.versions.iter().map(|v| v.version).collect();
    nums.sort();
    assert_eq!(nums, vec![2, 3]);
    assert_eq!(count(ns, &t, None).await, 9);
}

pub async fn field_metadata_and_schema_metadata(ns: &dyn LanceNamespace) {
    let t = ["f", "t"];
    table(ns, &t, 2).await;
    let r = ns
        .update_field_metadata(UpdateFieldMetadataRequest {
            id: ids(&t),
            updates: vec![UpdateFieldMetadataEntry {
                path: "x".into(),
                metadata: [("unit".to_string(), "m".to_string())].into(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(r.version, 2);
    let r = ns
        .update_field_metadata(UpdateFieldMetadataRequest {
            id: ids(&t),
            updates: vec![UpdateFieldMetadataEntry {
                path: "x".into(),
                metadata: [("precision".to_string(), "2".to_string())].into(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    // Merge semantics: both keys are there.
    let fields = r.fields.unwrap();
    assert_eq!(fields["x"]["unit"], "m");
    assert_eq!(fields["x"]["precision"], "2");
    assert_eq!(r.version, 3);
    let missing = ns
        .update_field_metadata(UpdateFieldMetadataRequest {
            id: ids(&t),
            updates: vec![UpdateFieldMetadataEntry {
                path: "nope".into(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await;
    assert_eq!(code(missing), 12);
    let m = ns
        .update_table_schema_metadata(UpdateTableSchemaMetadataRequest {
            id: ids(&t),
            metadata: Some([("a".to_string(), "1".to_string())].into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(m.metadata.unwrap()["a"], "1");
}

pub async fn branch_writes(ns: &dyn LanceNamespace) {
    let t = ["br", "t"];
    table(ns, &t, 3).await;
    ns.create_table_branch(CreateTableBranchRequest {
        id: ids(&t),
        name: "dev".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let on_dev = |start, n| {
        ns.insert_into_table(
            InsertIntoTableRequest {
                id: ids(&t),
                branch: Some("dev".into()),
                ..Default::default()
            },
            rows(start, n),
        )
    };
    on_dev(3, 2).await.unwrap();
    ns.merge_insert_into_table(
        MergeInsertIntoTableRequest {
            id: ids(&t),
            branch: Some("dev".into()),
            on: Some(vec!["id".into()]),
            when_matched_update_all: Some(true),
            when_not_matched_insert_all: Some(true),
            ..Default::default()
        },
        rows(4, 3),
    )
    .await
    .unwrap();
    let count_on = |branch: Option<&str>| {
        ns.count_table_rows(CountTableRowsRequest {
            id: ids(&t),
            branch: branch.map(str::to_string),
            ..Default::default()
        })
    };
    assert_eq!(count_on(Some("dev")).await.unwrap(), 7);
    // The main line did not move.
    assert_eq!(count_on(None).await.unwrap(), 3);
    let d = ns
        .describe_table(DescribeTableRequest {
            id: ids(&t),
            branch: Some("dev".into()),
            load_detailed_metadata: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(d.version.unwrap() >= 3);
    let main = ns
        .describe_table(DescribeTableRequest {
            id: ids(&t),
            load_detailed_metadata: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(main.version, Some(1));
    let r = ns
        .insert_into_table(
            InsertIntoTableRequest {
                id: ids(&t),
                branch: Some("nope".into()),
                ..Default::default()
            },
            rows(0, 1),
        )
        .await;
    assert_eq!(code(r), 22);
    let m = ns
        .update_table_schema_metadata(UpdateTableSchemaMetadataRequest {
            id: ids(&t),
            branch: Some("dev".into()),
            metadata: Some([("on".to_string(), "dev".to_string())].into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(m.metadata.unwrap()["on"], "dev");
}

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

    // A bad binding is refused up front.
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
    assert_eq!(code(r), 13);
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
