//! Free-form values (`google.protobuf.Value`, `Struct`, `ListValue`): the
//! spec's nullable and any-of fields, task parameters, field metadata and
//! nested lists, each read as the model's type and written back.

use std::collections::HashMap;

use prost_types::value::Kind as ValueKind;
use prost_types::{ListValue, Struct, Value};

use super::{entries, Lift, LiftError};

// Free-form values (`google.protobuf.Value`): the spec's nullable and
// any-of fields. A null is `None` in a nullable model field.

fn kind_name(kind: &Option<ValueKind>) -> &'static str {
    match kind {
        None | Some(ValueKind::NullValue(_)) => "null",
        Some(ValueKind::NumberValue(_)) => "a number",
        Some(ValueKind::StringValue(_)) => "a string",
        Some(ValueKind::BoolValue(_)) => "a boolean",
        Some(ValueKind::StructValue(_)) => "an object",
        Some(ValueKind::ListValue(_)) => "a list",
    }
}

fn wrong(expected: &str, kind: &Option<ValueKind>) -> LiftError {
    LiftError::new(format!("expected {expected}, not {}", kind_name(kind)))
}

pub(super) fn value(kind: ValueKind) -> Value {
    Value { kind: Some(kind) }
}

pub(super) fn null() -> Value {
    value(ValueKind::NullValue(0))
}

fn is_null(v: &Value) -> bool {
    matches!(v.kind, None | Some(ValueKind::NullValue(_)))
}

