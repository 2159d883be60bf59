//! Credentials: JWTs that do not verify (expired, wrong audience, not yet
//! valid, wrongly signed), RS256 through an OIDC issuer's key set served on
//! loopback, and API keys shown once, listed without secrets, revoked.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use lance_catalog::auth::JwtConfig;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{now, token, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_and_revoked_keys_are_401() {
    let s = Server::hs256(None).await;
    let describe = "/v1/server/info";
    for bad in [
        token("eve", json!({"exp": now() - 3600})),
        token("eve", json!({"aud": "someone-else"})),
        token("eve", json!({"nbf": now() + 3600})),
        encode(
            &Header::new(Algorithm::HS256),
            &json!({"sub": "eve", "exp": now() + 60, "aud": "lance"}),
            &EncodingKey::from_secret(b"not-the-secret-not-the-secret-!!").unwrap(),
        )
        .unwrap(),
        "not.a.token".to_string(),
    ] {
        let r =
            s.c.get(format!("{}{describe}", s.base))
                .bearer_auth(&bad)
                .send()
                .await
                .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert!(r.headers().contains_key("www-authenticate"));
    }

    // A key for a principal, shown once; it works until revoked.
    let made = s
        .ok(
            "root",
            "POST",
            "/v1/api-keys",
            json!({"principal": "svc", "description": "etl"}),
        )
        .await;
    let key = made["key"].as_str().unwrap().to_string();
    let key_id = made["key_id"].as_str().unwrap().to_string();
    let listed = s.ok("root", "GET", "/v1/api-keys", Value::Null).await;
    assert!(
        !listed.to_string().contains(&key[20..]),
        "a secret was listed"
    );
    assert_eq!(listed["api_keys"][0]["principal"], "svc");
    let as_key = format!("key:{key}");
    s.ok(&as_key, "GET", describe, Value::Null).await;
    // The key's holder may list its own keys, not others'.
    s.ok(&as_key, "GET", "/v1/api-keys?principal=svc", Value::Null)
        .await;
    let (st, _, _) = s
        .send(Some(&as_key), "GET", "/v1/api-keys", None, None)
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    s.ok(
        "root",
        "DELETE",
        &format!("/v1/api-keys/{key_id}"),
        Value::Null,
    )
    .await;
    let (st, b, _) = s.send(Some(&as_key), "GET", describe, None, None).await;
    assert_eq!(
        (st, b["code"].clone()),
        (StatusCode::UNAUTHORIZED, json!(16))
    );
    // A forged secret for a real key id is refused too.
    let forged = format!("key:{}x", &key[..key.len() - 1]);
    let (st, _, _) = s.send(Some(&forged), "GET", describe, None, None).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rs256_tokens_are_checked_against_an_oidc_issuers_jwks_on_loopback() {
    let jwk: Value = serde_json::from_str(include_str!("fixtures/rsa-test-key.jwk.json")).unwrap();
    let fetched = Arc::new(AtomicUsize::new(0));
    let counter = fetched.clone();
    let jwks = json!({"keys": [jwk]});
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap();
    // An OIDC issuer: its discovery document names the key set.
    let discovery =
        json!({"issuer": format!("http://{at}"), "jwks_uri": format!("http://{at}/jwks.json")});
    let app = axum::Router::new()
        .route(
            "/jwks.json",
            axum::routing::get(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                let body = jwks.clone();
                async move { axum::Json(body) }
            }),
        )
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(move || {
                let body = discovery.clone();
                async move { axum::Json(body) }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let s = Server::start(
        None,
        JwtConfig {
            oidc_issuer: Some(format!("http://{at}")),
            issuer: Some("https://idp.example".into()),
            audience: Some("lance".into()),
            ..Default::default()
        },
    )
    .await;
    let key = EncodingKey::from_rsa_pem(include_bytes!("fixtures/rsa-test-key.pem")).unwrap();
    let sign = |kid: &str, iss: &str| {
        let mut h = Header::new(Algorithm::RS256);
        h.kid = Some(kid.into());
        encode(
            &h,
            &json!({"sub": "root", "iss": iss, "aud": "lance", "exp": now() + 60}),
            &key,
        )
        .unwrap()
    };
    for _ in 0..3 {
        let r =
            s.c.get(format!("{}/v1/projects", s.base))
                .bearer_auth(sign("test-k1", "https://idp.example"))
                .send()
                .await
                .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
    assert_eq!(fetched.load(Ordering::SeqCst), 1, "the key set is cached");
    for bad in [
        sign("test-k1", "https://other.example"),
        sign("unknown-kid", "https://idp.example"),
    ] {
        let r =
            s.c.get(format!("{}/v1/projects", s.base))
                .bearer_auth(bad)
                .send()
                .await
                .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
}
