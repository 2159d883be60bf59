//! Listing through warehouses: the spec's lists and the control plane's
//! page by the one rule of `api::page`.

use std::sync::Arc;

use lance_catalog::api::call::Call;
use lance_catalog::api::control::*;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use super::warehouses::{governance, tempdir, warehouse};
use crate::harness::code;

/// The spec's lists page by one rule whether warehouses are on or not: no
/// `limit` is every item, `0` an empty page, a negative one 13; the
/// control plane's lists page by the same rule at their own size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_page_by_one_rule_through_warehouses() {
    let (home, r1) = (tempdir(), tempdir());
    let gov = governance(home.path(), Arc::default()).await;
    warehouse(&gov, "w1", r1.path()).await;
    let names: Vec<String> = (0..105).map(|i| format!("n{i:03}")).collect();
    for name in &names {
        gov.create_warehouse_namespace(
            &Call::default(),
            CreateWarehouseNamespaceRequest {
                warehouse_id: "w1".into(),
                namespace: name.clone(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    }
    let list = |limit: Option<i32>| {
        let gov = gov.clone();
        async move {
            gov.list_namespaces(ListNamespacesRequest {
                id: Some(vec![]),
                limit,
                ..Default::default()
            })
            .await
        }
    };
    let all = list(None).await.unwrap();
    assert_eq!((all.namespaces.len(), all.page_token), (105, None));
    let none = list(Some(0)).await.unwrap();
    assert!(none.namespaces.is_empty());
    assert_eq!(code(list(Some(-1)).await), 13);
    let two = list(Some(2)).await.unwrap();
    assert_eq!(two.namespaces, vec!["n000", "n001"]);
    assert_eq!(two.page_token.as_deref(), Some("n001"));
    // The control plane's listing of the same names: 100 at a time.
    let page = gov
        .list_warehouse_namespaces(
            &Call::default(),
            ListWarehouseNamespacesRequest {
                warehouse_id: "w1".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.namespaces.len(), 100);
    assert_eq!(page.page_token.as_deref(), Some("n099"));
    let empty = gov
        .list_warehouse_namespaces(
            &Call::default(),
            ListWarehouseNamespacesRequest {
                warehouse_id: "w1".into(),
                limit: Some(0),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(empty.namespaces.is_empty());
}
