use arrow_array::{Array, Int64Array};
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{code, count_where as count, ids, read_file, rows, table};

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
    // Gone: not listed, no statistics, not droppable twice.
    let listed = ns
        .list_table_indices(ListTableIndicesRequest {
            id: ids(&t),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        listed.indexes.iter().all(|i| i.index_name != "id_idx"),
        "{listed:?}"
    );
    let r = ns
        .describe_table_index_stats(DescribeTableIndexStatsRequest {
            id: ids(&t),
            index_name: Some("id_idx".into()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 6);
    let r = ns
        .drop_table_index(DropTableIndexRequest {
            id: ids(&t),
            index_name: Some("id_idx".into()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 6);
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
    // Create (1), add (2), alter (3), drop (4).
    assert_eq!(dropped.version, 4);
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
