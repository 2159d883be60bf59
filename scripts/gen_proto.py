#!/usr/bin/env python3
"""Write proto/lance_catalog.proto from the Lance Namespace spec YAML.

The messages mirror the spec's schemas field for field (same snake_case
names as the JSON), so build.rs can write every message's conversion to its
spec model and back from the compiled descriptors. Run it when the spec
changes:  python3 scripts/gen_proto.py ../shared/spec/lance-namespace-0.11.1.yaml
"""
import re
import sys

import yaml

spec_path = sys.argv[1] if len(sys.argv) > 1 else "../shared/spec/lance-namespace-0.11.1.yaml"
out_path = sys.argv[2] if len(sys.argv) > 2 else "proto/lance_catalog.proto"
spec = yaml.safe_load(open(spec_path))
schemas = spec["components"]["schemas"]

messages = {}      # name -> list of field lines
order = []


def ref_name(ref):
    return ref.rsplit("/", 1)[-1]


def scalar(p):
    t = p.get("type")
    f = p.get("format")
    if t == "string":
        return "bytes" if f == "binary" else "string"
    if t == "integer":
        return "int32" if f == "int32" else "int64"
    if t == "number":
        return "float" if f == "float" else "double"
    if t == "boolean":
        return "bool"
    return None


def camel(s):
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[_\W]+", s) if w)


def field_type(owner, name, p):
    """(type, repeated?) of a property; may define nested messages."""
    if "$ref" in p:
        target = ref_name(p["$ref"])
        sch = schemas[target]
        if target == "Context":
            return "map<string, string>", False
        if sch.get("type") != "object" or "properties" not in sch and "additionalProperties" in sch:
            s = scalar(sch)
            if s:
                return s, False
        define(target)
        return target, False
    for k in ("oneOf", "anyOf"):
        if k in p:
            options = [o for o in p[k] if o.get("type") != "null"]
            if len(options) == 1:
                return field_type(owner, name, options[0])
            return "google.protobuf.Value", False
    t = p.get("type")
    if t == "array":
        items = p["items"]
        if items.get("type") == "array":
            return "google.protobuf.ListValue", True
        it, _ = field_type(owner, name, items)
        return it, True
    if t == "object":
        ap = p.get("additionalProperties")
        if "properties" in p:
            nested = owner + camel(name)
            define(nested, p)
            return nested, False
        if isinstance(ap, dict):
            if "$ref" in ap:
                vt, _ = field_type(owner, name, ap)
                return f"map<string, {vt}>", False
            if ap.get("type") == "object":
                return "map<string, google.protobuf.Struct>", False
            return f"map<string, {scalar(ap) or 'string'}>", False
        return "google.protobuf.Value", False
    s = scalar(p)
    if s:
        return s, False
    return "google.protobuf.Value", False


# Where the Rust client models (lance-namespace 0.13.0) deviate from the
# spec YAML, the contract follows the models (the wire clients speak):
# merge-insert's `on` is a list of columns, and a vector query's IVF probes
# have a floor and a ceiling (fields the spec YAML lacks). An added field has
# a number of its own, from 100 up, so that a later spec's new properties,
# numbered in order, never move it on the wire.
OVERRIDES = {("MergeInsertIntoTableRequest", "on"): ("string", True)}
ADDED = {
    name: [("optional int64", "minimum_nprobes", 100), ("optional int64", "maximum_nprobes", 101)]
    for name in ("QueryTableRequest", "AnalyzeTableQueryPlanRequest")
}


def define(name, sch=None):
    if name in messages:
        return
    messages[name] = None
    sch = sch or schemas[name]
    required = set(sch.get("required", []))
    lines = []
    for i, (pname, p) in enumerate((sch.get("properties") or {}).items(), start=1):
        ft, repeated = OVERRIDES.get((name, pname)) or field_type(name, pname, p)
        if repeated:
            label = "repeated "
        elif ft.startswith("map<") or pname in required and not p.get("nullable"):
            label = ""
        else:
            label = "optional "
        if ft.startswith("map<"):
            label = ""
        lines.append(f"  {label}{ft} {pname} = {i};")
    props = sch.get("properties") or {}
    for ft, pname, n in ADDED.get(name, []):
        if pname in props:
            raise SystemExit(f"{name}.{pname} is in the spec now: drop it from ADDED")
        if n <= len(props) + 1:
            raise SystemExit(f"{name}.{pname} = {n} would meet the spec's own numbers")
        lines.append(f"  {ft} {pname} = {n};")
    messages[name] = lines
    order.append(name)


