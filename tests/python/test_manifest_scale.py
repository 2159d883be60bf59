"""The root the catalog writes stays a plain Lance namespace root as it
grows: after a few hundred writes of every kind (each an appended
`__manifest` fragment or deletion, folded and indexed in the background),
pylance's own `dir` namespace, reading the root directly, lists, describes
and reads exactly what the catalog answers."""
import time

import lance_namespace
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    DropTableRequest,
    ListTablesRequest,
    RenameTableRequest,
    TableExistsRequest,
)

from conftest import ipc, new_root, open_dataset, sample, start_server, storage_options_for

DECLARED = 240
CREATED = 6
DROPPED = 40


def _all(ns, nsid):
    names, token = [], None
    while True:
        page = ns.list_tables(ListTablesRequest(id=[nsid], page_token=token, limit=50))
        names += page.tables
        token = page.page_token
        if not token:
            return sorted(names)


def _manifest(root):
    return open_dataset(f"{root.rstrip('/')}/__manifest")


def test_a_root_written_at_scale_reads_with_pylances_dir_namespace():
    root = new_root("lance-catalog-scale-")
    srv = start_server(root)
    try:
        rest = lance_namespace.connect("rest", {"uri": srv["url"]})
        rest.create_namespace(CreateNamespaceRequest(id=["s"]))
        for i in range(DECLARED):
            rest.declare_table(DeclareTableRequest(id=["s", f"d{i:04d}"]))
        for i in range(CREATED):
            rest.create_table(CreateTableRequest(id=["s", f"c{i}"]), ipc(sample(i * 10, 10)))
        for i in range(DROPPED):
            rest.drop_table(DropTableRequest(id=["s", f"d{i:04d}"]))
        rest.rename_table(RenameTableRequest(id=["s", "c0"], new_table_name="renamed"))
        expected = sorted([f"d{i:04d}" for i in range(DROPPED, DECLARED)] + [f"c{i}" for i in range(1, CREATED)]
                          + ["renamed"])
        assert _all(rest, "s") == expected

        # The background passes fold the per-write fragments: a few remain,
        # not one per write.
        deadline = time.time() + 60
        while len(_manifest(root).get_fragments()) > 12 and time.time() < deadline:
            time.sleep(0.5)
        writes = DECLARED + CREATED + DROPPED + 2
        fragments = len(_manifest(root).get_fragments())
        assert fragments <= 12, f"{fragments} __manifest fragments after {writes} writes"
        assert any(i.name == "object_id_btree" for i in _manifest(root).describe_indices())

        # pylance's own namespace on the same root, the server still up.
        local = lance_namespace.connect("dir", {"root": root, **{
            f"storage.{k}": v for k, v in storage_options_for(root).items()}})
        assert _all(local, "s") == expected
        for name in ("renamed", "c3"):
            d = local.describe_table(DescribeTableRequest(id=["s", name]))
            assert d.location == rest.describe_table(DescribeTableRequest(id=["s", name])).location
            assert open_dataset(d.location).count_rows() == 10
        local.table_exists(TableExistsRequest(id=["s", f"d{DECLARED - 1:04d}"]))
        for gone in (["s", "d0000"], ["s", "c0"]):
            try:
                local.table_exists(TableExistsRequest(id=gone))
            except Exception as e:  # the dir namespace raises its own not-found error
                assert "not" in str(e).lower(), e
            else:
                raise AssertionError(f"{gone} is still listed by the dir namespace")
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)
