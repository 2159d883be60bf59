//! The sweep of create intents against a real directory root: what it
//! removes, what it leaves to a table or to a live create, and a create
//! the sweep took for dead learning so before it records anything.

use super::*;
use crate::api::sweep::{CreateLeftover, LeftoverOutcome};
use crate::core::StorageConfig;
use lance_namespace::models::DeclareTableRequest;

async fn catalog(root: &std::path::Path) -> Catalog {
    set_intent_expiry(Duration::from_secs(1));
    Catalog::open(&StorageConfig {
        root: root.to_string_lossy().into_owned(),
        ..Default::default()
    })
    .await
    .unwrap()
}

fn outcome_of(found: &[CreateLeftover], location: &str) -> Vec<LeftoverOutcome> {
    found
        .iter()
        .filter(|l| l.intent.location == location)
        .map(|l| l.outcome)
        .collect()
}

#[tokio::test]
async fn the_sweep_removes_only_dead_creates_bytes_no_one_else_owns() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let c = catalog(&root).await;
    let t = vec!["t".to_string()];

    // A dead create's bytes, no table over them.
    let dead = c
        .begin_create(&t, &"dead_1".into(), None, false)
        .await
        .unwrap();
    std::fs::create_dir_all(root.join("dead_1/data")).unwrap();
    std::fs::write(root.join("dead_1/data/a.lance"), b"x").unwrap();
    drop(dead);
    // A create that was recorded and then died before forgetting its intent.
    c.declare_table_op(DeclareTableRequest {
        id: Some(t.clone()),
        ..Default::default()
    })
    .await
    .unwrap();
    let owned = c.relative_table_location(&t).await.unwrap();
    std::fs::create_dir_all(root.join(&owned)).unwrap();
    std::fs::write(root.join(&owned).join("keep"), b"k").unwrap();
    drop(
        c.begin_create(&t, &(&owned).into(), None, true)
            .await
            .unwrap(),
    );
    // A dead create's and a live one's intents over one chosen location.
    drop(
        c.begin_create(&t, &"shared".into(), None, true)
            .await
            .unwrap(),
    );
    std::fs::create_dir_all(root.join("shared")).unwrap();
    std::fs::write(root.join("shared/b"), b"b").unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let live = c
        .begin_create(&t, &"shared".into(), None, true)
        .await
        .unwrap();

    // A report changes nothing.
    let report = c.sweep_intents(false).await.unwrap();
    assert_eq!(
        outcome_of(&report, "dead_1"),
        vec![LeftoverOutcome::WouldRemove]
    );
    assert!(root.join("dead_1/data/a.lance").is_file());

    let swept = c.sweep_intents(true).await.unwrap();
    assert_eq!(outcome_of(&swept, "dead_1"), vec![LeftoverOutcome::Removed]);
    assert!(!root.join("dead_1").exists());
    assert_eq!(outcome_of(&swept, &owned), vec![LeftoverOutcome::Recorded]);
    assert!(root.join(&owned).join("keep").is_file());
    assert_eq!(outcome_of(&swept, "shared"), vec![LeftoverOutcome::Kept]);
    assert!(root.join("shared/b").is_file());
    // Only the live intent is left, and it is still confirmed; the swept
    // ones leave no directory behind to be listed on every later sweep.
    let left = c.create_intents().await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].1.location, "shared");
    let dirs = std::fs::read_dir(root.join("_catalog/control/create_intents/intent"))
        .unwrap()
        .count();
    assert_eq!(dirs, 1);
    live.confirm().await.unwrap();
    live.finish().await;
}

#[tokio::test]
async fn a_create_taken_for_dead_is_told_before_it_records() {
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(dir.path()).await;
    let held = c
        .begin_create(&["u".to_string()], &"slow".into(), None, false)
        .await
        .unwrap();
    // Frozen past the expiry: its beat stops, as in a paused process.
    held.beat.abort();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let swept = c.sweep_intents(true).await.unwrap();
    assert_eq!(outcome_of(&swept, "slow"), vec![LeftoverOutcome::Removed]);
    let err = held.confirm().await.unwrap_err();
    assert_eq!(err.code, Code::SERVICE_UNAVAILABLE);
    assert!(
        err.message.contains("--create-intent-expiry"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn a_second_create_at_a_chosen_location_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(dir.path()).await;
    let t = vec!["v".to_string()];
    let first = c
        .begin_create(&t, &"busy/here".into(), None, true)
        .await
        .unwrap();
    for at in ["busy/here", "busy", "busy/here/below"] {
        let err = c
            .begin_create(&t, &at.into(), None, true)
            .await
            .err()
            .unwrap();
        assert_eq!(err.code, Code::CONCURRENT_MODIFICATION, "{at}");
        assert!(err.message.contains("busy/here"), "{}", err.message);
    }
    // The refused ones left no intent behind.
    assert_eq!(c.create_intents().await.unwrap().len(), 1);
    first.finish().await;
    c.begin_create(&t, &"busy/here".into(), None, true)
        .await
        .unwrap()
        .finish()
        .await;
    assert!(c.create_intents().await.unwrap().is_empty());
}
