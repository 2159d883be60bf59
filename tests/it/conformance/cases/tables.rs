use bytes::Bytes;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{code, count, create, ids, ipc, namespace, rows, schema};

pub async fn tables_lifecycle(ns: &dyn LanceNamespace) {
    namespace(ns, &["shop"]).await;
    let created = create(ns, &["shop", "orders"], rows(0, 10)).await.unwrap();
    assert!(created.location.unwrap().contains("orders"));
    assert_eq!(created.version, Some(1));
    assert_eq!(code(create(ns, &["shop", "orders"], rows(0, 1)).await), 5);
    // The parent must exist.
    assert_eq!(code(create(ns, &["ghost", "orders"], rows(0, 1)).await), 1);

    let listed = ns
        .list_tables(ListTablesRequest {
            id: ids(&["shop"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.tables, vec!["orders"]);

    let d = ns
        .describe_table(DescribeTableRequest {
            id: ids(&["shop", "orders"]),
            load_detailed_metadata: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(d.location.is_some());
    assert_eq!(d.version, Some(1));
    let fields: Vec<String> = d
        .schema
        .unwrap()
        .fields
        .iter()
        .map(|f| f.name.clone())
        .collect();
    assert_eq!(fields, vec!["id", "x", "s"]);

    ns.table_exists(TableExistsRequest {
        id: ids(&["shop", "orders"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let missing = ns
        .describe_table(DescribeTableRequest {
            id: ids(&["shop", "nope"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(missing), 4);

    ns.drop_table(DropTableRequest {
        id: ids(&["shop", "orders"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let gone = ns
        .table_exists(TableExistsRequest {
            id: ids(&["shop", "orders"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(gone), 4);
    let again = ns
        .drop_table(DropTableRequest {
            id: ids(&["shop", "orders"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(again), 4);
}

pub async fn create_table_modes(ns: &dyn LanceNamespace) {
    namespace(ns, &["cm"]).await;
    create(ns, &["cm", "t"], rows(0, 5)).await.unwrap();
    let with_mode = |mode: &str, data: Bytes| {
        let req = CreateTableRequest {
            id: ids(&["cm", "t"]),
            mode: Some(mode.to_string()),
            ..Default::default()
        };
        ns.create_table(req, data)
    };
    with_mode("ExistOk", rows(0, 1)).await.unwrap();
    let over = with_mode("OVERWRITE", rows(100, 2)).await.unwrap();
    assert_eq!(over.version, Some(2));
    let n = ns
        .count_table_rows(CountTableRowsRequest {
            id: ids(&["cm", "t"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(code(with_mode("sometimes", rows(0, 1)).await), 13);

    // A stream with a schema and no batches creates an empty table.
    let empty = ipc(&schema(), &[]);
    create(ns, &["cm", "empty"], empty).await.unwrap();
    let n = ns
        .count_table_rows(CountTableRowsRequest {
            id: ids(&["cm", "empty"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(n, 0);

    // Names beyond ASCII or with characters a storage path escapes, at the
    // root and in a namespace: every mode behaves as for any name (the
    // engine looks for them escaped).
    for id in [&["Ä-t"][..], &["cm", "Ä"], &["cm", "a~b"], &["cm", "t[1]"]] {
        create(ns, id, rows(0, 3)).await.unwrap();
        let again = |mode: &str| {
            ns.create_table(
                CreateTableRequest {
                    id: ids(id),
                    mode: Some(mode.to_string()),
                    ..Default::default()
                },
                rows(10, 2),
            )
        };
        assert_eq!(code(again("create").await), 5, "{id:?}");
        assert_eq!(again("exist_ok").await.unwrap().version, Some(1));
        assert_eq!(again("overwrite").await.unwrap().version, Some(2));
        assert_eq!(count(ns, id).await, 2);
        let described = ns
            .describe_table(DescribeTableRequest {
                id: ids(id),
                check_declared: Some(true),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_ne!(described.is_only_declared, Some(true), "{id:?}");
    }
}

pub async fn declare_register_deregister(ns: &dyn LanceNamespace) {
    namespace(ns, &["dr"]).await;
    let declared = ns
        .declare_table(DeclareTableRequest {
            id: ids(&["dr", "later"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(declared.location.is_some());
    let r = ns
        .declare_table(DeclareTableRequest {
            id: ids(&["ghost", "later"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 1);

    create(ns, &["dr", "t"], rows(0, 4)).await.unwrap();
    let d = ns
        .describe_table(DescribeTableRequest {
            id: ids(&["dr", "t"]),
            ..Default::default()
        })
        .await
        .unwrap();
    let location = d.location.unwrap();
    ns.deregister_table(DeregisterTableRequest {
        id: ids(&["dr", "t"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let r = ns
        .table_exists(TableExistsRequest {
            id: ids(&["dr", "t"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 4);
    // Deregister keeps the bytes: registering the directory again brings the rows back.
    let dir_name = location
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    ns.register_table(RegisterTableRequest {
        id: ids(&["dr", "back"]),
        location: dir_name.clone(),
        ..Default::default()
    })
    .await
    .unwrap();
    let n = ns
        .count_table_rows(CountTableRowsRequest {
            id: ids(&["dr", "back"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(n, 4);
    let dup = ns
        .register_table(RegisterTableRequest {
            id: ids(&["dr", "back"]),
            location: dir_name,
            ..Default::default()
        })
        .await;
    assert_eq!(code(dup), 5);
}

pub async fn list_all_tables_pages(ns: &dyn LanceNamespace) {
    namespace(ns, &["p"]).await;
    namespace(ns, &["p", "q"]).await;
    for id in [
        &["p", "t1"][..],
        &["p", "q", "t2"][..],
        &["p", "q", "t3"][..],
    ] {
        create(ns, id, rows(0, 1)).await.unwrap();
    }
    let mut seen = Vec::new();
    let mut token = None;
    loop {
        let page = ns
            .list_all_tables(ListTablesRequest {
                limit: Some(2),
                page_token: token.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        seen.extend(page.tables);
        // A table created between pages does not disturb what is left.
        if token.is_none() {
            create(ns, &["p", "a0"], rows(0, 1)).await.unwrap();
        }
        match page.page_token {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    assert_eq!(seen, vec!["p$q$t2", "p$q$t3", "p$t1"]);
}

pub async fn malformed_input(ns: &dyn LanceNamespace) {
    namespace(ns, &["bad"]).await;
    let r = create(
        ns,
        &["bad", "t"],
        Bytes::from_static(b"definitely not arrow"),
    )
    .await;
    assert_eq!(code(r), 13);
    let r = create(ns, &["bad", "t"], Bytes::new()).await;
    assert_eq!(code(r), 13);
    // An empty id segment.
    let r = ns
        .describe_namespace(DescribeNamespaceRequest {
            id: ids(&["bad", ""]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);
    create(ns, &["bad", "t"], rows(0, 3)).await.unwrap();
    let r = ns
        .insert_into_table(
            InsertIntoTableRequest {
                id: ids(&["bad", "t"]),
                mode: Some("upsert".into()),
                ..Default::default()
            },
            rows(3, 1),
        )
        .await;
    assert_eq!(code(r), 13);
    let r = ns
        .insert_into_table(
            InsertIntoTableRequest {
                id: ids(&["bad", "nope"]),
                ..Default::default()
            },
            rows(3, 1),
        )
        .await;
    assert_eq!(code(r), 4);
    // The catalog's own property keys cannot be set by callers.
    let r = ns
        .create_table(
            CreateTableRequest {
                id: ids(&["bad", "forged"]),
                properties: Some(
                    [("lance-catalog.mv.kind".to_string(), "query".to_string())].into(),
                ),
                ..Default::default()
            },
            rows(0, 1),
        )
        .await;
    assert_eq!(code(r), 13);
    // A missing column is 12, a predicate that does not parse is 13.
    let r = ns
        .alter_table_drop_columns(AlterTableDropColumnsRequest {
            id: ids(&["bad", "t"]),
            columns: vec!["nope".into()],
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 12);
    let r = ns
        .count_table_rows(CountTableRowsRequest {
            id: ids(&["bad", "t"]),
            predicate: Some("id >>> ((".into()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);
    // A version whose "staged manifest" is some other object is refused.
    let r = ns
        .batch_create_table_versions(BatchCreateTableVersionsRequest {
            entries: vec![CreateTableVersionEntry {
                id: vec!["bad".into(), "t".into()],
                version: 2,
                manifest_path: "somewhere/else.manifest".into(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);
    // Nothing was written by the rejected calls.
    let n = ns
        .count_table_rows(CountTableRowsRequest {
            id: ids(&["bad", "t"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(n, 3);
}

pub async fn empty_batches_are_invalid(ns: &dyn LanceNamespace) {
    let r = ns
        .batch_commit_tables(BatchCommitTablesRequest::default())
        .await;
    assert_eq!(code(r), 13);
    let r = ns
        .batch_create_table_versions(BatchCreateTableVersionsRequest::default())
        .await;
    assert_eq!(code(r), 13);
}

pub async fn rename_table(ns: &dyn LanceNamespace) {
    namespace(ns, &["r"]).await;
    namespace(ns, &["r2"]).await;
    ns.create_table(
        CreateTableRequest {
            id: ids(&["r", "t"]),
            properties: Some([("team".to_string(), "x".to_string())].into()),
            ..Default::default()
        },
        rows(0, 4),
    )
    .await
    .unwrap();
    ns.create_table_tag(CreateTableTagRequest {
        id: ids(&["r", "t"]),
        tag: "v1".into(),
        version: 1,
        ..Default::default()
    })
    .await
    .unwrap();
    let rename = |id: &[&str], name: &str, to_ns: Option<&[&str]>| RenameTableRequest {
        id: ids(id),
        new_table_name: name.to_string(),
        new_namespace_id: to_ns.and_then(ids),
        ..Default::default()
    };
    // Same namespace, new name.
    ns.rename_table(rename(&["r", "t"], "t2", None))
        .await
        .unwrap();
    let gone = ns
        .table_exists(TableExistsRequest {
            id: ids(&["r", "t"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(gone), 4);
    // Another namespace; the destination namespace must exist and the name be free.
    assert_eq!(
        code(
            ns.rename_table(rename(&["r", "t2"], "t", Some(&["ghost"])))
                .await
        ),
        1
    );
    create(ns, &["r2", "taken"], rows(0, 1)).await.unwrap();
    assert_eq!(
        code(
            ns.rename_table(rename(&["r", "t2"], "taken", Some(&["r2"])))
                .await
        ),
        5
    );
    assert_eq!(
        code(ns.rename_table(rename(&["r", "nope"], "x", None)).await),
        4
    );
    ns.rename_table(rename(&["r", "t2"], "moved", Some(&["r2"])))
        .await
        .unwrap();
    // Data, versions, tags and properties came along.
    let id = ids(&["r2", "moved"]);
    let n = ns
        .count_table_rows(CountTableRowsRequest {
            id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(n, 4);
    let tag = ns
        .get_table_tag_version(GetTableTagVersionRequest {
            id: id.clone(),
            tag: "v1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(tag.version, 1);
    let d = ns
        .describe_table(DescribeTableRequest {
            id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(d.properties.unwrap()["team"], "x");
    let listed = ns
        .list_tables(ListTablesRequest {
            id: ids(&["r2"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.tables, vec!["moved", "taken"]);
}
