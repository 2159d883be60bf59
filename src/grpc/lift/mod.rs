//! The conversion between protobuf messages and their models, both ways,
//! without a JSON form between them. `build.rs` writes one `Lift` impl per
//! message and direction from the contract's descriptors (`lift_gen.rs`);
//! this file holds what those field-by-field impls are made of: scalars,
//! containers, free-form values, enums, and the one flattened message.
//!
//! Each impl is picked by the two types at hand (the message field's and
//! the model field's), so the generator needs no field types. Containers
//! pin distinct outer shapes (`Option` -> `Option`, `Option` -> `Box`,
//! `Vec` -> `Option<Vec>`, …), which is what keeps the impls coherent.

use std::collections::{BTreeMap, HashMap};

use lance_namespace::models;

use super::pb;
use crate::api::control;
use crate::error::CatalogError;

mod free_form;

/// One value turned into another type; a request that does not fit is the
/// caller's mistake, an answer that does not is ours.
pub trait Lift<T> {
    fn lift(self) -> Result<T, LiftError>;
}

/// What did not fit, and where (`vector.single_vector[3]`).
#[derive(Debug, Clone, PartialEq)]
pub struct LiftError {
    path: Vec<String>,
    what: String,
}

impl LiftError {
    fn new(what: impl Into<String>) -> Self {
        Self {
            path: Vec::new(),
            what: what.into(),
        }
    }

    fn missing() -> Self {
        Self::new("is required")
    }

    /// Inside `field` (the path is built from the innermost out).
    fn at(mut self, field: impl Into<String>) -> Self {
        self.path.push(field.into());
        self
    }

    fn path(&self) -> String {
        let mut path = String::new();
        for step in self.path.iter().rev() {
            if !path.is_empty() && !step.starts_with('[') {
                path.push('.');
            }
            path.push_str(step);
        }
        path
    }

    /// A request message that does not fit its model: code 13.
    pub fn invalid(self, message: &str) -> CatalogError {
        CatalogError::invalid(format!("invalid {message}: {}: {}", self.path(), self.what))
    }

    /// An answer that does not fit its message: ours, code 18.
    pub fn internal(self, message: &str) -> CatalogError {
        CatalogError::internal(format!(
            "cannot render {message}: {}: {}",
            self.path(),
            self.what
        ))
    }
}

/// A field, lifted, its errors placed under its name.
fn at<T: Lift<U>, U>(value: T, field: &str) -> Result<U, LiftError> {
    value.lift().map_err(|e| e.at(field))
}

/// The shapes a message takes inside another, for each message and model:
/// boxed, nullable and boxed, required (absent is an error).
macro_rules! nested {
    ($pb:ty => $model:ty) => {
        impl Lift<Box<$model>> for $pb {
            fn lift(self) -> Result<Box<$model>, LiftError> {
                Lift::<$model>::lift(self).map(Box::new)
            }
        }
        impl Lift<Option<Box<$model>>> for $pb {
            fn lift(self) -> Result<Option<Box<$model>>, LiftError> {
                Lift::<$model>::lift(self).map(|m| Some(Box::new(m)))
            }
        }
        impl Lift<$model> for Option<$pb> {
            fn lift(self) -> Result<$model, LiftError> {
                self.ok_or_else(LiftError::missing)?.lift()
            }
        }
        impl Lift<$pb> for Box<$model> {
            fn lift(self) -> Result<$pb, LiftError> {
                (*self).lift()
            }
        }
        impl Lift<Option<$pb>> for $model {
            fn lift(self) -> Result<Option<$pb>, LiftError> {
                Lift::<$pb>::lift(self).map(Some)
            }
        }
        // prost boxes a message that holds itself (a boosted query).
        impl Lift<$model> for Box<$pb> {
            fn lift(self) -> Result<$model, LiftError> {
                (*self).lift()
            }
        }
        impl Lift<Box<$pb>> for $model {
            fn lift(self) -> Result<Box<$pb>, LiftError> {
                Lift::<$pb>::lift(self).map(Box::new)
            }
        }
    };
}

include!(concat!(env!("OUT_DIR"), "/lift_gen.rs"));

// Scalars that are the same on both sides.
macro_rules! same {
    ($($t:ty),*) => {$(
        impl Lift<$t> for $t {
            fn lift(self) -> Result<$t, LiftError> {
                Ok(self)
            }
        }
    )*};
}
same!(String, bool, i32, i64, u32, u64, f32, f64, u8);

/// The spec's unformatted integers are `int64` in the contract; the model
/// holds some as `i32`.
impl Lift<i32> for i64 {
    fn lift(self) -> Result<i32, LiftError> {
        i32::try_from(self).map_err(|_| LiftError::new(format!("{self} does not fit in 32 bits")))
    }
}

impl Lift<i64> for i32 {
    fn lift(self) -> Result<i64, LiftError> {
        Ok(self.into())
    }
}

