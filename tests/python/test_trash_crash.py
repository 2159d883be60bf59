"""Crash safety of recoverable drops: the real server is killed (a fault
point armed through LANCE_CATALOG_FAULT makes it abort, as a kill -9
would) in the middle of a cascade drop and in the middle of an undrop,
then restarted on the same root: the same call completes, nothing is
lost, no table is registered twice."""
import os
import subprocess

import lance_namespace
import pytest
from lance_namespace_urllib3_client.models import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    DescribeTableRequest,
    DropNamespaceRequest,
)

from conftest import http_json as _http, ipc, new_root, open_dataset, sample, serve_argv, serve_env, start_server

GRACE = ["--trash-grace", "1d"]


def _crashing(root, point):
    env = serve_env(root, *GRACE, env=dict(os.environ, LANCE_CATALOG_FAULT=point))
    proc = subprocess.Popen(
        serve_argv(root, *GRACE),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    for line in proc.stdout:
        if "listening on http://" in line:
            url = line.split("listening on ")[1].strip()
            return url, proc
    raise RuntimeError("server did not start")


def _build(ns):
    """a, a$b, a$b$c holding 10 tables; answer {table id: rows}."""
    for n in (["a"], ["a", "b"], ["a", "b", "c"]):
        ns.create_namespace(CreateNamespaceRequest(id=n))
    made = {}
    for i in range(10):
        parent = ["a"] if i < 3 else (["a", "b"] if i < 6 else ["a", "b", "c"])
        tid = parent + [f"t{i}"]
        ns.create_table(CreateTableRequest(id=tid), ipc(sample(0, i + 1)))
        made["$".join(tid)] = i + 1
    return made


def _all_tables(url):
    s, body = _http("GET", f"{url}/v1/table?delimiter=$")
    assert s == 200, body
    return sorted(body["tables"])


def _stop(proc):
    proc.terminate()
    proc.wait(timeout=30)


def test_kill_mid_cascade_drop_and_mid_undrop():
    root = new_root("lance-catalog-crash-")
    srv = start_server(root, *GRACE)
    ns = lance_namespace.connect("rest", {"uri": srv["url"]})
    made = _build(ns)
    # Where every table's bytes are, to check that nothing is ever lost.
    locations = {t: ns.describe_table(DescribeTableRequest(id=t.split("$"))).location for t in made}
    assert _all_tables(srv["url"]) == sorted(made)
    _stop(srv["proc"])

    # 1. Killed after the 5th trash record of the cascade.
    url, proc = _crashing(root, "trash.detach:5")
    with pytest.raises(Exception):
        lance_namespace.connect("rest", {"uri": url}).drop_namespace(
            DropNamespaceRequest(id=["a"], behavior="Cascade"))
    assert proc.wait(timeout=30) != 0
    srv = start_server(root, *GRACE)
    ns = lance_namespace.connect("rest", {"uri": srv["url"]})
    # Nothing was detached yet: the commit never happened.
    assert _all_tables(srv["url"]) == sorted(made)
    # The records filed so far name tables that still stand: purging one
    # forgets the record and never touches the live table's bytes.
    s, listed = _http("GET", f"{srv['url']}/v1/trash")
    standing = [e for e in listed["entries"] if e["kind"] == "table"][0]
    s, purged = _http("DELETE", f"{srv['url']}/v1/trash/{standing['trash_id']}")
    assert s == 200, purged
    name = "$".join(standing["id"])
    assert open_dataset(locations[name]).count_rows() == made[name]
    assert _all_tables(srv["url"]) == sorted(made)
    dropped = ns.drop_namespace(DropNamespaceRequest(id=["a"], behavior="Cascade"))
    assert dropped.transaction_id
    assert _all_tables(srv["url"]) == []
    s, listed = _http("GET", f"{srv['url']}/v1/trash")
    entries = listed["entries"]
    # One record per object, none twice, one drop.
    assert len(entries) == 13, entries
    assert len({tuple(e["id"]) for e in entries}) == 13
    assert len({e["group"] for e in entries}) == 1
    for t, loc in locations.items():
        assert open_dataset(loc).count_rows() == made[t]
    _stop(srv["proc"])

    # 2. Killed after its commit (the point's 1st pass), while the undrop
    # forgets the records (killed at the 3rd: 3 forgotten, 10 left).
    url, proc = _crashing(root, "trash.undrop:4")
    with pytest.raises(Exception):
        _http("POST", f"{url}/v1/namespace/a/undrop", {})
    assert proc.wait(timeout=30) != 0
    srv = start_server(root, *GRACE)
    # The tables stand already; the same call completes the rest.
    s, body = _http("POST", f"{srv['url']}/v1/namespace/a/undrop", {})
    assert s == 200, body
    assert len(body["restored"]) == 10, "the records the first call left count as restored"
    tables = _all_tables(srv["url"])
    assert tables == sorted(made), "every table once, none twice"
    ns = lance_namespace.connect("rest", {"uri": srv["url"]})
    for t, n in made.items():
        assert ns.count_table_rows(CountTableRowsRequest(id=t.split("$"))).count == n
        assert open_dataset(locations[t]).count_rows() == n
    s, listed = _http("GET", f"{srv['url']}/v1/trash")
    assert listed["entries"] == []
    _stop(srv["proc"])


def test_kill_after_the_cascade_commit():
    """Killed after the subtree was detached, before the drop was marked
    done: the same call answers success and finishes it."""
    root = new_root("lance-catalog-crash-")
    srv = start_server(root, *GRACE)
    ns = lance_namespace.connect("rest", {"uri": srv["url"]})
    made = _build(ns)
    _stop(srv["proc"])
    # The point passes once per record below `a` (12), then once after
    # the commit.
    url, proc = _crashing(root, "trash.detach:13")
    with pytest.raises(Exception):
        lance_namespace.connect("rest", {"uri": url}).drop_namespace(
            DropNamespaceRequest(id=["a"], behavior="Cascade"))
    assert proc.wait(timeout=30) != 0
    srv = start_server(root, *GRACE)
    assert _all_tables(srv["url"]) == []
    s, body = _http("POST", f"{srv['url']}/v1/namespace/a/drop", {"behavior": "Cascade"})
    assert s == 200, body
    s, listed = _http("GET", f"{srv['url']}/v1/trash")
    root_entry = [e for e in listed["entries"] if e["id"] == ["a"]][0]
    assert root_entry["complete"] is True
    s, body = _http("POST", f"{srv['url']}/v1/namespace/a/undrop", {})
    assert s == 200, body
    assert _all_tables(srv["url"]) == sorted(made)
    _stop(srv["proc"])
