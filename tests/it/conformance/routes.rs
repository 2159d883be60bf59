//! Route coverage: the inventory (src/api/inventory.rs) is the spec's list of operations,
//! and every one of them is served with its method and path.

use lance_catalog::rest::{RestConfig, OPS};
use reqwest::Client;
use serde_json::Value;

use crate::harness::Env;

/// (operationId, METHOD, path) from the spec YAML, read line by line.
fn spec_operations(yaml: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let (mut path, mut method) = (String::new(), String::new());
    let mut in_paths = false;
    for line in yaml.lines() {
        if line == "paths:" {
            in_paths = true;
            continue;
        }
        if in_paths && !line.starts_with(' ') && !line.is_empty() {
            in_paths = false;
        }
        if !in_paths {
            continue;
        }
        if let Some(p) = line.strip_prefix("  ").filter(|l| l.starts_with('/')) {
            path = p.trim_end_matches(':').to_string();
        } else if let Some(m) = line.strip_prefix("    ").filter(|l| !l.starts_with(' ')) {
            method = m.trim_end_matches(':').to_ascii_uppercase();
        } else if let Some(id) = line.trim().strip_prefix("operationId:") {
            out.push((id.trim().to_string(), method.clone(), path.clone()));
        }
    }
    out
}

/// The spec this inventory is pinned to: lance-namespace 0.11.1's OpenAPI
/// file, by SHA-256. The project does not carry a copy (the file lives in
/// the workspace's `shared/spec/`, beside every checkout CI makes); a
/// different file there is drift, and fails here.
const SPEC_SHA256: &str = "83ec9abc3a4ac24da16345829526a7e2e34cf6c9dd3bdc05a57043e27d208966";

#[test]
fn inventory_matches_the_spec_file() {
    let spec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/spec/lance-namespace-0.11.1.yaml"
    );
    let yaml = match std::fs::read_to_string(spec) {
        Ok(yaml) => yaml,
        // CI always has the spec beside the checkout: its absence there is
        // a failure, not a reason to check less.
        Err(e) if std::env::var_os("CI").is_some() => panic!("{spec}: {e}"),
        Err(_) => {
            eprintln!("{spec} is absent (outside CI): checking the inventory alone");
            assert_eq!(OPS.len(), 54);
            return;
        }
    };
    use sha2::Digest;
    let digest = sha2::Sha256::digest(yaml.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, SPEC_SHA256, "{spec} is not the pinned spec");
    let mut from_spec = spec_operations(&yaml);
    let mut ours: Vec<(String, String, String)> = OPS
        .iter()
        .map(|o| (o.name.to_string(), o.method.to_string(), o.path.to_string()))
        .collect();
    from_spec.sort();
    ours.sort();
    assert_eq!(from_spec.len(), 54);
    assert_eq!(ours, from_spec);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_is_served() {
    let env = Env::over_rest_with(RestConfig::default()).await;
    let base = env.base.clone().unwrap();
    let c = Client::new();
    for op in OPS.iter() {
        let path = op
            .path
            .replace("{id}", "x%24y")
            .replace("{index_name}", "idx");
        let resp = c
            .request(
                reqwest::Method::from_bytes(op.method.as_bytes()).unwrap(),
                format!("{base}{path}"),
            )
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let body: Value = if status == 200 {
            Value::Null
        } else {
            resp.json().await.unwrap_or(Value::Null)
        };
        let routed = !(status == 405 || (status == 404 && body["code"] == 13));
        assert!(
            routed,
            "{} {} is not served: {status} {body}",
            op.method, op.path
        );
        assert!(
            status < 500,
            "{} {} answered {status}: {body}",
            op.method,
            op.path
        );
    }
}
