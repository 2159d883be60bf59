//! The gRPC adapter: the protobuf mirror of the spec, served by tonic over
//! the same core. It converts messages and renders errors; nothing else.

pub mod pb {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("lance.catalog.v1");

    /// The encoded descriptors of `proto/lance_catalog.proto`.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("lance_catalog_descriptor");
}
