//! A property test of "the object's identity, not its name, decides":
//! random sequences of create, drop (into trash), undrop, rename, re-create
//! and grants, by the admin and by principals with random grants, run
//! against the real server beside a model that tracks objects by identity.
//! After every step each principal's read (describe) of every standing
//! table, and one random write, must be exactly what its grants on that
//! object and its namespace allow: never more (a grant reaching an object
//! it was not given on), never less.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::Server;

const PRINCIPALS: [&str; 3] = ["p1", "p2", "p3"];
const NAMESPACES: [&str; 2] = ["a", "b"];
const NAMES: [&str; 3] = ["t1", "t2", "t3"];

/// A small deterministic generator (xorshift64*): the seed reproduces a run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// What a grant is on, in the model: an object (by the model's own
/// identity) or a namespace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum On {
    Object(u32),
    Namespace(&'static str),
}

#[derive(Debug, Default)]
struct Model {
    next: u32,
    /// (namespace, name) -> object.
    standing: BTreeMap<(&'static str, &'static str), u32>,
    /// Trash entries: trash id -> (object, namespace, name).
    trash: BTreeMap<String, (u32, &'static str, &'static str)>,
    /// (principal, on, relation).
    grants: BTreeSet<(&'static str, On, &'static str)>,
}

impl Model {
    fn relations(&self, p: &str, ns: &str, obj: u32) -> Vec<&'static str> {
        self.grants
            .iter()
            .filter(|(who, on, _)| {
                *who == p && (*on == On::Object(obj) || *on == On::Namespace(leak(ns)))
            })
            .map(|(_, _, r)| *r)
            .collect()
    }
    fn reads(&self, p: &str, ns: &str, obj: u32) -> bool {
        !self.relations(p, ns, obj).is_empty()
    }
    fn writes(&self, p: &str, ns: &str, obj: u32) -> bool {
        self.relations(p, ns, obj)
            .iter()
            .any(|r| matches!(*r, "writer" | "admin"))
    }
    fn creates_in(&self, p: &str, ns: &str) -> bool {
        self.grants
            .iter()
            .any(|(who, on, r)| *who == p && *on == On::Namespace(leak(ns)) && *r == "writer")
    }
    fn free(&self, rng: &mut Rng) -> Option<(&'static str, &'static str)> {
        let free: Vec<_> = NAMESPACES
            .iter()
            .flat_map(|ns| NAMES.iter().map(move |n| (*ns, *n)))
            .filter(|k| !self.standing.contains_key(k))
            .collect();
        (!free.is_empty()).then(|| *rng.pick(&free))
    }
    fn some_standing(&self, rng: &mut Rng) -> Option<((&'static str, &'static str), u32)> {
        let all: Vec<_> = self.standing.iter().map(|(k, v)| (*k, *v)).collect();
        (!all.is_empty()).then(|| *rng.pick(&all))
    }
}

/// The model's namespaces are the constants; this maps a `&str` back.
fn leak(ns: &str) -> &'static str {
    NAMESPACES.iter().find(|n| **n == ns).copied().unwrap_or("")
}

/// A principal's name as the model keeps it.
fn who_static(who: &str) -> &'static str {
    PRINCIPALS
        .iter()
        .find(|p| **p == who)
        .copied()
        .unwrap_or("")
}

fn path(ns: &str, name: &str) -> String {
    format!("{ns}%24{name}")
}

impl Server {
    async fn call(&self, who: &str, method: &str, path: &str, body: Value) -> (StatusCode, Value) {
        let (st, b, _) = self.send(Some(who), method, path, Some(body), None).await;
        (st, b)
    }
    async fn create_as(&self, who: &str, ns: &str, name: &str) -> StatusCode {
        let (st, _, _) = self
            .send(
                Some(who),
                "POST",
                &format!("/v1/table/{}/create", path(ns, name)),
                None,
                Some(crate::harness::rows(0, 1)),
            )
            .await;
        st
    }
}

