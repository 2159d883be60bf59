//! Authentication and authorization over the real server: the auth matrix
//! generated from the operation inventory (every route: no credentials 401;
//! a principal with no grant 403; a reader reads and is refused writes; a
//! writer writes; an admin manages grants), inheritance, a `forbid` policy
//! file, force without permission, JWT failures, RS256 against a JWKS
//! served on loopback, and an API key revoked mid-test.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use lance_catalog::auth::cedar::group_of;
use lance_catalog::auth::JwtConfig;
use lance_catalog::governance::{AuthConfig, Governance, GovernanceConfig};
use lance_catalog::rest::{BodyKind, OpDef, RestConfig, CONTROL_OPS, OPS};
use lance_catalog::StorageConfig;
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};
use tempfile::TempDir;

const SECRET: &str = "test-secret-of-at-least-32-bytes!!";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An HS256 token for `sub`, valid for a minute unless `claims` say else.
fn token(sub: &str, claims: Value) -> String {
    let mut c = json!({"sub": sub, "exp": now() + 60, "aud": "lance"});
    for (k, v) in claims.as_object().unwrap() {
        c[k] = v.clone();
    }
    encode(
        &Header::new(Algorithm::HS256),
        &c,
        &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

struct Server {
    base: String,
    c: Client,
    _dir: TempDir,
}

impl Server {
    async fn start(policy_dir: Option<&std::path::Path>, jwt: JwtConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let gov = Governance::open(&GovernanceConfig {
            storage: StorageConfig {
                root: dir.path().to_string_lossy().into_owned(),
                ..Default::default()
            },
            auth: AuthConfig {
                required: true,
                jwt: Some(jwt),
                bootstrap_admin: Some("root".into()),
                policy_dir: policy_dir.map(|p| p.to_path_buf()),
            },
            ..Default::default()
        })
        .await
        .unwrap();
        let addr = lance_catalog::server::spawn_governed(Arc::new(gov), RestConfig::default())
            .await
            .unwrap();
        Self {
            base: format!("http://{addr}"),
            c: Client::new(),
            _dir: dir,
        }
    }

    async fn hs256(policy_dir: Option<&std::path::Path>) -> Self {
        Self::start(
            policy_dir,
            JwtConfig {
                secret: Some(SECRET.into()),
                audience: Some("lance".into()),
                ..Default::default()
            },
        )
        .await
    }

    /// Send `method path` as `who` (`None`: no credentials).
    async fn send(
        &self,
        who: Option<&str>,
        method: &str,
        path: &str,
        body: Option<Value>,
        arrow: Option<bytes::Bytes>,
    ) -> (StatusCode, Value, reqwest::header::HeaderMap) {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.c.request(method, format!("{}{path}", self.base));
        if let Some(who) = who {
            req = match who.strip_prefix("key:") {
                Some(key) => req.header("x-api-key", key),
                None => req.bearer_auth(token(who, json!({}))),
            };
        }
        req = match (body, arrow) {
            (_, Some(data)) => req
                .header("content-type", "application/vnd.apache.arrow.stream")
                .body(data),
            (Some(b), None) => req.json(&b),
            (None, None) => req,
        };
        let r = req.send().await.unwrap();
        let status = r.status();
        let headers = r.headers().clone();
        (status, r.json().await.unwrap_or(Value::Null), headers)
    }

    async fn ok(&self, who: &str, method: &str, path: &str, body: Value) -> Value {
        let (s, b, _) = self.send(Some(who), method, path, Some(body), None).await;
        assert_eq!(s, StatusCode::OK, "{method} {path}: {b}");
        b
    }

    async fn create_table(&self, who: &str, id: &str) {
        let (s, b, _) = self
            .send(
                Some(who),
                "POST",
                &format!("/v1/table/{id}/create"),
                None,
                Some(crate::harness::rows(0, 3)),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "create {id}: {b}");
    }

    async fn grant(&self, kind: &str, id: Value, principal: &str, relation: &str) {
        self.ok(
            "root",
            "POST",
            "/v1/grants",
            json!({"resource": {"kind": kind, "id": id}, "principal": principal, "relation": relation}),
        )
        .await;
    }
}

/// One route of the inventory, filled with ids of objects that exist.
fn route(op: &OpDef) -> (String, Option<Value>, Option<bytes::Bytes>) {
    let namespace_op = op.path.starts_with("/v1/namespace/");
    // A create makes its own object (its creator owns that one, not `m$t`).
    let creates = matches!(
        op.action,
        "create_namespace"
            | "create_table"
            | "declare_table"
            | "register_table"
            | "create_materialized_view"
    );
    let id = match (namespace_op, creates) {
        (true, true) => "m%24made",
        (true, false) => "m",
        (false, true) => "m%24made",
        (false, false) => "m%24t",
    };
    let path = op
        .path
        .replace("{id}", id)
        .replace("{index_name}", "idx")
        .replace("{job_id}", "job")
        .replace("{project_id}", "p")
        .replace("{warehouse_id}", "default")
        .replace("{key_id}", "0123456789abcdef")
        .replace("{grant_id}", "0123456789abcdef0123456789abcdef");
    let body = match op.action {
        "rename_table" => json!({"new_table_name": "t9"}),
        "create_project" => json!({"project_id": "p2"}),
        "create_warehouse" => {
            json!({"warehouse_id": "w2", "project_id": "p", "root": "/tmp/never-made"})
        }
        "create_warehouse_namespace" => json!({"namespace": "n2"}),
        "create_grant" => {
            json!({"resource": {"kind": "server", "id": []}, "principal": "x", "relation": "reader"})
        }
        "create_api_key" => json!({"principal": "someone-else"}),
        "batch_create_table_versions" => json!({"entries": []}),
        "batch_commit_tables" => json!({"operations": []}),
        "batch_delete_table_versions" => json!({"ranges": []}),
        "register_table" => json!({"location": "m/registered"}),
        "restore_table" | "create_table_version" => {
            json!({"version": 1, "manifest_path": "x"})
        }
        "alter_table_alter_columns" => json!({"alterations": []}),
        "update_field_metadata" | "update_table" => json!({"updates": []}),
        "alter_table_drop_columns" => json!({"columns": ["nope"]}),
        "delete_from_table" => json!({"predicate": "id < 0"}),
        "query_table" | "analyze_table_query_plan" => json!({"k": 1, "vector": {}}),
        "explain_table_query_plan" => json!({"query": {"k": 1, "vector": {}}}),
        "alter_table_add_columns" => json!({"new_columns": []}),
        "alter_table_backfill_columns" => json!({"column": "nope"}),
        "create_materialized_view" => {
            json!({"kind": "query", "source_query": "select 1", "output_schema": "{}"})
        }
        "create_table_index" | "create_table_scalar_index" => {
            json!({"column": "id", "index_type": "BTREE"})
        }
        "get_table_tag_version" | "create_table_tag" | "delete_table_tag" | "update_table_tag" => {
            json!({"tag": "v1", "version": 1})
        }
        "create_table_branch" | "delete_table_branch" => json!({"name": "b1"}),
        "alter_transaction" => json!({"actions": []}),
        a if a.ends_with("_protection") => json!({"protected": false}),
        _ => json!({}),
    };
    match op.body {
        BodyKind::Arrow => (path, None, Some(crate::harness::rows(10, 1))),
        _ if op.method == "GET" || op.method == "DELETE" => (path, None, None),
        _ => (path, Some(body), None),
    }
}

/// What a principal holding `relation` on the server may do with `op`.
fn allowed(relation: Option<&str>, op: &OpDef) -> bool {
    // Any authenticated caller may read the server's facts; catalog-wide
    // lists (projects, warehouses, all tables) are filtered, not refused.
    if matches!(
        op.action,
        "get_server_info" | "list_projects" | "list_warehouses" | "list_all_tables"
    ) {
        return true;
    }
    let group = group_of(op.action);
    match relation {
        None => false,
        Some("reader") => matches!(group, "read_metadata" | "read_data"),
        Some("writer") => !matches!(group, "manage_grants" | "administer"),
        Some(_) => true,
    }
}

async fn sweep(server: &Server, who: Option<&str>, relation: Option<&str>) {
    let mut wrong = Vec::new();
    for op in OPS.iter().chain(CONTROL_OPS) {
        let (path, body, arrow) = route(op);
        let (status, b, headers) = server.send(who, op.method, &path, body, arrow).await;
        let code = b["code"].as_u64().unwrap_or(0);
        let verdict = match who {
            None => {
                status == StatusCode::UNAUTHORIZED
                    && code == 16
                    && headers.contains_key("www-authenticate")
            }
            Some(_) if allowed(relation, op) => {
                status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN
            }
            Some(_) => status == StatusCode::FORBIDDEN && code == 15,
        };
        if !verdict {
            wrong.push(format!("{} {} {path}: {status} {b}", op.name, op.method));
        }
    }
    assert!(
        wrong.is_empty(),
        "{who:?} / {relation:?}:\n{}",
        wrong.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auth_matrix_covers_every_route() {
    let s = Server::hs256(None).await;
    s.ok("root", "POST", "/v1/projects", json!({"project_id": "p"}))
        .await;
    s.ok("root", "POST", "/v1/namespace/m/create", json!({}))
        .await;
    s.create_table("root", "m%24t").await;
    s.grant("server", json!([]), "reader", "reader").await;
    s.grant("server", json!([]), "writer", "writer").await;

    sweep(&s, None, None).await;
    sweep(&s, Some("nobody"), None).await;
    sweep(&s, Some("reader"), Some("reader")).await;
    // Writes last: they change what the later routes find.
    sweep(&s, Some("writer"), Some("writer")).await;
    sweep(&s, Some("root"), Some("admin")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_inherit_ownership_follows_creates_and_policies_forbid() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("secret.cedar"),
        "// No one reads the secret namespace.\nforbid (principal, action in [Action::\"read_metadata\", Action::\"read_data\"], resource in Namespace::\"secret\");\n",
    )
    .unwrap();
    let s = Server::hs256(Some(dir.path())).await;
    for ns in ["a", "a/b", "secret"] {
        let id = ns.replace('/', "%24");
        s.ok(
            "root",
            "POST",
            &format!("/v1/namespace/{id}/create"),
            json!({}),
        )
        .await;
    }
    s.create_table("root", "a%24b%24t").await;
    s.create_table("root", "secret%24t").await;

    // A grant on the default project reaches a table three levels down.
    let describe = "/v1/table/a%24b%24t/describe";
    let (st, _, _) = s
        .send(Some("ann"), "POST", describe, Some(json!({})), None)
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    s.grant("project", json!(["default"]), "ann", "reader")
        .await;
    s.ok("ann", "POST", describe, json!({})).await;
    // Groups from the token's claim hold grants too.
    s.grant("namespace", json!(["a"]), "group:eng", "writer")
        .await;
    let eng = token("bob", json!({"groups": ["eng"]}));
    let r =
        s.c.post(format!("{}/v1/table/a%24b%24t/insert", s.base))
            .bearer_auth(&eng)
            .header("content-type", "application/vnd.apache.arrow.stream")
            .body(crate::harness::rows(3, 1))
            .send()
            .await
            .unwrap();
    assert_eq!(r.status(), StatusCode::OK);

    // Lists show what the caller may see: one table's reader sees that
    // table alone, paged over what it sees.
    s.create_table("root", "a%24b%24u").await;
    s.grant("table", json!(["a", "b", "t"]), "tess", "reader")
        .await;
    let listed = s
        .ok(
            "tess",
            "GET",
            "/v1/namespace/a%24b/table/list?limit=1",
            Value::Null,
        )
        .await;
    assert_eq!(listed["tables"], json!(["t"]), "{listed}");
    assert!(
        listed.get("page_token").is_none_or(Value::is_null),
        "{listed}"
    );
    let all = s.ok("tess", "GET", "/v1/table", Value::Null).await;
    assert_eq!(all["tables"], json!(["a$b$t"]), "{all}");
    let everything = s
        .ok("ann", "GET", "/v1/namespace/a%24b/table/list", Value::Null)
        .await;
    assert_eq!(everything["tables"], json!(["t", "u"]), "{everything}");
    let (st, _, _) = s
        .send(
            Some("nobody"),
            "GET",
            "/v1/namespace/a%24b/table/list",
            None,
            None,
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);

    // Grants follow their table: a rename moves them, a drop ends them, and
    // a table made later under the old name starts with none.
    s.grant("table", json!(["a", "b", "u"]), "vic", "reader")
        .await;
    s.ok(
        "root",
        "POST",
        "/v1/table/a%24b%24u/rename",
        json!({"new_table_name": "u2"}),
    )
    .await;
    s.ok("vic", "POST", "/v1/table/a%24b%24u2/describe", json!({}))
        .await;
    s.create_table("root", "a%24b%24u").await;
    let (st, _, _) = s
        .send(
            Some("vic"),
            "POST",
            "/v1/table/a%24b%24u/describe",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(
        st,
        StatusCode::FORBIDDEN,
        "an old name's grant reached a new table"
    );
    s.ok("root", "POST", "/v1/table/a%24b%24u2/drop", json!({}))
        .await;
    s.create_table("root", "a%24b%24u2").await;
    let (st, _, _) = s
        .send(
            Some("vic"),
            "POST",
            "/v1/table/a%24b%24u2/describe",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(
        st,
        StatusCode::FORBIDDEN,
        "a dropped table's grant reached its successor"
    );

    // A forbid policy beats even the server admin's grant.
    let (st, b, _) = s
        .send(
            Some("root"),
            "POST",
            "/v1/table/secret%24t/describe",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(
        (st, b["code"].clone()),
        (StatusCode::FORBIDDEN, json!(15)),
        "{b}"
    );

    // Force overrides protection, never permission.
    s.ok(
        "root",
        "POST",
        "/v1/table/a%24b%24t/protection",
        json!({"protected": true}),
    )
    .await;
    for path in [
        "/v1/table/a%24b%24t/drop?force=true",
        "/v1/namespace/a%24b/drop?force=true",
    ] {
        let (st, b, _) = s
            .send(Some("ann"), "POST", path, Some(json!({})), None)
            .await;
        assert_eq!(
            (st, b["code"].clone()),
            (StatusCode::FORBIDDEN, json!(15)),
            "{path}: {b}"
        );
    }

    // Whoever creates a namespace owns it: it may grant on it, and on
    // nothing above it.
    s.grant("namespace", json!(["a"]), "carol", "writer").await;
    s.ok("carol", "POST", "/v1/namespace/a%24c/create", json!({}))
        .await;
    s.ok(
        "carol",
        "POST",
        "/v1/grants",
        json!({"resource": {"kind": "namespace", "id": ["a", "c"]}, "principal": "dave", "relation": "reader"}),
    )
    .await;
    let (st, _, _) = s
        .send(
            Some("carol"),
            "POST",
            "/v1/grants",
            Some(json!({"resource": {"kind": "namespace", "id": ["a"]}, "principal": "dave", "relation": "reader"})),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    // An exist_ok create of a namespace that stood already owns nothing.
    s.ok(
        "carol",
        "POST",
        "/v1/namespace/a%24b/create",
        json!({"mode": "exist_ok"}),
    )
    .await;
    let (st, _, _) = s
        .send(
            Some("carol"),
            "POST",
            "/v1/grants",
            Some(json!({"resource": {"kind": "namespace", "id": ["a", "b"]}, "principal": "dave", "relation": "reader"})),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
}

/// What opening a server with this one policy file answers.
async fn open_with_policy(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.cedar"), text).unwrap();
    let root = tempfile::tempdir().unwrap();
    let opened = Governance::open(&GovernanceConfig {
        storage: StorageConfig {
            root: root.path().to_string_lossy().into_owned(),
            ..Default::default()
        },
        auth: AuthConfig {
            required: true,
            policy_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    opened.unwrap_err().message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_file_that_does_not_validate_stops_the_server() {
    let message = open_with_policy(
        "permit (principal, action, resource);\n\nforbid (principal, action == Action::\"fly\", resource);\n",
    )
    .await;
    assert!(message.contains("bad.cedar"), "{message}");
    assert!(
        message.contains("fly") && message.contains("line 3"),
        "{message}"
    );
    let message = open_with_policy("permit (principal,\n action resource);\n").await;
    assert!(
        message.contains("bad.cedar") && message.contains("line 2"),
        "{message}"
    );
}

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
            &json!({"sub": "root", "iss": iss, "exp": now() + 60}),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_trail_records_mutations_and_denials() {
    let s = Server::hs256(None).await;
    let since = now() * 1000;
    s.ok("root", "POST", "/v1/namespace/audited/create", json!({}))
        .await;
    let (st, _, headers) = s
        .send(
            Some("mallory"),
            "POST",
            "/v1/namespace/audited/drop",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let request_id = headers["x-request-id"].to_str().unwrap().to_string();
    let listed = s
        .ok(
            "root",
            "GET",
            &format!("/v1/events?since={since}"),
            Value::Null,
        )
        .await;
    let events = listed["events"].as_array().unwrap();
    let created = events
        .iter()
        .find(|e| e["action"] == "create_namespace")
        .expect("the create is recorded");
    assert_eq!(
        (created["principal"].clone(), created["outcome"].clone()),
        (json!("root"), json!("succeeded"))
    );
    assert_eq!(created["resource"]["id"], json!(["audited"]));
    let refused = events
        .iter()
        .find(|e| e["outcome"] == "denied")
        .expect("the denial is recorded");
    assert_eq!(refused["principal"], "mallory");
    assert_eq!(refused["action"], "drop_namespace");
    assert_eq!(refused["code"], 15);
    assert_eq!(refused["request_id"], request_id.as_str());
    // Only admins read the trail.
    let (st, _, _) = s
        .send(Some("mallory"), "GET", "/v1/events", None, None)
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, b, _) = s
        .send(
            Some("root"),
            "GET",
            "/v1/events?since=yesterday",
            None,
            None,
        )
        .await;
    assert_eq!(
        (st, b["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(13))
    );
}

/// A route's request as the gateway builds it: the body, with the path's
/// ids in their fields.
fn request_of(op: &OpDef) -> (serde_json::Map<String, Value>, bytes::Bytes) {
    let (path, body, arrow) = route(op);
    let mut obj = body
        .and_then(|b| b.as_object().cloned())
        .unwrap_or_default();
    let id = if path.contains("m%24made") {
        vec!["m", "made"]
    } else if op.path.starts_with("/v1/namespace/") {
        vec!["m"]
    } else {
        vec!["m", "t"]
    };
    if op.path.contains("{id}") {
        obj.insert("id".into(), json!(id));
    }
    for (param, value) in [
        ("{index_name}", "idx"),
        ("{job_id}", "job"),
        ("{project_id}", "p"),
        ("{warehouse_id}", "default"),
        ("{key_id}", "0123456789abcdef"),
        ("{grant_id}", "0123456789abcdef0123456789abcdef"),
    ] {
        if op.path.contains(param) {
            let name = param.trim_matches(|c| c == '{' || c == '}');
            obj.insert(name.into(), json!(value));
        }
    }
    (obj, arrow.unwrap_or_default())
}

/// The same matrix over gRPC, through the catalog's own gRPC clients:
/// the spec operations with the token in the request's identity (sent as
/// metadata), the control plane with it as call metadata.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auth_matrix_over_grpc() {
    use lance_catalog::grpc::control::GrpcControl;
    use lance_catalog::grpc::GrpcNamespace;
    let s = Server::hs256(None).await;
    s.ok("root", "POST", "/v1/projects", json!({"project_id": "p"}))
        .await;
    s.ok("root", "POST", "/v1/namespace/m/create", json!({}))
        .await;
    s.create_table("root", "m%24t").await;
    s.grant("server", json!([]), "reader", "reader").await;
    let ns = GrpcNamespace::connect(&s.base).await.unwrap();
    let mut wrong = Vec::new();
    for (who, relation) in [
        (None, None),
        (Some("nobody"), None),
        (Some("reader"), Some("reader")),
    ] {
        let mut control = GrpcControl::connect(&s.base).await.unwrap();
        if let Some(w) = who {
            control = control.with_bearer(&token(w, json!({})));
        }
        for op in OPS.iter().chain(CONTROL_OPS) {
            let (mut obj, data) = request_of(op);
            if let Some(w) = who {
                obj.insert(
                    "identity".into(),
                    json!({"auth_token": token(w, json!({}))}),
                );
            }
            let got = lance_catalog::rest::invoke(&ns, &control, op, obj, data).await;
            let code = got.as_ref().err().map(|e| e.code.0).unwrap_or(0);
            let fine = match who {
                None => code == 16,
                Some(_) if allowed(relation, op) => code != 16 && code != 15,
                Some(_) => code == 15,
            };
            if !fine {
                wrong.push(format!("{who:?} {}: {got:?}", op.name));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Grants are per warehouse: owning a table in one warehouse reaches no
/// table of the same id in another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_stay_in_their_warehouse() {
    let (dir, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let gov = Governance::open(&GovernanceConfig {
        storage: StorageConfig {
            root: dir.path().to_string_lossy().into_owned(),
            ..Default::default()
        },
        warehouses: true,
        auth: AuthConfig {
            required: true,
            jwt: Some(JwtConfig {
                secret: Some(SECRET.into()),
                audience: Some("lance".into()),
                ..Default::default()
            }),
            bootstrap_admin: Some("root".into()),
            policy_dir: None,
        },
        ..Default::default()
    })
    .await
    .unwrap();
    let addr = lance_catalog::server::spawn_governed(Arc::new(gov), RestConfig::default())
        .await
        .unwrap();
    let s = Server {
        base: format!("http://{addr}"),
        c: Client::new(),
        _dir: dir,
    };
    s.ok("root", "POST", "/v1/projects", json!({"project_id": "p"}))
        .await;
    s.ok(
        "root",
        "POST",
        "/v1/warehouses",
        json!({"warehouse_id": "w2", "project_id": "p", "root": other.path().to_string_lossy()}),
    )
    .await;
    s.grant("warehouse", json!(["w2"]), "mal", "writer").await;
    // mal makes (and owns) a root-level table in w2 ...
    let (st, _, _) = s
        .send(
            Some("mal"),
            "POST",
            "/v1/table/payroll/create",
            None,
            Some(crate::harness::rows(0, 1)),
        )
        .await;
    assert_eq!(
        st,
        StatusCode::FORBIDDEN,
        "mal is no writer of the default warehouse"
    );
    let (st, b, _) = s
        .send(
            Some("mal"),
            "POST",
            "/warehouses/w2/v1/table/payroll/create",
            None,
            Some(crate::harness::rows(0, 1)),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{b}");
    // ... which reaches nothing of the same id in the default warehouse.
    s.create_table("root", "payroll").await;
    let (st, _, _) = s
        .send(
            Some("mal"),
            "POST",
            "/v1/table/payroll/describe",
            Some(json!({})),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    s.ok(
        "mal",
        "POST",
        "/warehouses/w2/v1/table/payroll/describe",
        json!({}),
    )
    .await;
    // A grant names something that stands.
    let (st, b, _) = s
        .send(
            Some("root"),
            "POST",
            "/v1/grants",
            Some(json!({"resource": {"kind": "warehouse", "id": ["w9"]}, "principal": "mal", "relation": "admin"})),
            None,
        )
        .await;
    assert_eq!(
        (st, b["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(13)),
        "{b}"
    );
}
