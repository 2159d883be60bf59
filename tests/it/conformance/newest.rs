//! The newest version as Lance's clients ask for it (descending, limit 1),
//! answered by two replicas of one root: always what the whole listing
//! says, whoever wrote last, after old versions are removed (in order or
//! not) and when a table of the same name is made again.

use lance_catalog::{Catalog, StorageConfig};
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{create, ids, rows, table};

async fn replica(root: &std::path::Path) -> Catalog {
    let config = StorageConfig {
        root: root.to_string_lossy().into_owned(),
        ..Default::default()
    };
    Catalog::open(&config).await.expect("open a replica")
}

/// The newest version as asked for, and as the whole listing has it.
async fn newest(ns: &Catalog, t: &[&str]) -> (TableVersion, TableVersion) {
    let asked = ns
        .list_table_versions(ListTableVersionsRequest {
            id: ids(t),
            descending: Some(true),
            limit: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(asked.versions.len(), 1, "{asked:?}");
    let all = ns
        .list_table_versions(ListTableVersionsRequest {
            id: ids(t),
            ..Default::default()
        })
        .await
        .unwrap();
    let last = all.versions.into_iter().max_by_key(|v| v.version).unwrap();
    (asked.versions.into_iter().next().unwrap(), last)
}

async fn same(ns: &Catalog, t: &[&str], version: i64) {
    let (asked, listed) = newest(ns, t).await;
    assert_eq!(asked.version, version);
    assert_eq!(asked.version, listed.version);
    assert_eq!(asked.manifest_path, listed.manifest_path);
    assert_eq!(asked.manifest_size, listed.manifest_size);
    assert!(asked.timestamp_millis.is_some());
}

async fn insert(ns: &Catalog, t: &[&str], start: i64) {
    let req = InsertIntoTableRequest {
        id: ids(t),
        ..Default::default()
    };
    ns.insert_into_table(req, rows(start, 2)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_answer_the_newest_version_as_the_listing_does() {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (replica(root.path()).await, replica(root.path()).await);
    let t = ["n", "t"];
    table(&a, &t, 3).await;
    same(&b, &t, 1).await;
    // Written on the other replica, and versions 2 and 3 removed out of
    // order: version 1 is still there with a gap after it, and the newest
    // is 4 (a walk from the version this replica saw last stopped at 1).
    for start in [10, 20, 30] {
        insert(&a, &t, start).await;
    }
    a.batch_delete_table_versions(BatchDeleteTableVersionsRequest {
        id: ids(&t),
        ranges: vec![VersionRange::new(2, 3)],
        ..Default::default()
    })
    .await
    .unwrap();
    same(&b, &t, 4).await;
    same(&a, &t, 4).await;
    // Older versions removed: the newest stays.
    a.batch_delete_table_versions(BatchDeleteTableVersionsRequest {
        id: ids(&t),
        ranges: vec![VersionRange::new(1, 3)],
        ..Default::default()
    })
    .await
    .unwrap();
    same(&b, &t, 4).await;
    // A restore on one replica is a new version on both.
    b.restore_table(RestoreTableRequest {
        id: ids(&t),
        version: 4,
        ..Default::default()
    })
    .await
    .unwrap();
    same(&a, &t, 5).await;
    // The table dropped and made again under its name: version 1 again,
    // not the old table's newest.
    a.drop_table(DropTableRequest {
        id: ids(&t),
        ..Default::default()
    })
    .await
    .unwrap();
    create(&a, &t, rows(0, 1)).await.unwrap();
    same(&b, &t, 1).await;
    same(&a, &t, 1).await;
}