/// One run of `steps` random steps from `seed`.
async fn run(seed: u64, steps: usize) {
    let s = Server::open(|c| c.trash = super::holes::GRACE).await;
    s.namespaces(&NAMESPACES).await;
    let mut m = Model::default();
    let mut rng = Rng(seed | 1);
    let mut log = Vec::new();
    for step in 0..steps {
        let what = rng.below(8);
        let p = *rng.pick(&PRINCIPALS);
        match what {
            // Someone creates a table (the admin, or a principal, allowed
            // exactly when it writes the namespace); its creator owns it.
            0 | 1 => {
                let Some((ns, name)) = m.free(&mut rng) else {
                    continue;
                };
                let who = if what == 0 { "root" } else { p };
                let st = s.create_as(who, ns, name).await;
                let allowed = who == "root" || m.creates_in(who, ns);
                log.push(format!("{step}: {who} creates {ns}${name}: {st}"));
                assert_eq!(st == StatusCode::OK, allowed, "seed {seed}: {log:#?}");
                if allowed {
                    m.next += 1;
                    m.standing.insert((ns, name), m.next);
                    if who != "root" {
                        m.grants
                            .insert((who_static(who), On::Object(m.next), "admin"));
                    }
                }
            }
            // The admin grants on a standing table or a namespace.
            2 => {
                let relation = *rng.pick(&["reader", "writer"]);
                let (kind, id, on) = match (rng.below(3), m.some_standing(&mut rng)) {
                    (0, _) | (_, None) => {
                        let ns = *rng.pick(&NAMESPACES);
                        ("namespace", json!([ns]), On::Namespace(ns))
                    }
                    (_, Some(((ns, name), obj))) => ("table", json!([ns, name]), On::Object(obj)),
                };
                s.grant(kind, id.clone(), p, relation).await;
                log.push(format!("{step}: root grants {p} {relation} on {kind} {id}"));
                m.grants.insert((p, on, relation));
            }
            // A drop into trash, by whoever may write the table.
            3 => {
                let Some(((ns, name), obj)) = m.some_standing(&mut rng) else {
                    continue;
                };
                let who = if rng.below(2) == 0 { "root" } else { p };
                let (st, b) = s
                    .call(
                        who,
                        "POST",
                        &format!("/v1/table/{}/drop", path(ns, name)),
                        json!({}),
                    )
                    .await;
                let allowed = who == "root" || m.writes(who, ns, obj);
                log.push(format!("{step}: {who} drops {ns}${name} (#{obj}): {st}"));
                assert_eq!(st == StatusCode::OK, allowed, "seed {seed}: {b} {log:#?}");
                if allowed {
                    let trash_id = b["transaction_id"].as_str().unwrap().to_string();
                    m.standing.remove(&(ns, name));
                    m.trash.insert(trash_id, (obj, ns, name));
                }
            }
            // The admin undrops an entry: back under its name, unless the
            // name is taken.
            4 => {
                let entries: Vec<_> = m.trash.iter().map(|(k, v)| (k.clone(), *v)).collect();
                if entries.is_empty() {
                    continue;
                }
                let (trash_id, (obj, ns, name)) = rng.pick(&entries).clone();
                let (st, b) = s
                    .call(
                        "root",
                        "POST",
                        &format!("/v1/table/{}/undrop", path(ns, name)),
                        json!({"trash_id": trash_id}),
                    )
                    .await;
                let taken = m.standing.contains_key(&(ns, name));
                log.push(format!("{step}: root undrops #{obj} as {ns}${name}: {st}"));
                match taken {
                    true => assert_eq!(st, StatusCode::CONFLICT, "seed {seed}: {b} {log:#?}"),
                    false => {
                        assert_eq!(st, StatusCode::OK, "seed {seed}: {b} {log:#?}");
                        m.trash.remove(&trash_id);
                        m.standing.insert((ns, name), obj);
                    }
                }
            }
            // The admin renames a table, maybe into the other namespace.
            5 => {
                let Some(((ns, name), obj)) = m.some_standing(&mut rng) else {
                    continue;
                };
                let Some((to_ns, to_name)) = m.free(&mut rng) else {
                    continue;
                };
                let (st, b) = s
                    .call(
                        "root",
                        "POST",
                        &format!("/v1/table/{}/rename", path(ns, name)),
                        json!({"new_namespace_id": [to_ns], "new_table_name": to_name}),
                    )
                    .await;
                log.push(format!(
                    "{step}: root renames {ns}${name} (#{obj}) to {to_ns}${to_name}: {st}"
                ));
                assert_eq!(st, StatusCode::OK, "seed {seed}: {b} {log:#?}");
                m.standing.remove(&(ns, name));
                m.standing.insert((to_ns, to_name), obj);
            }
            // A principal writes to a table: allowed exactly when it writes
            // that object or its namespace.
            _ => {
                let Some(((ns, name), obj)) = m.some_standing(&mut rng) else {
                    continue;
                };
                let (st, b, _) = s
                    .send(
                        Some(p),
                        "POST",
                        &format!("/v1/table/{}/insert", path(ns, name)),
                        None,
                        Some(crate::harness::rows(1, 1)),
                    )
                    .await;
                log.push(format!(
                    "{step}: {p} inserts into {ns}${name} (#{obj}): {st}"
                ));
                assert_eq!(
                    st == StatusCode::OK,
                    m.writes(p, ns, obj),
                    "seed {seed}: {b} {log:#?}"
                );
            }
        }
        // Every principal reads exactly what its grants on each standing
        // object (and its namespace) allow.
        for who in PRINCIPALS {
            for ((ns, name), obj) in &m.standing {
                let (st, b) = s
                    .call(
                        who,
                        "POST",
                        &format!("/v1/table/{}/describe", path(ns, name)),
                        json!({}),
                    )
                    .await;
                let want = m.reads(who, ns, *obj);
                assert_eq!(
                    st == StatusCode::OK,
                    want,
                    "seed {seed}: {who} describes {ns}${name} (#{obj}): {st} {b}\n{log:#?}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_objects_identity_decides_not_its_name() {
    let seeds: Vec<u64> = match std::env::var("LANCE_CATALOG_MODEL_SEED") {
        Ok(s) => vec![s.parse().expect("a numeric seed")],
        // 11 and 14 each found a grant reaching another object in the
        // name-bound grants this test was written against.
        Err(_) => vec![11, 14, 0x5eed_0001],
    };
    let steps = std::env::var("LANCE_CATALOG_MODEL_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    for seed in seeds {
        run(seed, steps).await;
    }
}
