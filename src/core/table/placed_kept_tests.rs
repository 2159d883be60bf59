//! The kept answer follows exactly one snapshot and this process's own
//! next commit on it, and nothing else.

use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchIterator, StringArray};
use arrow_schema::{DataType, Field, Schema};
use lance::Dataset;

use super::*;
use crate::core::table::locations::Location;

fn rows(rows: &[(&str, &str, &str)]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("object_id", DataType::Utf8, false),
        Field::new("object_type", DataType::Utf8, false),
        Field::new("location", DataType::Utf8, true),
    ]));
    let col = |i: usize| {
        let v: Vec<&str> = rows.iter().map(|r| [r.0, r.1, r.2][i]).collect();
        Arc::new(StringArray::from(v)) as _
    };
    RecordBatch::try_new(schema, vec![col(0), col(1), col(2)]).unwrap()
}

async fn append(uri: &str, batch: RecordBatch) -> Arc<Dataset> {
    let schema = batch.schema();
    let reader = RecordBatchIterator::new([Ok(batch)], schema);
    let params = lance::dataset::WriteParams {
        mode: lance::dataset::WriteMode::Append,
        ..Default::default()
    };
    Arc::new(Dataset::write(reader, uri, Some(params)).await.unwrap())
}

fn keys(placed: &[Placed]) -> Vec<&str> {
    let mut k: Vec<&str> = placed.iter().map(|p| p.key.as_str()).collect();
    k.sort_unstable();
    k
}

#[tokio::test]
async fn an_answer_is_carried_only_to_the_next_version_of_its_own_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let uri = dir.path().join("m").to_string_lossy().into_owned();
    let v1 = append(
        &uri,
        rows(&[("a$t", "table", "ab"), ("a$u", "table", "cd")]),
    )
    .await;
    let near = [Location::new("AB/x")];
    let kept = PlacedKept::default();
    assert!(kept.get(&v1, &near).is_none());
    let placed = crate::core::Catalog::placed_near(&v1, &near).await.unwrap();
    assert_eq!(keys(&placed), ["a$t"]);
    kept.keep(&v1, &near, &placed);
    assert_eq!(keys(&kept.get(&v1, &near).unwrap()), ["a$t"]);
    // Another spelling of the same place is another question.
    assert!(kept.get(&v1, &[Location::new("ab/x")]).is_none());

    // This process's commit right after v1: its rows are carried in.
    let written = rows(&[("a$v", "table", "Ab/X/y"), ("a", "namespace", "ab")]);
    let v2 = append(&uri, written.clone()).await;
    kept.advance(&v1, &v2, &["a$v".into(), "a".into()], Some(&written));
    let carried = kept.get(&v2, &near).unwrap();
    assert_eq!(
        keys(&carried),
        keys(&crate::core::Catalog::placed_near(&v2, &near).await.unwrap())
    );
    assert_eq!(keys(&carried), ["a$t", "a$v"]);

    // A snapshot of the same version loaded afresh is not the one kept.
    let reloaded = Arc::new(Dataset::open(&uri).await.unwrap());
    assert_eq!(reloaded.version().version, v2.version().version);
    assert!(kept.get(&reloaded, &near).is_none());

    // A commit that did not land right after its base (another came
    // between) carries nothing.
    let v3 = append(&uri, rows(&[("a$w", "table", "ab/w")])).await;
    let v4 = append(&uri, rows(&[("a$z", "table", "zz")])).await;
    kept.advance(
        &v2,
        &v4,
        &["a$z".into()],
        Some(&rows(&[("a$z", "table", "zz")])),
    );
    assert!(kept.get(&v4, &near).is_none());
    drop(v3);

    // A removed row leaves the carried answer.
    kept.keep(
        &v4,
        &near,
        &crate::core::Catalog::placed_near(&v4, &near).await.unwrap(),
    );
    let v5 = append(&uri, rows(&[("b$q", "table", "q")])).await;
    kept.advance(&v4, &v5, &["a$t".into(), "b$q".into()], None);
    assert_eq!(keys(&kept.get(&v5, &near).unwrap()), ["a$v"]);
}

#[tokio::test]
async fn every_table_or_the_root_is_never_kept() {
    let dir = tempfile::tempdir().unwrap();
    let uri = dir.path().join("m").to_string_lossy().into_owned();
    let v1 = append(&uri, rows(&[("a$t", "table", "ab")])).await;
    let kept = PlacedKept::default();
    kept.keep(&v1, &[], &[]);
    assert!(kept.get(&v1, &[]).is_none());
    let root = [Location::new("./")];
    kept.keep(&v1, &root, &[]);
    assert!(kept.get(&v1, &root).is_none());
}
