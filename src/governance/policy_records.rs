//! Maintenance policy records on the control root and their resolution.
//!
//! A record per project (by its id), namespace or table (by its real id,
//! so a rename keeps it and a name taken over by a new object does not
//! inherit it), under `<control>/maintenance_policy/<level>/<key>`.
//! Resolution is winner-takes-all (see `api/policy.rs`): the first record
//! found, innermost first, supplies every field; what it leaves unset is
//! the server's default.

use std::collections::BTreeMap;

use super::duration::{format_duration, parse_duration};
use super::Governance;
use crate::api::policy::*;
use crate::error::{CatalogError, CatalogResult, Code};
use crate::records::{now_ms, Records};

/// The server's values for fields a winning record leaves unset (the
/// trash's two are the `--trash-*` flags, kept in `TrashConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyDefaults {
    pub version_retention_s: u64,
    pub versions_to_retain: u64,
    pub compaction: bool,
    pub interval_s: u64,
    pub target_rows_per_fragment: u64,
}

impl Default for PolicyDefaults {
    fn default() -> Self {
        Self {
            version_retention_s: 7 * 86_400,
            versions_to_retain: 10,
            compaction: true,
            interval_s: 86_400,
            // Lance's own compaction target.
            target_rows_per_fragment: 1024 * 1024,
        }
    }
}

/// The shortest interval a round may have (0 would make every pass a
/// round; a round only does what a table needs, so shorter is cheap).
const MIN_INTERVAL_S: u64 = 1;

/// Refuse a record that could not be applied, naming the field.
pub fn check_fields(f: &PolicyFields) -> CatalogResult<()> {
    let bad = |field: &str, why: String| CatalogError::invalid(format!("{field}: {why}"));
    if let Some(v) = &f.version_retention {
        parse_duration(v).map_err(|e| bad("version_retention", e))?;
    }
    if let Some(v) = &f.trash_grace {
        parse_duration(v).map_err(|e| bad("trash_grace", e))?;
    }
    if let Some(v) = &f.interval {
        let s = parse_duration(v).map_err(|e| bad("interval", e))?;
        if s < MIN_INTERVAL_S {
            return Err(bad("interval", format!("{v:?} must be at least 1s")));
        }
    }
    if f.versions_to_retain == Some(0) {
        return Err(bad(
            "versions_to_retain",
            "must be at least 1 (the latest version is always kept)".into(),
        ));
    }
    if let Some(n) = f.target_rows_per_fragment {
        if n == 0 || n > u64::from(u32::MAX) {
            return Err(bad(
                "target_rows_per_fragment",
                format!(
                    "{n} is not between 1 and {} (a fragment's rows are addressed by 32 bits)",
                    u32::MAX
                ),
            ));
        }
    }
    Ok(())
}

/// A record's place: its level and key (a real id or a project id).
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub level: PolicyLevel,
    /// The object's id now.
    pub id: Vec<String>,
    /// Its record key; none for an object that cannot have one (a table
    /// from before real ids, never given one).
    pub key: Option<String>,
}

impl Candidate {
    pub(super) fn project(project: &str) -> Self {
        Self {
            level: PolicyLevel::Project,
            id: vec![project.to_string()],
            key: Some(project.to_string()),
        }
    }
}

fn store(records: &Records) -> Records {
    records.under("maintenance_policy")
}

impl super::Registry {
    /// The record at `level`/`key`, if there is one.
    pub(super) async fn policy_record(
        &self,
        level: PolicyLevel,
        key: &str,
    ) -> CatalogResult<Option<PolicyRecord>> {
        Ok(store(&self.records)
            .get::<PolicyRecord>(level.as_str(), key)
            .await?
            .map(|v| v.value))
    }

    /// Write `record` as the one at `level`/`key`, whether or not there
    /// was one (last writer wins).
    pub(super) async fn put_policy_record(
        &self,
        key: &str,
        record: &PolicyRecord,
    ) -> CatalogResult<()> {
        self.change_policy_record(record.level, key, |_| Some(record.clone()))
            .await
    }