/// A free-form number as a whole one: `Value` carries every number as a
/// double, so an Arrow type's `length` arrives as `128.0`.
fn whole(f: f64) -> Option<i64> {
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

/// Types a free-form value can be read as, and written from.
macro_rules! free_form {
    ($($t:ty: $from:expr, $to:expr;)*) => {$(
        impl Lift<$t> for Value {
            fn lift(self) -> Result<$t, LiftError> {
                ($from)(self.kind)
            }
        }
        impl Lift<Option<$t>> for Value {
            fn lift(self) -> Result<Option<$t>, LiftError> {
                match is_null(&self) {
                    true => Ok(None),
                    false => self.lift().map(Some),
                }
            }
        }
        impl Lift<Value> for $t {
            fn lift(self) -> Result<Value, LiftError> {
                ($to)(self)
            }
        }
        impl Lift<Value> for Option<$t> {
            fn lift(self) -> Result<Value, LiftError> {
                self.map_or_else(|| Ok(null()), Lift::lift)
            }
        }
    )*};
}

free_form! {
    String: |k| match k {
        Some(ValueKind::StringValue(s)) => Ok(s),
        other => Err(wrong("a string", &other)),
    }, |s| Ok(value(ValueKind::StringValue(s)));
    bool: |k| match k {
        Some(ValueKind::BoolValue(b)) => Ok(b),
        other => Err(wrong("a boolean", &other)),
    }, |b| Ok(value(ValueKind::BoolValue(b)));
    f64: |k| match k {
        Some(ValueKind::NumberValue(f)) => Ok(f),
        other => Err(wrong("a number", &other)),
    }, |f| Ok(value(ValueKind::NumberValue(f)));
    i32: |k| match k {
        Some(ValueKind::NumberValue(f)) => whole(f)
            .and_then(|i| i32::try_from(i).ok())
            .ok_or_else(|| LiftError::new(format!("expected a 32-bit integer, not {f}"))),
        other => Err(wrong("an integer", &other)),
    }, |i: i32| Ok(value(ValueKind::NumberValue(i.into())));
    Vec<String>: |k| match k {
        Some(ValueKind::ListValue(list)) => list.lift(),
        other => Err(wrong("a list of strings", &other)),
    }, |v: Vec<String>| v.lift().map(|l| value(ValueKind::ListValue(l)));
    HashMap<String, String>: |k| match k {
        Some(ValueKind::StructValue(s)) => s.lift(),
        other => Err(wrong("an object of strings", &other)),
    }, |m: HashMap<String, String>| m.lift().map(|s| value(ValueKind::StructValue(s)));
    serde_json::Value: |k| Ok(json_of(Value { kind: k })), |j| Ok(value_of(j));
}

/// A free-form value as JSON (whole numbers as integers).
fn json_of(v: Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v.kind {
        None | Some(ValueKind::NullValue(_)) => J::Null,
        Some(ValueKind::BoolValue(b)) => J::Bool(b),
        Some(ValueKind::StringValue(s)) => J::String(s),
        Some(ValueKind::NumberValue(f)) => match whole(f) {
            Some(i) => J::from(i),
            None => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
        },
        Some(ValueKind::ListValue(l)) => J::Array(l.values.into_iter().map(json_of).collect()),
        Some(ValueKind::StructValue(s)) => J::Object(object_of(s)),
    }
}

fn object_of(s: Struct) -> serde_json::Map<String, serde_json::Value> {
    s.fields.into_iter().map(|(k, v)| (k, json_of(v))).collect()
}

/// JSON as a free-form value.
pub(super) fn value_of(j: serde_json::Value) -> Value {
    use serde_json::Value as J;
    value(match j {
        J::Null => ValueKind::NullValue(0),
        J::Bool(b) => ValueKind::BoolValue(b),
        J::Number(n) => ValueKind::NumberValue(n.as_f64().unwrap_or_default()),
        J::String(s) => ValueKind::StringValue(s),
        J::Array(a) => ValueKind::ListValue(ListValue {
            values: a.into_iter().map(value_of).collect(),
        }),
        J::Object(o) => ValueKind::StructValue(struct_of(o)),
    })
}

fn struct_of(o: serde_json::Map<String, serde_json::Value>) -> Struct {
    Struct {
        fields: o.into_iter().map(|(k, v)| (k, value_of(v))).collect(),
    }
}

/// A free-form value that must be there (an Arrow type).
impl Lift<serde_json::Value> for Option<Value> {
    fn lift(self) -> Result<serde_json::Value, LiftError> {
        self.ok_or_else(LiftError::missing).map(json_of)
    }
}

impl Lift<Option<Value>> for serde_json::Value {
    fn lift(self) -> Result<Option<Value>, LiftError> {
        Ok(Some(value_of(self)))
    }
}

/// A task's parameters and result: an object, empty when not sent.
impl Lift<serde_json::Map<String, serde_json::Value>> for Option<Struct> {
    fn lift(self) -> Result<serde_json::Map<String, serde_json::Value>, LiftError> {
        Ok(self.map(object_of).unwrap_or_default())
    }
}

impl Lift<Option<Struct>> for serde_json::Map<String, serde_json::Value> {
    fn lift(self) -> Result<Option<Struct>, LiftError> {
        Ok(Some(struct_of(self)))
    }
}

/// A field's metadata: an object of strings.
impl Lift<HashMap<String, String>> for Struct {
    fn lift(self) -> Result<HashMap<String, String>, LiftError> {
        entries(self.fields)
    }
}

impl Lift<Struct> for HashMap<String, String> {
    fn lift(self) -> Result<Struct, LiftError> {
        entries(self).map(|fields| Struct { fields })
    }
}

/// Nested lists (an update's rows, multi-vectors).
macro_rules! list_of {
    ($($t:ty),*) => {$(
        impl Lift<Vec<$t>> for ListValue {
            fn lift(self) -> Result<Vec<$t>, LiftError> {
                self.values.lift()
            }
        }
        impl Lift<ListValue> for Vec<$t> {
            fn lift(self) -> Result<ListValue, LiftError> {
                self.lift().map(|values| ListValue { values })
            }
        }
    )*};
}
list_of!(String);

impl Lift<f32> for Value {
    fn lift(self) -> Result<f32, LiftError> {
        Lift::<f64>::lift(self).map(|f| f as f32)
    }
}

impl Lift<Value> for f32 {
    fn lift(self) -> Result<Value, LiftError> {
        Ok(value(ValueKind::NumberValue(self.into())))
    }
}
list_of!(f32);
