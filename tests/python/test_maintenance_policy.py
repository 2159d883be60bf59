"""Maintenance policies and the scheduler with the real server: two
replicas on one root, records set over REST, tables written with Lance's
own namespace client, and pylance reading the result. A namespace's
record makes its tables' rounds due every second: exactly one compaction
is submitted across both replicas, the table ends at one fragment with
every row and the versions its record keeps, and a table whose own record
turns compaction off keeps its fragments."""
import time

import lance_namespace
from lance_namespace import (CreateNamespaceRequest, CreateTableRequest,
                             DescribeTableRequest, InsertIntoTableRequest)

from conftest import fresh, http_json, ipc, new_root, open_dataset, sample, start_server


def _table(ns, tid, appends):
    ns.create_table(CreateTableRequest(id=tid), ipc(sample(0, 10)))
    for i in range(1, appends):
        ns.insert_into_table(InsertIntoTableRequest(id=tid), ipc(sample(i * 10, 10)))


def test_two_replicas_keep_a_table_by_its_policy_once():
    root = new_root("lance-catalog-scheduler-")
    flags = ("--scheduler-interval", "1s", "--task-poll", "0.2", "--scheduler-cleanup", "on")
    a = start_server(root, *flags)
    b = start_server(root, *flags)
    A, B = a["url"], b["url"]
    try:
        ns = lance_namespace.connect("rest", {"uri": A})
        top = fresh("sched")
        ns.create_namespace(CreateNamespaceRequest(id=[top]))
        hot, frozen = [top, "hot"], [top, "frozen"]
        _table(ns, hot, 6)
        _table(ns, frozen, 3)

        status, p = http_json("POST", f"{A}/v1/namespace/{top}/maintenance_policy",
                              {"interval": "1s", "version_retention": "0", "versions_to_retain": 2})
        assert status == 200, p
        status, p = http_json("POST", f"{B}/v1/table/{top}$frozen/maintenance_policy",
                              {"interval": "1s", "compaction": False})
        assert status == 200, p
        # Either replica answers the same effective policy, naming the winner.
        status, p = http_json("GET", f"{B}/v1/table/{top}$hot/maintenance_policy")
        assert status == 200, p
        assert p["winner"]["level"] == "namespace" and p["winner"]["id"] == [top], p
        assert p["policy"]["versions_to_retain"] == 2
        assert p["sources"]["compaction"] == {"state": "inherited", "from": "server"}, p
        status, p = http_json("GET", f"{A}/v1/table/{top}$frozen/maintenance_policy")
        assert p["winner"]["level"] == "table" and p["policy"]["compaction"] is False, p

        location = ns.describe_table(DescribeTableRequest(id=hot)).location
        deadline = time.time() + 90
        while time.time() < deadline:
            ds = open_dataset(location)
            try:
                versions = len(ds.versions())
            except Exception:  # a listing that races the cleanup
                versions = None
            if len(ds.get_fragments()) == 1 and versions is not None and versions <= 2:
                break
            time.sleep(0.5)
        ds = open_dataset(location)
        assert len(ds.get_fragments()) == 1
        assert ds.count_rows() == 60
        assert sorted(ds.to_table(columns=["id"]).column("id").to_pylist()) == list(range(60))
        assert len(ds.versions()) == 2

        # One compaction across both replicas, submitted by the scheduler.
        compactions = []
        for url in (A, B):
            status, listed = http_json(
                "GET", f"{url}/lance/oss/v1/table/{top}$hot/tasks?task_type=lance_compact")
            assert status == 200, listed
            compactions.append(sorted(t["task_id"] for t in listed["tasks"]))
        assert compactions[0] == compactions[1] and len(compactions[0]) == 1, compactions

        # Compaction off: its three fragments stay.
        frozen_at = ns.describe_table(DescribeTableRequest(id=frozen)).location
        assert len(open_dataset(frozen_at).get_fragments()) == 3
        status, listed = http_json(
            "GET", f"{A}/lance/oss/v1/table/{top}$frozen/tasks?task_type=lance_compact")
        assert status == 200 and listed["tasks"] == [], listed
    finally:
        for s in (a, b):
            s["proc"].terminate()
            s["proc"].wait(timeout=30)
