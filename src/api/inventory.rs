//! The one inventory of operations: a row per operation, read by every
//! transport. The REST routes, their request parsing and answers, the gRPC
//! service and the gRPC client (`GrpcNamespace`) are all expanded from
//! these rows, so a new operation is one row here, its core method, its
//! proto message and its conformance cases.
//!
//! A row:
//!
//! ```text
//! Name => method(Request -> Response) answer, VERB "path", body kind, status, query [param: kind, ..], facts [effect target group body (vends)];
//! ```
//!
//! - `method`: the `LanceNamespace` method; `Request` is both the spec model
//!   and the proto message, `Response` the proto message (and, for `json`
//!   answers, the model).
//! - `answer`: `json` (the response model; REST: a JSON object), `unit`
//!   (REST: an empty 200), `ids` (a model whose `tables` are full ids; REST
//!   joins them with the caller's delimiter), `bytes["f"]` (an Arrow IPC
//!   file; gRPC field `f`), `count["f"]` (REST: a bare integer), `text["f"]`
//!   (REST: a JSON string), `map` (REST: the model's `metadata` as a bare
//!   map), `oss` (the maintenance API's: the model's `table_id` becomes the
//!   `x-oss-table-id` header, the rest the body; a 204 has none).
//! - `body`: `json` (the request model), `none` (from the path and query
//!   only), `arrow` (an Arrow IPC stream beside the model: the method takes
//!   the bytes too), `map` (a bare map of keys, whose `null` values ask for
//!   a deletion), `params` (a free-form JSON object, the model's `params`).
//! - `query`: the query parameters read into the model, and how to read
//!   them: `Str`, `Bool`, `Int`, `JsonMap` (a JSON object of strings),
//!   `List` (every occurrence of a repeated key).
//!
//! - `facts`: what the operation is, for every rule that depends on it
//!   (no rule is decided by spelling an operation's name): its `effect`
//!   (`read`: served by a quarantined warehouse; `create`: a door that
//!   makes an object, its shape and parent checked before authorization;
//!   `move`: a rename, a door at its destination; `write`), its `target`
//!   (what its `id` names: `namespace`, `table`, `transaction` (a table id
//!   and one more segment), `batch` (no id; its parts name tables), or a
//!   control-plane object), its Cedar action group, whether REST
//!   streams its body or answer (`streams`) or reads it whole, and, last
//!   and only where they hold: `vends` (its answer hands a table to a
//!   client: location and storage options, with vended credentials; the
//!   first of these words, where `governance/spec.rs` matches it),
//!   `reads_tables` (its SQL may read any table of its warehouse: a
//!   materialized view's), `registers` (it records bytes no table owns,
//!   which needs the register privilege on its warehouse) and
//!   `ends_object` (it ends the table its id names: a drop, a
//!   deregistration) and `secret` (its request or answer carries a
//!   secret, a password or a new key, so nothing of it is kept: it takes
//!   no `Idempotency-Key`). The `OpDef` fields of the same names say why.
//!
//! Path parameters: `{id}` is the object id, split by the delimiter;
//! others (`{index_name}`) are strings of the same name.
//!
//! Why a macro: the rows drive code (trait calls, tonic methods, typed
//! answers), not just data, and a `macro_rules!` table keeps them in one
//! place with no build step beyond the compiler.

