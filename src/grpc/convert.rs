//! The one conversion between protobuf messages and the spec models: both
//! sides share a JSON form. A message's proto3 JSON (proto field names,
//! 64-bit integers as numbers) is exactly the spec model's JSON, because the
//! proto mirrors the spec field for field (see `proto/lance_catalog.proto`).

use std::sync::LazyLock;

use prost::Message;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, SerializeOptions};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::pb::FILE_DESCRIPTOR_SET;
use crate::error::{CatalogError, CatalogResult};

/// Package of every message in the contract.
pub const PACKAGE: &str = "lance.catalog.v1";

static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(FILE_DESCRIPTOR_SET).expect("the compiled-in descriptor set decodes")
});

/// A message of the contract by its short name (the OpenAPI document
/// describes the REST bodies by them).
pub fn message(name: &str) -> Option<prost_reflect::MessageDescriptor> {
    POOL.get_message_by_name(&format!("{PACKAGE}.{name}"))
}

fn descriptor(name: &str) -> CatalogResult<prost_reflect::MessageDescriptor> {
    POOL.get_message_by_name(&format!("{PACKAGE}.{name}"))
        .ok_or_else(|| CatalogError::internal(format!("no message {name} in the contract")))
}

/// A protobuf message as the JSON of its spec model.
pub fn to_json<P: Message>(msg: &P, name: &str) -> CatalogResult<Value> {
    let dynamic = DynamicMessage::decode(descriptor(name)?, msg.encode_to_vec().as_slice())
        .map_err(|e| CatalogError::internal(format!("cannot read {name}: {e}")))?;
    let options = SerializeOptions::new()
        .use_proto_field_name(true)
        .stringify_64_bit_integers(false)
        .skip_default_fields(false);
    dynamic
        .serialize_with_options(serde_json::value::Serializer, &options)
        .map_err(|e| CatalogError::internal(format!("cannot render {name}: {e}")))
}

/// A request message as the JSON of its spec model (see [`prune_empty`]).
pub fn request_json<P: Message>(msg: &P, name: &str) -> CatalogResult<Value> {
    let mut value = to_json(msg, name)?;
    prune_empty(&mut value, &descriptor(name)?);
    whole_numbers(&mut value);
    Ok(value)
}

/// `google.protobuf.Value` carries every number as a double, so a free-form
/// field (an Arrow type's `length`, say) arrives as `128.0`; the models want
/// integers there, and accept integers wherever they want floats.
fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15) {
                if n.is_f64() {
                    *value = Value::from(f as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// proto3 cannot tell an absent list from an empty one; the spec models can
/// (`new_namespace_id: None` keeps a renamed table in its namespace, `[]`
/// moves it to the root). In a request, an empty list is taken as absent, the
/// reading every spec operation expects.
fn prune_empty(value: &mut Value, desc: &prost_reflect::MessageDescriptor) {
    let Value::Object(obj) = value else { return };
    for field in desc.fields() {
        let key = field.name();
        let Some(v) = obj.get_mut(key) else { continue };
        if field.is_list() && matches!(v, Value::Array(a) if a.is_empty()) {
            obj.remove(key);
            continue;
        }
        if let (prost_reflect::Kind::Message(inner), false) = (field.kind(), field.is_map()) {
            match v {
                Value::Array(items) => items.iter_mut().for_each(|i| prune_empty(i, &inner)),
                other => prune_empty(other, &inner),
            }
        }
    }
}

/// A request's model from its JSON. proto3 sends an empty list as nothing,
/// and [`prune_empty`] reads nothing as absent; a list the model requires
/// (`entries`, `operations`, `updates`: one its default holds as a list,
/// not as nothing) gets it back, empty, so the request reaches the checks
/// that name what is wrong with it.
pub fn request_model<M: DeserializeOwned + Serialize + Default>(
    mut value: Value,
    name: &str,
) -> CatalogResult<M> {
    if let (Value::Object(obj), Ok(Value::Object(defaults))) =
        (&mut value, serde_json::to_value(M::default()))
    {
        for (field, default) in defaults {
            if default.is_array() && !obj.contains_key(&field) {
                obj.insert(field, Value::Array(Vec::new()));
            }
        }
    }
    serde_json::from_value(value).map_err(|e| CatalogError::invalid(format!("invalid {name}: {e}")))
}

/// A JSON value (a spec model's) as a protobuf message. Fields the contract
/// does not have are ignored; nulls are absent fields. A value that does not
/// fit is the caller's mistake in a request (13), ours in an answer (18).
pub fn from_json<P: Message + Default>(value: Value, name: &str) -> CatalogResult<P> {
    let options = DeserializeOptions::new().deny_unknown_fields(false);
    let dynamic = DynamicMessage::deserialize_with_options(descriptor(name)?, value, &options)
        .map_err(|e| {
            let message = format!("not a valid {name}: {e}");
            if name.ends_with("Request") {
                CatalogError::invalid(message)
            } else {
                CatalogError::internal(message)
            }
        })?;
    P::decode(dynamic.encode_to_vec().as_slice())
        .map_err(|e| CatalogError::internal(format!("cannot encode {name}: {e}")))
}

/// A spec model from the JSON form of a message.
pub fn model_from_value<M: DeserializeOwned>(value: Value, name: &str) -> CatalogResult<M> {
    serde_json::from_value(value).map_err(|e| CatalogError::invalid(format!("invalid {name}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_form_numbers_become_integers_where_whole() {
        let mut v =
            serde_json::json!({"type": {"type": "fixed_size_list", "length": 128.0}, "x": 0.5});
        whole_numbers(&mut v);
        assert_eq!(v["type"]["length"], serde_json::json!(128));
        assert_eq!(v["x"], serde_json::json!(0.5));
    }

    #[test]
    fn a_grant_keeps_the_user_it_binds_to() {
        let grant = crate::api::access::Grant {
            grant_id: "g1".into(),
            principal: "ana".into(),
            principal_uid: Some("uid-1".into()),
            relation: "reader".into(),
            ..Default::default()
        };
        let json = serde_json::to_value(&grant).unwrap();
        let msg: super::super::pb::Grant = from_json(json, "Grant").unwrap();
        assert_eq!(msg.principal_uid.as_deref(), Some("uid-1"));
        let back: crate::api::access::Grant =
            model_from_value(to_json(&msg, "Grant").unwrap(), "Grant").unwrap();
        assert_eq!(back.principal_uid.as_deref(), Some("uid-1"));
    }

    #[test]
    fn empty_lists_in_requests_mean_absent() {
        let msg = super::super::pb::RenameTableRequest {
            id: vec!["a".into(), "t".into()],
            new_table_name: "u".into(),
            ..Default::default()
        };
        let v = request_json(&msg, "RenameTableRequest").unwrap();
        assert!(v.get("new_namespace_id").is_none(), "{v}");
        assert_eq!(v["id"], serde_json::json!(["a", "t"]));
    }
}
