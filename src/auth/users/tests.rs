//! The local-user registry on a real directory.

use super::*;
use crate::api::call::Basic;

fn users(dir: &std::path::Path, config: UsersConfig) -> Users {
    let store =
        std::sync::Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
    Users::new(
        Records::new(store, object_store::path::Path::from("control")),
        config,
    )
}

fn cheap() -> UsersConfig {
    UsersConfig {
        memory_kib: 64,
        passes: 1,
        max_failures: 2,
        hold_off: Duration::from_secs(60),
        ..Default::default()
    }
}

fn basic(u: &str, p: &str) -> Basic {
    Basic {
        username: u.into(),
        password: p.into(),
    }
}

#[tokio::test]
async fn one_answer_for_every_failure_then_a_hold_off() {
    let dir = tempfile::tempdir().unwrap();
    let u = users(dir.path(), cheap());
    u.create("ada", "correct horse", vec![], None, false, None)
        .await
        .unwrap();
    let p = u
        .verify_basic(&basic("ada", "correct horse"))
        .await
        .unwrap();
    assert_eq!(p.id, "ada");
    let wrong = u
        .verify_basic(&basic("ada", "wrong horse"))
        .await
        .unwrap_err();
    let unknown = u
        .verify_basic(&basic("bob", "wrong horse"))
        .await
        .unwrap_err();
    assert_eq!(wrong.code, Code::UNAUTHENTICATED);
    assert_eq!(wrong.message, unknown.message);
    // The second failure in a row holds the name off, even for the
    // right password.
    u.verify_basic(&basic("ada", "wrong again"))
        .await
        .unwrap_err();
    let held = u
        .verify_basic(&basic("ada", "correct horse"))
        .await
        .unwrap_err();
    assert_eq!(held.code, Code::THROTTLING, "{}", held.message);
}

#[tokio::test]
async fn a_new_password_ends_the_old_one_and_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let u = users(dir.path(), cheap());
    u.create(
        "ada",
        "correct horse",
        vec!["eng".into()],
        None,
        false,
        None,
    )
    .await
    .unwrap();
    u.verify_basic(&basic("ada", "correct horse"))
        .await
        .unwrap();
    let (token, _) = u.mint_session("ada").await.unwrap();
    assert_eq!(u.verify_session(&token).await.unwrap().groups, ["eng"]);
    assert_eq!(Users::claimed_by_session(&token).as_deref(), Some("ada"));
    u.set_password("ada", "battery staple").await.unwrap();
    u.verify_basic(&basic("ada", "correct horse"))
        .await
        .unwrap_err();
    u.verify_session(&token).await.unwrap_err();
    u.verify_basic(&basic("ada", "battery staple"))
        .await
        .unwrap();
    // Disabled, then enabled: the session made before stays ended.
    let (token, _) = u.mint_session("ada").await.unwrap();
    u.update("ada", Some(true), None, None).await.unwrap();
    u.verify_session(&token).await.unwrap_err();
    u.verify_basic(&basic("ada", "battery staple"))
        .await
        .unwrap_err();
    u.update("ada", Some(false), None, None).await.unwrap();
    u.verify_session(&token).await.unwrap_err();
}

#[tokio::test]
async fn the_record_holds_the_hash_and_its_parameters_only() {
    let dir = tempfile::tempdir().unwrap();
    let u = users(dir.path(), cheap());
    u.create("ada", "correct horse", vec![], None, false, None)
        .await
        .unwrap();
    let mut text = String::new();
    for entry in walk(dir.path()) {
        text.push_str(&std::fs::read_to_string(entry).unwrap());
    }
    assert!(!text.contains("correct horse"), "{text}");
    assert!(text.contains("$argon2id$v=19$m=64,t=1,p=1$"), "{text}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
