//! The maintenance scheduler with two replicas on one root: a table first
//! seen waits one interval; then exactly one replica begins its round and
//! submits a compaction and a cleanup by the table's effective policy, a
//! worker runs them, and the table ends at one fragment with every row
//! and the versions its policy keeps. A table whose policy turns
//! compaction off gets no compaction; a declared table gets nothing.

use std::sync::Arc;
use std::time::Duration;

use lance_catalog::core::ManifestKeeping;
use lance_catalog::governance::{Governance, GovernanceConfig, MaintenanceConfig};
use lance_catalog::rest::RestConfig;
use lance_catalog::StorageConfig;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;
use reqwest::{Client, Method, StatusCode};
use serde_json::json;

use crate::governance::hierarchy::call;
use crate::harness::{count, create, dataset, ids, namespace, rows};

async fn replica(root: &str, workers: usize) -> Arc<Governance> {
    governed(
        root,
        MaintenanceConfig {
            workers,
            lease: Duration::from_secs(5),
            poll: Duration::from_millis(50),
            scheduled_cleanup: true,
            ..Default::default()
        },
    )
    .await
}

async fn governed(root: &str, maintenance: MaintenanceConfig) -> Arc<Governance> {
    let config = GovernanceConfig {
        storage: StorageConfig {
            root: root.to_string(),
            ..Default::default()
        },
        ..Default::default()
    };
    Arc::new(
        Governance::open(&config)
            .await
            .unwrap()
            .with_maintenance(maintenance),
    )
}

