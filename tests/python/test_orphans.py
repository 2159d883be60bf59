"""The orphan scan, reclaim and the cleanup pre-pass with real Lance data
(pylance writes it; the catalog reads it): a table with tags, a branch, a
blob v2 column with both sidecar kinds, a scalar and a vector index,
deletions, and a shallow clone registered as another table. The scan must
name exactly the files planted in it; reclaim removes those old enough and
keeps the rest; a cleanup task keeps the versions the clone reads; every
live version of the table, its branch and its clone still reads."""
import json
import os
import shutil
import subprocess
import time
import uuid

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field

from conftest import _binary, http_json, new_root, start_server

WEEK = 7 * 24 * 3600


def _rows(start, n, big=()):
    ids = list(range(start, start + n))
    vec = pa.FixedSizeListArray.from_arrays(
        pa.array([float((i * 7 + j) % 13) for i in ids for j in range(8)], pa.float32()), 8)
    blobs = [b"small" if k % 50 == 0 else None for k in range(n)]
    for k, size in big:
        blobs[k] = os.urandom(size)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("vec", pa.list_(pa.float32(), 8)), blob_field("blob")])
    return pa.Table.from_arrays([pa.array(ids, pa.int64()), vec, blob_array(blobs)], schema=schema)


def _build(root):
    """The table at prod/t.lance and its clone at prod/c.lance; answers the
    clone's source version."""
    t = os.path.join(root, "prod", "t.lance")
    # Over 64 KiB a value goes to a packed sidecar, over 4 MiB to its own.
    ds = lance.write_dataset(_rows(0, 300, big=[(20, 100 * 1024), (25, 5 * 1024 * 1024)]), t,
                             data_storage_version="2.2")
    ds.create_scalar_index("id", "BTREE")
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2)
    ds.tags.create("indexed", ds.version)
    ds.delete("id < 10")
    ds = lance.write_dataset(_rows(300, 100, big=[(1, 80 * 1024)]), t, mode="append")
    branch = ds.create_branch("exp")
    lance.write_dataset(_rows(1000, 50), branch, mode="append")
    ds = lance.dataset(t)
    ds.shallow_clone(os.path.join(root, "prod", "c.lance"), ds.version)
    return ds.version


def _age(path, seconds):
    past = time.time() - seconds
    os.utime(path, (past, past))


def _reads_everything(root):
    """Every version of the table, its branch and its clone reads whole."""
    t = os.path.join(root, "prod", "t.lance")
    for v in lance.dataset(t).versions():
        ds = lance.dataset(t, version=v["version"])
        assert ds.to_table().num_rows == ds.count_rows()
    exp = lance.dataset(t).checkout_version(("exp", None))
    assert exp.to_table().num_rows == 440
    c = lance.dataset(os.path.join(root, "prod", "c.lance"))
    table = c.to_table()
    assert table.num_rows == 390
    assert sorted(table.column("id").to_pylist()) == list(range(10, 400))
    # The blob bytes themselves, from both sidecar kinds (ids 20 and 25
    # are the clone's rows 10 and 15; 301 its row 291).
    sizes = sorted(len(b) for _, b in c.read_blobs("blob", indices=[10, 15, 291]))
    assert sizes == [80 * 1024, 100 * 1024, 5 * 1024 * 1024], sizes


