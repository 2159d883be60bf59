"""The real Python clients against the real server: lance_namespace's REST
client (inside pylance) and pylance's dataset API through a namespace."""

import lance
import pyarrow as pa
import pytest
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    CreateTableTagRequest,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    DropNamespaceRequest,
    DropTableRequest,
    GetTableTagVersionRequest,
    InsertIntoTableRequest,
    ListNamespacesRequest,
    ListTablesRequest,
    ListTableTagsRequest,
    ListTableVersionsRequest,
    NamespaceExistsRequest,
    TableExistsRequest,
)
from conftest import fresh, ipc, sample
from lance_namespace.errors import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    TableNotFoundError,
)


def test_namespace_and_table_round_trip(ns):
    top = fresh()
    ns.create_namespace(CreateNamespaceRequest(id=[top], properties={"owner": "me"}))
    with pytest.raises(NamespaceAlreadyExistsError):
        ns.create_namespace(CreateNamespaceRequest(id=[top]))
    ns.create_namespace(CreateNamespaceRequest(id=[top, "inner"]))
    assert top in ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces
    assert ns.describe_namespace(DescribeNamespaceRequest(id=[top])).properties["owner"] == "me"
    ns.namespace_exists(NamespaceExistsRequest(id=[top, "inner"]))
    with pytest.raises(NamespaceNotFoundError):
        ns.namespace_exists(NamespaceExistsRequest(id=[top, "missing"]))

    tid = [top, "inner", "t"]
    created = ns.create_table(CreateTableRequest(id=tid), ipc(sample(0, 3)))
    assert created.location
    assert ns.list_tables(ListTablesRequest(id=[top, "inner"])).tables == ["t"]
    desc = ns.describe_table(DescribeTableRequest(id=tid, load_detailed_metadata=True))
    assert desc.version == 1
    ns.table_exists(TableExistsRequest(id=tid))
    ins = ns.insert_into_table(InsertIntoTableRequest(id=tid, mode="append"), ipc(sample(3, 3)))
    assert ins.version == 2
    assert ns.count_table_rows(CountTableRowsRequest(id=tid, predicate="id > 1")).count == 4
    r = ns.query_table({"id": tid, "k": 100, "vector": {}, "filter": "id >= 2",
                        "columns": {"column_names": ["id", "s"]}})
    got = pa.ipc.open_file(r.data).read_all()
    assert got.column_names == ["id", "s"]
    assert sorted(got.column("id").to_pylist()) == [2, 3, 4, 5]
    versions = ns.list_table_versions(ListTableVersionsRequest(id=tid)).versions
    assert sorted(v.version for v in versions) == [1, 2]
    ns.create_table_tag(CreateTableTagRequest(id=tid, tag="v1", version=1))
    assert ns.list_table_tags(ListTableTagsRequest(id=tid)).tags["v1"].version == 1
    assert ns.get_table_tag_version(GetTableTagVersionRequest(id=tid, tag="v1")).version == 1

    with pytest.raises(NamespaceNotEmptyError):
        ns.drop_namespace(DropNamespaceRequest(id=[top, "inner"]))
    ns.drop_table(DropTableRequest(id=tid))
    with pytest.raises(TableNotFoundError) as err:
        ns.table_exists(TableExistsRequest(id=tid))
    assert err.value.code == 4
    ns.drop_namespace(DropNamespaceRequest(id=[top, "inner"]))
    ns.drop_namespace(DropNamespaceRequest(id=[top]))


def test_pylance_dataset_api_through_the_namespace(ns):
    top = fresh()
    ns.create_namespace(CreateNamespaceRequest(id=[top]))
    tid = [top, "w"]
    lance.write_dataset(sample(0, 5), namespace_client=ns, table_id=tid)
    lance.write_dataset(sample(5, 5), namespace_client=ns, table_id=tid, mode="append")
    ds = lance.dataset(namespace_client=ns, table_id=tid)
    assert ds.count_rows() == 10
    assert sorted(ds.to_table().column("id").to_pylist()) == list(range(10))
    # The catalog sees what pylance wrote.
    assert ns.count_table_rows(CountTableRowsRequest(id=tid)).count == 10
    assert "w" in ns.list_tables(ListTablesRequest(id=[top])).tables


def test_a_million_rows_in_one_insert(ns):
    top = fresh()
    ns.create_namespace(CreateNamespaceRequest(id=[top]))
    tid = [top, "big"]
    ns.create_table(CreateTableRequest(id=tid), ipc(sample(0, 1)))
    n = 1_000_000
    body = ipc(sample(1, n))
    assert len(body) > 2 * 1024 * 1024  # beyond the reference server's cap
    ins = ns.insert_into_table(InsertIntoTableRequest(id=tid, mode="append"), body)
    assert ins.version == 2
    assert ns.count_table_rows(CountTableRowsRequest(id=tid)).count == n + 1
