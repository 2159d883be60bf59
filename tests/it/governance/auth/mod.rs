//! Authentication and authorization over the real server (the auth matrix
//! is `matrix.rs`): inheritance, a `forbid` policy
//! file, force without permission, JWT failures, RS256 against a JWKS
//! served on loopback, and an API key revoked mid-test.

use lance_catalog::auth::JwtConfig;
use lance_catalog::governance::{AuthConfig, Governance, GovernanceConfig};
use lance_catalog::StorageConfig;
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};
use tempfile::TempDir;

mod credentials;
mod holes;
mod identity_model;
mod matrix;
mod trash;
mod users;
mod vending;

use crate::harness::{now, token, SECRET};

struct Server {
    base: String,
    c: Client,
    _dir: TempDir,
}

impl Server {
    async fn start(policy_dir: Option<&std::path::Path>, jwt: JwtConfig) -> Self {
        Self::start_with(policy_dir, jwt, Default::default()).await
    }

    async fn start_with(
        policy_dir: Option<&std::path::Path>,
        jwt: JwtConfig,
        trash: lance_catalog::governance::TrashConfig,
    ) -> Self {
        Self::open(|config| {
            config.trash = trash;
            config.auth.jwt = Some(jwt);
            config.auth.policy_dir = policy_dir.map(|p| p.to_path_buf());
        })
        .await
    }

    /// A server with `--auth required`, `root` its admin, HS256 tokens of
    /// audience `lance`, a fresh root, and whatever `change` sets.
    async fn open(change: impl FnOnce(&mut GovernanceConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = Self::serve(dir.path(), change).await;
        Self {
            base,
            c: Client::new(),
            _dir: dir,
        }
    }

    /// Another replica over this server's root, set up as `change` says.
    async fn replica(&self, change: impl FnOnce(&mut GovernanceConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self {
            base: Self::serve(self._dir.path(), change).await,
            c: Client::new(),
            _dir: dir,
        }
    }

    /// Serve a governed catalog over `dir`'s root; its base URL.
    async fn serve(dir: &std::path::Path, change: impl FnOnce(&mut GovernanceConfig)) -> String {
        crate::harness::serve_governed(dir, change).await
    }

    /// The storage root's directory.
    fn root(&self) -> std::path::PathBuf {
        self._dir.path().join("data")
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
            req = if let Some(key) = who.strip_prefix("key:") {
                req.header("x-api-key", key)
            } else if let Some(user) = who.strip_prefix("basic:") {
                // `basic:<name>:<password>`
                let (name, password) = user.split_once(':').unwrap();
                req.basic_auth(name, Some(password))
            } else if let Some(raw) = who.strip_prefix("bearer:") {
                req.bearer_auth(raw)
            } else {
                req.bearer_auth(token(who, json!({})))
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

/// Grants are per warehouse: owning a table in one warehouse reaches no
/// table of the same id in another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_stay_in_their_warehouse() {
    let (dir, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = Server {
        base: crate::harness::serve_governed(dir.path(), |c| c.warehouses = true).await,
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
