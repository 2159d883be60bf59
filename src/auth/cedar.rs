//! The Cedar authorizer: "policies decide, and grants feed them". Every
//! operation is a Cedar action in one action group; the shipped policies
//! turn the relations a principal holds (its grants on the resource or
//! anything above it, for itself or its groups) into permits, and an
//! operator's own policy files (`--policy-dir`) are added beside them,
//! validated against the shipped schema at start.

use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;

use cedar_policy::{
    Authorizer as Engine, Context, Decision, Entities, Entity, EntityId, EntityTypeName, EntityUid,
    PolicySet, Request, RestrictedExpression, Schema, ValidationMode, Validator,
};

use crate::api::Group;
use crate::error::{CatalogError, CatalogResult, Code};

/// The group of an action (an operation's method): its inventory row's.
/// An action that is neither an operation nor an extra one is
/// administrative, so a forgotten one fails closed.
pub fn group_of(action: &str) -> &'static str {
    crate::api::by_action(action)
        .map(|op| op.group)
        .unwrap_or(Group::Administer)
        .as_str()
}

/// The relations that grant each group.
pub const SHIPPED_POLICIES: &str = r#"
@id("readers read")
permit (principal, action in [Action::"read_metadata", Action::"read_data"], resource)
when { context.relations.containsAny(["reader", "writer", "admin"]) };

@id("writers write, create and drop")
permit (principal, action in [Action::"write_data", Action::"create_child", Action::"drop"], resource)
when { context.relations.containsAny(["writer", "admin"]) };

@id("admins manage grants and administer")
permit (principal, action in [Action::"manage_grants", Action::"administer"], resource)
when { context.relations.contains("admin") };

@id("admins and registrars register existing bytes")
permit (principal, action in [Action::"register"], resource)
when { context.relations.containsAny(["admin", "registrar"]) };
"#;

/// The Cedar schema: the hierarchy's entities and one action per
/// operation, each in its group.
pub fn schema_text(actions: &[&str]) -> String {
    let mut s = String::from(
        "entity Group;\n\
         entity User in [Group];\n\
         entity Server;\n\
         entity Project in [Server];\n\
         entity Warehouse in [Project];\n\
         entity Namespace in [Namespace, Warehouse];\n\
         entity Table in [Namespace, Warehouse];\n",
    );
    for g in Group::ALL {
        s.push_str(&format!("action \"{}\";\n", g.as_str()));
    }
    let mut seen = HashSet::new();
    for a in actions {
        if seen.insert(*a) {
            s.push_str(&format!(
                "action \"{a}\" in [\"{}\"] appliesTo {{ principal: [User], resource: [Server, Project, Warehouse, Namespace, Table], context: {{ relations: Set<String> }} }};\n",
                group_of(a)
            ));
        }
    }
    s
}

