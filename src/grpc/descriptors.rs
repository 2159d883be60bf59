//! The contract's messages by name, read from its compiled-in descriptors:
//! the OpenAPI document describes the REST bodies by them. Conversion
//! between messages and models is `lift/`.

use std::sync::LazyLock;

use prost_reflect::DescriptorPool;

use super::pb::FILE_DESCRIPTOR_SET;

/// Package of every message in the contract.
pub const PACKAGE: &str = "lance.catalog.v1";

static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(FILE_DESCRIPTOR_SET).expect("the compiled-in descriptor set decodes")
});

/// A message of the contract by its short name.
pub fn message(name: &str) -> Option<prost_reflect::MessageDescriptor> {
    POOL.get_message_by_name(&format!("{PACKAGE}.{name}"))
}
