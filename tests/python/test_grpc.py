"""The gRPC service through Python's grpcio, with stubs generated from the
project's proto/ at test time."""
import os
import subprocess
import sys
import tempfile

import grpc
import pytest

from conftest import fresh, ipc, sample

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