@pytest.mark.local_fs
def test_the_scan_names_exactly_the_planted_files_and_reclaim_removes_them():
    root = new_root("lc-orphans-")
    clone_version = _build(root)
    srv = start_server(root, "--task-poll", "0.1")
    url = srv["url"]
    try:
        assert http_json("POST", f"{url}/v1/namespace/prod/create", {})[0] == 200
        for name in ("t", "c"):
            s, body = http_json("POST", f"{url}/v1/table/prod${name}/register", {"location": f"prod/{name}.lance"})
            assert s == 200, body

        t = os.path.join(root, "prod", "t.lance")
        # Nothing planted yet: the scan names nothing.
        s, clean = http_json("GET", f"{url}/v1/table/prod$t/orphans")
        assert s == 200, clean
        assert clean["orphans"] == [] and clean["transactions"] == [], clean
        assert clean["branches"] == ["exp"]
        assert clean["clones"] == [{"id": ["prod", "c"]}]
        assert clean["manifests_read"] >= 6

        # Planted: an old data file, a stale transaction file, an index
        # directory no manifest names, and a data file written a minute ago.
        young = "data/" + uuid.uuid4().hex + ".lance"
        planted = {
            "data/" + uuid.uuid4().hex + ".lance": WEEK + 3600,
            "_transactions/99-" + str(uuid.uuid4()) + ".txn": WEEK + 3600,
            "_indices/" + str(uuid.uuid4()) + "/index.idx": WEEK + 3600,
            young: 60,
        }
        for rel, age in planted.items():
            full = os.path.join(t, rel)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(os.urandom(1000))
            _age(full, age)
        # What is never named, whatever its age (beside the real refs and
        # version hints already there).
        for rel in ("tree/ghost/x.lance", "_mem_wal/x", "_fri/m/0.bin", "data/staged.lance#1",
                    "data/y.lance-stage"):
            full = os.path.join(t, rel)
            if not os.path.exists(full):
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "wb") as f:
                    f.write(b"x")
                _age(full, WEEK * 2)

        s, report = http_json("GET", f"{url}/v1/table/prod$t/orphans")
        assert s == 200, report
        orphans = {f["path"]: f for f in report["orphans"]}
        txns = {f["path"]: f for f in report["transactions"]}
        assert set(orphans) | set(txns) == set(planted), report
        assert set(txns) == {p for p in planted if p.startswith("_transactions/")}
        assert orphans[young]["maybe_in_flight"] is True
        assert all(not f["maybe_in_flight"] for p, f in orphans.items() if p != young)
        assert report["min_age_s"] == WEEK
        assert report["orphan_bytes"] == 4000

        # The clone's own scan names nothing of the source's.
        s, of_clone = http_json("GET", f"{url}/v1/table/prod$c/orphans")
        assert s == 200 and of_clone["orphans"] == [] and of_clone["transactions"] == [], of_clone

        # The namespace form holds both tables' reports.
        s, whole = http_json("GET", f"{url}/v1/namespace/prod/orphans")
        assert s == 200 and sorted(r["id"][1] for r in whole["tables"]) == ["c", "t"]
        # And the project's, by warehouse, the same reports.
        s, project = http_json("GET", f"{url}/v1/projects/default/orphans")
        assert s == 200, project
        [wh] = project["warehouses"]
        assert wh["warehouse_id"] == "default"
        assert sorted(wh["tables"], key=lambda r: r["id"]) == sorted(whole["tables"], key=lambda r: r["id"])

        # Reclaim: the planted old ones go; the young one, a live file, a
        # protected one, a missing one and a path out of the table stay.
        live = next(r for r in os.listdir(os.path.join(t, "data")) if r.endswith(".lance") and
                    "data/" + r not in planted)
        asked = list(planted) + ["data/" + live, "_refs/tags/indexed.json", "data/nope.lance",
                                 "../c.lance/_versions/latest_version_hint.json", "/etc/passwd"]
        s, done = http_json("POST", f"{url}/v1/table/prod$t/reclaim", {"paths": asked})
        assert s == 200, done
        assert sorted(f["path"] for f in done["deleted"]) == sorted(p for p in planted if p != young)
        kept = {k["path"]: k["reason"] for k in done["kept"]}
        assert kept == {
            young: "in_flight",
            "data/" + live: "referenced",
            "_refs/tags/indexed.json": "protected",
            "data/nope.lance": "missing",
            "../c.lance/_versions/latest_version_hint.json": "invalid",
            "/etc/passwd": "invalid",
        }, kept
        assert done["bytes_deleted"] == 3000
        for rel in planted:
            assert os.path.exists(os.path.join(t, rel)) == (rel == young), rel
        assert os.path.exists(os.path.join(root, "prod", "c.lance", "_versions", "latest_version_hint.json"))
        _reads_everything(root)

        # A bad body is 400 naming its problem, and nothing is deleted.
        s, bad = http_json("POST", f"{url}/v1/table/prod$t/reclaim", {"paths": "data/x"})
        assert s == 400, bad
        s, bad = http_json("POST", f"{url}/v1/table/prod$t/reclaim", {})
        assert s == 400 and "needs paths" in bad["detail"], bad
        s, bad = http_json("GET", f"{url}/v1/table/prod$nope/orphans")
        assert s == 404, bad

        # The cleanup pre-pass: overwrite the source, then a cleanup that
        # would keep only the newest version keeps the clone's source
        # version and every later one; the clone still reads.
        lance.write_dataset(_rows(5000, 20), t, mode="overwrite")
        s, task = http_json("POST", f"{url}/lance/oss/v1/table/prod$t/cleanup", {"retain_versions": 1})
        assert s == 200, task
        task_id = task["task_id"]
        deadline = time.time() + 120
        while True:
            s, st = http_json("GET", f"{url}/lance/oss/v1/table/prod$t/tasks/{task_id}")
            assert s == 200, st
            if st["task_info"]["status"] in ("completed", "failed"):
                break
            assert time.time() < deadline, st
            time.sleep(0.2)
        info = st["task_info"]
        assert info["status"] == "completed", json.dumps(info)
        result = info["result"]
        assert result["old_versions_removed"] >= 1, result
        _reads_everything(root)
        assert result["kept_for_clones_from_version"] == clone_version, result
        kept_versions = [v["version"] for v in lance.dataset(t).versions()]
        assert clone_version in kept_versions and 1 not in kept_versions, kept_versions
        # And nothing the cleanup left is an orphan now.
        s, after = http_json("GET", f"{url}/v1/table/prod$t/orphans")
        assert s == 200, after
        assert [f["path"] for f in after["orphans"]] == [young] and after["transactions"] == [], after
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)

    # The same scan and reclaim as commands against the root, no server.
    report_file = os.path.join(root, "..", os.path.basename(root) + "-orphans.json")
    out = subprocess.run([_binary(), "maintenance", "orphans", "--root", root, "--table", "prod$t"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    reports = json.loads(out.stdout)
    assert [f["path"] for f in reports[0]["orphans"]] == [young]
    _age(os.path.join(t, young), WEEK + 60)
    with open(report_file, "w") as f:
        f.write(out.stdout)
    out = subprocess.run([_binary(), "maintenance", "reclaim", "--root", root, "--table", "prod$t",
                          "--from", report_file], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert [f["path"] for f in json.loads(out.stdout)["deleted"]] == [young]
    assert not os.path.exists(os.path.join(t, young))
    os.remove(report_file)
    _reads_everything(root)
    shutil.rmtree(root, ignore_errors=True)