ops = []
for path, item in spec["paths"].items():
    for method, op in item.items():
        if method not in ("get", "post"):
            continue
        op_id = op["operationId"]
        body = (op.get("requestBody") or {}).get("content", {})
        arrow = "application/vnd.apache.arrow.stream" in body
        req = f"{op_id}Request"
        if op_id == "CreateTableScalarIndex":
            req = "CreateTableIndexRequest"
        if op_id == "ListAllTables":
            req = "ListTablesRequest"
        if op_id == "UpdateTableSchemaMetadata":
            req = "UpdateTableSchemaMetadataRequest"
        resp = f"{op_id}Response"
        if op_id == "ListAllTables":
            resp = "ListTablesResponse"
        if req not in schemas:
            raise SystemExit(f"{op_id}: no schema {req}")
        if resp not in schemas:
            raise SystemExit(f"{op_id}: no schema {resp}")
        define(req)
        define(resp)
        if arrow and messages[req] is not None and not any(" data = " in l for l in messages[req]):
            n = len(messages[req]) + 1
            messages[req] = messages[req] + [
                f"  // The Arrow IPC stream the REST route takes as its body.",
                f"  bytes data = {n};",
            ]
        ops.append((op_id, req, resp, method.upper(), path))

out = []
out.append('''// The gRPC contract of lance-catalog: a protobuf mirror of the Lance
// Namespace spec (0.11.1). Generated by scripts/gen_proto.py from the spec;
// edit the generator, not this file.
//
// Every message mirrors the spec schema of the same name field for field,
// with the same snake_case names, so its proto3 JSON form (with proto field
// names) is the spec's JSON model, and the server converts each message to
// its model field by field. Arrow payloads travel as bytes: an IPC
// stream in the `data` field of create / insert / merge-insert requests, an
// IPC file in QueryTableResponse.data (QueryTableStream streams IPC stream
// chunks instead).
//
// Errors: every failed call carries the exact spec error code and message in
// the response metadata -- `lance-error-code` (the numeric code, e.g. "4")
// and `lance-error-name` (e.g. "TableNotFound") -- beside a gRPC status
// chosen from one table: not found -> NOT_FOUND; already exists ->
// ALREADY_EXISTS; not empty, concurrent modification, invalid state ->
// ABORTED / FAILED_PRECONDITION; invalid input and schema validation ->
// INVALID_ARGUMENT; unsupported -> UNIMPLEMENTED; permission -> PERMISSION_DENIED;
// unauthenticated -> UNAUTHENTICATED; throttling -> RESOURCE_EXHAUSTED;
// unavailable -> UNAVAILABLE; internal -> INTERNAL.
//
// Identity and context travel in request metadata as they do in REST
// headers: `x-api-key`, `authorization: Bearer <token>`, and any other
// metadata entry becomes context `header.<name>`.
syntax = "proto3";

package lance.catalog.v1;

import "google/protobuf/struct.proto";
''')
out.append("service LanceNamespaceService {")
for op_id, req, resp, method, path in ops:
    out.append(f"  // {method} {path}")
    out.append(f"  rpc {op_id}({req}) returns ({resp});")
