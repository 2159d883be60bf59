use std::collections::HashMap;

use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{code, ids, rows};

pub async fn namespaces_lifecycle(ns: &dyn LanceNamespace) {
    let props = HashMap::from([("owner".to_string(), "data-team".to_string())]);
    ns.create_namespace(CreateNamespaceRequest {
        id: ids(&["sales"]),
        properties: Some(props.clone()),
        ..Default::default()
    })
    .await
    .unwrap();
    // Duplicate -> 2.
    let dup = ns
        .create_namespace(CreateNamespaceRequest {
            id: ids(&["sales"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(dup), 2);
    // Nested, and a parent that does not exist -> 1.
    ns.create_namespace(CreateNamespaceRequest {
        id: ids(&["sales", "eu"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let orphan = ns
        .create_namespace(CreateNamespaceRequest {
            id: ids(&["nope", "child"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(orphan), 1);

    let d = ns
        .describe_namespace(DescribeNamespaceRequest {
            id: ids(&["sales"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        d.properties.unwrap().get("owner").map(String::as_str),
        Some("data-team")
    );
    let missing = ns
        .describe_namespace(DescribeNamespaceRequest {
            id: ids(&["nope"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(missing), 1);

    ns.namespace_exists(NamespaceExistsRequest {
        id: ids(&["sales", "eu"]),
        ..Default::default()
    })
    .await
    .unwrap();
    let gone = ns
        .namespace_exists(NamespaceExistsRequest {
            id: ids(&["sales", "us"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(gone), 1);

    let root = ns
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(root.namespaces, vec!["sales"]);
    let child = ns
        .list_namespaces(ListNamespacesRequest {
            id: ids(&["sales"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(child.namespaces, vec!["eu"]);
    // Listing a namespace that does not exist -> 1, not an empty list.
    let r = ns
        .list_namespaces(ListNamespacesRequest {
            id: ids(&["nope"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 1);
    let r = ns
        .list_tables(ListTablesRequest {
            id: ids(&["nope"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 1);

    // Not empty -> 3; missing -> 1; then bottom-up drops succeed.
    let r = ns
        .drop_namespace(DropNamespaceRequest {
            id: ids(&["sales"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 3);
    let r = ns
        .drop_namespace(DropNamespaceRequest {
            id: ids(&["nope"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 1);
    for id in [&["sales", "eu"][..], &["sales"][..]] {
        ns.drop_namespace(DropNamespaceRequest {
            id: ids(id),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    let root = ns
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(root.namespaces.is_empty());
}

pub async fn namespace_modes_and_cascade(ns: &dyn LanceNamespace) {
    let create = |id: &[&str], mode: Option<&str>| CreateNamespaceRequest {
        id: ids(id),
        mode: mode.map(str::to_string),
        ..Default::default()
    };
    ns.create_namespace(create(&["m"], None)).await.unwrap();
    // exist_ok in any case spelling succeeds on an existing namespace.
    for mode in ["exist_ok", "ExistOk", "EXIST_OK"] {
        ns.create_namespace(create(&["m"], Some(mode)))
            .await
            .unwrap();
    }
    assert_eq!(
        code(ns.create_namespace(create(&["m"], Some("bogus"))).await),
        13
    );
    // Root always exists.
    assert_eq!(code(ns.create_namespace(create(&[], None)).await), 2);

    ns.create_namespace(create(&["m", "a"], None))
        .await
        .unwrap();
    ns.create_namespace(create(&["m", "a", "b"], None))
        .await
        .unwrap();
    ns.create_table(
        CreateTableRequest {
            id: ids(&["m", "a", "b", "t"]),
            ..Default::default()
        },
        rows(0, 3),
    )
    .await
    .unwrap();
    // Skip mode on a missing namespace succeeds.
    ns.drop_namespace(DropNamespaceRequest {
        id: ids(&["zzz"]),
        mode: Some("Skip".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    // Cascade drops the whole subtree.
    ns.drop_namespace(DropNamespaceRequest {
        id: ids(&["m", "a"]),
        behavior: Some("Cascade".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let r = ns
        .table_exists(TableExistsRequest {
            id: ids(&["m", "a", "b", "t"]),
            ..Default::default()
        })
        .await;
    assert!(r.is_err());
    let left = ns
        .list_namespaces(ListNamespacesRequest {
            id: ids(&["m"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(left.namespaces.is_empty());
}

pub async fn namespace_pagination(ns: &dyn LanceNamespace) {
    for name in ["e", "a", "d", "b", "c"] {
        ns.create_namespace(CreateNamespaceRequest {
            id: ids(&[name]),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    let mut seen = Vec::new();
    let mut token = None;
    loop {
        let page = ns
            .list_namespaces(ListNamespacesRequest {
                id: Some(vec![]),
                limit: Some(2),
                page_token: token.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(page.namespaces.len() <= 2);
        seen.extend(page.namespaces);
        match page.page_token {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    assert_eq!(seen, vec!["a", "b", "c", "d", "e"]);
    let r = ns
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            limit: Some(-1),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);
}
