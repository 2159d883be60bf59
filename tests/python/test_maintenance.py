"""Maintenance tasks with the real binary: the seed's own client sequence
(submit, poll, list with next_marker, delete), two replicas on one root
sharing the queue, and a replica killed with SIGKILL mid-task whose task
the other replica finishes once the lease has expired."""
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

import lance_namespace
from lance_namespace_urllib3_client.models import (
    CreateNamespaceRequest,
    CreateTableRequest,
    InsertIntoTableRequest,
)

from conftest import ipc, new_root, sample, serve_argv, serve_env, start_server

FAST = ["--task-poll", "0.1", "--task-lease", "2"]


def _http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            raw = r.read()
            return r.status, (json.loads(raw) if raw else None), r.headers.get("x-oss-table-id")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null"), None


def _oss(url, table):
    return f"{url}/lance/oss/v1/table/{table}"


def _table(url, name, appends=3):
    ns = lance_namespace.connect("rest", {"uri": url})
    try:
        ns.create_namespace(CreateNamespaceRequest(id=["prod"]))
    except Exception:
        pass
    ns.create_table(CreateTableRequest(id=["prod", name]), ipc(sample(0, 5)))
    for i in range(1, appends):
        ns.insert_into_table(InsertIntoTableRequest(id=["prod", name]), ipc(sample(i * 5, 5)))


def _wait(url, table, task_id, until=("completed", "failed"), timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s, body, _ = _http("GET", f"{_oss(url, table)}/tasks/{task_id}")
        assert s == 200, body
        if body["task_info"]["status"] in until:
            return body["task_info"]
        time.sleep(0.1)
    raise AssertionError(f"task {task_id} never reached {until}")


def test_the_seed_sequence():
    srv = start_server(new_root("lc-mt-"), "--workers", "1", *FAST)
    try:
        url = srv["url"]
        _table(url, "documents", appends=6)
        # 1. Submit; keep the task id.
        s, body, table_id = _http("POST", f"{_oss(url, 'prod$documents')}/compact", {})
        assert s == 200 and table_id, body
        first = body["task_id"]
        # 2. Poll its status until it ends.
        info = _wait(url, "prod$documents", first)
        assert info["status"] == "completed", json.dumps(info)
        assert info["result"]["fragments_removed"] == 6, info
        for _ in range(4):
            s, body, _ = _http("POST", f"{_oss(url, 'prod$documents')}/cleanup", {"retain_versions": 1})
            assert s == 200, body
            _wait(url, "prod$documents", body["task_id"])
        # 3. List by full task type, page by next_marker until it is empty.
        seen = []
        for task_type in ("lance_compact", "lance_cleanup"):
            marker = ""
            while True:
                q = f"task_type={task_type}&max_results=2" + (f"&marker={marker}" if marker else "")
                s, body, tid = _http("GET", f"{_oss(url, 'prod$documents')}/tasks?{q}")
                assert s == 200 and tid == table_id, body
                seen += [t["task_id"] for t in body["tasks"]]
                marker = body["next_marker"]
                if not marker:
                    break
        assert len(seen) == 5 and len(set(seen)) == 5 and first in seen
        # 4. Delete the finished tasks to free the quota; a second delete is 404.
        for task_id in seen:
            s, body, tid = _http("DELETE", f"{_oss(url, 'prod$documents')}/tasks/{task_id}")
            assert (s, body, tid) == (204, None, table_id)
        s, body, _ = _http("DELETE", f"{_oss(url, 'prod$documents')}/tasks/{first}")
        assert (s, body["code"], body["error"]) == (404, 10000, "TaskNotFound")
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)


def test_two_replicas_run_each_task_once():
    root = new_root("lc-mt2-")
    a = start_server(root, "--workers", "2", *FAST)
    b = start_server(root, "--workers", "2", *FAST)
    try:
        tables = [f"t{i}" for i in range(5)]
        for t in tables:
            _table(a["url"], t, appends=2)
        submitted = []
        for i in range(20):
            t = tables[i % 5]
            via = (a, b)[i % 2]["url"]
            s, body, _ = _http("POST", f"{_oss(via, 'prod$' + t)}/cleanup", {"retain_versions": 1})
            assert s == 200, body
            submitted.append((t, body["task_id"]))
        runners = set()
        for t, task_id in submitted:
            info = _wait(b["url"], f"prod${t}", task_id)
            assert info["status"] == "completed", json.dumps(info)
            # Started once, by one worker, never taken over.
            assert info["result"]["attempt"] == 1, info
            runners.add(info["result"]["runner"])
        assert 1 <= len(runners) <= 2
    finally:
        for p in (a, b):
            p["proc"].terminate()
            p["proc"].wait(timeout=30)


def test_a_killed_worker_s_task_is_finished_by_the_other_replica():
    root = new_root("lc-mt3-")
    flags = ("--workers", "1", *FAST)
    env = serve_env(root, *flags, env=dict(os.environ, LANCE_CATALOG_HOLD="maintenance.run:60000"))
    a = subprocess.Popen(
        serve_argv(root, *flags),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    url = None
    for line in a.stdout:
        if "listening on http://" in line:
            url = line.split("listening on ")[1].strip()
            break
    assert url
    b = None
    try:
        _table(url, "k", appends=4)
        s, body, _ = _http("POST", f"{_oss(url, 'prod$k')}/compact", {})
        assert s == 200, body
        task_id = body["task_id"]
        held = _wait(url, "prod$k", task_id, until=("running",))
        assert held["started_at"]
        a.send_signal(signal.SIGKILL)
        a.wait(timeout=30)
        b = start_server(root, "--workers", "1", *FAST)
        info = _wait(b["url"], "prod$k", task_id)
        assert info["status"] == "completed", json.dumps(info)
        assert info["result"]["attempt"] == 2, info
        assert info["result"]["fragments_removed"] == 4, info
        assert info["started_at"] == held["started_at"]
    finally:
        if a.poll() is None:
            a.kill()
        if b:
            b["proc"].terminate()
            b["proc"].wait(timeout=30)
