//! The orphan scan against legacy aliases (recorded before locations could
//! not overlap): it never names a file of a table recorded inside the one
//! scanned, in whatever case it was recorded, and refuses a table recorded
//! at the root.

use std::time::{Duration, SystemTime};

use crate::harness::{batch, namespace, schema, Env};
use lance_catalog::core::ForeignRefs;

/// Plant `rel` under `dir` with a modification time eight days back.
fn plant_old(dir: &std::path::Path, rel: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"x").unwrap();
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(8 * 24 * 3600))
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scan_never_names_a_nested_table_s_files_nor_scans_the_root() {
    let (catalog, dir) = Env::catalog().await;
    namespace(&catalog, &["h"]).await;
    let t_dir = super::created_dir(&catalog, &["h", "t"]).await;
    // A dataset inside t's own `_indices/`, recorded by a catalog without
    // the location rules, with an old unreferenced file of its own.
    let inner = format!("{t_dir}/_indices/inner");
    let reader = arrow_array::RecordBatchIterator::new(vec![Ok(batch(0, 3))], schema());
    lance::Dataset::write(reader, dir.path().join(&inner).to_str().unwrap(), None)
        .await
        .unwrap();
    plant_old(dir.path(), &format!("{inner}/data/junk.lance"));
    // Another, recorded in upper case: a store that folds case reads it
    // there, so its files are not t's either.
    let shouted = format!("{t_dir}/_indices/inner2");
    plant_old(dir.path(), &format!("{shouted}/data/junk.lance"));
    let shouted = shouted.to_uppercase();
    // And an old orphan of t's own.
    plant_old(dir.path(), &format!("{t_dir}/data/junk.lance"));
    super::register_legacy(
        dir.path(),
        &[
            ("inner", inner.as_str()),
            ("inner2", &shouted),
            ("root", ""),
        ],
    )
    .await;

    let none = ForeignRefs::default();
    let t = ["h".to_string(), "t".to_string()];
    let report = catalog.orphan_scan(&t, &none).await.unwrap();
    let named: Vec<&str> = report.orphans.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(named, ["data/junk.lance"], "{report:?}");
    let done = catalog
        .reclaim(&t, &["_indices/inner/data/junk.lance".to_string()], &none)
        .await
        .unwrap();
    assert!(done.deleted.is_empty(), "{done:?}");
    assert!(dir.path().join(&inner).join("data/junk.lance").exists());

    let root = ["h".to_string(), "root".to_string()];
    let e = catalog.orphan_scan(&root, &none).await.unwrap_err();
    assert_eq!(e.code.0, 19, "{}", e.message);
}
