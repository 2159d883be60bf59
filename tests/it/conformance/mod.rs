//! The conformance suite: `cases` is written once against
//! `&dyn LanceNamespace`, and `modes!` below runs every case in every mode
//! of one table (a transport and a storage each): in process against the
//! core, over REST with Lance's own `RestNamespace`, over gRPC with the
//! catalog's gRPC client, with the data over Arrow Flight
//! (`transport::flight_namespace`); the REST and gRPC ones through one
//! warehouse with warehouses on; and twice on S3 when CI starts one.

pub(crate) mod batch;
mod batch_crash;
pub(crate) mod cases;
mod newest;
mod routes;

use crate::harness::Env;

/// One mode's module: every case, each on a fresh environment; a mode
/// whose environment is not available here (S3 without
/// `LANCE_CATALOG_TEST_S3`) returns at once.
macro_rules! mode {
    ($mode:ident, $env:expr, [$($case:ident),* $(,)?]) => {
        mod $mode {
            // The S3 rows name no `always`.
            #[allow(unused_imports)]
            use crate::{conformance::always, harness::Env};
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(env) = $env.await else {
                        eprintln!("skipped: LANCE_CATALOG_TEST_S3 is not set");
                        return;
                    };
                    crate::conformance::cases::$case(env.ns.as_ref()).await;
                }
            )*
        }
    };
}

/// The modes, one row each, crossed with the cases.
macro_rules! modes {
    ($cases:tt; $($mode:ident => $env:expr),* $(,)?) => {
        $( mode!($mode, $env, $cases); )*
    };
}

/// A mode that is always available.
async fn always(env: impl std::future::Future<Output = Env>) -> Option<Env> {
    Some(env.await)
}

modes!(
    [
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
    ];
    in_process => always(Env::in_process()),
    over_rest => always(Env::over_rest()),
    over_grpc => always(Env::over_grpc()),
    over_flight => always(Env::over_flight()),
    in_warehouse => always(Env::in_warehouse()),
    warehouse_over_rest => always(Env::warehouse_over_rest()),
    warehouse_over_grpc => always(Env::warehouse_over_grpc()),
    on_s3 => Env::on_s3(),
    warehouse_on_s3 => Env::warehouse_on_s3(),
);
