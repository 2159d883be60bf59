//! The one integration test binary (one link of lance, not one per file).
//!
//! `cases` is the conformance suite, written once against
//! `&dyn LanceNamespace` and run three ways: in-process against the core,
//! through the real server with Lance's own `RestNamespace` client, and
//! through the server's gRPC service with the catalog's gRPC client; and
//! three times more with warehouses on, through one warehouse (in
//! process, over REST at the warehouse's URL, and over gRPC with the
//! warehouse in each request's context).

mod auth;
mod batch;
mod cases;
mod flight;
mod governance;
mod grpc;
mod harness;
mod hostile;
mod maintenance;
mod ownership;
mod routes;
mod storage;
mod trash;
mod warehouses;
mod wire;

/// Run each named case in every mode.
macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod in_process {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = crate::harness::Env::in_process().await;
                    crate::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
        mod over_rest {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = crate::harness::Env::over_rest().await;
                    crate::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
        mod in_warehouse {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = crate::harness::Env::in_warehouse().await;
                    crate::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
        mod warehouse_over_rest {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = crate::harness::Env::warehouse_over_rest().await;
                    crate::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
        mod warehouse_over_grpc {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = crate::harness::Env::warehouse_over_grpc().await;
                    crate::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
        // Once more on S3 (CI starts an S3-compatible server and sets
        // LANCE_CATALOG_TEST_S3); elsewhere these return at once.
        mod on_s3 {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(env) = crate::harness::Env::on_s3().await else {
                        eprintln!("skipped: LANCE_CATALOG_TEST_S3 is not set");
                        return;
                    };
                    crate::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
        mod warehouse_on_s3 {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(env) = crate::harness::Env::warehouse_on_s3().await else {
                        eprintln!("skipped: LANCE_CATALOG_TEST_S3 is not set");
                        return;
                    };
                    crate::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
        mod over_grpc {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = crate::harness::Env::over_grpc().await;
                    crate::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
    };
}

conformance!(
    namespaces_lifecycle,
    namespace_modes_and_cascade,
    namespace_pagination,
    tables_lifecycle,
    create_table_modes,
    declare_register_deregister,
    data_round_trip,
    versions_tags_restore,
    branches,
    indexes_and_stats,
    schema_evolution,
    list_all_tables_pages,
    malformed_input,
    transactions_and_version_cleanup,
    empty_batches_are_invalid,
    rename_table,
    field_metadata_and_schema_metadata,
    branch_writes,
    computed_column_backfill,
    materialized_views,
    location_ownership,
    engine_mistakes_are_client_errors,
    nested_locations,
    namespace_storage_options,
);
