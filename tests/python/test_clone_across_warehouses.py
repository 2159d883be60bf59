"""The cleanup pre-pass across warehouses: a shallow clone registered in
one warehouse reads files of a table in another. A cleanup task of the
source (run by a worker that opened only the source's warehouse) keeps the
versions the clone reads, and the clone still reads every row. Real server,
real pylance clone."""
import json
import os
import tempfile
import time

import lance
import pytest

from conftest import http_json, ipc, sample, start_server


def _ok(method, url, body=None):
    s, b = http_json(method, url, body)
    assert s == 200, (url, b)
    return b


def _post_arrow(url, path, tbl):
    import urllib.request

    req = urllib.request.Request(f"{url}{path}", data=ipc(tbl), method="POST",
                                 headers={"content-type": "application/vnd.apache.arrow.stream"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


@pytest.mark.local_fs
def test_a_cleanup_keeps_what_a_clone_in_another_warehouse_reads():
    home = tempfile.mkdtemp(prefix="lc-xw-home-")
    east = tempfile.mkdtemp(prefix="lc-xw-east-")
    west = tempfile.mkdtemp(prefix="lc-xw-west-")
    srv = start_server(home, "--warehouses", "on", "--task-poll", "0.2")
    url = srv["url"]
    try:
        _ok("POST", f"{url}/v1/projects", {"project_id": "acme"})
        for w, root in (("east", east), ("west", west)):
            _ok("POST", f"{url}/v1/warehouses", {"warehouse_id": w, "project_id": "acme", "root": root})
        _ok("POST", f"{url}/v1/warehouses/east/namespaces", {"namespace": "src"})
        _ok("POST", f"{url}/v1/warehouses/west/namespaces", {"namespace": "dst"})
        _post_arrow(url, "/v1/table/src$t/create", sample(0, 100))
        _post_arrow(url, "/v1/table/src$t/insert", sample(100, 50))
        location = _ok("POST", f"{url}/v1/table/src$t/describe", {})["location"]
        source = lance.dataset(location)
        clone_version = source.version
        source.shallow_clone(os.path.join(west, "dst", "c.lance"), clone_version)
        _ok("POST", f"{url}/v1/table/dst$c/register", {"location": "dst/c.lance"})
        clone = _ok("POST", f"{url}/v1/table/dst$c/describe", {})["location"]
        assert lance.dataset(clone).count_rows() == 150

        # The source moves on: every row it had is replaced.
        _post_arrow(url, "/v1/table/src$t/insert?mode=overwrite", sample(1000, 10))
        task = _ok("POST", f"{url}/lance/oss/v1/table/src$t/cleanup", {"retain_versions": 1})["task_id"]
        deadline = time.time() + 120
        while True:
            info = _ok("GET", f"{url}/lance/oss/v1/table/src$t/tasks/{task}")["task_info"]
            if info["status"] in ("completed", "failed"):
                break
            assert time.time() < deadline, info
            time.sleep(0.2)
        assert info["status"] == "completed", json.dumps(info)
        assert info["result"]["kept_for_clones_from_version"] == clone_version, info["result"]
        # The clone, in the other warehouse, reads every row it had.
        assert sorted(lance.dataset(clone).to_table().column("id").to_pylist()) == list(range(150))
        assert lance.dataset(location).count_rows() == 10
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)
