//! The web console's files as the binary serves them: types, the page's
//! version, ETag revalidation (304), the security headers on every answer,
//! the vendored library's recorded hash, unknown files, and `--console off`.

use lance_catalog::rest::RestConfig;
use reqwest::{header, redirect, Client, StatusCode};
use sha2::Digest;

use super::wire::server;

/// The vendored Preact+htm module's SHA-256, as `console/vendor/README.md`
/// records it.
const VENDORED: &str = "72284e8e9079c87817145df1110f74e8a2aa040b2fc384922e18dfcb46fc1fd7";

fn guarded(r: &reqwest::Response) {
    let h = r.headers();
    let csp = h["content-security-policy"].to_str().unwrap();
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["x-frame-options"], "DENY");
}

#[tokio::test]
async fn the_console_is_served_with_its_headers() {
    let (_env, base, c) = server(RestConfig::default()).await;
    let page = c.get(format!("{base}/console/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    guarded(&page);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(page.headers()["cache-control"], "no-cache");
    let etag = page.headers()["etag"].to_str().unwrap().to_string();
    let html = page.text().await.unwrap();
    assert!(
        html.contains(&format!("content=\"{}\"", env!("CARGO_PKG_VERSION"))),
        "{html}"
    );
    assert!(html.contains(r#"<script type="module" src="app.js">"#));
    // Unchanged: 304, no body, the same headers.
    let again = c
        .get(format!("{base}/console/"))
        .header(header::IF_NONE_MATCH, &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    guarded(&again);
    assert!(again.bytes().await.unwrap().is_empty());
    let other = c
        .get(format!("{base}/console/"))
        .header(header::IF_NONE_MATCH, "\"something-else\"")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::OK);

    for (path, kind) in [
        ("app.js", "text/javascript; charset=utf-8"),
        ("pages/table.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
    ] {
        let r = c
            .get(format!("{base}/console/{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert_eq!(r.headers()["content-type"], kind, "{path}");
        guarded(&r);
    }
    // The vendored library is the file recorded, byte for byte.
    let lib = c
        .get(format!(
            "{base}/console/vendor/preact-htm-standalone.module.js"
        ))
        .send()
        .await
        .unwrap();
    let etag = lib.headers()["etag"].to_str().unwrap().to_string();
    let bytes = lib.bytes().await.unwrap();
    let digest: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, VENDORED);
    assert_eq!(etag, format!("\"{VENDORED}\""));
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/console/vendor/README.md"
    ))
    .unwrap();
    assert!(readme.contains(VENDORED));
}

#[tokio::test]
async fn unknown_files_and_the_bare_path() {
    let (_env, base, _) = server(RestConfig::default()).await;
    let c = Client::builder()
        .redirect(redirect::Policy::none())
        .build()
        .unwrap();
    for path in [
        "nope.js",
        "../Cargo.toml",
        "%2e%2e/Cargo.toml",
        "vendor/../../build.rs",
    ] {
        let r = c
            .get(format!("{base}/console/{path}"))
            .send()
            .await
            .unwrap();
        assert!(
            matches!(r.status(), StatusCode::NOT_FOUND),
            "{path}: {}",
            r.status()
        );
    }
    let bare = c.get(format!("{base}/console")).send().await.unwrap();
    assert_eq!(bare.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(bare.headers()["location"], "console/");
    guarded(&bare);
}

#[tokio::test]
async fn the_console_can_be_turned_off() {
    let config = RestConfig {
        console: false,
        ..RestConfig::default()
    };
    let (_env, base, c) = server(config).await;
    let r = c.get(format!("{base}/console/")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}
