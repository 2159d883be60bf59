//! Warehouses on: two warehouses on two roots behind one server, the door
//! for top-level namespaces, the merged root listings, quarantine,
//! protection and `force`, and the guard order: a create refused by the
//! authorizer leaves nothing behind, at every door.

use lance_catalog::api::call::Call;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow_flight::FlightDescriptor;
use async_trait::async_trait;
use lance_catalog::api::control::*;
use lance_catalog::governance::guard::{Access, Authorizer, Facts};
use lance_catalog::governance::{Governance, GovernanceConfig, Scoped};
use lance_catalog::rest::RestConfig;
use lance_catalog::{CatalogError, CatalogResult, Code, StorageConfig};
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::governance::hierarchy::call;
use crate::harness::{code, create, ids, rows};

/// Refuses every access while `deny` is set.
#[derive(Default)]
pub(crate) struct Gate {
    deny: AtomicBool,
}

#[async_trait]
impl Authorizer for Gate {
    async fn authorize(&self, access: &Access, _: Option<&Facts>) -> CatalogResult<()> {
        match self.deny.load(Ordering::SeqCst) {
            true => Err(CatalogError::new(
                Code::PERMISSION_DENIED,
                format!("{} is not allowed", access.action),
            )),
            false => Ok(()),
        }
    }
}

