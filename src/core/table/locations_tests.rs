//! Location rules: overlap by segment in any case, relative locations,
//! shared bytes, and the manifest lookup on a real Lance dataset.

use super::*;

/// The lookup finds every recorded spelling that overlaps, in any case
/// and Unicode form, the root included, and leaves out locations that
/// only share characters.
#[tokio::test]
async fn the_lookup_keeps_every_overlapping_spelling() {
    use arrow_schema::{DataType, Field, Schema};
    use lance::index::DatasetIndexExt;
    let dir = tempfile::tempdir().unwrap();
    let overlapping = [
        ("a$t", Some("ab/t")),
        ("a$u", Some("./ab//t/deeper/")),
        ("a$v", Some("ab")),
        ("a$v2", Some("ab/")),
        ("a$v3", Some("ab//t")),
        ("a$v4", Some("ab/./t/x")),
        ("a$v5", Some("ab/t/")),
        ("a$in", Some("ab/t/deeper")),
        ("a$slash", Some("/ab/t")),
        ("a$root", Some("./")),
        ("a$empty", Some("")),
        ("a$none", None),
        ("a$upper", Some("AB/T")),
        ("a$mixed", Some("Ab/t/x")),
        ("a$SHARED", Some("aB")),
    ];
    let apart = [
        ("a$w", Some("abc")),
        ("a$x", Some("zz/ab")),
        ("a$y", Some("ab/tx")),
        ("a$z", Some("ab/s/t")),
        ("a$upper2", Some("AB/TX")),
    ];
    let rows: Vec<_> = overlapping.iter().chain(apart.iter()).collect();
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new("object_id", DataType::Utf8, false),
        Field::new("object_type", DataType::Utf8, false),
        Field::new("location", DataType::Utf8, true),
    ]));
    let col = |v: Vec<Option<&str>>| std::sync::Arc::new(StringArray::from(v)) as _;
    let batch = arrow_array::RecordBatch::try_new(
        schema.clone(),
        vec![
            col(rows.iter().map(|r| Some(r.0)).collect()),
            col(rows.iter().map(|_| Some("table")).collect()),
            col(rows.iter().map(|r| r.1).collect()),
        ],
    )
    .unwrap();
    let uri = dir.path().join("m").to_string_lossy().into_owned();
    let reader = arrow_array::RecordBatchIterator::new([Ok(batch)], schema);
    let mut ds = lance::Dataset::write(reader, &uri, None).await.unwrap();
    for (column, builtin, kind) in [
        (
            "location",
            lance_index::scalar::BuiltinIndexType::BTree,
            lance_index::IndexType::BTree,
        ),
        (
            "object_type",
            lance_index::scalar::BuiltinIndexType::Bitmap,
            lance_index::IndexType::Bitmap,
        ),
    ] {
        let params = lance_index::scalar::ScalarIndexParams::for_builtin(builtin);
        ds.create_index(&[column], kind, None, &params, true)
            .await
            .unwrap();
    }
    let near = Catalog::placed_near(&ds, &[Location::new("ab/t")])
        .await
        .unwrap();
    let mut found: Vec<&str> = near
        .iter()
        .filter(|p| p.location.overlaps(&Location::new("ab/t")))
        .map(|p| p.key.as_str())
        .collect();
    found.sort_unstable();
    let mut want: Vec<&str> = overlapping.iter().map(|r| r.0).collect();
    want.sort_unstable();
    assert_eq!(found, want);
    let fetched: Vec<&str> = near.iter().map(|p| p.key.as_str()).collect();
    for (key, _) in &apart {
        assert!(!fetched.contains(key), "{key} was answered: {fetched:?}");
    }
    assert_eq!(
        Catalog::placed_near(&ds, &[]).await.unwrap().len(),
        rows.len()
    );
}

fn placed(key: &str, location: &str) -> Placed {
    Placed {
        key: key.into(),
        location: Location::new(location),
    }
}

#[test]
fn relative_locations_are_checked() {
    assert_eq!(check_relative("a/b/", "a/b/").unwrap().as_str(), "a/b");
    for bad in [
        "",
        "/",
        ".",
        "./",
        "__manifest",
        "__manifest/x",
        "_catalog/jobs",
        "a/../b",
        "__Manifest",
        "__manife\u{17f}t",
        "_CATALOG/x",
        "%2e",
        "%2e%2e",
        "?",
        "#",
        "t?",
        "t%2Fsub",
    ] {
        let e = check_relative(bad, bad).unwrap_err();
        assert_eq!(e.code, Code::INVALID_INPUT, "{bad:?}");
    }
}

#[test]
fn drops_refuse_shared_bytes() {
    let tables = vec![
        placed("h$t", "1234_h$t"),
        placed("h$alias", "1234_h$t"),
        placed("h$u", "u"),
    ];
    let e = Catalog::check_deletable("h$alias", &"1234_h$t".into(), &tables).unwrap_err();
    assert_eq!(e.code, Code::INVALID_TABLE_STATE);
    assert!(e.message.contains("'h$t'"), "{}", e.message);
    assert!(Catalog::check_deletable("h$u", &"u".into(), &tables).is_ok());
    assert_eq!(
        Catalog::check_deletable("h$r", &"".into(), &tables)
            .unwrap_err()
            .code,
        Code::INVALID_TABLE_STATE
    );
    let nested = vec![placed("h$u", "u"), placed("h$in", "u/data")];
    assert_eq!(
        Catalog::check_deletable("h$in", &"u/data".into(), &nested)
            .unwrap_err()
            .code,
        Code::INVALID_TABLE_STATE
    );
    assert_eq!(
        Catalog::check_deletable("h$u", &"u".into(), &nested)
            .unwrap_err()
            .code,
        Code::INVALID_TABLE_STATE
    );
}

#[test]
fn overlap_says_how_but_not_whose() {
    let tables = vec![placed("h$t", "t")];
    let other = find_overlap(&"t/x".into(), &tables, Some("h$y")).unwrap();
    let e = overlap_error(&["h".into(), "y".into()], &"t/x".into(), other);
    assert!(
        e.message.contains("lies inside") && !e.message.contains("h$t"),
        "{}",
        e.message
    );
    assert!(find_overlap(&"t".into(), &tables, Some("h$t")).is_none());
}
