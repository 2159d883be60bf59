"""The gRPC service through Python's grpcio, with stubs generated from the
project's proto/ at test time."""
import os
import subprocess
import sys
import tempfile

import grpc
import pytest

import json

from conftest import fresh, http_json, ipc, sample, serve_argv, serve_env

PROTO_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "proto")


@pytest.fixture(scope="module")
def stubs():
    import grpc_tools

    out = tempfile.mkdtemp(prefix="lance-catalog-stubs-")
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    subprocess.check_call([
        sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}", f"-I{well_known}",
        f"--python_out={out}", f"--grpc_python_out={out}", "lance_catalog.proto"])
    sys.path.insert(0, out)
    import lance_catalog_pb2 as pb
    import lance_catalog_pb2_grpc as pb_grpc
    return pb, pb_grpc


@pytest.fixture()
def stub(server, stubs):
    pb, pb_grpc = stubs
    channel = grpc.insecure_channel(server["url"].removeprefix("http://"))
    yield pb, pb_grpc.LanceNamespaceServiceStub(channel)
    channel.close()


def test_namespace_and_table_over_grpc(stub):
    pb, s = stub
    top = fresh("grpc")
    s.CreateNamespace(pb.CreateNamespaceRequest(id=[top], properties={"owner": "svc"}))
    assert top in s.ListNamespaces(pb.ListNamespacesRequest(id=[])).namespaces
    created = s.CreateTable(pb.CreateTableRequest(id=[top, "t"], data=ipc(sample(0, 5))))
    assert created.version == 1
    assert list(s.ListTables(pb.ListTablesRequest(id=[top])).tables) == ["t"]
    described = s.DescribeTable(pb.DescribeTableRequest(id=[top, "t"], load_detailed_metadata=True))
    assert described.version == 1
    assert [f.name for f in described.schema.fields] == ["id", "x", "s"]
    assert s.CountTableRows(pb.CountTableRowsRequest(id=[top, "t"])).count == 5

    with pytest.raises(grpc.RpcError) as err:
        s.DescribeTable(pb.DescribeTableRequest(id=[top, "missing"]))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    trailers = dict(err.value.trailing_metadata())
    assert trailers["lance-error-code"] == "4"
    assert trailers["lance-error-name"] == "TableNotFound"
    # The rich error model, read by grpcio's own rpc_status with the
    # standard error_details types: no knowledge of our metadata keys.
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    rich = rpc_status.from_call(err.value)
    assert rich.code == grpc.StatusCode.NOT_FOUND.value[0]
    infos = [d for d in rich.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    assert len(infos) == 1
    info = error_details_pb2.ErrorInfo()
    infos[0].Unpack(info)
    assert (info.reason, info.domain, dict(info.metadata)) == (
        "TableNotFound", "lance.catalog", {"code": "4"})


def test_reflection_with_grpcio_reflection(server):
    """grpcio-reflection speaks grpc.reflection.v1alpha only: the service
    list and a method's descriptor come back through it."""
    from google.protobuf.descriptor_pool import DescriptorPool
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )

    channel = grpc.insecure_channel(server["url"].removeprefix("http://"))
    try:
        db = ProtoReflectionDescriptorDatabase(channel)
        services = db.get_services()
        assert "lance.catalog.v1.LanceNamespaceService" in services
        assert "grpc.health.v1.Health" in services
        pool = DescriptorPool(db)
        svc = pool.FindServiceByName("lance.catalog.v1.LanceNamespaceService")
        assert svc.FindMethodByName("CreateNamespace").input_type.name == "CreateNamespaceRequest"
    finally:
        channel.close()


def test_index_health_over_grpc_and_the_cli(stub, stubs, server):
    """Rows appended after an index are unindexed, as gRPC's control
    service and `lance-catalog maintenance index-health` both report."""
    pb, s = stub
    _, pb_grpc = stubs
    top = fresh("health")
    s.CreateNamespace(pb.CreateNamespaceRequest(id=[top]))
    s.CreateTable(pb.CreateTableRequest(id=[top, "t"], data=ipc(sample(0, 5))))
    s.CreateTableScalarIndex(pb.CreateTableIndexRequest(id=[top, "t"], column="id", index_type="BTREE"))
    s.InsertIntoTable(pb.InsertIntoTableRequest(id=[top, "t"], data=ipc(sample(5, 3))))

    channel = grpc.insecure_channel(server["url"].removeprefix("http://"))
    control = pb_grpc.CatalogControlServiceStub(channel)
    health = control.GetTableIndexHealth(pb.GetIndexHealthRequest(id=[top, "t"]))
    # The namespace's report holds the same table's.
    whole = control.GetNamespaceIndexHealth(pb.GetIndexHealthRequest(id=[top]))
    channel.close()
    assert [list(t.id) for t in whole.tables] == [[top, "t"]]
    assert whole.tables[0] == health
    assert (health.fragments, health.rows, health.optimize_due) == (2, 8, True)
    [index] = health.indices
    assert list(index.columns) == ["id"]
    assert (index.fragments_covered, index.fragments_unindexed, index.unindexed_rows) == (1, 1, 3)

    # The same from the command line against the root, with no server.
    argv = serve_argv(server["root"])
    argv[1:2] = ["maintenance", "index-health"]
    out = subprocess.run(argv + ["--table", f"{top}$t"], capture_output=True, text=True,
                         env=serve_env(server["root"]), timeout=120)
    assert out.returncode == 0, out.stderr
    [table] = json.loads(out.stdout)
    assert table["id"] == [top, "t"]
    assert table["indices"][0]["unindexed_rows"] == 3, table

    # A table that does not exist is the spec's TableNotFound, on both.
    with pytest.raises(grpc.RpcError) as err:
        channel = grpc.insecure_channel(server["url"].removeprefix("http://"))
        pb_grpc.CatalogControlServiceStub(channel).GetTableIndexHealth(pb.GetIndexHealthRequest(id=[top, "nope"]))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    out = subprocess.run(argv + ["--table", f"{top}$nope"], capture_output=True, text=True,
                         env=serve_env(server["root"]), timeout=120)
    assert out.returncode == 1 and "does not exist" in out.stderr, out.stderr


