//! Managed versioning and the all-or-nothing batch: real Lance writes stage
//! new manifests, and the catalog commits them together or not at all.

use std::sync::{Arc, Mutex};

use lance::dataset::builder::DatasetBuilder;
use lance::dataset::{InsertBuilder, WriteMode, WriteParams};
use lance_catalog::rest::RestConfig;
use lance_catalog::{Catalog, CatalogError};
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;

use crate::harness::{batch, code, count, ids, rows, Env};

/// Forwards to the catalog but keeps `create_table_version` requests instead
/// of committing them, the way a client assembling a batch holds its staged
/// manifests.
#[derive(Debug)]
pub(super) struct Stage {
    pub(super) catalog: Arc<Catalog>,
    pub(super) staged: Mutex<Vec<CreateTableVersionRequest>>,
}

#[async_trait::async_trait]
impl LanceNamespace for Stage {
    fn namespace_id(&self) -> String {
        "stage".into()
    }
    async fn describe_table(
        &self,
        r: DescribeTableRequest,
    ) -> lance::Result<DescribeTableResponse> {
        self.catalog.describe_table(r).await
    }
    async fn list_table_versions(
        &self,
        r: ListTableVersionsRequest,
    ) -> lance::Result<ListTableVersionsResponse> {
        self.catalog.list_table_versions(r).await
    }
    async fn describe_table_version(
        &self,
        r: DescribeTableVersionRequest,
    ) -> lance::Result<DescribeTableVersionResponse> {
        self.catalog.describe_table_version(r).await
    }
    async fn create_table_version(
        &self,
        r: CreateTableVersionRequest,
    ) -> lance::Result<CreateTableVersionResponse> {
        let version = TableVersion {
            version: r.version,
            manifest_path: r.manifest_path.clone(),
            manifest_size: r.manifest_size,
            e_tag: r.e_tag.clone(),
            ..Default::default()
        };
        self.staged.lock().unwrap().push(r);
        Ok(CreateTableVersionResponse {
            version: Some(Box::new(version)),
            ..Default::default()
        })
    }
}

async fn append_staged(stage: &Arc<Stage>, id: &[&str], start: i64) {
    let ns: Arc<dyn LanceNamespace> = stage.clone();
    let ds = DatasetBuilder::from_namespace(ns, ids(id).unwrap())
        .await
        .unwrap()
        .load()
        .await
        .unwrap();
    let params = WriteParams {
        mode: WriteMode::Append,
        ..Default::default()
    };
    InsertBuilder::new(Arc::new(ds))
        .with_params(&params)
        .execute(vec![batch(start, 3)])
        .await
        .unwrap();
}

pub(super) fn entry(r: &CreateTableVersionRequest) -> CreateTableVersionEntry {
    CreateTableVersionEntry {
        id: r.id.clone().unwrap(),
        version: r.version,
        manifest_path: r.manifest_path.clone(),
        manifest_size: r.manifest_size,
        e_tag: r.e_tag.clone(),
        naming_scheme: r.naming_scheme.clone(),
        ..Default::default()
    }
}