pub(crate) async fn governance(home: &Path, gate: Arc<Gate>) -> Arc<Governance> {
    let gov = Governance::open(&GovernanceConfig {
        storage: StorageConfig {
            root: home.to_string_lossy().into_owned(),
            ..Default::default()
        },
        control_root: None,
        warehouses: true,
        ..Default::default()
    })
    .await
    .unwrap()
    .with_authorizer(gate);
    gov.create_project(
        &Call::default(),
        CreateProjectRequest {
            project_id: "acme".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    Arc::new(gov)
}

pub(crate) async fn warehouse(gov: &Governance, id: &str, root: &Path) {
    gov.create_warehouse(
        &Call::default(),
        CreateWarehouseRequest {
            warehouse_id: id.into(),
            project_id: "acme".into(),
            root: root.to_string_lossy().into_owned(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
}

/// Every file under `dirs`, with its size.
fn files(dirs: &[&Path]) -> BTreeSet<(String, u64)> {
    fn walk(p: &Path, out: &mut BTreeSet<(String, u64)>) {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                out.insert((path.to_string_lossy().into_owned(), len));
            }
        }
    }
    let mut out = BTreeSet::new();
    dirs.iter().for_each(|d| walk(d, &mut out));
    out
}

/// A warehouse root must be its own: not inside another's (symlinks
/// followed, even through a directory not made yet; in any case, as a
/// store that folds case would take it), and openable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warehouse_roots_are_checked() {
    let (home, spare) = (tempdir(), tempdir());
    let gov = governance(home.path(), Arc::default()).await;
    let link = spare.path().join("link");
    std::os::unix::fs::symlink(home.path(), &link).unwrap();
    // The default root spelled in upper case: a case-folding store's
    // same directory.
    let shouted = home.path().join("inner").to_string_lossy().to_uppercase();
    for root in [
        shouted.clone(),
        home.path().join("inner").to_string_lossy().into_owned(),
        link.join("not-yet").to_string_lossy().into_owned(),
        "nosuchscheme://bucket/lake".to_string(),
        format!("{}/../x", spare.path().display()),
    ] {
        let made = gov
            .create_warehouse(
                &Call::default(),
                CreateWarehouseRequest {
                    warehouse_id: "w".into(),
                    project_id: "acme".into(),
                    root: root.clone(),
                    ..Default::default()
                },
            )
            .await;
        assert_eq!(made.unwrap_err().code, Code::INVALID_INPUT, "{root}");
    }
    assert!(!home.path().join("inner").exists());
    assert!(!home.path().join("not-yet").exists());
    assert!(!std::path::Path::new(&shouted).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_warehouses_on_two_roots() {
    let (home, r1, r2) = (tempdir(), tempdir(), tempdir());
    let gov = governance(home.path(), Arc::default()).await;
    warehouse(&gov, "w1", r1.path()).await;
    warehouse(&gov, "w2", r2.path()).await;
    let addr = lance_catalog::app::server::spawn_governed(gov.clone(), RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");
    let c = Client::new();
    let ns = RestNamespaceBuilder::new(base.clone()).build();

    // A top-level namespace has one door: its warehouse's.
    let refused = ns
        .create_namespace(CreateNamespaceRequest {
            id: ids(&["sales"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(refused), 13);
    for (w, name) in [("w1", "sales"), ("w2", "ops")] {
        let (s, b) = call(
            &c,
            Method::POST,
            format!("{base}/v1/warehouses/{w}/namespaces"),
            Some(json!({"namespace": name, "properties": {"team": name}})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{b}");
        assert_eq!(b["warehouse_id"], w);
    }
    let (s, b) = call(
        &c,
        Method::POST,
        format!("{base}/v1/warehouses/w2/namespaces"),
        Some(json!({"namespace": "sales"})),
    )
    .await;
    assert_eq!(
        (s, b["code"].clone()),
        (StatusCode::CONFLICT, json!(2)),
        "{b}"
    );
    assert!(b["error"].as_str().unwrap().contains("w1"), "{b}");

    // Tables land under their warehouse's root, and plain Lance reads them.
    create(&ns, &["sales", "orders"], rows(0, 5)).await.unwrap();
    create(&ns, &["ops", "jobs"], rows(0, 3)).await.unwrap();
    for (id, root, n) in [
        (["sales", "orders"], r1.path(), 5),
        (["ops", "jobs"], r2.path(), 3),
    ] {
        let d = ns
            .describe_table(DescribeTableRequest {
                id: ids(&id),
                ..Default::default()
            })
            .await
            .unwrap();
        let location = d.location.unwrap();
        let root = std::fs::canonicalize(root).unwrap();
        assert!(
            location.contains(root.to_str().unwrap()),
            "{location} is not under {root:?}"
        );
        let ds = lance::Dataset::open(&location).await.unwrap();
        assert_eq!(ds.count_rows(None).await.unwrap(), n);
    }
    assert!(files(&[home.path()])
        .iter()
        .all(|(f, _)| !f.contains("orders") && !f.contains("jobs")));

    // The root lists every warehouse; a warehouse's URL lists its own.
    let root = ns
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(root.namespaces, vec!["ops", "sales"]);
    // Paged, with stable tokens.
    let mut names = Vec::new();
    let mut token = None;
    loop {
        let page = ns
            .list_namespaces(ListNamespacesRequest {
                id: Some(vec![]),
                limit: Some(1),
                page_token: token.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(page.namespaces.len() <= 1);
        names.extend(page.namespaces);
        token = page.page_token;
        if token.is_none() {
            break;
        }
    }
    assert_eq!(names, vec!["ops", "sales"]);
    let w1 = RestNamespaceBuilder::new(format!("{base}/warehouses/w1")).build();
    let scoped = w1
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(scoped.namespaces, vec!["sales"]);
    let hidden = w1
        .describe_table(DescribeTableRequest {
            id: ids(&["ops", "jobs"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(hidden), 4);
    // A bound namespace's tables, listed at the server's own URL.
    let listed = ns
        .list_tables(ListTablesRequest {
            id: ids(&["sales"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.tables, vec!["orders"]);
    let elsewhere = w1
        .describe_namespace(DescribeNamespaceRequest {
            id: ids(&["ops"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(elsewhere), 1);
    let all = ns
        .list_all_tables(ListTablesRequest::default())
        .await
        .unwrap();
    assert_eq!(all.tables.len(), 2, "{:?}", all.tables);
    let (s, b) = call(
        &c,
        Method::GET,
        format!("{base}/v1/warehouses/w1/namespaces"),
        None,
    )
    .await;
    assert_eq!(
        (s, b["namespaces"].clone()),
        (StatusCode::OK, json!(["sales"]))
    );

    // A table does not move between warehouses.
    let moved = ns
        .rename_table(RenameTableRequest {
            id: ids(&["sales", "orders"]),
            new_namespace_id: ids(&["ops"]),
            new_table_name: "orders".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(moved), 13);

    // Quarantine: reads are served, writes refused, nothing written.
    let (s, _) = call(
        &c,
        Method::PATCH,
        format!("{base}/v1/warehouses/w1"),
        Some(json!({"status": "quarantined"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let before = files(&[r1.path()]);
    let insert = ns
        .insert_into_table(
            InsertIntoTableRequest {
                id: ids(&["sales", "orders"]),
                ..Default::default()
            },
            rows(5, 2),
        )
        .await;
    // Lance's client knows no code above the spec's; the message names it.
    assert!(format!("{:?}", insert.unwrap_err()).contains("quarantined"));
    let r = c
        .post(format!("{base}/v1/table/sales%24more/create"))
        .header("content-type", "application/vnd.apache.arrow.stream")
        .body(rows(0, 1))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["code"], 10009, "{e}");
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/warehouses/w1/namespaces"),
        Some(json!({"namespace": "more"})),
    )
    .await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::CONFLICT, json!(10009)),
        "{e}"
    );
    assert_eq!(files(&[r1.path()]), before);
    let count = ns
        .count_table_rows(CountTableRowsRequest {
            id: ids(&["sales", "orders"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(count, 5);
    let (s, _) = call(
        &c,
        Method::PATCH,
        format!("{base}/v1/warehouses/w1"),
        Some(json!({"status": "active"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);

    // Protection and force on both warehouses' delete doors.
    for (t, n) in [("sales%24orders", "sales"), ("ops%24jobs", "ops")] {
        let post = |path: String, body: Value| call(&c, Method::POST, path, Some(body));
        let (s, _) = post(
            format!("{base}/v1/table/{t}/protection"),
            json!({"protected": true}),
        )
        .await;
        assert_eq!(s, StatusCode::OK);
        for door in ["drop", "deregister"] {
            let (s, e) = post(format!("{base}/v1/table/{t}/{door}"), json!({})).await;
            assert_eq!(
                (s, e["code"].clone()),
                (StatusCode::CONFLICT, json!(19)),
                "{door}: {e}"
            );
        }
        let (s, e) = post(format!("{base}/v1/table/{t}/drop?force=true"), json!({})).await;
        assert_eq!(s, StatusCode::OK, "{e}");
        let (s, _) = post(
            format!("{base}/v1/namespace/{n}/protection"),
            json!({"protected": true}),
        )
        .await;
        assert_eq!(s, StatusCode::OK);
        let (s, e) = post(format!("{base}/v1/namespace/{n}/drop"), json!({})).await;
        assert_eq!(
            (s, e["code"].clone()),
            (StatusCode::CONFLICT, json!(19)),
            "{e}"
        );
    }

    // A warehouse that holds namespaces is not deleted; once they are
    // dropped (which unbinds them), it is, and its bytes stay.
    let (s, e) = call(&c, Method::DELETE, format!("{base}/v1/warehouses/w1"), None).await;
    assert_eq!(
        (s, e["code"].clone()),
        (StatusCode::CONFLICT, json!(10008)),
        "{e}"
    );
    assert!(e["error"].as_str().unwrap().contains("sales"), "{e}");
    let (s, e) = call(
        &c,
        Method::POST,
        format!("{base}/v1/namespace/sales/drop?force=true"),
        Some(json!({})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{e}");
    let (s, e) = call(&c, Method::DELETE, format!("{base}/v1/warehouses/w1"), None).await;
    assert_eq!(s, StatusCode::OK, "{e}");
    assert!(r1.path().join("__manifest").exists());
    let root = ns
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(root.namespaces, vec!["ops"]);
}

/// Authorization runs before any conflict check or write: with the
/// authorizer refusing, every create door answers 15 and not one byte
/// changes on any root, the control root included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_creates_leave_nothing() {
    let (home, r1, elsewhere) = (tempdir(), tempdir(), tempdir());
    let gate = Arc::new(Gate::default());
    let gov = governance(home.path(), gate.clone()).await;
    warehouse(&gov, "w1", r1.path()).await;
    let ns = Scoped::new(gov.clone(), "w1");
    ns.create_namespace(CreateNamespaceRequest {
        id: ids(&["a"]),
        ..Default::default()
    })
    .await
    .unwrap();
    create(&ns, &["a", "t"], rows(0, 2)).await.unwrap();
    // A dataset to register, written by plain Lance under the root.
    let loose = r1.path().join("loose");
    let reader = arrow_array::RecordBatchIterator::new(
        vec![Ok(crate::harness::batch(0, 2))],
        crate::harness::schema(),
    );
    lance::Dataset::write(reader, loose.to_str().unwrap(), None)
        .await
        .unwrap();
    let addr = lance_catalog::app::server::spawn_governed(gov.clone(), RestConfig::default())
        .await
        .unwrap();
    let base = format!("http://{addr}");

    gate.deny.store(true, Ordering::SeqCst);
    let roots = [home.path(), r1.path(), elsewhere.path()];
    let before = files(&roots);
    let top = ns
        .create_namespace(CreateNamespaceRequest {
            id: ids(&["b"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(top), 15, "top-level namespace");
    let nested = ns
        .create_namespace(CreateNamespaceRequest {
            id: ids(&["a", "b"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(nested), 15, "nested namespace");
    assert_eq!(
        code(create(&ns, &["a", "u"], rows(0, 1)).await),
        15,
        "create"
    );
    let declared = ns
        .declare_table(DeclareTableRequest {
            id: ids(&["a", "d"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(declared), 15, "declare");
    let registered = ns
        .register_table(RegisterTableRequest {
            id: ids(&["a", "r"]),
            location: "loose".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(registered), 15, "register");
    let renamed = ns
        .rename_table(RenameTableRequest {
            id: ids(&["a", "t"]),
            new_table_name: "t2".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(code(renamed), 15, "rename");
    let door = gov
        .create_warehouse_namespace(
            &Call::default(),
            CreateWarehouseNamespaceRequest {
                warehouse_id: "w1".into(),
                namespace: "c".into(),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(door.unwrap_err().code, Code::PERMISSION_DENIED, "door");
    let project = gov
        .create_project(
            &Call::default(),
            CreateProjectRequest {
                project_id: "p2".into(),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(
        project.unwrap_err().code,
        Code::PERMISSION_DENIED,
        "project"
    );
    let wh = gov
        .create_warehouse(
            &Call::default(),
            CreateWarehouseRequest {
                warehouse_id: "w2".into(),
                project_id: "acme".into(),
                root: elsewhere.path().to_string_lossy().into_owned(),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(wh.unwrap_err().code, Code::PERMISSION_DENIED, "warehouse");
    // Flight's DoPut create is a door too.
    let mut flight = crate::transport::flight::connect(&base).await;
    let put = crate::transport::flight::put(
        &mut flight,
        FlightDescriptor::new_cmd(json!({"op": "create", "id": ["a", "f"]}).to_string()),
        vec![crate::harness::batch(0, 2)],
    )
    .await;
    assert_eq!(
        crate::transport::flight::spec_code(put.unwrap_err()),
        "15",
        "flight"
    );
    // Over REST the refusal is a 403 with code 15.
    let r = Client::new()
        .post(format!("{base}/warehouses/w1/v1/table/a%24v/create"))
        .header("content-type", "application/vnd.apache.arrow.stream")
        .body(rows(0, 1))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    // Nothing changed but the audit trail, which records each refusal.
    let after = files(&roots);
    let audit = |f: &BTreeSet<(String, u64)>| {
        f.iter()
            .filter(|(p, _)| !p.contains("/_catalog/control/audit/"))
            .cloned()
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        audit(&after),
        audit(&before),
        "a refused create wrote something"
    );
    assert!(after.len() - before.len() >= 11, "every refusal is audited");

    // Shape and parent come before authorization: a missing parent is 404.
    let orphan = create(&ns, &["nope", "t"], rows(0, 1)).await;
    assert_eq!(code(orphan), 1);
}

pub(crate) fn tempdir() -> TempDir {
    tempfile::tempdir().unwrap()
}
