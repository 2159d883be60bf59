"""The estate reconciler on a real server's root: each kind of drift
between the registries, the warehouses' manifests and the storage is
planted the way it happens (a registry record lost, bytes deleted by hand,
a table purged with its tasks left, a policy record of an object that is
gone), found by `lance-catalog reconcile`, and removed by its repair,
which runs only for the kind named. Nothing else is touched."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import time

import lance_namespace
import pytest
from lance_namespace_urllib3_client.models import CreateNamespaceRequest, CreateTableRequest

from conftest import http_json, ipc, sample, serve_argv, serve_env, start_server

FLAGS = ["--warehouses", "on", "--trash-grace", "1d"]


def _reconcile(root, *repair):
    argv = serve_argv(root, *FLAGS)
    argv[1:2] = ["reconcile"]
    for kind in repair:
        argv += ["--repair", kind]
    out = subprocess.run(argv, capture_output=True, text=True, env=serve_env(root, *FLAGS), timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _kinds(report):
    return sorted((d["kind"], d["subject"]) for d in report["drifts"])


def _ok(method, url, body=None):
    s, b = http_json(method, url, body)
    assert s == 200, (url, b)
    return b


@pytest.mark.local_fs
def test_each_drift_is_found_and_repaired_by_its_own_action():
    root = tempfile.mkdtemp(prefix="lc-drift-")
    elsewhere = tempfile.mkdtemp(prefix="lc-drift-gone-")
    main_root = tempfile.mkdtemp(prefix="lc-drift-main-")
    srv = start_server(root, *FLAGS)
    url = srv["url"]
    try:
        _ok("POST", f"{url}/v1/projects", {"project_id": "acme"})
        _ok("POST", f"{url}/v1/warehouses", {"warehouse_id": "gone", "project_id": "acme", "root": elsewhere})
        lance_namespace.connect("rest", {"uri": f"{url}/warehouses/gone"}).create_namespace(
            CreateNamespaceRequest(id=["sales"]))
        _ok("POST", f"{url}/v1/warehouses", {"warehouse_id": "main", "project_id": "acme", "root": main_root})
        _ok("POST", f"{url}/v1/warehouses/main/namespaces", {"namespace": "d"})
        ns = lance_namespace.connect("rest", {"uri": url})
        # Declared, never written.
        _ok("POST", f"{url}/v1/table/d$declared/declare", {})
        # Dropped into trash, then its bytes deleted by hand.
        ns.create_table(CreateTableRequest(id=["d", "t"]), ipc(sample(0, 5)))
        t_location = _ok("POST", f"{url}/v1/table/d$t/describe", {})["location"]
        _ok("POST", f"{url}/v1/table/d$t/drop", {})
        # Maintained, then dropped and purged: its task records stay.
        ns.create_table(CreateTableRequest(id=["d", "u"]), ipc(sample(0, 5)))
        task = _ok("POST", f"{url}/lance/oss/v1/table/d$u/compact", {})["task_id"]
        deadline = time.time() + 120
        while _ok("GET", f"{url}/lance/oss/v1/table/d$u/tasks/{task}")["task_info"]["status"] not in ("completed", "failed"):
            assert time.time() < deadline
            time.sleep(0.2)
        _ok("POST", f"{url}/v1/table/d$u/drop", {})
        # A table that stays, with a policy record of its own.
        ns.create_table(CreateTableRequest(id=["d", "keep"]), ipc(sample(0, 5)))
        _ok("POST", f"{url}/v1/table/d$keep/maintenance_policy", {"interval": "2d"})
        trash = _ok("GET", f"{url}/v1/trash")["entries"]
        u_entry = [e for e in trash if e["id"] == ["d", "u"]][0]
        _ok("DELETE", f"{url}/v1/trash/{u_entry['trash_id']}")
        t_entry = [e for e in trash if e["id"] == ["d", "t"]][0]
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)

    control = os.path.join(root, "_catalog", "control")
    # The warehouse's registry record lost; its binding stays.
    shutil.rmtree(os.path.join(control, "warehouse", "gone"))
    shutil.rmtree(t_location.removeprefix("file://"))
    # Paths no table owns: one untouched for two hours, one just written.
    for rel, age in (("stray/x.bin", 7200), ("fresh_stray/y.bin", 0)):
        os.makedirs(os.path.dirname(os.path.join(main_root, rel)), exist_ok=True)
        with open(os.path.join(main_root, rel), "wb") as f:
            f.write(b"z" * 100)
        past = time.time() - age
        os.utime(os.path.join(main_root, rel), (past, past))
    # A policy record of an object no warehouse holds.
    [kept_policy] = glob.glob(os.path.join(control, "maintenance_policy", "table", "*"))
    ghost = "0" * 32
    shutil.copytree(kept_policy, os.path.join(control, "maintenance_policy", "table", ghost))

    report = _reconcile(root)
    u_real = u_entry["object_id"] if "object_id" in u_entry else None
    found = _kinds(report)
    assert ("binding_to_missing_warehouse", "sales") in found, found
    assert ("trash_without_bytes", t_entry["trash_id"]) in found, found
    assert ("policy_of_missing_object", ghost) in found, found
    tasks = [d for d in report["drifts"] if d["kind"] == "tasks_of_missing_table"]
    assert len(tasks) == 1, report
    if u_real:
        assert tasks[0]["subject"] == u_real
    declared = [d for d in report["drifts"] if d["kind"] == "table_without_data"]
    assert [d["table"] for d in declared] == [["d", "declared"]], report
    assert ("unowned_directory", "stray") in found and ("unowned_directory", "fresh_stray") in found, found
    assert all(d.get("repair") for d in report["drifts"])
    # The live table and its policy are not drift.
    assert not [d for d in report["drifts"] if d.get("table") == ["d", "keep"]]
    # A report repairs nothing.
    assert _kinds(_reconcile(root)) == found

    # Each repair removes exactly its own kind.
    before = found
    for kind in ("binding_to_missing_warehouse", "trash_without_bytes", "tasks_of_missing_table",
                 "policy_of_missing_object", "table_without_data", "unowned_directory"):
        done = _reconcile(root, kind)
        assert all(d.get("repaired") for d in done["drifts"] if d["kind"] == kind), done
        after = _kinds(_reconcile(root))
        # Only what was written within the hour is left, and said so.
        left = [("unowned_directory", "fresh_stray")] if kind == "unowned_directory" else []
        assert [f for f in after if f[0] == kind] == left, after
        assert [f for f in after if f[0] != kind] == [f for f in before if f[0] != kind], (kind, after)
        before = after
    said = {d["subject"]: d["repaired"] for d in done["drifts"] if d["kind"] == "unowned_directory"}
    assert said == {"stray": "removed 1 objects, 100 bytes",
                    "fresh_stray": "left alone: written within the last hour"}, said
    assert not os.path.exists(os.path.join(main_root, "stray"))
    assert os.path.exists(os.path.join(main_root, "fresh_stray", "y.bin"))
    shutil.rmtree(os.path.join(main_root, "fresh_stray"))

    srv = start_server(root, *FLAGS)
    try:
        url = srv["url"]
        # The live table reads, its policy stands; the declared one is gone.
        rows = _ok("POST", f"{url}/v1/table/d$keep/count_rows", {})
        assert rows == 5, rows
        policy = _ok("GET", f"{url}/v1/table/d$keep/maintenance_policy")
        assert policy["winner"]["level"] == "table", policy
        tables = _ok("GET", f"{url}/v1/table?delimiter=$")["tables"]
        assert sorted(tables) == ["d$keep"], tables
        assert [e["id"] for e in _ok("GET", f"{url}/v1/trash")["entries"]] == []
        s, refused = http_json("POST", f"{url}/v1/warehouses/gone/namespaces", {"namespace": "x"})
        assert s == 404, refused
        # The same report and repairs through the control plane.
        another = "1" * 32
        shutil.copytree(kept_policy, os.path.join(control, "maintenance_policy", "table", another))
        report = _ok("GET", f"{url}/v1/reconciliation")
        assert _kinds(report) == [("policy_of_missing_object", another)], report
        for bad in ([], ["nope"]):
            s, refused = http_json("POST", f"{url}/v1/reconciliation/repair", {"kinds": bad})
            assert (s, refused["code"]) == (400, 13), refused
        done = _ok("POST", f"{url}/v1/reconciliation/repair", {"kinds": ["policy_of_missing_object"]})
        assert [d["repaired"] for d in done["drifts"]] == ["policy records and grants deleted"], done
        assert _ok("GET", f"{url}/v1/reconciliation")["drifts"] == []
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)

    # Run without --warehouses on, the registry's warehouses are still read:
    # the table that stays in "main" is no drift, its policy no orphan.
    argv = serve_argv(root, "--trash-grace", "1d")
    argv[1:2] = ["reconcile"]
    out = subprocess.run(argv, capture_output=True, text=True, env=serve_env(root), timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["drifts"] == [], out.stdout