    /// Change the record at `level`/`key` with `change`, which sees the
    /// latest one (none: there is none) and answers the new one (none:
    /// leave it). A lost race re-reads and re-applies.
    pub(super) async fn change_policy_record<F>(
        &self,
        level: PolicyLevel,
        key: &str,
        change: F,
    ) -> CatalogResult<()>
    where
        F: FnMut(Option<PolicyRecord>) -> Option<PolicyRecord>,
    {
        store(&self.records)
            .upsert(level.as_str(), key, change)
            .await
            .map(|_| ())
    }

    /// Set the trash fields of project `id`'s record (the project's own
    /// `trash_grace` and `purge_expired_trash`: a shorthand for them).
    pub(super) async fn set_project_trash(
        &self,
        id: &str,
        grace: Option<String>,
        purge: Option<bool>,
    ) -> CatalogResult<()> {
        if grace.is_none() && purge.is_none() {
            return Ok(());
        }
        self.change_policy_record(PolicyLevel::Project, id, |now| {
            let mut r = now.unwrap_or_else(|| PolicyRecord {
                level: PolicyLevel::Project,
                id: vec![id.to_string()],
                object_id: None,
                warehouse: None,
                fields: PolicyFields::default(),
                updated_by: None,
                updated_at_ms: 0,
            });
            if grace.is_some() {
                r.fields.trash_grace = grace.clone();
            }
            if purge.is_some() {
                r.fields.purge_expired_trash = purge;
            }
            r.updated_at_ms = now_ms();
            Some(r)
        })
        .await
    }

    /// A project as answered: its trash fields are its policy record's.
    pub(super) async fn shown_project(
        &self,
        mut p: crate::api::hierarchy::Project,
    ) -> CatalogResult<crate::api::hierarchy::Project> {
        let own = self
            .policy_record(PolicyLevel::Project, &p.project_id)
            .await?
            .map(|r| r.fields)
            .unwrap_or_default();
        p.trash_grace = own.trash_grace;
        p.purge_expired_trash = own.purge_expired_trash;
        Ok(p)
    }

    /// Fold the trash fields projects kept on their own record (before
    /// policy records) into their policy records, once: a field the policy
    /// record sets already stays. Safe on every replica at once.
    pub(super) async fn migrate_project_trash(&self) -> CatalogResult<usize> {
        use crate::api::hierarchy::Project;
        let mut n = 0;
        for (id, p) in self
            .records
            .all::<Project>(super::registry::PROJECT)
            .await?
        {
            if p.trash_grace.is_none() && p.purge_expired_trash.is_none() {
                continue;
            }
            let (grace, purge) = (p.trash_grace.clone(), p.purge_expired_trash);
            self.change_policy_record(PolicyLevel::Project, &id, |now| {
                let mut r = now.unwrap_or_else(|| PolicyRecord {
                    level: PolicyLevel::Project,
                    id: vec![id.clone()],
                    object_id: None,
                    warehouse: None,
                    fields: PolicyFields::default(),
                    updated_by: Some("migrated from the project's own settings".into()),
                    updated_at_ms: now_ms(),
                });
                r.fields.trash_grace = r.fields.trash_grace.take().or(grace.clone());
                r.fields.purge_expired_trash = r.fields.purge_expired_trash.or(purge);
                Some(r)
            })
            .await?;
            self.records
                .update(
                    super::registry::PROJECT,
                    &id,
                    Code::PROJECT_NOT_FOUND,
                    |mut p: Project| {
                        p.trash_grace = None;
                        p.purge_expired_trash = None;
                        Ok(p)
                    },
                )
                .await?;
            n += 1;
        }
        Ok(n)
    }

