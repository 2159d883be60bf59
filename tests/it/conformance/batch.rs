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
struct Stage {
    catalog: Arc<Catalog>,
    staged: Mutex<Vec<CreateTableVersionRequest>>,
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

fn entry(r: &CreateTableVersionRequest) -> CreateTableVersionEntry {
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
async fn stage_one(stage: &Arc<Stage>, id: &[&str], start: i64) -> CreateTableVersionRequest {
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

/// A catalog server process on `root` (the built binary), killed by a
/// fault point when `fault` names one; batch intents expire after 1 s.
struct Process {
    child: std::process::Child,
    url: String,
}

impl Process {
    fn start(root: &std::path::Path, fault: Option<&str>) -> Process {
        Process::start_with(root, fault, "1s")
    }

    /// [`Process::start`], a batch's claim expiring after `expiry`.
    fn start_with(root: &std::path::Path, fault: Option<&str>, expiry: &str) -> Process {
        use std::io::BufRead;
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_lance-catalog"));
        cmd.args(["serve", "--root"])
            .arg(root)
            .args(["--listen", "127.0.0.1:0", "--workers", "0"])
            .args(["--batch-intent-expiry", expiry])
            .env("LANCE_CATALOG_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        if let Some(f) = fault {
            cmd.env("LANCE_CATALOG_FAULT", f);
        }
        let mut child = cmd.spawn().unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut lines = out.lines();
        let url = lines.by_ref().map_while(Result::ok).find_map(|line| {
            line.split("listening on ")
                .nth(1)
                .map(|url| url.trim().to_string())
        });
        // Keep reading: a closed pipe would fail the server's next line.
        std::thread::spawn(move || lines.for_each(drop));
        match url {
            Some(url) => Process { child, url },
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server did not start");
            }
        }
    }

    fn client(&self) -> lance_namespace_impls::RestNamespace {
        RestNamespaceBuilder::new(self.url.clone()).build()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Tables `k.t1` and `k.t2` of 3 rows each, and a batch of a version of
/// each killed after it placed the first and before it decided (a real
/// server process, stopped by its fault point); the stage that staged them.
async fn killed_batch(root: &std::path::Path) -> Arc<Stage> {
    let crashing = Process::start_with(root, Some("batch.placed:1"), "2m");
    let rest = crashing.client();
    rest.create_namespace(CreateNamespaceRequest {
        id: ids(&["k"]),
        ..Default::default()
    })
    .await
    .unwrap();
    for t in ["t1", "t2"] {
        rest.create_table(
            CreateTableRequest {
                id: ids(&["k", t]),
                ..Default::default()
            },
            rows(0, 3),
        )
        .await
        .unwrap();
    }
    let cfg = lance_catalog::StorageConfig {
        root: root.to_string_lossy().into_owned(),
        ..Default::default()
    };
    let stage = Arc::new(Stage {
        catalog: Arc::new(Catalog::open(&cfg).await.unwrap()),
        staged: Mutex::default(),
    });
    let one = stage_one(&stage, &["k", "t1"], 10).await;
    let two = stage_one(&stage, &["k", "t2"], 10).await;
    let killed = rest
        .batch_create_table_versions(BatchCreateTableVersionsRequest {
            entries: vec![entry(&one), entry(&two)],
            ..Default::default()
        })
        .await;
    assert!(killed.is_err(), "{killed:?}");
    drop(crashing);
    stage
}

/// A batch killed after placing one of its versions and before deciding:
/// after a restart nothing of it shows, the table it reached is committed
/// past it once its claim expires, and the other table is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_killed_before_it_decides_shows_nothing_and_is_undone() {
    let root = tempfile::tempdir().unwrap();
    let stage = killed_batch(root.path()).await;
    let served = Process::start(root.path(), None);
    let rest = served.client();
    for t in ["t1", "t2"] {
        assert_eq!(count(&rest, &["k", t]).await, 3, "{t}");
        let listed = rest
            .list_table_versions(ListTableVersionsRequest {
                id: ids(&["k", t]),
                ..Default::default()
            })
            .await
            .unwrap();
        let versions: Vec<i64> = listed.versions.iter().map(|v| v.version).collect();
        assert_eq!(versions, vec![1], "{t}");
    }
    let hidden = rest
        .describe_table_version(DescribeTableVersionRequest {
            id: ids(&["k", "t1"]),
            version: Some(2),
            ..Default::default()
        })
        .await;
    assert_eq!(code(hidden), 11);
    let described = rest
        .describe_table(DescribeTableRequest {
            id: ids(&["k", "t1"]),
            version: Some(2),
            ..Default::default()
        })
        .await;
    assert_eq!(code(described), 11);

    // Past the claim's expiry the next commit aborts the dead batch. Lance
    // probes version names itself, so its writer may have built on the
    // placed version: that commit is refused (14) and, staged again on
    // the table as it is, lands.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let mut landed = None;
    for _ in 0..2 {
        let next = stage_one(&stage, &["k", "t1"], 20).await;
        match rest.create_table_version(next).await {
            Ok(v) => {
                landed = Some(v);
                break;
            }
            Err(e) => assert_eq!(CatalogError::from_lance(&e).code.0, 14, "{e}"),
        }
    }
    assert_eq!(landed.unwrap().version.unwrap().version, 2);
    assert_eq!(count(&rest, &["k", "t1"]).await, 6);
    assert_eq!(
        crate::harness::count_where(&rest, &["k", "t1"], Some("id >= 20")).await,
        3
    );
    assert_eq!(
        crate::harness::count_where(&rest, &["k", "t1"], Some("id >= 10 AND id < 20")).await,
        0
    );
    let next = stage_one(&stage, &["k", "t2"], 20).await;
    rest.create_table_version(next).await.unwrap();
    assert_eq!(count(&rest, &["k", "t2"]).await, 6);
}

/// The catalog's own writes (an insert here) wait for a batch that holds
/// their table (14) and never build on its undecided version; once the
/// dead batch's claim expires the next one aborts it and lands on the
/// version before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalogs_writes_wait_for_a_batch_and_never_build_on_its_version() {
    let root = tempfile::tempdir().unwrap();
    killed_batch(root.path()).await;
    let insert = || InsertIntoTableRequest {
        id: ids(&["k", "t1"]),
        ..Default::default()
    };
    let versions = async |rest: &lance_namespace_impls::RestNamespace| {
        let listed = rest
            .list_table_versions(ListTableVersionsRequest {
                id: ids(&["k", "t1"]),
                ..Default::default()
            })
            .await
            .unwrap();
        listed
            .versions
            .iter()
            .map(|v| v.version)
            .collect::<Vec<i64>>()
    };
    {
        let served = Process::start_with(root.path(), None, "1h");
        let rest = served.client();
        let refused = rest.insert_into_table(insert(), rows(50, 2)).await;
        assert_eq!(code(refused), 14);
        // Every other write of the main line meets the claim too: none is
        // handed to an engine path that would build on the batch's version.
        let t1 = || ids(&["k", "t1"]);
        let delete = DeleteFromTableRequest {
            id: t1(),
            predicate: "id = 0".into(),
            ..Default::default()
        };
        assert_eq!(code(rest.delete_from_table(delete).await), 14, "delete");
        let update = UpdateTableRequest {
            id: t1(),
            updates: vec![vec!["x".into(), "x + 1".into()]],
            ..Default::default()
        };
        assert_eq!(code(rest.update_table(update).await), 14, "update");
        let merge = MergeInsertIntoTableRequest {
            id: t1(),
            on: Some(vec!["id".into()]),
            when_matched_update_all: Some(true),
            when_not_matched_insert_all: Some(true),
            ..Default::default()
        };
        let merged = rest.merge_insert_into_table(merge, rows(1, 2)).await;
        assert_eq!(code(merged), 14, "merge-insert");
        let alter = AlterTableAlterColumnsRequest {
            id: t1(),
            alterations: vec![AlterColumnsEntry {
                path: "s".into(),
                rename: Some(Some("s2".into())),
                ..Default::default()
            }],
            ..Default::default()
        };
        let altered = rest.alter_table_alter_columns(alter).await;
        assert_eq!(code(altered), 14, "alter columns");
        let drop_columns = AlterTableDropColumnsRequest {
            id: t1(),
            columns: vec!["s".into()],
            ..Default::default()
        };
        let dropped = rest.alter_table_drop_columns(drop_columns).await;
        assert_eq!(code(dropped), 14, "drop columns");
        let index = CreateTableIndexRequest {
            id: t1(),
            column: "id".into(),
            index_type: "BTREE".into(),
            ..Default::default()
        };
        assert_eq!(code(rest.create_table_index(index).await), 14, "index");
        let restore = RestoreTableRequest {
            id: t1(),
            version: 1,
            ..Default::default()
        };
        assert_eq!(code(rest.restore_table(restore).await), 14, "restore");
        assert_eq!(count(&rest, &["k", "t1"]).await, 3);
        assert_eq!(versions(&rest).await, vec![1]);
    }
    let served = Process::start(root.path(), None);
    let rest = served.client();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    // The first may have been built on the dead batch's version, which the
    // abort removes: it is refused (14), and made again on the table as it
    // is, it lands.
    let mut inserted = None;
    for _ in 0..2 {
        match rest.insert_into_table(insert(), rows(50, 2)).await {
            Ok(d) => {
                inserted = Some(d);
                break;
            }
            Err(e) => assert_eq!(CatalogError::from_lance(&e).code.0, 14, "{e}"),
        }
    }
    assert_eq!(inserted.unwrap().version, Some(2));
    assert_eq!(count(&rest, &["k", "t1"]).await, 5);
    // Nothing of the batch's rows (ids 10 to 12) is in what the insert made.
    assert_eq!(
        crate::harness::count_where(&rest, &["k", "t1"], Some("id >= 10 AND id < 20")).await,
        0
    );
    assert_eq!(versions(&rest).await, vec![1, 2]);
}

/// A single commit killed between placing its version and answering: the
/// client was told nothing, and after a restart the table reads whole at
/// that version, its resend (the same staged manifest) is answered
/// success, another writer's manifest for it is refused, and the next
/// version follows it. Nothing a client was told is lost, nothing half
/// written shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_commit_killed_after_placing_is_whole_after_a_restart() {
    let root = tempfile::tempdir().unwrap();
    let crashing = Process::start_with(root.path(), Some("commit.placed:1"), "2m");
    let rest = crashing.client();
    rest.create_namespace(CreateNamespaceRequest {
        id: ids(&["c"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let create = CreateTableRequest {
        id: ids(&["c", "t"]),
        ..Default::default()
    };
    rest.create_table(create, rows(0, 3)).await.unwrap();
    let cfg = lance_catalog::StorageConfig {
        root: root.path().to_string_lossy().into_owned(),
        ..Default::default()
    };
    let stage = Arc::new(Stage {
        catalog: Arc::new(Catalog::open(&cfg).await.unwrap()),
        staged: Mutex::default(),
    });
    let first = stage_one(&stage, &["c", "t"], 10).await;
    let other = stage_one(&stage, &["c", "t"], 100).await;
    assert_eq!((first.version, other.version), (2, 2));
    let killed = rest.create_table_version(first.clone()).await;
    assert!(killed.is_err(), "{killed:?}");
    drop(crashing);

    let served = Process::start(root.path(), None);
    let rest = served.client();
    // Placed before the kill: the table is whole at version 2.
    assert_eq!(count(&rest, &["c", "t"]).await, 6);
    let again = rest.create_table_version(first).await.unwrap();
    assert_eq!(again.version.unwrap().version, 2);
    assert_eq!(code(rest.create_table_version(other).await), 14);
    assert_eq!(
        crate::harness::count_where(&rest, &["c", "t"], Some("id >= 100")).await,
        0
    );
    let insert = InsertIntoTableRequest {
        id: ids(&["c", "t"]),
        ..Default::default()
    };
    let next = rest.insert_into_table(insert, rows(50, 2)).await.unwrap();
    assert_eq!(next.version, Some(3));
    assert_eq!(count(&rest, &["c", "t"]).await, 8);
}
