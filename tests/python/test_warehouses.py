"""Warehouses on, through the real Python clients: lance_namespace and
lancedb pointed at a warehouse's URL (`/warehouses/{id}`) create top-level
namespaces in that warehouse, their tables land under its root, and plain
pylance reads them there. The server-wide root lists every warehouse."""

import json
import os
import tempfile
import urllib.request

import lance_namespace
import lancedb
import pytest
from conftest import fresh, ipc, list_dirs, new_root, open_dataset, sample, start_server, storage_options_for
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DescribeTableRequest,
    InsertIntoTableRequest,
    ListNamespacesRequest,
)


def post(url, body, method="POST"):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"null")


@pytest.fixture(scope="module")
def estate():
    home = new_root("lance-catalog-home-")
    # On S3 (LANCE_CATALOG_TEST_S3) east stays local and west is on S3,
    # with its storage options in its create body: one server, both kinds.
    roots = {"east": tempfile.mkdtemp(prefix="lance-catalog-east-"), "west": new_root("lance-catalog-west-")}
    started = start_server(home, "--warehouses", "on")
    url = started["url"]
    post(f"{url}/v1/projects", {"project_id": "acme"})
    for w, root in roots.items():
        body = {"warehouse_id": w, "project_id": "acme", "root": root}
        if storage_options_for(root):
            body["storage_options"] = storage_options_for(root)
        post(f"{url}/v1/warehouses", body)
    yield {"url": url, "roots": roots, "home": home}
    started["proc"].terminate()
    started["proc"].wait(timeout=30)


def test_lance_namespace_through_a_warehouse(estate):
    url, roots = estate["url"], estate["roots"]
    east = lance_namespace.connect("rest", {"uri": f"{url}/warehouses/east"})
    top = fresh("east")
    east.create_namespace(CreateNamespaceRequest(id=[top]))
    east.create_namespace(CreateNamespaceRequest(id=[top, "inner"]))
    tid = [top, "inner", "t"]
    east.create_table(CreateTableRequest(id=tid), ipc(sample(0, 3)))
    east.insert_into_table(InsertIntoTableRequest(id=tid, mode="append"), ipc(sample(3, 2)))

    desc = east.describe_table(DescribeTableRequest(id=tid))
    real = os.path.realpath(roots["east"])
    assert desc.location.replace("file://", "").startswith(real), desc.location
    ds = open_dataset(desc.location)
    assert ds.count_rows() == 5
    assert sorted(ds.to_table().column("id").to_pylist()) == [0, 1, 2, 3, 4]

    # The server-wide client sees it too; the other warehouse does not.
    everywhere = lance_namespace.connect("rest", {"uri": url})
    assert top in everywhere.list_namespaces(ListNamespacesRequest(id=[])).namespaces
    assert everywhere.describe_table(DescribeTableRequest(id=tid)).location == desc.location
    west = lance_namespace.connect("rest", {"uri": f"{url}/warehouses/west"})
    assert top not in west.list_namespaces(ListNamespacesRequest(id=[])).namespaces

    # A top-level create without a warehouse names the door.
    with pytest.raises(Exception) as refused:
        everywhere.create_namespace(CreateNamespaceRequest(id=[fresh("nowhere")]))
    assert "/v1/warehouses/" in str(refused.value)


def test_lancedb_through_a_warehouse(estate):
    url, roots = estate["url"], estate["roots"]
    db = lancedb.connect_namespace("rest", {"uri": f"{url}/warehouses/west"})
    top = fresh("west")
    db.create_namespace([top])
    tbl = db.create_table("items", sample(0, 4), namespace_path=[top])
    tbl.add(sample(4, 2))
    assert tbl.count_rows() == 6
    assert [v["version"] for v in tbl.list_versions()] == [1, 2]
    again = db.open_table("items", namespace_path=[top])
    assert sorted(again.to_arrow().column("id").to_pylist()) == list(range(6))
    on_disk = list_dirs(roots["west"])
    assert any(d.startswith("items") or "items" in d for d in on_disk), on_disk