async fn appended(ns: &dyn LanceNamespace, id: &[&str], times: i64) {
    create(ns, id, rows(0, 10)).await.unwrap();
    for i in 1..times {
        ns.insert_into_table(
            InsertIntoTableRequest {
                id: ids(id),
                ..Default::default()
            },
            rows(i * 10, 10),
        )
        .await
        .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_round_across_two_replicas_compacts_and_cleans() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    let a = replica(&root, 0).await;
    let b = replica(&root, 0).await;
    let addr = lance_catalog::app::server::spawn_governed(a.clone(), RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let ns = RestNamespaceBuilder::new(base.clone()).build();
    namespace(&ns, &["ns"]).await;
    appended(&ns, &["ns", "t"], 6).await;
    appended(&ns, &["ns", "frozen"], 3).await;
    // Declared, never written: looked at, nothing to do.
    ns.declare_table(DeclareTableRequest {
        id: ids(&["ns", "empty"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let c = Client::new();
    let (s, p) = call(
        &c,
        Method::POST,
        format!("{base}/v1/namespace/ns/maintenance_policy"),
        Some(json!({"interval": "1s", "version_retention": "0", "versions_to_retain": 2})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    let (s, p) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/ns%24frozen/maintenance_policy"),
        Some(json!({"interval": "1s", "compaction": false, "versions_to_retain": 10})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(dataset(&ns, &["ns", "t"]).await.get_fragments().len(), 6);

    // The sweep report says what a round would do, before any has run.
    let (s, sweep) = call(
        &c,
        Method::GET,
        format!("{base}/v1/namespace/ns/maintenance_sweep"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{sweep}");
    let tables = sweep["tables"].as_array().unwrap();
    let by_name = |name: &str| {
        tables
            .iter()
            .find(|t| t["id"] == json!(["ns", name]))
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {sweep}"))
    };
    let t = by_name("t");
    assert_eq!(t["winner"]["level"], "namespace", "{t}");
    assert_eq!(
        (&t["fragments"], &t["untidy_fragments"], &t["versions"]),
        (&json!(6), &json!(6), &json!(6)),
        "{t}"
    );
    // Retention 0, the newest 2 kept: 4 would go.
    assert_eq!(t["versions_past_retention"], 4, "{t}");
    assert_eq!(
        t["would_submit"],
        json!(["lance_compact", "lance_cleanup"]),
        "{t}"
    );
    assert!(t.get("next_round_at_ms").is_none(), "{t}");
    assert_eq!(by_name("frozen")["would_submit"], json!([]), "{sweep}");
    assert_eq!(by_name("empty")["has_data"], false, "{sweep}");
    assert_eq!(sweep["expired_trash"], json!([]), "{sweep}");

    // First seen: nothing runs yet, on either replica.
    let (x, y) = tokio::join!(a.schedule_pass(), b.schedule_pass());
    let (x, y) = (x.unwrap(), y.unwrap());
    assert_eq!((x.tables, y.tables), (3, 3));
    assert!(
        x.submitted.is_empty() && y.submitted.is_empty(),
        "{x:?} {y:?}"
    );

    // One interval later: one replica begins each round, never both.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (x, y) = tokio::join!(a.schedule_pass(), b.schedule_pass());
    let (x, y) = (x.unwrap(), y.unwrap());
    let mut submitted: Vec<(Vec<String>, String)> = x
        .submitted
        .iter()
        .chain(&y.submitted)
        .map(|(id, t, _)| (id.clone(), t.clone()))
        .collect();
    submitted.sort();
    let t = vec!["ns".to_string(), "t".to_string()];
    assert_eq!(
        submitted,
        vec![
            (t.clone(), "lance_cleanup".into()),
            (t.clone(), "lance_compact".into())
        ],
        "{x:?} {y:?}"
    );
    assert_eq!(
        x.rounds + y.rounds,
        3,
        "each table's round once: {x:?} {y:?}"
    );

    // Now the table's round has begun and its tasks wait for a worker.
    let (s, t) = call(
        &c,
        Method::GET,
        format!("{base}/v1/table/ns%24t/maintenance_sweep"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{t}");
    assert!(
        t["next_round_at_ms"].as_u64() > t["last_round_at_ms"].as_u64(),
        "{t}"
    );
    assert_eq!(t["would_submit"], json!([]), "{t}");
    assert_eq!(
        t["unfinished"],
        json!(["lance_compact", "lance_cleanup"]),
        "{t}"
    );
    let (s, gone) = call(
        &c,
        Method::GET,
        format!("{base}/v1/table/ns%24nope/maintenance_sweep"),
        None,
    )
    .await;
    assert_eq!(
        (s, &gone["code"]),
        (StatusCode::NOT_FOUND, &json!(4)),
        "{gone}"
    );

    // A worker on the other replica runs what was queued.
    let worker = replica(&root, 1).await;
    worker.start_workers();
    let (mut fragments, mut versions) = (usize::MAX, usize::MAX);
    for _ in 0..400 {
        let ds = dataset(&ns, &["ns", "t"]).await;
        fragments = ds.get_fragments().len();
        // A listing that races the cleanup is read again.
        versions = ds.versions().await.map_or(usize::MAX, |v| v.len());
        if fragments == 1 && versions <= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!((fragments, versions), (1, 2));
    assert_eq!(count(&ns, &["ns", "t"]).await, 60);
    // Compaction off: its fragments stay as they are.
    assert_eq!(
        dataset(&ns, &["ns", "frozen"]).await.get_fragments().len(),
        3
    );
    assert_eq!(count(&ns, &["ns", "frozen"]).await, 30);
}

/// Round after round, the scheduler keeps only its newest finished tasks
/// of a type, so its rounds never fill a table's task quota; a task
/// submitted by someone else stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_keeps_only_its_newest_finished_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    let a = replica(&root, 1).await;
    a.start_workers();
    let addr = lance_catalog::app::server::spawn_governed(a.clone(), RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let ns = RestNamespaceBuilder::new(base.clone()).build();
    namespace(&ns, &["ns"]).await;
    appended(&ns, &["ns", "t"], 1).await;
    let c = Client::new();
    let (s, p) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/ns%24t/maintenance_policy"),
        Some(json!({"interval": "1s", "versions_to_retain": 1000})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    // Someone's own compaction, before the scheduler's.
    let (s, p) = call(
        &c,
        Method::POST,
        format!("{base}/lance/oss/v1/table/ns%24t/compact"),
        Some(json!({})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    let theirs = p["task_id"].as_str().unwrap().to_string();
    // A task finished (an unfinished one makes a round skip its type),
    // however slow a loaded machine is.
    let finished = |task: String| {
        let (c, url) = (
            c.clone(),
            format!("{base}/lance/oss/v1/table/ns%24t/tasks/{task}"),
        );
        async move {
            for _ in 0..1200 {
                let (_, t) = call(&c, Method::GET, url.clone(), None).await;
                if matches!(
                    t["task_info"]["status"].as_str(),
                    Some("completed" | "failed")
                ) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            panic!("{url} did not finish");
        }
    };
    finished(theirs.clone()).await;
    a.schedule_pass().await.unwrap();
    let mut submitted = 0;
    for round in 1..=12 {
        ns.insert_into_table(
            InsertIntoTableRequest {
                id: ids(&["ns", "t"]),
                ..Default::default()
            },
            rows(round * 10, 10),
        )
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(1050)).await;
        let pass = a.schedule_pass().await.unwrap();
        submitted += pass.submitted.len();
        for (_, _, task) in pass.submitted {
            finished(task).await;
        }
    }
    assert_eq!(submitted, 12);
    let (_, listed) = call(
        &c,
        Method::GET,
        format!("{base}/lance/oss/v1/table/ns%24t/tasks?task_type=lance_compact&max_results=100"),
        None,
    )
    .await;
    let tasks: Vec<String> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task_id"].as_str().unwrap().to_string())
        .collect();
    // Ten finished ones of the scheduler's, the last one, and theirs.
    assert_eq!(tasks.len(), 12, "{listed}");
    assert!(tasks.contains(&theirs), "{listed}");
    assert_eq!(count(&ns, &["ns", "t"]).await, 130);
}

/// The scheduler keeps each root's `__manifest`: under a thousand catalog
/// writes its versions stay bounded by the retention, every write stays
/// readable, and a replica that held an old version since before the
/// cleanup (its successor long removed) still sees the latest, through
/// its own reads and the engine's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifest_keeps_few_versions_under_a_thousand_writes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    let keeping = ManifestKeeping {
        retention: Duration::from_secs(2),
        versions_to_retain: 10,
    };
    let open = || {
        governed(
            &root,
            MaintenanceConfig {
                workers: 0,
                manifest: keeping,
                ..Default::default()
            },
        )
    };
    let (a, b) = (open().await, open().await);
    let serve = |g: Arc<Governance>| async move {
        let addr = lance_catalog::app::server::spawn_governed(g, RestConfig::default())
            .await
            .unwrap();
        RestNamespaceBuilder::new(format!("http://{addr}")).build()
    };
    let (ns_a, ns_b) = (serve(a.clone()).await, serve(b.clone()).await);
    // The manifest's versions kept, and its latest version's number.
    let manifest_versions = || async {
        let uri = format!("{root}/__manifest");
        let ds = lance::Dataset::open(&uri).await.unwrap();
        (ds.versions().await.unwrap().len(), ds.version().version)
    };

    // The first round marks the manifest. A drop goes through Lance's own
    // namespace, whose rewrite of the manifest drops the mark; B reads
    // through its own engine and through the catalog, and holds that
    // (unmarked) version.
    let first = a.schedule_pass().await.unwrap();
    assert!(first.manifests.iter().any(|(_, k)| k.marked), "{first:?}");
    namespace(&ns_a, &["gone"]).await;
    ns_a.drop_namespace(DropNamespaceRequest {
        id: ids(&["gone"]),
        ..Default::default()
    })
    .await
    .unwrap();
    namespace(&ns_a, &["n0"]).await;
    let exists = |id: &str| NamespaceExistsRequest {
        id: ids(&[id]),
        ..Default::default()
    };
    ns_b.namespace_exists(exists("n0")).await.unwrap();
    let list = |token: Option<String>| ListNamespacesRequest {
        id: Some(vec![]),
        page_token: token,
        ..Default::default()
    };
    ns_b.list_namespaces(list(None)).await.unwrap();

    for i in 1..1000 {
        namespace(&ns_a, &[&format!("n{i}")]).await;
        if i % 100 == 0 {
            a.schedule_pass().await.unwrap();
        }
    }
    // Nothing is removed until the marker has stood a minute; then a
    // round removes what is past the retention.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let kept = loop {
        let pass = a.schedule_pass().await.unwrap();
        if let Some((_, k)) = pass.manifests.into_iter().next() {
            if !k.marked && k.versions_after < k.versions_before {
                break k;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no manifest version removed in time"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    // The versions of the last half second stay.
    tokio::time::sleep(Duration::from_secs(3)).await;
    a.schedule_pass().await.unwrap();
    let (after, latest) = manifest_versions().await;
    assert!(latest > 1000, "{latest}");
    assert!(
        after <= 10,
        "{latest} versions made, then {after}: {kept:?}"
    );

    // Every write reads, through the replica that held an old version.
    for i in [0, 1, 500, 998, 999] {
        ns_b.namespace_exists(exists(&format!("n{i}")))
            .await
            .unwrap();
        ns_a.namespace_exists(exists(&format!("n{i}")))
            .await
            .unwrap();
    }
    let mut listed = 0;
    let mut token = None;
    loop {
        let page = ns_b.list_namespaces(list(token.clone())).await.unwrap();
        listed += page.namespaces.len();
        token = page.page_token.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(listed, 1000);
    // And B writes on top of the latest, not of the version it held:
    // through the catalog, and through Lance's namespace (a drop).
    namespace(&ns_b, &["from_b"]).await;
    ns_a.namespace_exists(exists("from_b")).await.unwrap();
    ns_b.drop_namespace(DropNamespaceRequest {
        id: ids(&["n1"]),
        ..Default::default()
    })
    .await
    .unwrap();
    assert!(ns_a.namespace_exists(exists("n1")).await.is_err());
    ns_a.namespace_exists(exists("n2")).await.unwrap();
}

/// A round plans by what Lance will do: no compaction of small fragments
/// Lance will not merge (an indexed one beside an unindexed one), no
/// cleanup of versions only a shallow clone's pin keeps. Both were
/// submitted every round and answered `fragments_removed: 0` /
/// `old_versions_removed: 0`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_submits_only_what_lance_will_do() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    let gov = replica(&root, 0).await;
    let addr = lance_catalog::app::server::spawn_governed(gov.clone(), RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let ns = RestNamespaceBuilder::new(base.clone()).build();
    namespace(&ns, &["ns"]).await;
    // Two small fragments: the first indexed, the second not.
    create(&ns, &["ns", "idx"], rows(0, 10)).await.unwrap();
    ns.create_table_scalar_index(CreateTableIndexRequest {
        id: ids(&["ns", "idx"]),
        column: "id".into(),
        index_type: "BTREE".into(),
        name: Some("id_idx".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    ns.insert_into_table(
        InsertIntoTableRequest {
            id: ids(&["ns", "idx"]),
            ..Default::default()
        },
        rows(10, 10),
    )
    .await
    .unwrap();
    // A source, a shallow clone of its first version (registered), then
    // an overwrite: only version 1 references what the clone reads, so
    // the clone's pin keeps it.
    create(&ns, &["ns", "src"], rows(0, 10)).await.unwrap();
    let src = dataset(&ns, &["ns", "src"]).await;
    let mut first = src.checkout_version(1).await.unwrap();
    let clone_dir = dir.path().join("clones/c1");
    first
        .shallow_clone(clone_dir.to_str().unwrap(), 1, None)
        .await
        .unwrap();
    ns.register_table(RegisterTableRequest {
        id: ids(&["ns", "clone"]),
        location: "clones/c1".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    ns.insert_into_table(
        InsertIntoTableRequest {
            id: ids(&["ns", "src"]),
            mode: Some("overwrite".into()),
            ..Default::default()
        },
        rows(100, 10),
    )
    .await
    .unwrap();
    let c = Client::new();
    let (s, p) = call(
        &c,
        Method::POST,
        format!("{base}/v1/namespace/ns/maintenance_policy"),
        Some(json!({"interval": "1s", "version_retention": "0", "versions_to_retain": 1})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    let (s, sweep) = call(
        &c,
        Method::GET,
        format!("{base}/v1/namespace/ns/maintenance_sweep"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{sweep}");
    let table = |name: &str| {
        sweep["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == json!(["ns", name]))
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {sweep}"))
    };
    let idx = table("idx");
    assert_eq!(idx["untidy_fragments"], 2, "{idx}");
    assert_eq!(idx["compactable_fragments"], 0, "{idx}");
    assert!(
        !idx["would_submit"]
            .as_array()
            .unwrap()
            .contains(&json!("lance_compact")),
        "{idx}"
    );
    let src = table("src");
    // Version 1 is past retention, but the clone's pin keeps it.
    assert_eq!(src["versions"], 2, "{src}");
    assert_eq!(src["versions_past_retention"], 0, "{src}");
    assert_eq!(src["would_submit"], json!([]), "{src}");
    // Without the clone, it would go.
    let (s, b) = call(
        &c,
        Method::POST,
        format!("{base}/v1/table/ns%24clone/deregister"),
        Some(json!({})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (_, again) = call(
        &c,
        Method::GET,
        format!("{base}/v1/table/ns%24src/maintenance_sweep"),
        None,
    )
    .await;
    assert_eq!(again["versions_past_retention"], 1, "{again}");
    assert_eq!(again["would_submit"], json!(["lance_cleanup"]), "{again}");
}
