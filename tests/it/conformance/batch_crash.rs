//! Batches and single commits killed mid-way, and questions racing a
//! batch: real server processes on one root, stopped by fault points or
//! paused at hold points, and what a restarted or another server answers.

use std::sync::{Arc, Mutex};

use lance_catalog::{Catalog, CatalogError};
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;

use super::batch::{entry, stage_one, Stage};
use crate::harness::{code, count, ids, rows};

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
        let env: Vec<(&str, &str)> = fault
            .map(|f| ("LANCE_CATALOG_FAULT", f))
            .into_iter()
            .collect();
        Process::spawn(root, &env, expiry)
    }

    /// A server that pauses at a `fault::hold` point (`<point>:<ms>`).
    fn holding(root: &std::path::Path, hold: &str, expiry: &str) -> Process {
        Process::spawn(root, &[("LANCE_CATALOG_HOLD", hold)], expiry)
    }

    fn spawn(root: &std::path::Path, env: &[(&str, &str)], expiry: &str) -> Process {
        use std::io::BufRead;
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_lance-catalog"));
        cmd.args(["serve", "--root"])
            .arg(root)
            .args(["--listen", "127.0.0.1:0", "--workers", "0"])
            .args(["--batch-intent-expiry", expiry])
            .env("LANCE_CATALOG_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        cmd.envs(env.iter().copied());
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
    let (crashing, stage) = batch_tables(root).await;
    kill_batch(&crashing, &stage).await;
    stage
}

/// Tables `k.t1` and `k.t2` of 3 rows each, made through a server that
/// dies once a batch has placed its first version; that server and a
/// stage for the batch.
async fn batch_tables(root: &std::path::Path) -> (Process, Arc<Stage>) {
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
    (crashing, stage)
}

/// A batch of a version of `k.t1` and of `k.t2` sent to `crashing`, which
/// dies after placing the first and before deciding.
async fn kill_batch(crashing: &Process, stage: &Arc<Stage>) {
    let one = stage_one(stage, &["k", "t1"], 10).await;
    let two = stage_one(stage, &["k", "t2"], 10).await;
    send_killed_batch(crashing, &one, &two).await;
}

/// The batch of `one` and `two` (staged) sent to `crashing`, which dies
/// after placing the first.
async fn send_killed_batch(
    crashing: &Process,
    one: &CreateTableVersionRequest,
    two: &CreateTableVersionRequest,
) {
    let killed = crashing
        .client()
        .batch_create_table_versions(BatchCreateTableVersionsRequest {
            entries: vec![entry(one), entry(two)],
            ..Default::default()
        })
        .await;
    assert!(killed.is_err(), "{killed:?}");
}

/// The version numbers a listing answers.
async fn versions_listed(
    rest: &lance_namespace_impls::RestNamespace,
    req: ListTableVersionsRequest,
) -> Vec<i64> {
    let listed = rest.list_table_versions(req).await.unwrap();
    listed.versions.iter().map(|v| v.version).collect()
}

/// The newest version as Lance's writers ask for it (descending, limit 1)
/// while a batch claims and places that table's next version: the
/// question is described before the batch and walked after it placed, and
/// still never answers the batch's undecided version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newest_version_is_never_a_batch_placed_during_the_question() {
    let root = tempfile::tempdir().unwrap();
    let (crashing, stage) = batch_tables(root.path()).await;
    // Staged first: only the batch itself falls inside the question's wait.
    let one = stage_one(&stage, &["k", "t1"], 10).await;
    let two = stage_one(&stage, &["k", "t2"], 10).await;
    let hold = std::time::Duration::from_millis(4000);
    let asking = Process::holding(root.path(), "version.newest_read:4000", "2m");
    let rest = asking.client();
    // The asking server has its manifest loaded before the clock.
    rest.describe_table(DescribeTableRequest {
        id: ids(&["k", "t1"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let asked = std::time::Instant::now();
    let newest = tokio::spawn(async move {
        let req = ListTableVersionsRequest {
            id: ids(&["k", "t1"]),
            descending: Some(true),
            limit: Some(1),
            ..Default::default()
        };
        versions_listed(&rest, req).await
    });
    // The question has read the table's row and waits before its walk.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    send_killed_batch(&crashing, &one, &two).await;
    assert!(
        asked.elapsed() < hold,
        "the batch ended after the question's wait ({:?}): the race was not run",
        asked.elapsed()
    );
    // Version 2 of k.t1 (V2 naming: u64::MAX - 2) is the batch's, placed.
    let placed = std::fs::read_dir(root.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|d| d.file_name().to_string_lossy().ends_with("k$t1"))
        .any(|d| {
            d.path()
                .join("_versions/18446744073709551613.manifest")
                .exists()
        });
    assert!(placed, "the batch placed its version of k.t1");
    assert_eq!(newest.await.unwrap(), vec![1]);
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
        let req = ListTableVersionsRequest {
            id: ids(&["k", "t1"]),
            ..Default::default()
        };
        versions_listed(rest, req).await
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