/// Call `$m!` with every spec operation's row, after `[prefix]` when one
/// is given (`lance_edge!` is told the type it writes an impl for).
macro_rules! for_each_spec_op {
    ($m:ident $([$($pre:tt)*])?) => {
        $m! {
            $([$($pre)*])?
            CreateNamespace => create_namespace(CreateNamespaceRequest -> CreateNamespaceResponse) json, POST "/v1/namespace/{id}/create", body json, 200, query [], facts [create namespace create_child whole];
            ListNamespaces => list_namespaces(ListNamespacesRequest -> ListNamespacesResponse) json, GET "/v1/namespace/{id}/list", body none, 200, query [page_token: Str, limit: Int], facts [read namespace read_metadata whole];
            DescribeNamespace => describe_namespace(DescribeNamespaceRequest -> DescribeNamespaceResponse) json, POST "/v1/namespace/{id}/describe", body json, 200, query [], facts [read namespace read_metadata whole];
            DropNamespace => drop_namespace(DropNamespaceRequest -> DropNamespaceResponse) json, POST "/v1/namespace/{id}/drop", body json, 200, query [force: Context, purge: Context], facts [write namespace drop whole];
            NamespaceExists => namespace_exists(NamespaceExistsRequest -> NamespaceExistsResponse) unit, POST "/v1/namespace/{id}/exists", body json, 200, query [], facts [read namespace read_metadata whole];
            ListTables => list_tables(ListTablesRequest -> ListTablesResponse) json, GET "/v1/namespace/{id}/table/list", body none, 200, query [page_token: Str, limit: Int, include_declared: Bool], facts [read namespace read_metadata whole];
            ListAllTables => list_all_tables(ListTablesRequest -> ListTablesResponse) ids, GET "/v1/table", body none, 200, query [page_token: Str, limit: Int, include_declared: Bool], facts [read namespace read_metadata whole];
            RegisterTable => register_table(RegisterTableRequest -> RegisterTableResponse) json, POST "/v1/table/{id}/register", body json, 200, query [], facts [create table create_child whole registers];
            DescribeTable => describe_table(DescribeTableRequest -> DescribeTableResponse) json, POST "/v1/table/{id}/describe", body json, 200, query [with_table_uri: Bool, load_detailed_metadata: Bool, check_declared: Bool], facts [read table read_metadata whole vends];
            TableExists => table_exists(TableExistsRequest -> TableExistsResponse) unit, POST "/v1/table/{id}/exists", body json, 200, query [], facts [read table read_metadata whole];
            DropTable => drop_table(DropTableRequest -> DropTableResponse) json, POST "/v1/table/{id}/drop", body none, 200, query [force: Context, purge: Context], facts [write table drop whole ends_object];
            DeregisterTable => deregister_table(DeregisterTableRequest -> DeregisterTableResponse) json, POST "/v1/table/{id}/deregister", body json, 200, query [force: Context], facts [write table drop whole ends_object];
            RestoreTable => restore_table(RestoreTableRequest -> RestoreTableResponse) json, POST "/v1/table/{id}/restore", body json, 200, query [], facts [write table write_data whole];
            RenameTable => rename_table(RenameTableRequest -> RenameTableResponse) json, POST "/v1/table/{id}/rename", body json, 200, query [], facts [move table write_data whole];
            UpdateTableSchemaMetadata => update_table_schema_metadata(UpdateTableSchemaMetadataRequest -> UpdateTableSchemaMetadataResponse) map, POST "/v1/table/{id}/schema_metadata/update", body map, 200, query [branch: Str], facts [write table write_data whole];
            ListTableVersions => list_table_versions(ListTableVersionsRequest -> ListTableVersionsResponse) json, POST "/v1/table/{id}/version/list", body none, 200, query [branch: Str, page_token: Str, limit: Int, descending: Bool], facts [read table read_metadata whole];
            CreateTableVersion => create_table_version(CreateTableVersionRequest -> CreateTableVersionResponse) json, POST "/v1/table/{id}/version/create", body json, 200, query [], facts [write table write_data whole];
            DescribeTableVersion => describe_table_version(DescribeTableVersionRequest -> DescribeTableVersionResponse) json, POST "/v1/table/{id}/version/describe", body json, 200, query [], facts [read table read_metadata whole];
            BatchDeleteTableVersions => batch_delete_table_versions(BatchDeleteTableVersionsRequest -> BatchDeleteTableVersionsResponse) json, POST "/v1/table/{id}/version/delete", body json, 200, query [], facts [write table write_data whole];
            BatchCreateTableVersions => batch_create_table_versions(BatchCreateTableVersionsRequest -> BatchCreateTableVersionsResponse) json, POST "/v1/table/version/batch-create", body json, 200, query [], facts [write batch write_data whole];
            BatchCommitTables => batch_commit_tables(BatchCommitTablesRequest -> BatchCommitTablesResponse) json, POST "/v1/table/batch-commit", body json, 200, query [], facts [write batch write_data whole];
            AlterTableAlterColumns => alter_table_alter_columns(AlterTableAlterColumnsRequest -> AlterTableAlterColumnsResponse) json, POST "/v1/table/{id}/alter_columns", body json, 200, query [], facts [write table write_data whole];
            UpdateFieldMetadata => update_field_metadata(UpdateFieldMetadataRequest -> UpdateFieldMetadataResponse) json, POST "/v1/table/{id}/update_field_metadata", body json, 200, query [], facts [write table write_data whole];
            AlterTableDropColumns => alter_table_drop_columns(AlterTableDropColumnsRequest -> AlterTableDropColumnsResponse) json, POST "/v1/table/{id}/drop_columns", body json, 200, query [], facts [write table write_data whole];
            GetTableStats => get_table_stats(GetTableStatsRequest -> GetTableStatsResponse) json, POST "/v1/table/{id}/stats", body json, 200, query [], facts [read table read_metadata whole];
            InsertIntoTable => insert_into_table(InsertIntoTableRequest -> InsertIntoTableResponse) json, POST "/v1/table/{id}/insert", body arrow, 200, query [branch: Str, mode: Str], facts [write table write_data streams];
            MergeInsertIntoTable => merge_insert_into_table(MergeInsertIntoTableRequest -> MergeInsertIntoTableResponse) json, POST "/v1/table/{id}/merge_insert", body arrow, 200, query [branch: Str, on: List, when_matched_update_all: Bool, when_matched_update_all_filt: Str, when_not_matched_insert_all: Bool, when_not_matched_by_source_delete: Bool, when_not_matched_by_source_delete_filt: Str, timeout: Str, use_index: Bool], facts [write table write_data whole];
            UpdateTable => update_table(UpdateTableRequest -> UpdateTableResponse) json, POST "/v1/table/{id}/update", body json, 200, query [], facts [write table write_data whole];
            DeleteFromTable => delete_from_table(DeleteFromTableRequest -> DeleteFromTableResponse) json, POST "/v1/table/{id}/delete", body json, 200, query [], facts [write table write_data whole];
            QueryTable => query_table(QueryTableRequest -> QueryTableResponse) bytes["data"], POST "/v1/table/{id}/query", body json, 200, query [], facts [read table read_data streams];
            CountTableRows => count_table_rows(CountTableRowsRequest -> CountTableRowsResponse) count["count"], POST "/v1/table/{id}/count_rows", body json, 200, query [], facts [read table read_data whole];
            CreateTable => create_table(CreateTableRequest -> CreateTableResponse) json, POST "/v1/table/{id}/create", body arrow, 200, query [mode: Str, properties: JsonMap, storage_options: JsonMap], facts [create table create_child streams vends];
            ExplainTableQueryPlan => explain_table_query_plan(ExplainTableQueryPlanRequest -> ExplainTableQueryPlanResponse) text["plan"], POST "/v1/table/{id}/explain_plan", body json, 200, query [], facts [read table read_metadata whole];
            AnalyzeTableQueryPlan => analyze_table_query_plan(AnalyzeTableQueryPlanRequest -> AnalyzeTableQueryPlanResponse) text["analysis"], POST "/v1/table/{id}/analyze_plan", body json, 200, query [], facts [read table read_metadata whole];
            AlterTableAddColumns => alter_table_add_columns(AlterTableAddColumnsRequest -> AlterTableAddColumnsResponse) json, POST "/v1/table/{id}/add_columns", body json, 200, query [], facts [write table write_data whole];
            AlterTableBackfillColumns => alter_table_backfill_columns(AlterTableBackfillColumnsRequest -> AlterTableBackfillColumnsResponse) json, POST "/v1/table/{id}/backfill_column", body json, 202, query [], facts [write table write_data whole];
            RefreshMaterializedView => refresh_materialized_view(RefreshMaterializedViewRequest -> RefreshMaterializedViewResponse) json, POST "/v1/materialized_view/{id}/refresh", body json, 202, query [], facts [write table write_data whole reads_tables];
            CreateMaterializedView => create_materialized_view(CreateMaterializedViewRequest -> CreateMaterializedViewResponse) json, POST "/v1/materialized_view/{id}/create", body json, 201, query [], facts [create table create_child whole reads_tables];
            CreateTableIndex => create_table_index(CreateTableIndexRequest -> CreateTableIndexResponse) json, POST "/v1/table/{id}/create_index", body json, 200, query [], facts [write table write_data whole];
            CreateTableScalarIndex => create_table_scalar_index(CreateTableIndexRequest -> CreateTableScalarIndexResponse) json, POST "/v1/table/{id}/create_scalar_index", body json, 200, query [], facts [write table write_data whole];
            ListTableIndices => list_table_indices(ListTableIndicesRequest -> ListTableIndicesResponse) json, POST "/v1/table/{id}/index/list", body json, 200, query [], facts [read table read_metadata whole];
            DescribeTableIndexStats => describe_table_index_stats(DescribeTableIndexStatsRequest -> DescribeTableIndexStatsResponse) json, POST "/v1/table/{id}/index/{index_name}/stats", body json, 200, query [], facts [read table read_metadata whole];
            DropTableIndex => drop_table_index(DropTableIndexRequest -> DropTableIndexResponse) json, POST "/v1/table/{id}/index/{index_name}/drop", body none, 200, query [branch: Str], facts [write table write_data whole];
            ListTableTags => list_table_tags(ListTableTagsRequest -> ListTableTagsResponse) json, POST "/v1/table/{id}/tags/list", body none, 200, query [page_token: Str, limit: Int], facts [read table read_metadata whole];
            GetTableTagVersion => get_table_tag_version(GetTableTagVersionRequest -> GetTableTagVersionResponse) json, POST "/v1/table/{id}/tags/version", body json, 200, query [], facts [read table read_metadata whole];
            DeclareTable => declare_table(DeclareTableRequest -> DeclareTableResponse) json, POST "/v1/table/{id}/declare", body json, 200, query [], facts [create table create_child whole vends];
            CreateTableTag => create_table_tag(CreateTableTagRequest -> CreateTableTagResponse) json, POST "/v1/table/{id}/tags/create", body json, 200, query [], facts [write table write_data whole];
            DeleteTableTag => delete_table_tag(DeleteTableTagRequest -> DeleteTableTagResponse) json, POST "/v1/table/{id}/tags/delete", body json, 200, query [], facts [write table write_data whole];
            UpdateTableTag => update_table_tag(UpdateTableTagRequest -> UpdateTableTagResponse) json, POST "/v1/table/{id}/tags/update", body json, 200, query [], facts [write table write_data whole];
            ListTableBranches => list_table_branches(ListTableBranchesRequest -> ListTableBranchesResponse) json, POST "/v1/table/{id}/branches/list", body none, 200, query [page_token: Str, limit: Int], facts [read table read_metadata whole];
            CreateTableBranch => create_table_branch(CreateTableBranchRequest -> CreateTableBranchResponse) json, POST "/v1/table/{id}/branches/create", body json, 200, query [], facts [write table write_data whole];
            DeleteTableBranch => delete_table_branch(DeleteTableBranchRequest -> DeleteTableBranchResponse) json, POST "/v1/table/{id}/branches/delete", body json, 200, query [], facts [write table write_data whole];
            DescribeTransaction => describe_transaction(DescribeTransactionRequest -> DescribeTransactionResponse) json, POST "/v1/transaction/{id}/describe", body json, 200, query [], facts [read transaction read_metadata whole];
            AlterTransaction => alter_transaction(AlterTransactionRequest -> AlterTransactionResponse) json, POST "/v1/transaction/{id}/alter", body json, 200, query [], facts [write transaction write_data whole];
        }
    };
}
pub(crate) use for_each_spec_op;

