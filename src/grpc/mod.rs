//! The gRPC adapter: the protobuf mirror of the spec, served by tonic over
//! the same core. It converts messages and renders errors; nothing else.

pub mod client;
pub mod control;
pub mod descriptors;
pub mod lift;
pub mod service;

use std::sync::Arc;

use crate::governance::Governance;

pub mod pb {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("lance.catalog.v1");

    /// The encoded descriptors of `proto/lance_catalog.proto`.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("lance_catalog_descriptor");
}

pub use client::GrpcNamespace;

/// The gRPC routes: the namespace service, the control service, Arrow
/// health (`grpc.health.v1`) and server reflection; the shell adds Arrow
/// Flight beside them and puts them in front of REST (requests are told
/// apart by their paths).
pub fn routes(catalog: Arc<Governance>, max_message: usize) -> tonic::service::Routes {
    use pb::catalog_control_service_server::CatalogControlServiceServer;
    use pb::lance_namespace_service_server::LanceNamespaceServiceServer;

    let namespace =
        LanceNamespaceServiceServer::new(service::NamespaceService::new(catalog.clone()))
            .max_decoding_message_size(max_message)
            .max_encoding_message_size(max_message);
    let control = CatalogControlServiceServer::new(
        control::ControlService::new(catalog.clone()).with_gate(catalog.clone()),
    );
    // Health follows readiness (`/readyz`): both services, and the
    // server as a whole (the empty service name), serve while the storage
    // root and the control root answer.
    let (health_reporter, health) = tonic_health::server::health_reporter();
    let mut ready = catalog.readiness();
    tokio::spawn(async move {
        use tonic_health::ServingStatus;
        loop {
            let status = match ready.borrow_and_update().is_none() {
                true => ServingStatus::Serving,
                false => ServingStatus::NotServing,
            };
            health_reporter
                .set_service_status(
                    <LanceNamespaceServiceServer<service::NamespaceService> as tonic::server::NamedService>::NAME,
                    status,
                )
                .await;
            health_reporter
                .set_service_status(
                    <CatalogControlServiceServer<control::ControlService> as tonic::server::NamedService>::NAME,
                    status,
                )
                .await;
            health_reporter.set_service_status("", status).await;
            if ready.changed().await.is_err() {
                return;
            }
        }
    });
    // Reflection in both protocol versions: grpcurl and current tools speak
    // v1, Python's grpcio-reflection and older tools only v1alpha.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection()
        .build_v1()
        .expect("reflection service from the compiled-in descriptors");
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .expect("reflection service from the compiled-in descriptors");
    tonic::service::Routes::new(namespace)
        .add_service(control)
        .add_service(health)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
}
