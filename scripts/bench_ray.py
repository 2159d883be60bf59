#!/usr/bin/env python3
"""Compaction in process against compaction on Ray, side by side in one run.

    RAY=http://127.0.0.1:8265 RAY_TOKEN=… RAY_PYTHON=…/ray-venv/bin/python \\
      ~/.cache/lance-catalog/venv/bin/python scripts/bench_ray.py [ROWS_PER_FRAGMENT …]

Two servers over two fresh roots, one with no executor rule (the anchor:
in process) and one sending compactions to Ray; for each size, the same
table (30 fragments of ROWS_PER_FRAGMENT rows) is made on both and
compacted; the time from submit to `completed` is printed per executor,
with the ratio. On one machine Ray's figure is mostly its job's start
(a driver process, lance-ray's pool); the ratio says how much a cluster
must win back before sending a table there pays."""
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
from conftest import fresh, ipc, new_root, sample, start_server  # noqa: E402

import lance_namespace  # noqa: E402
from lance_namespace import CreateNamespaceRequest, CreateTableRequest, InsertIntoTableRequest  # noqa: E402

RAY = os.environ["RAY"]
FRAGMENTS = 30


def http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"null")


def compact_seconds(url, rows):
    team = fresh("bench")
    ns = lance_namespace.connect("rest", {"uri": url})
    ns.create_namespace(CreateNamespaceRequest(id=[team]))
    ns.create_table(CreateTableRequest(id=[team, "t"]), ipc(sample(0, rows)))
    for i in range(1, FRAGMENTS):
        ns.insert_into_table(InsertIntoTableRequest(id=[team, "t"]), ipc(sample(i * rows, rows)))
    base = f"{url}/lance/oss/v1/table/{team}$t"
    start = time.monotonic()
    task = http("POST", f"{base}/compact", {})["task_id"]
    while True:
        info = http("GET", f"{base}/tasks/{task}")["task_info"]
        if info["status"] in ("completed", "failed"):
            break
        time.sleep(0.05)
    took = time.monotonic() - start
    assert info["status"] == "completed", info
    return took, info["result"]["executor"]


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000, 50000]
    ray_flags = ["--ray-address", RAY, "--ray-python", os.environ.get("RAY_PYTHON", "python"),
                 "--ray-workers", "1", "--task-poll", "0.05"]
    if os.environ.get("RAY_TOKEN"):
        ray_flags += ["--ray-token", os.environ["RAY_TOKEN"]]
    anchor = start_server(new_root("bench-inproc-"), *ray_flags)
    on_ray = start_server(new_root("bench-ray-"), *ray_flags, "--executor-rule", "ray:task_types=lance_compact")
    try:
        print(f"{'rows':>10} {'in process s':>13} {'ray s':>8} {'ray / in process':>17}")
        for rows in sizes:
            local, where = compact_seconds(anchor["url"], rows)
            assert where == "in_process"
            remote, where = compact_seconds(on_ray["url"], rows)
            assert where == "ray"
            print(f"{rows * FRAGMENTS:>10} {local:>13.2f} {remote:>8.2f} {remote / local:>17.1f}")
    finally:
        for s in (anchor, on_ray):
            s["proc"].terminate()
            s["proc"].wait(timeout=30)


if __name__ == "__main__":
    main()
