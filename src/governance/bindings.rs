//! Bindings: which warehouse holds each top-level namespace. A binding is
//! written once (a conditional create, so two doors racing for one name
//! cannot both win) and removed when its namespace is dropped.

use serde::{Deserialize, Serialize};

use super::registry::{now_ms, Registry};
use crate::error::{CatalogError, CatalogResult, Code};

const BINDING: &str = "binding";

/// A top-level namespace's warehouse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Binding {
    pub namespace: String,
    pub warehouse_id: String,
    #[serde(default)]
    pub created_at_ms: u64,
}

/// Record ids are one plain path segment; a namespace name may hold any
/// character, so its bytes are spelled in hex (which keeps byte order, so
/// listings stay sorted by name).
fn key(namespace: &str) -> String {
    namespace.bytes().map(|b| format!("{b:02x}")).collect()
}

impl Registry {
    /// Bind `namespace` to `warehouse_id`; 2 (already exists) when it is
    /// bound already, to this warehouse or another.
    pub async fn bind(&self, namespace: &str, warehouse_id: &str) -> CatalogResult<Binding> {
        if namespace.len() > 128 {
            return Err(CatalogError::invalid(
                "a top-level namespace name is at most 128 bytes",
            ));
        }
        let binding = Binding {
            namespace: namespace.to_string(),
            warehouse_id: warehouse_id.to_string(),
            created_at_ms: now_ms(),
        };
        match self
            .records
            .create(
                BINDING,
                &key(namespace),
                &binding,
                Code::NAMESPACE_ALREADY_EXISTS,
            )
            .await
        {
            Ok(made) => Ok(made.value),
            Err(e) if e.code == Code::NAMESPACE_ALREADY_EXISTS => {
                let holder = self
                    .binding(namespace)
                    .await?
                    .map(|b| b.warehouse_id)
                    .unwrap_or_default();
                Err(CatalogError::new(
                    Code::NAMESPACE_ALREADY_EXISTS,
                    format!("namespace {namespace:?} already exists (in warehouse {holder:?})"),
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// The warehouse holding `namespace`, if it is bound.
    pub async fn binding(&self, namespace: &str) -> CatalogResult<Option<Binding>> {
        if namespace.is_empty() || namespace.len() > 128 {
            return Ok(None);
        }
        Ok(self
            .records
            .get::<Binding>(BINDING, &key(namespace))
            .await?
            .map(|v| v.value))
    }

    /// Remove a binding (its namespace was dropped, or its create failed).
    pub async fn unbind(&self, namespace: &str, warehouse_id: &str) -> CatalogResult<()> {
        if namespace.is_empty() || namespace.len() > 128 {
            return Ok(());
        }
        // Only this warehouse's binding: a name re-bound elsewhere since
        // stays bound.
        self.records
            .delete(BINDING, &key(namespace), |b: &Binding| {
                match b.warehouse_id == warehouse_id {
                    true => Ok(()),
                    false => Err(CatalogError::new(
                        Code::CONCURRENT_MODIFICATION,
                        format!("namespace {namespace:?} is bound to another warehouse now"),
                    )),
                }
            })
            .await
            .map(|_| ())
    }

    /// Every binding, sorted by namespace name.
    pub async fn bindings(&self) -> CatalogResult<Vec<Binding>> {
        let mut out = Vec::new();
        for id in self.records.ids::<Binding>(BINDING).await? {
            if let Some(b) = self.records.get::<Binding>(BINDING, &id).await? {
                out.push(b.value);
            }
        }
        Ok(out)
    }

    /// The top-level namespaces bound to one warehouse, sorted.
    pub async fn namespaces_of(&self, warehouse_id: &str) -> CatalogResult<Vec<String>> {
        Ok(self
            .bindings()
            .await?
            .into_iter()
            .filter(|b| b.warehouse_id == warehouse_id)
            .map(|b| b.namespace)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_are_plain_segments_in_name_order() {
        let a = super::key("a b/..");
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(super::key("ab") < super::key("b"));
        assert!(super::key("a") < super::key("a\u{e9}"));
    }
}
