//! Client mistakes that the storage engine would answer as Internal (500):
//! each is a spec code, and none changes anything.

use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{code, count, create, ids, namespace, rows};

fn add(name: &str, expression: &str) -> AddColumnsEntry {
    AddColumnsEntry {
        name: name.into(),
        expression: Some(Some(expression.into())),
        ..Default::default()
    }
}

fn query(filter: Option<&str>, columns: Option<Vec<&str>>) -> QueryTableRequest {
    QueryTableRequest {
        id: ids(&["m", "t"]),
        k: 10,
        vector: Box::default(),
        filter: filter.map(str::to_string),
        columns: columns.map(|c| {
            Box::new(QueryTableRequestColumns {
                column_names: Some(c.into_iter().map(str::to_string).collect()),
                ..Default::default()
            })
        }),
        ..Default::default()
    }
}

pub async fn engine_mistakes_are_client_errors(ns: &dyn LanceNamespace) {
    namespace(ns, &["m"]).await;
    create(ns, &["m", "t"], rows(0, 3)).await.unwrap();
    create(ns, &["m", "other"], rows(0, 7)).await.unwrap();
    ns.register_table(RegisterTableRequest {
        id: ids(&["m", "empty"]),
        location: "holds-nothing".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let add_columns =
        |id: &[&str], new_columns: Vec<AddColumnsEntry>| AlterTableAddColumnsRequest {
            id: ids(id),
            new_columns,
            ..Default::default()
        };

    // add_columns: no dataset (4); bad expressions, empty or taken names (13/12).
    let r = ns
        .alter_table_add_columns(add_columns(&["m", "empty"], vec![add("c", "1")]))
        .await;
    assert_eq!(code(r), 4);
    for (entries, want) in [
        (vec![add("c", "1 +")], 13),
        (vec![add("c", "nope + 1")], 12),
        (vec![add("c", "id + 'x'")], 13),
        (vec![add("", "1")], 13),
        (vec![add("c", "1"), add("c", "2")], 13),
        (vec![add("id", "1")], 13),
    ] {
        let r = ns
            .alter_table_add_columns(add_columns(&["m", "t"], entries.clone()))
            .await;
        assert_eq!(code(r), want, "{entries:?}");
    }

    // alter_columns: empty, shared or taken names and impossible casts (13).
    let alter = |entries: Vec<AlterColumnsEntry>| AlterTableAlterColumnsRequest {
        id: ids(&["m", "t"]),
        alterations: entries,
        ..Default::default()
    };
    let rename = |path: &str, to: &str| AlterColumnsEntry {
        path: path.into(),
        rename: Some(Some(to.into())),
        ..Default::default()
    };
    for entries in [
        vec![rename("x", "")],
        vec![rename("x", "s")],
        vec![rename("x", "a"), rename("s", "a")],
        vec![AlterColumnsEntry {
            path: "s".into(),
            data_type: Some(serde_json::json!({"type": "int64"})),
            ..Default::default()
        }],
    ] {
        let r = ns.alter_table_alter_columns(alter(entries.clone())).await;
        assert_eq!(code(r), 13, "{entries:?}");
    }
    let r = ns
        .alter_table_drop_columns(AlterTableDropColumnsRequest {
            id: ids(&["m", "t"]),
            columns: vec!["id".into(), "x".into(), "s".into()],
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);

    // create_table_version: no path, a directory, another table's manifest.
    let foreign = ns
        .describe_table_version(DescribeTableVersionRequest {
            id: ids(&["m", "other"]),
            version: Some(1),
            ..Default::default()
        })
        .await
        .unwrap()
        .version
        .manifest_path;
    for (version, path) in [(2, ""), (2, "/"), (2, foreign.as_str()), (-1, "x")] {
        let r = ns
            .create_table_version(CreateTableVersionRequest {
                id: ids(&["m", "t"]),
                version,
                manifest_path: path.into(),
                ..Default::default()
            })
            .await;
        assert_eq!(code(r), 13, "version {version} at {path:?}");
    }
    assert_eq!(count(ns, &["m", "other"]).await, 7);

    // Versions: missing (11), negative (13), ranges that are not ranges (13).
    let restore = |version| RestoreTableRequest {
        id: ids(&["m", "t"]),
        version,
        ..Default::default()
    };
    assert_eq!(code(ns.restore_table(restore(0)).await), 11);
    assert_eq!(code(ns.restore_table(restore(999_999)).await), 11);
    assert_eq!(code(ns.restore_table(restore(-1)).await), 13);
    for ranges in [
        vec![],
        vec![VersionRange::new(-5, -1)],
        vec![VersionRange::new(3, 2)],
    ] {
        let r = ns
            .batch_delete_table_versions(BatchDeleteTableVersionsRequest {
                id: ids(&["m", "t"]),
                ranges: ranges.clone(),
                ..Default::default()
            })
            .await;
        assert_eq!(code(r), 13, "{ranges:?}");
    }
    assert_eq!(count(ns, &["m", "t"]).await, 3);

    // Queries and plans: bad filters (13), unknown columns (12).
    assert_eq!(code(ns.query_table(query(Some("id >"), None)).await), 13);
    assert_eq!(
        code(ns.query_table(query(Some("nope = 1"), None)).await),
        12
    );
    assert_eq!(
        code(ns.query_table(query(None, Some(vec!["nope"]))).await),
        12
    );
    let r = ns
        .explain_table_query_plan(ExplainTableQueryPlanRequest {
            id: ids(&["m", "t"]),
            query: Box::new(query(Some("id >"), None)),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);

    // Indexes of the wrong kind for the column (13).
    for (column, kind) in [("s", "IVF_PQ"), ("id", "INVERTED"), ("s", "LABEL_LIST")] {
        let r = ns
            .create_table_index(CreateTableIndexRequest {
                id: ids(&["m", "t"]),
                column: column.into(),
                index_type: kind.into(),
                ..Default::default()
            })
            .await;
        assert_eq!(code(r), 13, "{kind} on {column}");
    }
    // An update of a column the table does not have (12), and of one
    // column twice (13).
    let update = |pairs: &[[&str; 2]]| UpdateTableRequest {
        id: ids(&["m", "t"]),
        updates: pairs
            .iter()
            .map(|p| p.iter().map(|s| s.to_string()).collect())
            .collect(),
        ..Default::default()
    };
    let r = ns.update_table(update(&[["nope", "1"]])).await;
    assert_eq!(code(r), 12);
    let r = ns.update_table(update(&[["x", "1"], ["x", "2"]])).await;
    assert_eq!(code(r), 13);
    // A tuning field that is not a positive count (13), before any work.
    let r = ns
        .create_table_index(CreateTableIndexRequest {
            id: ids(&["m", "t"]),
            column: "id".into(),
            index_type: "IVF_PQ".into(),
            num_partitions: Some(0),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);

    // Refs: an unusable tag name (13), a missing source branch (22), an
    // unknown branch where a branch is read (22).
    let r = ns
        .create_table_tag(CreateTableTagRequest {
            id: ids(&["m", "t"]),
            tag: "t".repeat(5000),
            version: 1,
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);
    let r = ns
        .create_table_branch(CreateTableBranchRequest {
            id: ids(&["m", "t"]),
            name: "b1".into(),
            from_branch: Some("nope".into()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 22);
    let r = ns
        .list_table_versions(ListTableVersionsRequest {
            id: ids(&["m", "t"]),
            branch: Some("nope".into()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 22);

    // The catalog's own property keys are not the caller's to set.
    let r = ns
        .create_namespace(CreateNamespaceRequest {
            id: ids(&["m2"]),
            properties: Some([("lance-catalog.x".to_string(), "y".to_string())].into()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);

    // SQL literals Lance's planner cannot handle (it would panic): refused
    // before they reach it, wherever SQL travels.
    for filter in ["id = $1", "id = ?", "s = N'a'", "s = $$a$$"] {
        let r = ns.query_table(query(Some(filter), None)).await;
        assert_eq!(code(r), 13, "{filter}");
        let r = ns
            .count_table_rows(CountTableRowsRequest {
                id: ids(&["m", "t"]),
                predicate: Some(filter.into()),
                ..Default::default()
            })
            .await;
        assert_eq!(code(r), 13, "{filter}");
        let r = ns
            .delete_from_table(DeleteFromTableRequest {
                id: ids(&["m", "t"]),
                predicate: filter.into(),
                ..Default::default()
            })
            .await;
        assert_eq!(code(r), 13, "{filter}");
    }
    assert_eq!(count(ns, &["m", "t"]).await, 3);
}