def test_orphan_scan_and_reclaim_over_grpc(stubs):
    """A table written through the catalog has no orphans (on S3 too); a
    reclaim of paths it does not hold deletes nothing and says why."""
    from conftest import new_root, start_server

    pb, pb_grpc = stubs
    srv = start_server(new_root("lc-grpc-orphans-"))
    try:
        channel = grpc.insecure_channel(srv["url"].removeprefix("http://"))
        s = pb_grpc.LanceNamespaceServiceStub(channel)
        control = pb_grpc.CatalogControlServiceStub(channel)
        s.CreateNamespace(pb.CreateNamespaceRequest(id=["o"]))
        s.CreateTable(pb.CreateTableRequest(id=["o", "t"], data=ipc(sample(0, 5))))
        s.InsertIntoTable(pb.InsertIntoTableRequest(id=["o", "t"], data=ipc(sample(5, 3))))
        report = control.GetTableOrphans(pb.GetOrphansRequest(id=["o", "t"]))
        assert list(report.id) == ["o", "t"]
        assert report.manifests_read >= 2 and report.files_scanned >= 4, report
        assert list(report.orphans) == [] and list(report.transactions) == [], report
        whole = control.GetNamespaceOrphans(pb.GetOrphansRequest(id=["o"]))
        assert [list(t.id) for t in whole.tables] == [["o", "t"]]
        done = control.ReclaimTableOrphans(pb.ReclaimRequest(id=["o", "t"], paths=["data/nope.lance", "../x"]))
        assert list(done.deleted) == []
        assert {k.path: k.reason for k in done.kept} == {"data/nope.lance": "missing", "../x": "invalid"}
        assert s.CountTableRows(pb.CountTableRowsRequest(id=["o", "t"])).count == 8
        with pytest.raises(grpc.RpcError) as err:
            control.GetTableOrphans(pb.GetOrphansRequest(id=["o", "nope"]))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        channel.close()
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)


def test_estate_reports_over_grpc(stubs, server):
    """The project's sweep and index health and the reconciler answer over
    gRPC's control service as over REST; a repair with no kinds is the
    spec's InvalidInput."""
    pb, pb_grpc = stubs
    channel = grpc.insecure_channel(server["url"].removeprefix("http://"))
    control = pb_grpc.CatalogControlServiceStub(channel)
    try:
        sweep = control.GetProjectMaintenanceSweep(pb.GetProjectReportRequest(project_id="default"))
        assert [w.warehouse_id for w in sweep.warehouses] == ["default"]
        health = control.GetProjectIndexHealth(pb.GetProjectReportRequest(project_id="default"))
        assert [w.warehouse_id for w in health.warehouses] == ["default"]
        s, rest = http_json("GET", f"{server['url']}/v1/projects/default/index_health")
        assert s == 200 and len(rest["warehouses"][0]["tables"]) == len(health.warehouses[0].tables)
        report = control.GetReconciliation(pb.GetReconciliationRequest())
        kinds = {"binding_to_missing_warehouse", "table_without_data", "unowned_directory",
                 "trash_without_bytes", "tasks_of_missing_table", "policy_of_missing_object"}
        assert all(d.kind in kinds and d.repair for d in report.drifts), report
        with pytest.raises(grpc.RpcError) as err:
            control.RepairDrift(pb.RepairDriftRequest())
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as err:
            control.GetProjectMaintenanceSweep(pb.GetProjectReportRequest(project_id="nope"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        channel.close()


def test_cancel_a_task_over_grpc(stubs):
    """A replica that only serves the task API (--workers 0) keeps a task
    submitted; cancelled over gRPC it ends failed with TaskCancelled, a
    second cancel is the task's state conflict, and then it deletes."""
    from conftest import new_root, start_server

    pb, pb_grpc = stubs
    srv = start_server(new_root("lc-grpc-cancel-"), "--workers", "0")
    try:
        channel = grpc.insecure_channel(srv["url"].removeprefix("http://"))
        s = pb_grpc.LanceNamespaceServiceStub(channel)
        control = pb_grpc.CatalogControlServiceStub(channel)
        s.CreateNamespace(pb.CreateNamespaceRequest(id=["c"]))
        s.CreateTable(pb.CreateTableRequest(id=["c", "t"], data=ipc(sample(0, 5))))
        task = control.SubmitLanceTableCompactTask(pb.SubmitLanceTaskRequest(id=["c", "t"]))
        done = control.CancelLanceTask(pb.CancelLanceTaskRequest(id=["c", "t"], task_id=task.task_id))
        assert done.task_info.status == "failed"
        assert (done.task_info.error.error, done.task_info.error.code) == ("TaskCancelled", 10001)
        assert done.table_id == task.table_id
        with pytest.raises(grpc.RpcError) as err:
            control.CancelLanceTask(pb.CancelLanceTaskRequest(id=["c", "t"], task_id=task.task_id))
        assert err.value.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED)
        control.DeleteLanceTask(pb.DeleteLanceTaskRequest(id=["c", "t"], task_id=task.task_id))
        with pytest.raises(grpc.RpcError) as err:
            control.CancelLanceTask(pb.CancelLanceTaskRequest(id=["c", "t"], task_id=task.task_id))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        channel.close()
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)