    /// Remove the records of destroyed tables and namespaces (`reals`).
    pub(super) async fn forget_object_policies(&self, reals: &[String]) -> CatalogResult<usize> {
        if reals.is_empty() {
            return Ok(0);
        }
        let reals: std::collections::HashSet<&String> = reals.iter().collect();
        let records = store(&self.records);
        let mut n = 0;
        for level in [PolicyLevel::Table, PolicyLevel::Namespace] {
            for key in records.listed_ids(level.as_str()).await? {
                if reals.contains(&key) && self.delete_policy_record(level, &key).await? {
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// Every policy record, by level and key (the scheduler reads them once
    /// a pass instead of once a table).
    pub(super) async fn every_policy_record(
        &self,
    ) -> CatalogResult<std::collections::HashMap<(PolicyLevel, String), PolicyRecord>> {
        let records = store(&self.records);
        let mut out = std::collections::HashMap::new();
        for level in [
            PolicyLevel::Table,
            PolicyLevel::Namespace,
            PolicyLevel::Project,
        ] {
            for (key, r) in records.all::<PolicyRecord>(level.as_str()).await? {
                out.insert((level, key), r);
            }
        }
        Ok(out)
    }

    /// Remove the record at `level`/`key`; false when there was none.
    pub(super) async fn delete_policy_record(
        &self,
        level: PolicyLevel,
        key: &str,
    ) -> CatalogResult<bool> {
        store(&self.records)
            .delete::<PolicyRecord, _>(level.as_str(), key, |_| Ok(()))
            .await
    }
}

impl Governance {
    /// The server's policy: what applies where no record wins.
    pub(super) fn server_policy(&self) -> Policy {
        let d = self.policy_defaults;
        Policy {
            version_retention: format_duration(d.version_retention_s),
            versions_to_retain: d.versions_to_retain,
            compaction: d.compaction,
            interval: format_duration(d.interval_s),
            target_rows_per_fragment: d.target_rows_per_fragment,
            purge_expired_trash: self.trash.purge_expired,
            trash_grace: format_duration(self.trash.grace_s),
        }
    }

    /// The effective policy of the object `asked` (level and id), from
    /// `chain`: its candidates, innermost first (the object itself first).
    pub(super) async fn resolve_policy(
        &self,
        asked: (PolicyLevel, Vec<String>),
        chain: &[Candidate],
    ) -> CatalogResult<EffectivePolicy> {
        let mut won = None;
        for c in chain {
            let Some(key) = &c.key else { continue };
            if let Some(r) = self.registry.policy_record(c.level, key).await? {
                won = Some((c, r));
                break;
            }
        }
        Ok(self.compose_policy(asked, chain, won))
    }

    /// The effective policy of `asked` once the winner of its `chain` is
    /// known (`won`: the candidate and its record; none: the server's).
    pub(super) fn compose_policy(
        &self,
        asked: (PolicyLevel, Vec<String>),
        chain: &[Candidate],
        won: Option<(&Candidate, PolicyRecord)>,
    ) -> EffectivePolicy {
        let server = self.server_policy();
        let Some((c, record)) = won else {
            return EffectivePolicy {
                level: asked.0,
                id: asked.1,
                winner: PolicyWinner {
                    level: PolicyLevel::Server,
                    id: Vec::new(),
                    object_id: None,
                    updated_by: None,
                    updated_at_ms: None,
                },
                sources: sources(&PolicyFields::default(), PolicyLevel::Server, false),
                policy: server,
                own: None,
            };
        };
        let here = chain
            .first()
            .is_some_and(|first| first.key == c.key && first.level == c.level);
        // Durations as the server writes them (`90` -> `90s`, ` 7d` -> `7d`):
        // what a task's parameters and every answer read.
        let canonical = |v: &str| parse_duration(v).map_or(v.to_string(), format_duration);
        let f = &PolicyFields {
            version_retention: record.fields.version_retention.as_deref().map(canonical),
            interval: record.fields.interval.as_deref().map(canonical),
            trash_grace: record.fields.trash_grace.as_deref().map(canonical),
            ..record.fields.clone()
        };
        let policy = Policy {
            version_retention: f
                .version_retention
                .clone()
                .unwrap_or(server.version_retention),
            versions_to_retain: f.versions_to_retain.unwrap_or(server.versions_to_retain),
            compaction: f.compaction.unwrap_or(server.compaction),
            interval: f.interval.clone().unwrap_or(server.interval),
            target_rows_per_fragment: f
                .target_rows_per_fragment
                .unwrap_or(server.target_rows_per_fragment),
            purge_expired_trash: f.purge_expired_trash.unwrap_or(server.purge_expired_trash),
            trash_grace: f.trash_grace.clone().unwrap_or(server.trash_grace),
        };
        EffectivePolicy {
            level: asked.0,
            id: asked.1,
            winner: PolicyWinner {
                level: c.level,
                id: c.id.clone(),
                object_id: record.object_id.clone(),
                updated_by: record.updated_by.clone(),
                updated_at_ms: Some(record.updated_at_ms),
            },
            sources: sources(f, c.level, here),
            own: here.then(|| record.fields.clone()),
            policy,
        }
    }

    /// Write the own record of the object at the head of `chain` and
    /// answer its effective policy (now that record).
    pub(super) async fn set_policy(
        &self,
        asked: (PolicyLevel, Vec<String>),
        chain: &[Candidate],
        fields: PolicyFields,
        warehouse: Option<String>,
        by: Option<String>,
    ) -> CatalogResult<EffectivePolicy> {
        check_fields(&fields)?;
        let own = chain
            .first()
            .and_then(|c| c.key.clone().map(|k| (c, k)))
            .ok_or_else(|| CatalogError::internal("a policy was set on an object without a key"))?;
        let record = PolicyRecord {
            level: own.0.level,
            id: own.0.id.clone(),
            object_id: (own.0.level != PolicyLevel::Project).then(|| own.1.clone()),
            warehouse,
            fields,
            updated_by: by,
            updated_at_ms: now_ms(),
        };
        self.registry.put_policy_record(&own.1, &record).await?;
        self.resolve_policy(asked, chain).await
    }

    /// The candidates of a table or namespace `id` of `warehouse`: the
    /// object itself (`kind`), its namespaces innermost first, its
    /// project. Answers the object's real id too (none: it has none yet).
    pub(super) async fn object_chain(
        &self,
        route: &super::Route,
        level: PolicyLevel,
        id: &[String],
    ) -> CatalogResult<Vec<Candidate>> {
        let project = self.warehouse_project(&route.warehouse).await?;
        self.object_chain_in(route, level, id, &project).await
    }

    /// [`object_chain`](Self::object_chain) with the route's project known.
    pub(super) async fn object_chain_in(
        &self,
        route: &super::Route,
        level: PolicyLevel,
        id: &[String],
        project: &str,
    ) -> CatalogResult<Vec<Candidate>> {
        let kind = match level {
            PolicyLevel::Table => "table",
            _ => "namespace",
        };
        let mut wanted = vec![(kind, id.to_vec())];
        let mut own_level = vec![level];
        for n in (1..id.len()).rev() {
            wanted.push(("namespace", id[..n].to_vec()));
            own_level.push(PolicyLevel::Namespace);
        }
        let reals = route.catalog.object_ids(&wanted).await?;
        let mut chain: Vec<Candidate> = wanted
            .into_iter()
            .zip(reals)
            .zip(own_level)
            .map(|(((_, id), key), level)| Candidate { level, id, key })
            .collect();
        chain.push(Candidate::project(project));
        Ok(chain)
    }
}

/// Every field's source: set here (the winner is the asked object's own
/// record and sets it), else inherited, from the winner or the server.
fn sources(f: &PolicyFields, winner: PolicyLevel, here: bool) -> BTreeMap<String, FieldSource> {
    let given = [
        ("version_retention", f.version_retention.is_some()),
        ("versions_to_retain", f.versions_to_retain.is_some()),
        ("compaction", f.compaction.is_some()),
        ("interval", f.interval.is_some()),
        (
            "target_rows_per_fragment",
            f.target_rows_per_fragment.is_some(),
        ),
        ("purge_expired_trash", f.purge_expired_trash.is_some()),
        ("trash_grace", f.trash_grace.is_some()),
    ];
    given
        .into_iter()
        .map(|(name, set)| {
            let source = match (set, here) {
                (true, true) => FieldSource {
                    state: "set_here".into(),
                    from: winner,
                },
                (true, false) => FieldSource {
                    state: "inherited".into(),
                    from: winner,
                },
                (false, _) => FieldSource {
                    state: "inherited".into(),
                    from: PolicyLevel::Server,
                },
            };
            (name.to_string(), source)
        })
        .collect()
}
