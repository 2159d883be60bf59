//! Versions, tags, restores, transactions and branches.

use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{code, ids, rows};
use crate::harness::{count_where as count, table};

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
    // The branch starts at main's version 1; an insert (2) and a merge (3).
    assert_eq!(d.version, Some(3));
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

    // Update, delete, index and query honour the branch too.
    let u = ns
        .update_table(UpdateTableRequest {
            id: ids(&t),
            branch: Some("dev".into()),
            predicate: Some("id = 0".into()),
            updates: vec![vec!["s".into(), "'dev'".into()]],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(u.updated_rows, 1);
    ns.delete_from_table(DeleteFromTableRequest {
        id: ids(&t),
        branch: Some("dev".into()),
        predicate: "id = 6".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(count_on(Some("dev")).await.unwrap(), 6);
    assert_eq!(count_on(None).await.unwrap(), 3);
    let main_dev = ns
        .count_table_rows(CountTableRowsRequest {
            id: ids(&t),
            predicate: Some("s = 'dev'".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(main_dev, 0);
    ns.create_table_index(CreateTableIndexRequest {
        id: ids(&t),
        branch: Some("dev".into()),
        column: "id".into(),
        index_type: "BTREE".into(),
        name: Some("dev_idx".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    ns.drop_table_index(DropTableIndexRequest {
        id: ids(&t),
        branch: Some("dev".into()),
        index_name: Some("dev_idx".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let mut q = QueryTableRequest::new(100, QueryTableRequestVector::default());
    q.id = ids(&t);
    q.branch = Some("dev".into());
    let answer = ns.query_table(q).await.unwrap();
    let n: usize = crate::harness::read_file(&answer)
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(n, 6);
}