/// A nullable string the contract holds as a plain optional one.
impl Lift<Option<String>> for String {
    fn lift(self) -> Result<Option<String>, LiftError> {
        Ok(Some(self))
    }
}

// Containers, both ways. Each pins its own pair of outer shapes.

impl<T: Lift<U>, U> Lift<Option<U>> for Option<T> {
    fn lift(self) -> Result<Option<U>, LiftError> {
        self.map(Lift::lift).transpose()
    }
}

/// A required nested model (`Box<M>`) from the contract's optional message.
impl<T: Lift<U>, U> Lift<Box<U>> for Option<T> {
    fn lift(self) -> Result<Box<U>, LiftError> {
        self.ok_or_else(LiftError::missing)?.lift().map(Box::new)
    }
}

impl<T: Lift<U>, U> Lift<Option<U>> for Box<T> {
    fn lift(self) -> Result<Option<U>, LiftError> {
        (*self).lift().map(Some)
    }
}

impl<T: Lift<U>, U> Lift<Box<U>> for Box<T> {
    fn lift(self) -> Result<Box<U>, LiftError> {
        (*self).lift().map(Box::new)
    }
}

impl<T: Lift<U>, U> Lift<Vec<U>> for Vec<T> {
    fn lift(self) -> Result<Vec<U>, LiftError> {
        self.into_iter()
            .enumerate()
            .map(|(i, v)| v.lift().map_err(|e| e.at(format!("[{i}]"))))
            .collect()
    }
}

/// proto3 cannot tell an absent list from an empty one; the models can
/// (`new_namespace_id: None` keeps a renamed table in its namespace, `[]`
/// moves it to the root). An empty list is taken as absent, the reading
/// every spec operation expects.
impl<T: Lift<U>, U> Lift<Option<Vec<U>>> for Vec<T> {
    fn lift(self) -> Result<Option<Vec<U>>, LiftError> {
        match self.is_empty() {
            true => Ok(None),
            false => self.lift().map(Some),
        }
    }
}

impl<T: Lift<U>, U> Lift<Vec<U>> for Option<Vec<T>> {
    fn lift(self) -> Result<Vec<U>, LiftError> {
        self.unwrap_or_default().lift()
    }
}

fn entries<T: Lift<U>, U, C: FromIterator<(String, U)>>(
    map: impl IntoIterator<Item = (String, T)>,
) -> Result<C, LiftError> {
    map.into_iter()
        .map(|(k, v)| match v.lift() {
            Ok(v) => Ok((k, v)),
            Err(e) => Err(e.at(format!("[{k}]"))),
        })
        .collect()
}

impl<T: Lift<U>, U> Lift<HashMap<String, U>> for HashMap<String, T> {
    fn lift(self) -> Result<HashMap<String, U>, LiftError> {
        entries(self)
    }
}

/// A map is always there in a model that has it (empty is empty).
impl<T: Lift<U>, U> Lift<Option<HashMap<String, U>>> for HashMap<String, T> {
    fn lift(self) -> Result<Option<HashMap<String, U>>, LiftError> {
        entries(self).map(Some)
    }
}

impl<T: Lift<U>, U> Lift<HashMap<String, U>> for Option<HashMap<String, T>> {
    fn lift(self) -> Result<HashMap<String, U>, LiftError> {
        entries(self.unwrap_or_default())
    }
}

impl<T: Lift<U>, U> Lift<BTreeMap<String, U>> for HashMap<String, T> {
    fn lift(self) -> Result<BTreeMap<String, U>, LiftError> {
        entries(self)
    }
}

impl<T: Lift<U>, U> Lift<HashMap<String, U>> for BTreeMap<String, T> {
    fn lift(self) -> Result<HashMap<String, U>, LiftError> {
        entries(self)
    }
}

/// Enums the contract holds as strings, by their serde names.
macro_rules! named {
    ($($t:ty),* $(,)?) => {$(
        impl Lift<$t> for String {
            fn lift(self) -> Result<$t, LiftError> {
                use serde::de::IntoDeserializer;
                let read: Result<$t, serde::de::value::Error> =
                    serde::Deserialize::deserialize(self.as_str().into_deserializer());
                read.map_err(|e| LiftError::new(e.to_string()))
            }
        }
        impl Lift<String> for $t {
            fn lift(self) -> Result<String, LiftError> {
                // A unit variant's serde name; nothing else is written.
                match serde_json::to_value(self) {
                    Ok(serde_json::Value::String(name)) => Ok(name),
                    _ => Err(LiftError::new("not a named value")),
                }
            }
        }
    )*};
}

named!(
    models::create_materialized_view_request::Kind,
    models::materialized_view_udtf_entry::Kind,
    control::WarehouseStatus,
    control::JobState,
    control::KeptReason,
    control::PolicyLevel,
    control::DriftKind,
    control::Repair,
    control::LeftoverOutcome,
);