/// A resource and everything above it, nearest first: `(type, id)`.
#[derive(Debug, Clone)]
pub struct Chain(pub Vec<(&'static str, String)>);

/// The Cedar engine with its schema and policies.
#[derive(Debug)]
pub struct CedarAuthorizer {
    schema: Schema,
    policies: PolicySet,
    engine: Engine,
}

fn uid(kind: &str, id: &str) -> CatalogResult<EntityUid> {
    let t = EntityTypeName::from_str(kind)
        .map_err(|e| CatalogError::internal(format!("entity type {kind}: {e}")))?;
    Ok(EntityUid::from_type_name_and_id(t, EntityId::new(id)))
}

impl CedarAuthorizer {
    /// The shipped policies and every `*.cedar` file of `policy_dir`, all
    /// validated against the schema; an invalid file is an error naming it.
    pub fn new(actions: &[&str], policy_dir: Option<&Path>) -> Result<Self, String> {
        let (schema, _) = Schema::from_cedarschema_str(&schema_text(actions))
            .map_err(|e| format!("the shipped Cedar schema does not parse: {e}"))?;
        let mut sources = vec![(
            "(shipped policies)".to_string(),
            SHIPPED_POLICIES.to_string(),
        )];
        if let Some(dir) = policy_dir {
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .map_err(|e| format!("cannot read policy directory {}: {e}", dir.display()))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "cedar"))
                .collect();
            files.sort();
            for f in files {
                let text = std::fs::read_to_string(&f)
                    .map_err(|e| format!("cannot read policy file {}: {e}", f.display()))?;
                sources.push((f.display().to_string(), text));
            }
        }
        let mut policies = PolicySet::new();
        let validator = Validator::new(schema.clone());
        for (i, (name, text)) in sources.iter().enumerate() {
            let set = PolicySet::from_str(text)
                .map_err(|e| format!("policy file {name}: {}", describe(&e, text)))?;
            let result = validator.validate(&set, ValidationMode::Strict);
            if !result.validation_passed() {
                let errors: Vec<String> = result
                    .validation_errors()
                    .map(|e| located(e, text))
                    .collect();
                return Err(format!(
                    "policy file {name} does not match the catalog's Cedar schema: {}",
                    errors.join("; ")
                ));
            }
            // Ids are per file; renamed so files cannot collide.
            for p in set.policies() {
                let id = cedar_policy::PolicyId::new(format!("{i}:{}", p.id()));
                policies
                    .add(p.new_id(id))
                    .map_err(|e| format!("policy file {name}: {e}"))?;
            }
        }
        Ok(Self {
            schema,
            policies,
            engine: Engine::new(),
        })
    }

    /// Whether `principal` (in `groups`) may do `action` on the resource at
    /// the head of `chain`, holding `relations` there.
    pub fn is_allowed(
        &self,
        principal: &str,
        groups: &[String],
        action: &str,
        chain: &Chain,
        relations: &HashSet<String>,
    ) -> CatalogResult<bool> {
        let user = uid("User", principal)?;
        let mut entities = Vec::new();
        let group_uids: HashSet<EntityUid> = groups
            .iter()
            .map(|g| uid("Group", g))
            .collect::<CatalogResult<_>>()?;
        for g in &group_uids {
            entities.push(Entity::new_no_attrs(g.clone(), HashSet::new()));
        }
        entities.push(Entity::new_no_attrs(user.clone(), group_uids));
        let uids: Vec<EntityUid> = chain
            .0
            .iter()
            .map(|(k, id)| uid(k, id))
            .collect::<CatalogResult<_>>()?;
        for (i, u) in uids.iter().enumerate() {
            let parents: HashSet<EntityUid> = uids.get(i + 1).cloned().into_iter().collect();
            entities.push(Entity::new_no_attrs(u.clone(), parents));
        }
        let entities = Entities::from_entities(entities, Some(&self.schema))
            .map_err(|e| CatalogError::internal(format!("authorization entities: {e}")))?;
        let relations = RestrictedExpression::new_set(
            relations
                .iter()
                .map(|r| RestrictedExpression::new_string(r.clone())),
        );
        let context = Context::from_pairs([("relations".to_string(), relations)])
            .map_err(|e| CatalogError::internal(format!("authorization context: {e}")))?;
        let resource = uids
            .first()
            .cloned()
            .ok_or_else(|| CatalogError::internal("authorization without a resource"))?;
        let request = Request::new(
            user,
            uid("Action", action)?,
            resource,
            context,
            Some(&self.schema),
        )
        .map_err(|e| CatalogError::internal(format!("authorization request for {action}: {e}")))?;
        let answer = self
            .engine
            .is_authorized(&request, &self.policies, &entities);
        Ok(answer.decision() == Decision::Allow)
    }
}

/// A parse error with the line it is on.
fn describe(e: &cedar_policy::ParseErrors, text: &str) -> String {
    located(e, text)
}

/// An error of a policy file, led by the line its first label points at.
fn located<E: miette::Diagnostic + std::fmt::Display>(e: &E, text: &str) -> String {
    let line = e
        .labels()
        .and_then(|mut labels| labels.next())
        .map(|l| text[..l.offset().min(text.len())].matches('\n').count() + 1);
    match line {
        Some(n) => format!("line {n}: {e}"),
        None => e.to_string(),
    }
}

/// Denied: 403 naming what was asked.
pub fn denied(principal: &str, action: &str, chain: &Chain) -> CatalogError {
    let what = chain
        .0
        .first()
        .map(|(k, id)| format!("{} {id:?}", k.to_ascii_lowercase()))
        .unwrap_or_default();
    CatalogError::new(
        Code::PERMISSION_DENIED,
        format!("{principal:?} may not {action} on {what}"),
    )
}
