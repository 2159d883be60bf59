//! Tests of `records.rs`: races, pruning and tombstones on real stores.
use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Counter {
    n: u32,
    note: String,
}

fn local() -> (Records, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    (Records::new(Arc::new(store), Path::from("_catalog")), dir)
}

fn memory() -> Records {
    Records::new(
        Arc::new(object_store::memory::InMemory::new()),
        Path::from("_catalog"),
    )
}

async fn lifecycle(r: &Records) {
    let c = Counter {
        n: 0,
        note: "a".into(),
    };
    let made = r
        .create("counter", "c1", &c, Code::NAMESPACE_ALREADY_EXISTS)
        .await
        .unwrap();
    assert_eq!(made.version, 1);
    let e = r
        .create("counter", "c1", &c, Code::NAMESPACE_ALREADY_EXISTS)
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::NAMESPACE_ALREADY_EXISTS);
    let up = r
        .update(
            "counter",
            "c1",
            Code::NAMESPACE_NOT_FOUND,
            |mut v: Counter| {
                v.n += 1;
                Ok(v)
            },
        )
        .await
        .unwrap();
    assert_eq!((up.version, up.value.n), (2, 1));
    // A refused change changes nothing.
    let e = r
        .update("counter", "c1", Code::NAMESPACE_NOT_FOUND, |_: Counter| {
            Err(CatalogError::invalid("no"))
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::INVALID_INPUT);
    assert_eq!(
        r.get::<Counter>("counter", "c1")
            .await
            .unwrap()
            .unwrap()
            .value
            .n,
        1
    );
    assert_eq!(r.ids::<Counter>("counter").await.unwrap(), vec!["c1"]);
    assert!(r
        .delete::<Counter, _>("counter", "c1", |_| Ok(()))
        .await
        .unwrap());
    assert!(r.get::<Counter>("counter", "c1").await.unwrap().is_none());
    assert!(r.ids::<Counter>("counter").await.unwrap().is_empty());
    assert!(!r
        .delete::<Counter, _>("counter", "c1", |_| Ok(()))
        .await
        .unwrap());
    let e = r
        .update("counter", "c1", Code::NAMESPACE_NOT_FOUND, |v: Counter| {
            Ok(v)
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::NAMESPACE_NOT_FOUND);
    // Created again, the chain goes on.
    let again = r
        .create("counter", "c1", &c, Code::NAMESPACE_ALREADY_EXISTS)
        .await
        .unwrap();
    assert_eq!(again.version, 4);
    let e = r
        .create("counter", "../x", &c, Code::NAMESPACE_ALREADY_EXISTS)
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::INVALID_INPUT);
}

#[tokio::test]
async fn records_live_and_die_on_both_stores() {
    let (r, _dir) = local();
    lifecycle(&r).await;
    lifecycle(&memory()).await;
}

async fn races(r: Records) {
    let c = Counter {
        n: 0,
        note: String::new(),
    };
    // Eight creates of one id: exactly one wins.
    let creates: Vec<_> = (0..8)
        .map(|i| {
            let r = r.clone();
            let mut c = c.clone();
            c.note = format!("writer {i}");
            tokio::spawn(async move {
                r.create("counter", "race", &c, Code::NAMESPACE_ALREADY_EXISTS)
                    .await
            })
        })
        .collect();
    let mut won = 0;
    for t in creates {
        match t.await.unwrap() {
            Ok(_) => won += 1,
            Err(e) => assert_eq!(e.code, Code::NAMESPACE_ALREADY_EXISTS),
        }
    }
    assert_eq!(won, 1);
    // Eight increments at once: none is lost.
    let updates: Vec<_> = (0..8)
        .map(|_| {
            let r = r.clone();
            tokio::spawn(async move {
                r.update(
                    "counter",
                    "race",
                    Code::NAMESPACE_NOT_FOUND,
                    |mut v: Counter| {
                        v.n += 1;
                        Ok(v)
                    },
                )
                .await
            })
        })
        .collect();
    for t in updates {
        t.await.unwrap().unwrap();
    }
    let got = r.get::<Counter>("counter", "race").await.unwrap().unwrap();
    assert_eq!(got.value.n, 8);
    assert_eq!(got.version, 9);
}

#[tokio::test]
async fn old_versions_are_pruned_once_old_enough() {
    let (mut r, dir) = local();
    r.prune_after = Duration::from_millis(300);
    let c = Counter {
        n: 0,
        note: String::new(),
    };
    r.create("counter", "p", &c, Code::NAMESPACE_ALREADY_EXISTS)
        .await
        .unwrap();
    let bump = |mut v: Counter| {
        v.n += 1;
        Ok(v)
    };
    for _ in 0..3 {
        r.update("counter", "p", Code::NAMESPACE_NOT_FOUND, bump)
            .await
            .unwrap();
    }
    // Young versions stay.
    let files = |d: &std::path::Path| {
        std::fs::read_dir(d.join("_catalog/counter/p"))
            .unwrap()
            .count()
    };
    assert_eq!(files(dir.path()), 4);
    tokio::time::sleep(Duration::from_millis(400)).await;
    r.update("counter", "p", Code::NAMESPACE_NOT_FOUND, bump)
        .await
        .unwrap();
    // The latest two stay; the old ones are gone; nothing was lost.
    assert_eq!(files(dir.path()), 2);
    let got = r.get::<Counter>("counter", "p").await.unwrap().unwrap();
    assert_eq!((got.version, got.value.n), (5, 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_never_lose_a_change_local() {
    let (mut r, _dir) = local();
    // Pruning as soon as it may, so that the races meet it.
    r.prune_after = Duration::from_millis(20);
    races(r).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_never_lose_a_change_in_memory() {
    let mut r = memory();
    r.prune_after = Duration::from_millis(20);
    races(r).await;
}