/// A stale create intent: the message lists the intent's fields beside
/// the leftover's own, where the model nests them (`intent`). Both sides
/// are destructured whole, so a field added to either fails to compile.
macro_rules! leftover {
    ($($f:ident),*) => {
        impl Lift<control::CreateLeftover> for pb::CreateLeftover {
            fn lift(self) -> Result<control::CreateLeftover, LiftError> {
                let pb::CreateLeftover { intent_id, $($f,)* outcome } = self;
                Ok(control::CreateLeftover {
                    intent_id,
                    intent: control::CreateIntent { $($f),* },
                    outcome: at(outcome, "outcome")?,
                })
            }
        }

        impl Lift<pb::CreateLeftover> for control::CreateLeftover {
            fn lift(self) -> Result<pb::CreateLeftover, LiftError> {
                let control::CreateLeftover {
                    intent_id,
                    intent: control::CreateIntent { $($f),* },
                    outcome,
                } = self;
                Ok(pb::CreateLeftover {
                    intent_id,
                    $($f,)*
                    outcome: at(outcome, "outcome")?,
                })
            }
        }
    };
}

leftover!(location, table, object_id, replica, started_ms, touched_ms, taken_ms);

/// The three answers that are one bare value in the model.
pub trait Bare<T>: Sized {
    fn wrap(value: T) -> Self;
    fn into_bare(self) -> Result<T, LiftError>;
}

impl Bare<i64> for pb::CountTableRowsResponse {
    fn wrap(count: i64) -> Self {
        Self {
            count: Some(count),
            ..Default::default()
        }
    }
    fn into_bare(self) -> Result<i64, LiftError> {
        self.count.ok_or_else(|| LiftError::missing().at("count"))
    }
}

impl Bare<String> for pb::ExplainTableQueryPlanResponse {
    fn wrap(plan: String) -> Self {
        Self {
            plan,
            ..Default::default()
        }
    }
    fn into_bare(self) -> Result<String, LiftError> {
        Ok(self.plan)
    }
}

impl Bare<String> for pb::AnalyzeTableQueryPlanResponse {
    fn wrap(analysis: String) -> Self {
        Self {
            analysis,
            ..Default::default()
        }
    }
    fn into_bare(self) -> Result<String, LiftError> {
        Ok(self.analysis)
    }
}

#[cfg(test)]
mod tests {
    use super::free_form::{null, value, value_of};
    use super::*;
    use prost_types::value::Kind as ValueKind;

    #[test]
    fn free_form_numbers_become_integers_where_whole() {
        let v = value_of(serde_json::json!({"type": "fixed_size_list", "length": 128.0, "x": 0.5}));
        let j: serde_json::Value = v.lift().unwrap();
        assert_eq!(j["length"], serde_json::json!(128));
        assert_eq!(j["x"], serde_json::json!(0.5));
    }

    #[test]
    fn a_grant_keeps_the_user_it_binds_to() {
        let grant = control::Grant {
            grant_id: "g1".into(),
            principal: "ana".into(),
            principal_uid: Some("uid-1".into()),
            relation: "reader".into(),
            ..Default::default()
        };
        let msg: pb::Grant = grant.clone().lift().unwrap();
        assert_eq!(msg.principal_uid.as_deref(), Some("uid-1"));
        let back: control::Grant = msg.lift().unwrap();
        assert_eq!(back, grant);
    }

    #[test]
    fn empty_lists_in_requests_mean_absent() {
        let msg = pb::RenameTableRequest {
            id: vec!["a".into(), "t".into()],
            new_table_name: "u".into(),
            ..Default::default()
        };
        let model: models::RenameTableRequest = msg.lift().unwrap();
        assert_eq!(model.new_namespace_id, None);
        assert_eq!(model.id, Some(vec!["a".to_string(), "t".to_string()]));
    }

    #[test]
    fn what_does_not_fit_is_named_with_its_place() {
        let msg = pb::QueryTableRequest {
            k: i64::from(i32::MAX) + 1,
            vector: Some(pb::QueryTableRequestVector::default()),
            ..Default::default()
        };
        let e = Lift::<models::QueryTableRequest>::lift(msg).unwrap_err();
        assert_eq!(e.path(), "k");
        let missing = pb::QueryTableRequest::default();
        let e = Lift::<models::QueryTableRequest>::lift(missing).unwrap_err();
        assert_eq!(
            (e.path().as_str(), e.what.as_str()),
            ("vector", "is required")
        );
    }

    #[test]
    fn a_nullable_free_form_field_reads_null_as_none() {
        let n: Option<String> = null().lift().unwrap();
        assert_eq!(n, None);
        let s: Option<i32> = value(ValueKind::NumberValue(3.0)).lift().unwrap();
        assert_eq!(s, Some(3));
        let e = Lift::<Option<i32>>::lift(value(ValueKind::NumberValue(3.5))).unwrap_err();
        assert!(e.what.contains("32-bit"), "{e:?}");
    }
}
