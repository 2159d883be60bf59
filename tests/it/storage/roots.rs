//! Storage roots other than a local directory.

use lance_catalog::{Catalog, StorageConfig};
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{ids, rows};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_root_keeps_one_store() {
    let catalog = Catalog::open(&StorageConfig {
        root: "memory://conformance".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    catalog
        .create_namespace(CreateNamespaceRequest {
            id: ids(&["m"]),
            ..Default::default()
        })
        .await
        .unwrap();
    catalog
        .create_table(
            CreateTableRequest {
                id: ids(&["m", "t"]),
                ..Default::default()
            },
            rows(0, 5),
        )
        .await
        .unwrap();
    catalog
        .insert_into_table(
            InsertIntoTableRequest {
                id: ids(&["m", "t"]),
                ..Default::default()
            },
            rows(5, 5),
        )
        .await
        .unwrap();
    let n = catalog
        .count_table_rows(CountTableRowsRequest {
            id: ids(&["m", "t"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(n, 10);
}