/// A catalog served over REST, with a namespace of 3-row tables; the
/// catalog itself too, for the staging client.
async fn served(
    namespace: &str,
    tables: &[&str],
) -> (
    Arc<Catalog>,
    tempfile::TempDir,
    lance_namespace_impls::RestNamespace,
) {
    let (catalog, dir) = Env::catalog().await;
    let catalog = Arc::new(catalog);
    let addr = lance_catalog::app::server::spawn((*catalog).clone(), RestConfig::default())
        .await
        .unwrap();
    let rest = RestNamespaceBuilder::new(format!("http://{addr}")).build();
    rest.create_namespace(CreateNamespaceRequest {
        id: ids(&[namespace]),
        ..Default::default()
    })
    .await
    .unwrap();
    for t in tables {
        rest.create_table(
            CreateTableRequest {
                id: ids(&[namespace, t]),
                ..Default::default()
            },
            rows(0, 3),
        )
        .await
        .unwrap();
    }
    (catalog, dir, rest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_versions_are_all_or_nothing() {
    let (catalog, _dir, rest) = served("b", &["t1", "t2"]).await;
    let d = rest
        .describe_table(DescribeTableRequest {
            id: ids(&["b", "t1"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(d.managed_versioning, Some(true));

    let stage = Arc::new(Stage {
        catalog: catalog.clone(),
        staged: Mutex::default(),
    });
    append_staged(&stage, &["b", "t1"], 3).await;
    append_staged(&stage, &["b", "t2"], 3).await;
    let staged = stage.staged.lock().unwrap().clone();
    assert_eq!(staged.len(), 2);
    assert!(staged.iter().all(|r| r.version == 2));

    // One entry conflicts (a version that is not next): nothing changes.
    let mut bad = entry(&staged[1]);
    bad.version = 7;
    let r = rest
        .batch_create_table_versions(BatchCreateTableVersionsRequest {
            entries: vec![entry(&staged[0]), bad],
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 14);
    for t in ["t1", "t2"] {
        assert_eq!(count(&rest, &["b", t]).await, 3);
        let v = rest
            .describe_table_version(DescribeTableVersionRequest {
                id: ids(&["b", t]),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(v.version.version, 1);
    }

    // The whole batch commits.
    let done = rest
        .batch_create_table_versions(BatchCreateTableVersionsRequest {
            entries: staged.iter().map(entry).collect(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(done.versions.len(), 2);
    assert!(done.versions.iter().all(|v| v.version == 2));
    for t in ["t1", "t2"] {
        assert_eq!(count(&rest, &["b", t]).await, 6);
    }
    // One staged version committed on its own, as Lance's commit handler does.
    append_staged(&stage, &["b", "t1"], 6).await;
    let single = stage.staged.lock().unwrap().last().cloned().unwrap();
    assert_eq!(single.version, 3);
    let v = rest.create_table_version(single).await.unwrap();
    assert_eq!(v.version.unwrap().version, 3);
    assert_eq!(count(&rest, &["b", "t1"]).await, 9);
    // Replaying the batch conflicts: version 2 exists now.
    let again = rest
        .batch_create_table_versions(BatchCreateTableVersionsRequest {
            entries: staged.iter().map(entry).collect(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(again), 14);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_commit_mixes_operations_atomically() {
    let (catalog, _dir, rest) = served("m", &["keep", "drop"]).await;
    let stage = Arc::new(Stage {
        catalog: catalog.clone(),
        staged: Mutex::default(),
    });
    append_staged(&stage, &["m", "keep"], 3).await;
    let staged = stage.staged.lock().unwrap().clone();
    let declare = |name: &str| CommitTableOperation {
        declare_table: Some(Box::new(DeclareTableRequest {
            id: ids(&["m", name]),
            ..Default::default()
        })),
        ..Default::default()
    };
    let version = |r: &CreateTableVersionRequest, v: i64| CommitTableOperation {
        create_table_version: Some(Box::new(CreateTableVersionRequest {
            version: v,
            ..r.clone()
        })),
        ..Default::default()
    };
    let deregister = CommitTableOperation {
        deregister_table: Some(Box::new(DeregisterTableRequest {
            id: ids(&["m", "drop"]),
            ..Default::default()
        })),
        ..Default::default()
    };
    let exists = |name: &'static str| {
        let rest = &rest;
        async move {
            rest.table_exists(TableExistsRequest {
                id: ids(&["m", name]),
                ..Default::default()
            })
            .await
            .is_ok()
        }
    };

    // A conflicting version anywhere: nothing is declared, deregistered or versioned.
    let r = rest
        .batch_commit_tables(BatchCommitTablesRequest {
            operations: vec![declare("fresh"), deregister.clone(), version(&staged[0], 9)],
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 14);
    assert!(!exists("fresh").await);
    assert!(exists("drop").await);
    assert_eq!(count(&rest, &["m", "keep"]).await, 3);

    // The same batch with the right version applies whole.
    let done = rest
        .batch_commit_tables(BatchCommitTablesRequest {
            operations: vec![declare("fresh"), deregister, version(&staged[0], 2)],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(done.results.len(), 3);
    assert!(done.results[0].declare_table.is_some());
    assert!(exists("fresh").await);
    assert!(!exists("drop").await);
    assert_eq!(count(&rest, &["m", "keep"]).await, 6);
    let listed = rest
        .list_tables(ListTablesRequest {
            id: ids(&["m"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.tables, vec!["fresh", "keep"]);
}

/// A staged commit of the next version of `id`: what Lance's commit
/// handler would send.
pub(super) async fn stage_one(
    stage: &Arc<Stage>,
    id: &[&str],
    start: i64,
) -> CreateTableVersionRequest {
    append_staged(stage, id, start).await;
    stage.staged.lock().unwrap().pop().unwrap()
}

/// A commit resent after its answer was lost (the same staged manifest)
/// answers as the first did; another manifest for the taken version is a
/// conflict, and the first stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_commit_answers_as_the_first_and_other_bytes_conflict() {
    let (catalog, _dir, rest) = served("r", &["t"]).await;
    let stage = Arc::new(Stage {
        catalog,
        staged: Mutex::default(),
    });
    let first = stage_one(&stage, &["r", "t"], 3).await;
    let other = stage_one(&stage, &["r", "t"], 100).await;
    assert_eq!((first.version, other.version), (2, 2));
    let answered = rest.create_table_version(first.clone()).await.unwrap();
    let again = rest.create_table_version(first).await.unwrap();
    assert_eq!(answered.version, again.version);
    assert_eq!(answered.version.unwrap().version, 2);
    assert_eq!(code(rest.create_table_version(other).await), 14);
    assert_eq!(count(&rest, &["r", "t"]).await, 6);
    assert_eq!(
        crate::harness::count_where(&rest, &["r", "t"], Some("id >= 100")).await,
        0
    );
}

/// A single commit and a batch racing for the same version: one of them
/// lands whole, the other is told 14, and a success is never lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_commit_racing_a_batch_loses_nothing() {
    let (catalog, _dir, rest) = served("x", &["a", "b"]).await;
    let stage = Arc::new(Stage {
        catalog,
        staged: Mutex::default(),
    });
    let (mut rows_a, mut rows_b) = (3, 3);
    for round in 0..8 {
        let start = 1000 * (round + 1);
        let batch_a = stage_one(&stage, &["x", "a"], start).await;
        let batch_b = stage_one(&stage, &["x", "b"], start).await;
        let single = stage_one(&stage, &["x", "a"], start + 500).await;
        let batch = BatchCreateTableVersionsRequest {
            entries: vec![entry(&batch_a), entry(&batch_b)],
            ..Default::default()
        };
        let (batched, single) = tokio::join!(
            rest.batch_create_table_versions(batch),
            rest.create_table_version(single)
        );
        assert!(
            !(batched.is_ok() && single.is_ok()),
            "round {round}: both took one version"
        );
        for r in [batched.as_ref().err(), single.as_ref().err()]
            .into_iter()
            .flatten()
        {
            assert_eq!(CatalogError::from_lance(r).code.0, 14, "round {round}: {r}");
        }
        if batched.is_ok() {
            rows_a += 3;
            rows_b += 3;
            assert_eq!(
                crate::harness::count_where(
                    &rest,
                    &["x", "a"],
                    Some(&format!("id >= {start} AND id < {}", start + 500))
                )
                .await,
                3
            );
        }
        if single.is_ok() {
            rows_a += 3;
            assert_eq!(
                crate::harness::count_where(
                    &rest,
                    &["x", "a"],
                    Some(&format!("id >= {}", start + 500))
                )
                .await,
                3
            );
        }
        assert_eq!(count(&rest, &["x", "a"]).await, rows_a, "round {round}");
        assert_eq!(count(&rest, &["x", "b"]).await, rows_b, "round {round}");
    }
}
