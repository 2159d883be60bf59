//! The catalog owns where its tables live: no location is the root, the
//! manifest or the catalog's records, none overlaps another table's, and a
//! drop deletes only its own table's bytes.

use lance_catalog::CatalogError;
use lance_namespace::models::*;
use lance_namespace::LanceNamespace;

use crate::harness::{code, count, create, ids, namespace, rows};

async fn register(
    ns: &dyn LanceNamespace,
    id: &[&str],
    location: &str,
) -> lance::Result<RegisterTableResponse> {
    ns.register_table(RegisterTableRequest {
        id: ids(id),
        location: location.to_string(),
        ..Default::default()
    })
    .await
}

fn message<T: std::fmt::Debug>(r: lance::Result<T>) -> (u32, String) {
    let e = CatalogError::from_lance(&r.expect_err("expected an error"));
    (e.code.0, e.message)
}

pub async fn location_ownership(ns: &dyn LanceNamespace) {
    namespace(ns, &["own"]).await;
    create(ns, &["own", "t"], rows(0, 5)).await.unwrap();
    let location = ns
        .describe_table(DescribeTableRequest {
            id: ids(&["own", "t"]),
            ..Default::default()
        })
        .await
        .unwrap()
        .location
        .unwrap();
    let dir = location.trim_end_matches('/').rsplit('/').next().unwrap();

    // The root, the manifest, the catalog's records, escapes: all 13.
    for bad in [
        "",
        ".",
        "./",
        "__manifest",
        "__manifest/data",
        "_catalog/jobs",
        "../outside",
        "a/../../outside",
        "/etc",
        "file:///etc",
        "s3://elsewhere/x",
        // URI syntax that storage would read as escapes, a query or a
        // fragment, naming the root, its parent or another directory.
        "%2e",
        "%2e%2e",
        "?",
        "#",
        "x?y",
        "__Manifest",
    ] {
        let r = register(ns, &["own", "alias"], bad).await;
        assert_eq!(code(r), 13, "register at {bad:?}");
    }
    // Another table's directory, or anything inside it: 13 (not naming
    // the other table: the caller may not see it).
    for bad in [
        dir.to_string(),
        format!("{dir}/"),
        format!("{dir}/data"),
        format!("./{dir}"),
    ] {
        let (c, m) = message(register(ns, &["own", "alias"], &bad).await);
        assert_eq!(c, 13, "register at {bad:?}");
        assert!(m.contains("another table's location"), "{m}");
    }
    // The table and its data are untouched by the refusals.
    assert_eq!(count(ns, &["own", "t"]).await, 5);
    let r = ns
        .table_exists(TableExistsRequest {
            id: ids(&["own", "alias"]),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 4);

    // Names holding URI syntax keep their data where every reader looks.
    let odd = ["own", "q?x#y%z"];
    create(ns, &odd, rows(0, 2)).await.unwrap();
    ns.insert_into_table(
        InsertIntoTableRequest {
            id: ids(&odd),
            ..Default::default()
        },
        rows(2, 1),
    )
    .await
    .unwrap();
    assert_eq!(count(ns, &odd).await, 3);
    assert_eq!(count(ns, &["own", "t"]).await, 5);

    // Nested registrations are allowed; their parents and children overlap.
    register(ns, &["own", "deep"], "deep/inner").await.unwrap();
    for bad in ["deep", "deep/inner", "deep/inner/x"] {
        let (c, m) = message(register(ns, &["own", "other"], bad).await);
        assert_eq!(c, 13, "register at {bad:?}");
        assert!(
            m.contains("another table's location") && !m.contains("own$deep"),
            "{m}"
        );
    }
    register(ns, &["own", "sibling"], "deep/sibling")
        .await
        .unwrap();
    // A declaration at a chosen directory is checked the same way.
    let r = ns
        .declare_table(DeclareTableRequest {
            id: ids(&["own", "d"]),
            location: Some(dir.to_string()),
            ..Default::default()
        })
        .await;
    assert_eq!(code(r), 13);
    let declared = ns
        .declare_table(DeclareTableRequest {
            id: ids(&["own", "d"]),
            location: Some("chosen".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        declared.location.as_deref().unwrap().ends_with("/chosen"),
        "{declared:?}"
    );
    assert_eq!(code(register(ns, &["own", "x"], "chosen").await), 13);

    // Dropping a registered table removes only its own directory.
    ns.drop_table(DropTableRequest {
        id: ids(&["own", "deep"]),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(count(ns, &["own", "t"]).await, 5);
    ns.describe_table(DescribeTableRequest {
        id: ids(&["own", "sibling"]),
        ..Default::default()
    })
    .await
    .unwrap();
    // Its location is free again.
    register(ns, &["own", "deep2"], "deep/inner").await.unwrap();
    // The whole namespace drops; the catalog still answers.
    ns.drop_namespace(DropNamespaceRequest {
        id: ids(&["own"]),
        behavior: Some("cascade".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let listed = ns
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!listed.namespaces.contains(&"own".to_string()));
}

/// Tables anywhere under the root, nested: created at a chosen nested
/// directory, declared at one, registered at one; each answers like any
/// other table, and a drop removes only its own directory.
pub async fn nested_locations(ns: &dyn LanceNamespace) {
    namespace(ns, &["nest"]).await;
    let at = |location: &str| {
        Some(std::collections::HashMap::from([(
            lance_catalog::core::LOCATION_KEY.to_string(),
            location.to_string(),
        )]))
    };
    let created = ns
        .create_table(
            CreateTableRequest {
                id: ids(&["nest", "orders"]),
                context: at("lake/sales/orders"),
                ..Default::default()
            },
            rows(0, 4),
        )
        .await
        .unwrap();
    assert!(
        created
            .location
            .as_deref()
            .unwrap()
            .ends_with("/lake/sales/orders"),
        "{created:?}"
    );
    ns.insert_into_table(
        InsertIntoTableRequest {
            id: ids(&["nest", "orders"]),
            ..Default::default()
        },
        rows(4, 2),
    )
    .await
    .unwrap();
    assert_eq!(count(ns, &["nest", "orders"]).await, 6);
    let d = ns
        .describe_table(DescribeTableRequest {
            id: ids(&["nest", "orders"]),
            load_detailed_metadata: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(d.version, Some(2));
    assert!(d.schema.is_some(), "{d:?}");
    // Create modes over an existing nested table.
    let again = |mode: &str| {
        ns.create_table(
            CreateTableRequest {
                id: ids(&["nest", "orders"]),
                mode: Some(mode.into()),
                ..Default::default()
            },
            rows(0, 1),
        )
    };
    assert_eq!(code(again("create").await), 5);
    assert_eq!(again("exist_ok").await.unwrap().version, Some(2));
    assert_eq!(again("overwrite").await.unwrap().version, Some(3));
    assert_eq!(count(ns, &["nest", "orders"]).await, 1);

    // Declared at a nested directory, then written there.
    let declared = ns
        .declare_table(DeclareTableRequest {
            id: ids(&["nest", "later"]),
            location: Some("lake/sales/later".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(declared
        .location
        .as_deref()
        .unwrap()
        .ends_with("/lake/sales/later"));
    ns.insert_into_table(
        InsertIntoTableRequest {
            id: ids(&["nest", "later"]),
            ..Default::default()
        },
        rows(0, 3),
    )
    .await
    .unwrap();
    assert_eq!(count(ns, &["nest", "later"]).await, 3);
    // Their parent directory belongs to neither table, and overlaps both.
    assert_eq!(code(register(ns, &["nest", "all"], "lake/sales").await), 13);

    // Dropping one removes its directory only.
    ns.drop_table(DropTableRequest {
        id: ids(&["nest", "orders"]),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(count(ns, &["nest", "later"]).await, 3);
    register(ns, &["nest", "again"], "lake/sales/orders")
        .await
        .unwrap();
}

/// `lance.storage.*` properties of the namespaces above a table are its
/// storage options (an inner namespace overriding an outer one), handed to
/// clients by create, declare and describe, and withheld on request.
pub async fn namespace_storage_options(ns: &dyn LanceNamespace) {
    let props = |pairs: &[(&str, &str)]| {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<std::collections::HashMap<_, _>>(),
        )
    };
    ns.create_namespace(CreateNamespaceRequest {
        id: ids(&["so"]),
        properties: props(&[
            ("lance.storage.aws_region", "eu-west-1"),
            ("lance.storage.aws_session_token", "outer"),
            ("owner", "data"),
        ]),
        ..Default::default()
    })
    .await
    .unwrap();
    ns.create_namespace(CreateNamespaceRequest {
        id: ids(&["so", "inner"]),
        properties: props(&[("lance.storage.aws_session_token", "inner")]),
        ..Default::default()
    })
    .await
    .unwrap();
    // Namespace answers hide the secret ones; tables get the others (a
    // secret leaves the server only where the operator opts in, see
    // `auth::holes`).
    let described_ns = ns
        .describe_namespace(DescribeNamespaceRequest {
            id: ids(&["so"]),
            ..Default::default()
        })
        .await
        .unwrap();
    let shown = described_ns.properties.unwrap();
    assert_eq!(shown["lance.storage.aws_session_token"], "********");
    assert_eq!(shown["lance.storage.aws_region"], "eu-west-1");
    assert_eq!(shown["owner"], "data");
    let want = props(&[("aws_region", "eu-west-1")]);
    let created = create(ns, &["so", "inner", "t"], rows(0, 2)).await.unwrap();
    assert_eq!(namespace_options(created.storage_options), want);
    let described = ns
        .describe_table(DescribeTableRequest {
            id: ids(&["so", "inner", "t"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(namespace_options(described.storage_options), want);
    let withheld = ns
        .describe_table(DescribeTableRequest {
            id: ids(&["so", "inner", "t"]),
            vend_credentials: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    // (Over gRPC an absent map arrives as an empty one.)
    assert!(withheld.storage_options.unwrap_or_default().is_empty());
    let declared = ns
        .declare_table(DeclareTableRequest {
            id: ids(&["so", "d"]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(namespace_options(declared.storage_options), want);
    // The data is read with them like any other table's.
    assert_eq!(count(ns, &["so", "inner", "t"]).await, 2);
}

/// A table's storage options without the ones the root itself needs (an
/// S3 root's endpoint and credentials travel with every table on it).
fn namespace_options(
    options: Option<std::collections::HashMap<String, String>>,
) -> Option<std::collections::HashMap<String, String>> {
    const ROOT_KEYS: [&str; 4] = [
        "aws_endpoint",
        "aws_access_key_id",
        "aws_secret_access_key",
        "allow_http",
    ];
    options.map(|mut o| {
        o.retain(|k, _| !ROOT_KEYS.contains(&k.as_str()));
        o
    })
}
