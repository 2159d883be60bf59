"""lancedb 0.40 against the real server through its "rest" namespace client:
namespaces, a table with a vector column, appends, filtered and vector
search, versions and time travel, then describe through the underlying
lance.namespace client, drop and cleanup."""

import lance
import lancedb
import pyarrow as pa
import pytest
from conftest import fresh, open_dataset
from lance_namespace import DescribeTableRequest, TableExistsRequest
from lance_namespace.errors import TableNotFoundError


def rows(ids):
    """id, a string, and a 4-d float32 vector that points along x by `id`."""
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([f"n{i}" for i in ids], pa.string()),
        "vector": pa.array([[float(i), 0.5, -0.5, 1.0] for i in ids], pa.list_(pa.float32(), 4)),
    })


def test_lancedb_flow(server):
    db = lancedb.connect_namespace("rest", {"uri": server["url"]})
    top = fresh("ldb")
    inner = [top, "inner"]

    db.create_namespace([top])
    db.create_namespace(inner)
    assert top in db.list_namespaces().namespaces
    assert db.list_namespaces(namespace_path=[top]).namespaces == ["inner"]
    assert db.list_namespaces(namespace_path=inner).namespaces == []

    created = db.create_table("items", rows([0, 1, 2, 3, 4]), namespace_path=inner)
    assert created.count_rows() == 5

    tbl = db.open_table("items", namespace_path=inner)
    assert tbl.schema == pa.schema([
        pa.field("id", pa.int64()),
        pa.field("name", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), 4)),
    ])
    assert tbl.count_rows() == 5

    tbl.add(rows([5, 6, 7]))
    assert tbl.count_rows() == 8

    got = tbl.search().where("id < 3").limit(100).to_arrow()
    assert sorted(got.column("id").to_pylist()) == [0, 1, 2]
    assert sorted(got.column("name").to_pylist()) == ["n0", "n1", "n2"]

    near = tbl.search([6.2, 0.5, -0.5, 1.0]).limit(2).to_arrow()
    assert near.column("id").to_pylist() == [6, 7]
    assert near.column("_distance").to_pylist() == pytest.approx([0.04, 0.64], rel=1e-4)

    versions = tbl.list_versions()
    assert [v["version"] for v in versions] == [1, 2]
    assert tbl.version == 2

    tbl.checkout(1)
    assert tbl.version == 1
    assert tbl.count_rows() == 5
    assert tbl.search().where("id >= 5").limit(100).to_arrow().num_rows == 0
    tbl.checkout_latest()
    assert tbl.version == 2
    assert tbl.count_rows() == 8

    assert db.list_tables(namespace_path=inner).tables == ["items"]

    nc = db.namespace_client()
    assert isinstance(nc, lance.namespace.RestNamespace)
    desc = nc.describe_table(DescribeTableRequest(id=inner + ["items"]))
    assert desc.location
    ds = open_dataset(desc.location)
    assert ds.count_rows() == 8
    assert ds.version == 2
    assert sorted(ds.to_table(columns=["id"]).column("id").to_pylist()) == list(range(8))

    db.drop_table("items", namespace_path=inner)
    assert db.list_tables(namespace_path=inner).tables == []
    with pytest.raises(TableNotFoundError):
        nc.table_exists(TableExistsRequest(id=inner + ["items"]))

    db.drop_namespace(inner)
    assert db.list_namespaces(namespace_path=[top]).namespaces == []
    db.drop_namespace([top])
    assert top not in db.list_namespaces().namespaces
