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

/// A registry holding user `ada`, password `correct horse`.
async fn with_ada(dir: &std::path::Path) -> Users {
    let u = users(dir, cheap());
    u.create("ada", "correct horse", vec![], None, false, None)
        .await
        .unwrap();
    u
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
    let u = with_ada(dir.path()).await;
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
    let (token, _, _) = u
        .open_session(&basic("ada", "correct horse"))
        .await
        .unwrap();
    assert_eq!(u.verify_session(&token).await.unwrap().groups, ["eng"]);
    assert!(Users::claimed_session(&token).is_some());
    u.set_password("ada", "battery staple").await.unwrap();
    u.verify_basic(&basic("ada", "correct horse"))
        .await
        .unwrap_err();
    u.verify_session(&token).await.unwrap_err();
    u.verify_basic(&basic("ada", "battery staple"))
        .await
        .unwrap();
    // Disabled, then enabled: the session made before stays ended.
    let (token, _, _) = u
        .open_session(&basic("ada", "battery staple"))
        .await
        .unwrap();
    u.update("ada", Some(true), None, None).await.unwrap();
    u.verify_session(&token).await.unwrap_err();
    u.verify_basic(&basic("ada", "battery staple"))
        .await
        .unwrap_err();
    u.update("ada", Some(false), None, None).await.unwrap();
    u.verify_session(&token).await.unwrap_err();
}

#[tokio::test]
async fn the_storage_holds_hashes_and_their_parameters_only() {
    let dir = tempfile::tempdir().unwrap();
    let u = with_ada(dir.path()).await;
    let (token, _, _) = u
        .open_session(&basic("ada", "correct horse"))
        .await
        .unwrap();
    let secret = token.rsplit('_').next().unwrap();
    let mut text = String::new();
    for entry in walk(dir.path()) {
        text.push_str(&std::fs::read_to_string(entry).unwrap());
    }
    assert!(!text.contains("correct horse"), "{text}");
    assert!(!text.contains(secret), "{text}");
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

#[tokio::test]
async fn guesses_sent_at_once_are_counted_before_the_next_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let u = with_ada(dir.path()).await;
    let guesses: Vec<_> = (0..10)
        .map(|i| basic("ada", &format!("guess number {i}")))
        .collect();
    let answers = futures::future::join_all(guesses.iter().map(|b| u.verify_basic(b))).await;
    let checked = answers
        .iter()
        .filter(|a| matches!(a, Err(e) if e.code == Code::UNAUTHENTICATED))
        .count();
    // max_failures is 2: two guesses were checked, the rest held off.
    assert_eq!(checked, 2, "{answers:?}");
}

#[tokio::test]
async fn a_user_made_again_under_a_name_gets_nothing_of_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let u = with_ada(dir.path()).await;
    u.verify_basic(&basic("ada", "correct horse"))
        .await
        .unwrap();
    let (token, _, _) = u
        .open_session(&basic("ada", "correct horse"))
        .await
        .unwrap();
    u.delete("ada").await.unwrap();
    u.create("ada", "correct horse", vec![], None, false, None)
        .await
        .unwrap();
    // Same name, same password, same generation: another user.
    u.verify_session(&token).await.unwrap_err();
    let (fresh, _, _) = u
        .open_session(&basic("ada", "correct horse"))
        .await
        .unwrap();
    u.verify_session(&fresh).await.unwrap();
    u.end_session(&fresh).await.unwrap();
    u.verify_session(&fresh).await.unwrap_err();
}

/// A client sending Basic on every call succeeds through the remembered
/// password; each success ends the failures counted before it, so typos
/// spread out never add up to a hold-off (max_failures is 2 here).
#[tokio::test]
async fn a_remembered_success_ends_the_failures_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let u = with_ada(dir.path()).await;
    let right = basic("ada", "correct horse");
    u.verify_basic(&right).await.unwrap();
    for _ in 0..5 {
        u.verify_basic(&basic("ada", "typo")).await.unwrap_err();
        // Recalled, not checked again: and it clears the count.
        u.verify_basic(&right).await.unwrap();
    }
    u.verify_basic(&basic("ada", "typo")).await.unwrap_err();
    let p = u.verify_basic(&right).await.unwrap();
    assert_eq!(p.id, "ada");
}