out.append("  // POST /v1/table/{id}/query, streamed: Arrow IPC stream chunks.")
out.append("  rpc QueryTableStream(QueryTableRequest) returns (stream ArrowChunk);")
out.append("}")
out.append("")
out.append('''// The catalog's control plane.
service CatalogControlService {
  // Server facts: version, storage roots, features.
  rpc GetServerInfo(GetServerInfoRequest) returns (ServerInfo);
  // POST /v1/job/{id}/describe
  rpc DescribeJob(DescribeJobRequest) returns (JobRecord);
  // POST /v1/projects
  rpc CreateProject(CreateProjectRequest) returns (Project);
  // GET /v1/projects
  rpc ListProjects(ListProjectsRequest) returns (ListProjectsResponse);
  // GET /v1/projects/{project_id}
  rpc DescribeProject(DescribeProjectRequest) returns (Project);
  // PATCH /v1/projects/{project_id}
  rpc UpdateProject(UpdateProjectRequest) returns (Project);
  // DELETE /v1/projects/{project_id}
  rpc DeleteProject(DeleteProjectRequest) returns (DeleteProjectResponse);
  // POST /v1/projects/{project_id}/protection
  rpc SetProjectProtection(SetProjectProtectionRequest) returns (Project);
  // POST /v1/warehouses
  rpc CreateWarehouse(CreateWarehouseRequest) returns (Warehouse);
  // GET /v1/warehouses
  rpc ListWarehouses(ListWarehousesRequest) returns (ListWarehousesResponse);
  // GET /v1/warehouses/{warehouse_id}
  rpc DescribeWarehouse(DescribeWarehouseRequest) returns (Warehouse);
  // PATCH /v1/warehouses/{warehouse_id}
  rpc UpdateWarehouse(UpdateWarehouseRequest) returns (Warehouse);
  // DELETE /v1/warehouses/{warehouse_id}
  rpc DeleteWarehouse(DeleteWarehouseRequest) returns (DeleteWarehouseResponse);
  // POST /v1/warehouses/{warehouse_id}/protection
  rpc SetWarehouseProtection(SetWarehouseProtectionRequest) returns (Warehouse);
  // POST /v1/warehouses/{warehouse_id}/namespaces
  rpc CreateWarehouseNamespace(CreateWarehouseNamespaceRequest) returns (WarehouseNamespace);
  // GET /v1/warehouses/{warehouse_id}/namespaces
  rpc ListWarehouseNamespaces(ListWarehouseNamespacesRequest) returns (ListWarehouseNamespacesResponse);
  // POST /v1/api-keys
  rpc CreateApiKey(CreateApiKeyRequest) returns (CreateApiKeyResponse);
  // GET /v1/api-keys
  rpc ListApiKeys(ListApiKeysRequest) returns (ListApiKeysResponse);
  // DELETE /v1/api-keys/{key_id}
  rpc RevokeApiKey(RevokeApiKeyRequest) returns (RevokeApiKeyResponse);
  // POST /v1/users
  rpc CreateUser(CreateUserRequest) returns (UserInfo);
  // GET /v1/users
  rpc ListUsers(ListUsersRequest) returns (ListUsersResponse);
  // GET /v1/users/{username}
  rpc GetUser(GetUserRequest) returns (UserInfo);
  // POST /v1/users/{username}
  rpc UpdateUser(UpdateUserRequest) returns (UserInfo);
  // DELETE /v1/users/{username}
  rpc DeleteUser(DeleteUserRequest) returns (DeleteUserResponse);
  // POST /v1/users/{username}/password
  rpc SetUserPassword(SetUserPasswordRequest) returns (UserInfo);
  // POST /v1/sessions
  rpc CreateSession(CreateSessionRequest) returns (Session);
  // DELETE /v1/sessions
  rpc DeleteSession(DeleteSessionRequest) returns (DeleteSessionResponse);
  // POST /v1/grants
  rpc CreateGrant(CreateGrantRequest) returns (Grant);
  // GET /v1/grants
  rpc ListGrants(ListGrantsRequest) returns (ListGrantsResponse);
  // DELETE /v1/grants/{grant_id}
  rpc RevokeGrant(RevokeGrantRequest) returns (RevokeGrantResponse);
  // GET /v1/events
  rpc ListEvents(ListEventsRequest) returns (ListEventsResponse);
  // POST /v1/table/{id}/protection
  rpc SetTableProtection(SetProtectionRequest) returns (ProtectionResponse);
  // POST /v1/namespace/{id}/protection
  rpc SetNamespaceProtection(SetProtectionRequest) returns (ProtectionResponse);
  // GET /v1/table/{id}/maintenance_policy
  rpc GetTableMaintenancePolicy(GetMaintenancePolicyRequest) returns (EffectivePolicy);
  // POST /v1/table/{id}/maintenance_policy
  rpc SetTableMaintenancePolicy(SetMaintenancePolicyRequest) returns (EffectivePolicy);
  // DELETE /v1/table/{id}/maintenance_policy
  rpc DeleteTableMaintenancePolicy(DeleteMaintenancePolicyRequest) returns (DeleteMaintenancePolicyResponse);
  // GET /v1/namespace/{id}/maintenance_policy
  rpc GetNamespaceMaintenancePolicy(GetMaintenancePolicyRequest) returns (EffectivePolicy);
  // POST /v1/namespace/{id}/maintenance_policy
  rpc SetNamespaceMaintenancePolicy(SetMaintenancePolicyRequest) returns (EffectivePolicy);
  // DELETE /v1/namespace/{id}/maintenance_policy
  rpc DeleteNamespaceMaintenancePolicy(DeleteMaintenancePolicyRequest) returns (DeleteMaintenancePolicyResponse);
  // GET /v1/projects/{project_id}/maintenance_policy
  rpc GetProjectMaintenancePolicy(GetProjectMaintenancePolicyRequest) returns (EffectivePolicy);
  // POST /v1/projects/{project_id}/maintenance_policy
  rpc SetProjectMaintenancePolicy(SetProjectMaintenancePolicyRequest) returns (EffectivePolicy);
  // DELETE /v1/projects/{project_id}/maintenance_policy
  rpc DeleteProjectMaintenancePolicy(DeleteProjectMaintenancePolicyRequest) returns (DeleteMaintenancePolicyResponse);
  // GET /v1/table/{id}/index_health
  rpc GetTableIndexHealth(GetIndexHealthRequest) returns (IndexHealth);
  // GET /v1/namespace/{id}/index_health
  rpc GetNamespaceIndexHealth(GetIndexHealthRequest) returns (NamespaceIndexHealth);
  // GET /v1/table/{id}/maintenance_sweep
  rpc GetTableMaintenanceSweep(GetSweepRequest) returns (TableSweep);
  // GET /v1/namespace/{id}/maintenance_sweep
  rpc GetNamespaceMaintenanceSweep(GetSweepRequest) returns (SweepReport);
  // GET /v1/projects/{project_id}/maintenance_sweep
  rpc GetProjectMaintenanceSweep(GetProjectReportRequest) returns (ProjectSweep);
  // GET /v1/projects/{project_id}/index_health
  rpc GetProjectIndexHealth(GetProjectReportRequest) returns (ProjectIndexHealth);
  // GET /v1/table/{id}/orphans
  rpc GetTableOrphans(GetOrphansRequest) returns (OrphanReport);
  // GET /v1/namespace/{id}/orphans
  rpc GetNamespaceOrphans(GetOrphansRequest) returns (NamespaceOrphans);
  // GET /v1/projects/{project_id}/orphans
  rpc GetProjectOrphans(GetProjectReportRequest) returns (ProjectOrphans);
  // POST /v1/table/{id}/reclaim
  rpc ReclaimTableOrphans(ReclaimRequest) returns (ReclaimResponse);
  // POST /v1/table/{id}/undrop
  rpc UndropTable(UndropTableRequest) returns (UndropTableResponse);
  // POST /v1/namespace/{id}/undrop
  rpc UndropNamespace(UndropNamespaceRequest) returns (UndropNamespaceResponse);
  // GET /v1/table/{id}/tasks
  rpc ListTableTasks(ListTasksRequest) returns (ListTasksResponse);
  // GET /v1/namespace/{id}/tasks
  rpc ListNamespaceTasks(ListTasksRequest) returns (ListTasksResponse);
  // GET /v1/trash
  rpc ListTrash(ListTrashRequest) returns (ListTrashResponse);
  // DELETE /v1/trash/{trash_id}
  rpc PurgeTrash(PurgeTrashRequest) returns (PurgeTrashResponse);
  // GET /v1/reconciliation
  rpc GetReconciliation(GetReconciliationRequest) returns (ReconciliationReport);
  // POST /v1/reconciliation/repair
  rpc RepairDrift(RepairDriftRequest) returns (ReconciliationReport);
  // POST /v1/trash/sweep
  rpc SweepTrash(SweepTrashRequest) returns (SweepTrashResponse);
  // POST /lance/oss/v1/table/{id}/compact
  rpc SubmitLanceTableCompactTask(SubmitLanceTaskRequest) returns (SubmitLanceTaskResponse);
  // POST /lance/oss/v1/table/{id}/create_scalar_index
  rpc SubmitLanceTableScalarIndexTask(SubmitLanceTaskRequest) returns (SubmitLanceTaskResponse);
  // POST /lance/oss/v1/table/{id}/create_vector_index
  rpc SubmitLanceTableVectorIndexTask(SubmitLanceTaskRequest) returns (SubmitLanceTaskResponse);
  // POST /lance/oss/v1/table/{id}/optimize_indices
  rpc SubmitLanceTableOptimizeIndicesTask(SubmitLanceTaskRequest) returns (SubmitLanceTaskResponse);
  // POST /lance/oss/v1/table/{id}/cleanup
  rpc SubmitLanceTableCleanupTask(SubmitLanceTaskRequest) returns (SubmitLanceTaskResponse);
  // GET /lance/oss/v1/table/{id}/tasks/{task_id}
  rpc GetLanceTaskStatus(GetLanceTaskStatusRequest) returns (GetLanceTaskStatusResponse);
  // GET /lance/oss/v1/table/{id}/tasks
  rpc ListLanceTasks(ListLanceTasksRequest) returns (ListLanceTasksResponse);
  // DELETE /lance/oss/v1/table/{id}/tasks/{task_id}
  rpc DeleteLanceTask(DeleteLanceTaskRequest) returns (DeleteLanceTaskResponse);
  // POST /lance/oss/v1/table/{id}/tasks/{task_id}/cancel
  rpc CancelLanceTask(CancelLanceTaskRequest) returns (GetLanceTaskStatusResponse);
}

// The maintenance-task API. `table_id` is the table's real id (REST: the
// x-oss-table-id header).
message SubmitLanceTaskRequest {
  repeated string id = 1;
  google.protobuf.Struct params = 2;
}

message SubmitLanceTaskResponse {
  string task_id = 1;
  string table_id = 2;
}

message TaskError {
  string error = 1;
  uint32 code = 2;
  string detail = 3;
}

message TaskInfo {
  string task_id = 1;
  string task_type = 2;
  google.protobuf.Struct params = 3;
  string status = 4;
  string created_at = 5;
  string started_at = 6;
  string completed_at = 7;
  google.protobuf.Struct result = 8;
  optional TaskError error = 9;
}

message GetLanceTaskStatusRequest {
  repeated string id = 1;
  string task_id = 2;
}

message GetLanceTaskStatusResponse {
  TaskInfo task_info = 1;
  string table_id = 2;
}

message ListLanceTasksRequest {
  repeated string id = 1;
  optional string task_type = 2;
  optional int64 max_results = 3;
  optional string marker = 4;
  optional string mode = 5;
  optional string status = 6;
}

message ListLanceTasksResponse {
  repeated TaskInfo tasks = 1;
  string next_marker = 2;
  string table_id = 3;
}

message DeleteLanceTaskRequest {
  repeated string id = 1;
  string task_id = 2;
}

message DeleteLanceTaskResponse {
  string table_id = 1;
}

// The task ends failed (TaskCancelled) and its job is stopped.
message CancelLanceTaskRequest {
  repeated string id = 1;
  string task_id = 2;
}

message TrashEntry {
  string trash_id = 1;
  string kind = 2;
  repeated string id = 3;
  optional string location = 4;
  optional uint64 version = 5;
  map<string, string> properties = 6;
  optional string dropped_by = 7;
  uint64 dropped_at_ms = 8;
  uint64 expires_at_ms = 9;
  string group = 10;
  bool complete = 11;
  bool expired = 12;
  optional string warehouse = 13;
  optional string project = 14;
  // The real id of the namespace it was dropped from.
  optional string parent_object_id = 15;
  // The real ids of every namespace it was dropped from, outermost first.
  repeated string ancestor_object_ids = 16;
}

message UndropTableRequest {
  repeated string id = 1;
  optional string trash_id = 2;
}

message UndropTableResponse {
  repeated string id = 1;
  string trash_id = 2;
  string location = 3;
  optional uint64 version = 4;
}

message UndropNamespaceRequest {
  repeated string id = 1;
  optional string trash_id = 2;
  optional string warehouse_id = 3;
}

message UndropNamespaceResponse {
  repeated string id = 1;
  repeated TrashEntry restored = 2;
  repeated TrashEntry skipped = 3;
  repeated string warnings = 4;
}

message PendingTask {
  string task_id = 1;
  string task_type = 2;
  string status = 3;
  repeated string id = 4;
  string kind = 5;
  uint64 created_at_ms = 6;
  uint64 deadline_ms = 7;
  optional string detail = 8;
}

message ListTasksRequest {
  repeated string id = 1;
}

message ListTasksResponse {
  repeated PendingTask tasks = 1;
}

message ListTrashRequest {
  optional string project_id = 1;
  optional string warehouse_id = 2;
  repeated string namespace_id = 3;
  optional string page_token = 4;
  optional int32 limit = 5;
}

message ListTrashResponse {
  repeated TrashEntry entries = 1;
  optional string page_token = 2;
}

message PurgeTrashRequest {
  string trash_id = 1;
  optional string warehouse_id = 2;
}

message PurgeTrashResponse {
  repeated TrashEntry purged = 1;
}

message SweepTrashRequest {}

message GetReconciliationRequest {}

// A finding of the estate reconciler: kind (binding_to_missing_warehouse,
// table_without_data, unowned_directory, trash_without_bytes,
// tasks_of_missing_table, policy_of_missing_object), what it is about, and
// the repair that removes it.
message Drift {
  string kind = 1;
  optional string warehouse_id = 2;
  string subject = 3;
  repeated string table = 4;
  optional string repair = 5;
  optional string repaired = 6;
}

message ReconciliationReport {
  repeated Drift drifts = 1;
}

message RepairDriftRequest {
  repeated string kinds = 1;
}

message SweepTrashResponse {
  repeated TrashEntry expired = 1;
  repeated TrashEntry purged = 2;
}

message SetProtectionRequest {
  repeated string id = 1;
  bool protected = 2;
}

message ProtectionResponse {
  repeated string id = 1;
  bool protected = 2;
}

message Project {
  string project_id = 1;
  optional string description = 2;
  map<string, string> properties = 3;
  bool protected = 4;
  uint64 created_at_ms = 5;
  uint64 updated_at_ms = 6;
  optional string trash_grace = 7;
  optional bool purge_expired_trash = 8;
}

message CreateProjectRequest {
  string project_id = 1;
  optional string description = 2;
  map<string, string> properties = 3;
  optional string trash_grace = 4;
  optional bool purge_expired_trash = 5;
}

message ListProjectsRequest {
  optional string page_token = 1;
  optional int32 limit = 2;
}

message ListProjectsResponse {
  repeated Project projects = 1;
  optional string page_token = 2;
}

message DescribeProjectRequest {
  string project_id = 1;
}

message UpdateProjectRequest {
  string project_id = 1;
  optional string description = 2;
  map<string, string> properties = 3;
  optional string trash_grace = 4;
  optional bool purge_expired_trash = 5;
}

message DeleteProjectRequest {
  string project_id = 1;
  optional bool force = 2;
}

message DeleteProjectResponse {
  string project_id = 1;
}

message SetProjectProtectionRequest {
  string project_id = 1;
  bool protected = 2;
}

message Warehouse {
  string warehouse_id = 1;
  string project_id = 2;
  string root = 3;
  map<string, string> storage_options = 4;
  map<string, string> properties = 5;
  string status = 6;
  bool protected = 7;
  uint64 created_at_ms = 8;
  uint64 updated_at_ms = 9;
  optional VendingSettings vending = 10;
}

// How a warehouse vends table credentials (STS AssumeRole).
message VendingSettings {
  string role_arn = 1;
  optional string external_id = 2;
  optional uint32 duration_seconds = 3;
  optional string sts_endpoint = 4;
  optional string region = 5;
}

message CreateWarehouseRequest {
  string warehouse_id = 1;
  string project_id = 2;
  string root = 3;
  map<string, string> storage_options = 4;
  map<string, string> properties = 5;
  optional VendingSettings vending = 6;
}

message ListWarehousesRequest {
  optional string project_id = 1;
  optional string page_token = 2;
  optional int32 limit = 3;
}

message ListWarehousesResponse {
  repeated Warehouse warehouses = 1;
  optional string page_token = 2;
}

message DescribeWarehouseRequest {
  string warehouse_id = 1;
}

message UpdateWarehouseRequest {
  string warehouse_id = 1;
  optional string status = 2;
  map<string, string> properties = 3;
  optional VendingSettings vending = 4;
}

message DeleteWarehouseRequest {
  string warehouse_id = 1;
  optional bool force = 2;
}

message DeleteWarehouseResponse {
  string warehouse_id = 1;
}

message SetWarehouseProtectionRequest {
  string warehouse_id = 1;
  bool protected = 2;
}

message GrantResource {
  string kind = 1;
  repeated string id = 2;
  optional string warehouse = 3;
  // A namespace's or table's real id, set by the server: the object the grant is bound to.
  optional string object_id = 4;
}

message Grant {
  string grant_id = 1;
  GrantResource resource = 2;
  string principal = 3;
  string relation = 4;
  uint64 created_at_ms = 5;
  optional string granted_by = 6;
  // The local user the grant was made to (its uid), when `principal` named one.
  optional string principal_uid = 7;
}

message CreateGrantRequest {
  GrantResource resource = 1;
  string principal = 2;
  string relation = 3;
}

message ListGrantsRequest {
  optional string resource_kind = 1;
  repeated string resource_id = 2;
  optional string principal = 3;
  optional string page_token = 4;
  optional int32 limit = 5;
}

message ListGrantsResponse {
  repeated Grant grants = 1;
  optional string page_token = 2;
}

message RevokeGrantRequest {
  string grant_id = 1;
}

message RevokeGrantResponse {
  string grant_id = 1;
}

message EventResource {
  string kind = 1;
  repeated string id = 2;
  optional string warehouse = 3;
  // The real id of the namespace or table, when known.
  optional string object_id = 4;
}

message Event {
  string event_id = 1;
  uint64 at_ms = 2;
  optional string principal = 3;
  string action = 4;
  EventResource resource = 5;
  string outcome = 6;
  optional uint32 code = 7;
  optional string request_id = 8;
  optional VendedEvent vended = 9;
  // The table version the write made (a commit, an insert, ...).
  optional int64 version = 10;
}

// Credentials handed with an answer: never the secret.
message VendedEvent {
  string privilege = 1;
  string access_key_id = 2;
  uint64 expires_at_ms = 3;
}

message ListEventsRequest {
  optional string since = 1;
  optional string page_token = 2;
  optional int32 limit = 3;
}

message ListEventsResponse {
  repeated Event events = 1;
  optional string page_token = 2;
}

message ApiKeyInfo {
  string key_id = 1;
  string principal = 2;
  optional string description = 3;
  uint64 created_at_ms = 4;
  optional string created_by = 5;
}

message CreateApiKeyRequest {
  string principal = 1;
  optional string description = 2;
}

message CreateApiKeyResponse {
  string key_id = 1;
  string key = 2;
  string principal = 3;
  optional string description = 4;
  uint64 created_at_ms = 5;
}

message ListApiKeysRequest {
  optional string principal = 1;
  optional string page_token = 2;
  optional int32 limit = 3;
}

message ListApiKeysResponse {
  repeated ApiKeyInfo api_keys = 1;
  optional string page_token = 2;
}

message RevokeApiKeyRequest {
  string key_id = 1;
}

message RevokeApiKeyResponse {
  string key_id = 1;
}

// A local user as it may be shown: never its password or hash.
message UserInfo {
  string username = 1;
  repeated string groups = 2;
  optional string description = 3;
  bool disabled = 4;
  uint64 created_at_ms = 5;
  optional string created_by = 6;
  uint64 password_changed_at_ms = 7;
}

message CreateUserRequest {
  string username = 1;
  string password = 2;
  repeated string groups = 3;
  optional string description = 4;
  optional bool disabled = 5;
}

message ListUsersRequest {
  optional string page_token = 1;
  optional int32 limit = 2;
}

message ListUsersResponse {
  repeated UserInfo users = 1;
  optional string page_token = 2;
}

message GetUserRequest {
  string username = 1;
}

// Fields left out stay as they are (an empty groups list too: proto3
// cannot tell it from an absent one; REST's [] clears them).
message UpdateUserRequest {
  string username = 1;
  optional bool disabled = 2;
  repeated string groups = 3;
  optional string description = 4;
}

message DeleteUserRequest {
  string username = 1;
}

message DeleteUserResponse {
  string username = 1;
  // The grants that named the user, ended with it.
  uint64 grants_revoked = 2;
  // The API keys minted for its name, revoked with it.
  uint64 api_keys_revoked = 3;
}

// Sign in with the call's own Basic credentials; the body is empty.
message CreateSessionRequest {}

// Sign out: the call's own session token is the one ended.
message DeleteSessionRequest {}

message DeleteSessionResponse {}

// A local user's session token (Authorization: Bearer on later calls).
message Session {
  string username = 1;
  string token = 2;
  uint64 expires_at_ms = 3;
}

// A user changing its own password sends current_password.
message SetUserPasswordRequest {
  string username = 1;
  string password = 2;
  optional string current_password = 3;
}

message CreateWarehouseNamespaceRequest {
  string warehouse_id = 1;
  string namespace = 2;
  map<string, string> properties = 3;
  optional string mode = 4;
}

message WarehouseNamespace {
  string warehouse_id = 1;
  string namespace = 2;
  map<string, string> properties = 3;
}

message ListWarehouseNamespacesRequest {
  string warehouse_id = 1;
  optional string page_token = 2;
  optional int32 limit = 3;
}

message ListWarehouseNamespacesResponse {
  repeated string namespaces = 1;
  optional string page_token = 2;
}

message GetServerInfoRequest {}

message ServerInfo {
  string version = 1;
  repeated string storage_roots = 2;
  repeated string features = 3;
}

message DescribeJobRequest {
  string job_id = 1;
}

message JobRecord {
  string job_id = 1;
  string kind = 2;
  repeated string table = 3;
  optional string column = 4;
  string state = 5;
  optional string error = 6;
  optional uint32 error_code = 7;
  optional uint64 rows_written = 8;
  optional int64 version = 9;
  map<string, string> details = 10;
  uint64 created_at_ms = 11;
  uint64 updated_at_ms = 12;
}

// A maintenance policy record's fields; unset: the server's default.
message PolicyFields {
  optional string version_retention = 1;
  optional uint64 versions_to_retain = 2;
  optional bool compaction = 3;
  optional string interval = 4;
  optional uint64 target_rows_per_fragment = 5;
  optional bool purge_expired_trash = 6;
  optional string trash_grace = 7;
}

// Every field of a policy, resolved.
message Policy {
  string version_retention = 1;
  uint64 versions_to_retain = 2;
  bool compaction = 3;
  string interval = 4;
  uint64 target_rows_per_fragment = 5;
  bool purge_expired_trash = 6;
  string trash_grace = 7;
}

// The record an effective policy came from: table, namespace, project or server.
message PolicyWinner {
  string level = 1;
  repeated string id = 2;
  optional string object_id = 3;
  optional string updated_by = 4;
  optional uint64 updated_at_ms = 5;
}

// Where one field's value comes from: set_here or inherited, from a level.
message FieldSource {
  string state = 1;
  string from = 2;
}

// An object's effective maintenance policy, naming the record that won.
message EffectivePolicy {
  string level = 1;
  repeated string id = 2;
  PolicyWinner winner = 3;
  Policy policy = 4;
  map<string, FieldSource> sources = 5;
  optional PolicyFields own = 6;
}

message GetMaintenancePolicyRequest {
  repeated string id = 1;
}

// The whole record: fields left out are the server's defaults.
message SetMaintenancePolicyRequest {
  repeated string id = 1;
  optional string version_retention = 2;
  optional uint64 versions_to_retain = 3;
  optional bool compaction = 4;
  optional string interval = 5;
  optional uint64 target_rows_per_fragment = 6;
  optional bool purge_expired_trash = 7;
  optional string trash_grace = 8;
}

message DeleteMaintenancePolicyRequest {
  repeated string id = 1;
}

message GetProjectMaintenancePolicyRequest {
  string project_id = 1;
}

message SetProjectMaintenancePolicyRequest {
  string project_id = 1;
  optional string version_retention = 2;
  optional uint64 versions_to_retain = 3;
  optional bool compaction = 4;
  optional string interval = 5;
  optional uint64 target_rows_per_fragment = 6;
  optional bool purge_expired_trash = 7;
  optional string trash_grace = 8;
}

message DeleteProjectMaintenancePolicyRequest {
  string project_id = 1;
}

message DeleteMaintenancePolicyResponse {
  bool removed = 1;
}

message GetIndexHealthRequest {
  repeated string id = 1;
}

// One table's indices at its latest version: how much of it each covers.
message IndexHealth {
  repeated string id = 1;
  uint64 version = 2;
  uint64 fragments = 3;
  uint64 rows = 4;
  repeated IndexHealthEntry indices = 5;
  bool optimize_due = 6;
}

message GetSweepRequest {
  repeated string id = 1;
}

// One table as the scheduler sees it now, and what its next round does.
message TableSweep {
  repeated string id = 1;
  PolicyWinner winner = 2;
  bool has_data = 3;
  uint64 fragments = 4;
  uint64 untidy_fragments = 5;
  uint64 target_rows_per_fragment = 6;
  uint64 versions = 7;
  uint64 versions_past_retention = 8;
  optional uint64 last_round_at_ms = 9;
  optional uint64 next_round_at_ms = 10;
  repeated string would_submit = 11;
  repeated string unfinished = 12;
  uint64 compactable_fragments = 13;
}

message SweepReport {
  repeated TableSweep tables = 1;
  repeated TrashEntry expired_trash = 2;
  repeated CreateLeftover create_leftovers = 3;
}

// A stale intent of a create that died before recording its table, and
// what the sweep did (or would do) about its bytes: removed, recorded (a
// table owns them), kept (another create writes there), would_remove.
message CreateLeftover {
  string intent_id = 1;
  string location = 2;
  repeated string table = 3;
  optional string object_id = 4;
  string replica = 5;
  uint64 started_ms = 6;
  uint64 touched_ms = 7;
  string outcome = 8;
  optional uint64 taken_ms = 9;
}

message GetProjectReportRequest {
  string project_id = 1;
}

message WarehouseSweep {
  string warehouse_id = 1;
  repeated TableSweep tables = 2;
  repeated TrashEntry expired_trash = 3;
  repeated CreateLeftover create_leftovers = 4;
}

message ProjectSweep {
  repeated WarehouseSweep warehouses = 1;
}

message NamespaceIndexHealth {
  repeated IndexHealth tables = 1;
}

message WarehouseIndexHealth {
  string warehouse_id = 1;
  repeated IndexHealth tables = 2;
}

message ProjectIndexHealth {
  repeated WarehouseIndexHealth warehouses = 1;
}

message IndexHealthEntry {
  string name = 1;
  repeated string columns = 2;
  uint64 segments = 3;
  uint64 fragments_covered = 4;
  uint64 fragments_unindexed = 5;
  uint64 unindexed_rows = 6;
  bool coverage_unknown = 7;
  bool optimize_due = 8;
}

message GetOrphansRequest {
  repeated string id = 1;
}

// One table's orphan scan: files under its location nothing references.
message OrphanReport {
  repeated string id = 1;
  string location = 2;
  uint64 files_scanned = 3;
  uint64 bytes_scanned = 4;
  uint64 manifests_read = 5;
  repeated string branches = 6;
  repeated TableRef clones = 7;
  repeated OrphanFile orphans = 8;
  repeated OrphanFile transactions = 9;
  repeated OrphanFile unverifiable = 10;
  uint64 orphan_bytes = 11;
  uint64 min_age_s = 12;
  repeated string symlinks = 13;
}

// A table's id.
message TableRef {
  repeated string id = 1;
  optional string trash_id = 2;
}

message OrphanFile {
  string path = 1;
  uint64 size_bytes = 2;
  uint64 last_modified_ms = 3;
  bool maybe_in_flight = 4;
}

message NamespaceOrphans {
  repeated OrphanReport tables = 1;
}

message WarehouseOrphans {
  string warehouse_id = 1;
  repeated OrphanReport tables = 2;
}

message ProjectOrphans {
  repeated WarehouseOrphans warehouses = 1;
}

message ReclaimRequest {
  repeated string id = 1;
  repeated string paths = 2;
}

message ReclaimResponse {
  repeated OrphanFile deleted = 1;
  repeated KeptFile kept = 2;
  uint64 bytes_deleted = 3;
}

// A path reclaim kept, and why: referenced, in_flight, missing, protected,
// invalid or failed.
message KeptFile {
  string path = 1;
  string reason = 2;
}

// A piece of a streamed query answer: consecutive chunks concatenate to one
// Arrow IPC stream.
message ArrowChunk {
  bytes data = 1;
}
''')
for name in order:
    sch = schemas.get(name, {})
    desc = (sch.get("description") or "").strip().splitlines()
    if desc:
        out.append(f"// {desc[0]}")
    out.append(f"message {name} {{")
    out.extend(messages[name])
    out.append("}")
    out.append("")
open(out_path, "w").write("\n".join(out))
print(f"{out_path}: {len(ops)} operations, {len(order)} messages")