/// Call `$m!` with every control-plane operation's row (the catalog's own
/// operations, `core::control::ControlPlane`), in the same row format.
macro_rules! for_each_control_op {
    ($m:ident) => {
        $m! {
            GetServerInfo => get_server_info(GetServerInfoRequest -> ServerInfo) json, GET "/v1/server/info", body none, 200, query [], facts [read server read_metadata whole];
            DescribeJob => describe_job(DescribeJobRequest -> JobRecord) json, POST "/v1/job/{job_id}/describe", body json, 200, query [], facts [read job read_metadata whole];
            CreateProject => create_project(CreateProjectRequest -> Project) json, POST "/v1/projects", body json, 200, query [], facts [create server create_child whole];
            ListProjects => list_projects(ListProjectsRequest -> ListProjectsResponse) json, GET "/v1/projects", body none, 200, query [page_token: Str, limit: Int], facts [read server read_metadata whole];
            DescribeProject => describe_project(DescribeProjectRequest -> Project) json, GET "/v1/projects/{project_id}", body none, 200, query [], facts [read project read_metadata whole];
            UpdateProject => update_project(UpdateProjectRequest -> Project) json, PATCH "/v1/projects/{project_id}", body json, 200, query [], facts [write project administer whole];
            DeleteProject => delete_project(DeleteProjectRequest -> DeleteProjectResponse) json, DELETE "/v1/projects/{project_id}", body none, 200, query [force: Bool], facts [write project drop whole ends_object];
            SetProjectProtection => set_project_protection(SetProjectProtectionRequest -> Project) json, POST "/v1/projects/{project_id}/protection", body json, 200, query [], facts [write project administer whole];
            CreateWarehouse => create_warehouse(CreateWarehouseRequest -> Warehouse) json, POST "/v1/warehouses", body json, 200, query [], facts [create project create_child whole];
            ListWarehouses => list_warehouses(ListWarehousesRequest -> ListWarehousesResponse) json, GET "/v1/warehouses", body none, 200, query [project_id: Str, page_token: Str, limit: Int], facts [read server read_metadata whole];
            DescribeWarehouse => describe_warehouse(DescribeWarehouseRequest -> Warehouse) json, GET "/v1/warehouses/{warehouse_id}", body none, 200, query [], facts [read warehouse read_metadata whole];
            UpdateWarehouse => update_warehouse(UpdateWarehouseRequest -> Warehouse) json, PATCH "/v1/warehouses/{warehouse_id}", body json, 200, query [], facts [write warehouse administer whole];
            DeleteWarehouse => delete_warehouse(DeleteWarehouseRequest -> DeleteWarehouseResponse) json, DELETE "/v1/warehouses/{warehouse_id}", body none, 200, query [force: Bool], facts [write warehouse drop whole ends_object];
            SetWarehouseProtection => set_warehouse_protection(SetWarehouseProtectionRequest -> Warehouse) json, POST "/v1/warehouses/{warehouse_id}/protection", body json, 200, query [], facts [write warehouse administer whole];
            CreateWarehouseNamespace => create_warehouse_namespace(CreateWarehouseNamespaceRequest -> WarehouseNamespace) json, POST "/v1/warehouses/{warehouse_id}/namespaces", body json, 200, query [], facts [create warehouse create_child whole];
            ListWarehouseNamespaces => list_warehouse_namespaces(ListWarehouseNamespacesRequest -> ListWarehouseNamespacesResponse) json, GET "/v1/warehouses/{warehouse_id}/namespaces", body none, 200, query [page_token: Str, limit: Int], facts [read warehouse read_metadata whole];
            CreateApiKey => create_api_key(CreateApiKeyRequest -> CreateApiKeyResponse) json, POST "/v1/api-keys", body json, 200, query [], facts [write api_key administer whole secret];
            ListApiKeys => list_api_keys(ListApiKeysRequest -> ListApiKeysResponse) json, GET "/v1/api-keys", body none, 200, query [principal: Str, page_token: Str, limit: Int], facts [read api_key administer whole];
            RevokeApiKey => revoke_api_key(RevokeApiKeyRequest -> RevokeApiKeyResponse) json, DELETE "/v1/api-keys/{key_id}", body none, 200, query [], facts [write api_key administer whole];
            CreateUser => create_user(CreateUserRequest -> UserInfo) json, POST "/v1/users", body json, 200, query [], facts [write user administer whole secret];
            ListUsers => list_users(ListUsersRequest -> ListUsersResponse) json, GET "/v1/users", body none, 200, query [page_token: Str, limit: Int], facts [read user administer whole];
            GetUser => get_user(GetUserRequest -> UserInfo) json, GET "/v1/users/{username}", body none, 200, query [], facts [read user administer whole];
            UpdateUser => update_user(UpdateUserRequest -> UserInfo) json, POST "/v1/users/{username}", body json, 200, query [], facts [write user administer whole];
            DeleteUser => delete_user(DeleteUserRequest -> DeleteUserResponse) json, DELETE "/v1/users/{username}", body none, 200, query [], facts [write user administer whole];
            SetUserPassword => set_user_password(SetUserPasswordRequest -> UserInfo) json, POST "/v1/users/{username}/password", body json, 200, query [], facts [write user administer whole secret];
            CreateSession => create_session(CreateSessionRequest -> Session) json, POST "/v1/sessions", body json, 200, query [], facts [read user read_metadata whole];
            DeleteSession => delete_session(DeleteSessionRequest -> DeleteSessionResponse) json, DELETE "/v1/sessions", body none, 200, query [], facts [write user read_metadata whole];
            CreateGrant => create_grant(CreateGrantRequest -> Grant) json, POST "/v1/grants", body json, 200, query [], facts [write grant manage_grants whole];
            ListGrants => list_grants(ListGrantsRequest -> ListGrantsResponse) json, GET "/v1/grants", body none, 200, query [resource_kind: Str, resource_id: List, principal: Str, page_token: Str, limit: Int], facts [read grant manage_grants whole];
            RevokeGrant => revoke_grant(RevokeGrantRequest -> RevokeGrantResponse) json, DELETE "/v1/grants/{grant_id}", body none, 200, query [], facts [write grant manage_grants whole];
            ListEvents => list_events(ListEventsRequest -> ListEventsResponse) json, GET "/v1/events", body none, 200, query [since: Str, page_token: Str, limit: Int], facts [read server administer whole];
            SetTableProtection => set_table_protection(SetProtectionRequest -> ProtectionResponse) json, POST "/v1/table/{id}/protection", body json, 200, query [], facts [write table administer whole];
            SetNamespaceProtection => set_namespace_protection(SetProtectionRequest -> ProtectionResponse) json, POST "/v1/namespace/{id}/protection", body json, 200, query [], facts [write namespace administer whole];
            GetTableMaintenancePolicy => get_table_maintenance_policy(GetMaintenancePolicyRequest -> EffectivePolicy) json, GET "/v1/table/{id}/maintenance_policy", body none, 200, query [], facts [read table read_metadata whole];
            SetTableMaintenancePolicy => set_table_maintenance_policy(SetMaintenancePolicyRequest -> EffectivePolicy) json, POST "/v1/table/{id}/maintenance_policy", body json, 200, query [], facts [write table administer whole];
            DeleteTableMaintenancePolicy => delete_table_maintenance_policy(DeleteMaintenancePolicyRequest -> DeleteMaintenancePolicyResponse) json, DELETE "/v1/table/{id}/maintenance_policy", body none, 200, query [], facts [write table administer whole];
            GetNamespaceMaintenancePolicy => get_namespace_maintenance_policy(GetMaintenancePolicyRequest -> EffectivePolicy) json, GET "/v1/namespace/{id}/maintenance_policy", body none, 200, query [], facts [read namespace read_metadata whole];
            SetNamespaceMaintenancePolicy => set_namespace_maintenance_policy(SetMaintenancePolicyRequest -> EffectivePolicy) json, POST "/v1/namespace/{id}/maintenance_policy", body json, 200, query [], facts [write namespace administer whole];
            DeleteNamespaceMaintenancePolicy => delete_namespace_maintenance_policy(DeleteMaintenancePolicyRequest -> DeleteMaintenancePolicyResponse) json, DELETE "/v1/namespace/{id}/maintenance_policy", body none, 200, query [], facts [write namespace administer whole];
            GetProjectMaintenancePolicy => get_project_maintenance_policy(GetProjectMaintenancePolicyRequest -> EffectivePolicy) json, GET "/v1/projects/{project_id}/maintenance_policy", body none, 200, query [], facts [read project read_metadata whole];
            SetProjectMaintenancePolicy => set_project_maintenance_policy(SetProjectMaintenancePolicyRequest -> EffectivePolicy) json, POST "/v1/projects/{project_id}/maintenance_policy", body json, 200, query [], facts [write project administer whole];
            DeleteProjectMaintenancePolicy => delete_project_maintenance_policy(DeleteProjectMaintenancePolicyRequest -> DeleteMaintenancePolicyResponse) json, DELETE "/v1/projects/{project_id}/maintenance_policy", body none, 200, query [], facts [write project administer whole];
            GetTableIndexHealth => get_table_index_health(GetIndexHealthRequest -> IndexHealth) json, GET "/v1/table/{id}/index_health", body none, 200, query [], facts [read table read_metadata whole];
            GetNamespaceIndexHealth => get_namespace_index_health(GetIndexHealthRequest -> NamespaceIndexHealth) json, GET "/v1/namespace/{id}/index_health", body none, 200, query [], facts [read namespace read_metadata whole];
            GetTableMaintenanceSweep => get_table_maintenance_sweep(GetSweepRequest -> TableSweep) json, GET "/v1/table/{id}/maintenance_sweep", body none, 200, query [], facts [read table read_metadata whole];
            GetNamespaceMaintenanceSweep => get_namespace_maintenance_sweep(GetSweepRequest -> SweepReport) json, GET "/v1/namespace/{id}/maintenance_sweep", body none, 200, query [], facts [read namespace read_metadata whole];
            GetProjectMaintenanceSweep => get_project_maintenance_sweep(GetProjectReportRequest -> ProjectSweep) json, GET "/v1/projects/{project_id}/maintenance_sweep", body none, 200, query [], facts [read project read_metadata whole];
            GetProjectIndexHealth => get_project_index_health(GetProjectReportRequest -> ProjectIndexHealth) json, GET "/v1/projects/{project_id}/index_health", body none, 200, query [], facts [read project read_metadata whole];
            GetTableOrphans => get_table_orphans(GetOrphansRequest -> OrphanReport) json, GET "/v1/table/{id}/orphans", body none, 200, query [], facts [read table administer whole];
            GetNamespaceOrphans => get_namespace_orphans(GetOrphansRequest -> NamespaceOrphans) json, GET "/v1/namespace/{id}/orphans", body none, 200, query [], facts [read namespace administer whole];
            GetProjectOrphans => get_project_orphans(GetProjectReportRequest -> ProjectOrphans) json, GET "/v1/projects/{project_id}/orphans", body none, 200, query [], facts [read project administer whole];
            ReclaimTableOrphans => reclaim_table_orphans(ReclaimRequest -> ReclaimResponse) json, POST "/v1/table/{id}/reclaim", body json, 200, query [], facts [write table administer whole];
            UndropTable => undrop_table(UndropTableRequest -> UndropTableResponse) json, POST "/v1/table/{id}/undrop", body json, 200, query [], facts [write table drop whole];
            UndropNamespace => undrop_namespace(UndropNamespaceRequest -> UndropNamespaceResponse) json, POST "/v1/namespace/{id}/undrop", body json, 200, query [], facts [write namespace drop whole];
            ListTableTasks => list_table_tasks(ListTasksRequest -> ListTasksResponse) json, GET "/v1/table/{id}/tasks", body none, 200, query [], facts [read table read_metadata whole];
            ListNamespaceTasks => list_namespace_tasks(ListTasksRequest -> ListTasksResponse) json, GET "/v1/namespace/{id}/tasks", body none, 200, query [], facts [read namespace read_metadata whole];
            ListTrash => list_trash(ListTrashRequest -> ListTrashResponse) json, GET "/v1/trash", body none, 200, query [project_id: Str, warehouse_id: Str, namespace_id: List, page_token: Str, limit: Int], facts [read trash read_metadata whole];
            PurgeTrash => purge_trash(PurgeTrashRequest -> PurgeTrashResponse) json, DELETE "/v1/trash/{trash_id}", body none, 200, query [warehouse_id: Str], facts [write trash drop whole];
            GetReconciliation => get_reconciliation(GetReconciliationRequest -> ReconciliationReport) json, GET "/v1/reconciliation", body none, 200, query [], facts [read server administer whole];
            RepairDrift => repair_drift(RepairDriftRequest -> ReconciliationReport) json, POST "/v1/reconciliation/repair", body json, 200, query [], facts [write server administer whole];
            SweepTrash => sweep_trash(SweepTrashRequest -> SweepTrashResponse) json, POST "/v1/trash/sweep", body json, 200, query [], facts [write server administer whole];
            SubmitLanceTableCompactTask => submit_lance_table_compact_task(SubmitLanceTaskRequest -> SubmitLanceTaskResponse) oss, POST "/lance/oss/v1/table/{id}/compact", body params, 200, query [], facts [write table write_data whole];
            SubmitLanceTableScalarIndexTask => submit_lance_table_scalar_index_task(SubmitLanceTaskRequest -> SubmitLanceTaskResponse) oss, POST "/lance/oss/v1/table/{id}/create_scalar_index", body params, 200, query [], facts [write table write_data whole];
            SubmitLanceTableVectorIndexTask => submit_lance_table_vector_index_task(SubmitLanceTaskRequest -> SubmitLanceTaskResponse) oss, POST "/lance/oss/v1/table/{id}/create_vector_index", body params, 200, query [], facts [write table write_data whole];
            SubmitLanceTableOptimizeIndicesTask => submit_lance_table_optimize_indices_task(SubmitLanceTaskRequest -> SubmitLanceTaskResponse) oss, POST "/lance/oss/v1/table/{id}/optimize_indices", body params, 200, query [], facts [write table write_data whole];
            SubmitLanceTableCleanupTask => submit_lance_table_cleanup_task(SubmitLanceTaskRequest -> SubmitLanceTaskResponse) oss, POST "/lance/oss/v1/table/{id}/cleanup", body params, 200, query [], facts [write table write_data whole];
            GetLanceTaskStatus => get_lance_task_status(GetLanceTaskStatusRequest -> GetLanceTaskStatusResponse) oss, GET "/lance/oss/v1/table/{id}/tasks/{task_id}", body none, 200, query [], facts [read table read_metadata whole];
            ListLanceTasks => list_lance_tasks(ListLanceTasksRequest -> ListLanceTasksResponse) oss, GET "/lance/oss/v1/table/{id}/tasks", body none, 200, query [task_type: Str, max_results: Int, marker: Str, mode: Str, status: Str], facts [read table read_metadata whole];
            DeleteLanceTask => delete_lance_task(DeleteLanceTaskRequest -> DeleteLanceTaskResponse) oss, DELETE "/lance/oss/v1/table/{id}/tasks/{task_id}", body none, 204, query [], facts [write table write_data whole];
            CancelLanceTask => cancel_lance_task(CancelLanceTaskRequest -> GetLanceTaskStatusResponse) oss, POST "/lance/oss/v1/table/{id}/tasks/{task_id}/cancel", body none, 200, query [], facts [write table write_data whole];
        }
    };
}
pub(crate) use for_each_control_op;
