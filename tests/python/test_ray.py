"""Maintenance tasks on a real Ray cluster through lance-ray (the Ray
executor). CI starts one single-node Ray head for the suite with token
authentication (RAY_AUTH_MODE=token) and sets
LANCE_CATALOG_TEST_RAY=http://127.0.0.1:DASHBOARD_PORT,
LANCE_CATALOG_TEST_RAY_TOKEN and LANCE_CATALOG_TEST_RAY_PYTHON (the
cluster's Python, with pylance and lance-ray). Without them these tests
skip, unless LANCE_CATALOG_TEST_RAY_REQUIRED=1 (CI's Ray leg) makes that
an error.

The catalog runs with --auth required: each job's runner calls it back
with a task key good for its one table while its task runs.

- a compaction of a 30-fragment table runs as a Ray job whose submission
  id is the task id, ends completed with the fragment counts, and pylance
  reads every row; the runner's key is dead once the task ended;
- a BTREE and an IVF_PQ index build run on Ray and the catalog's index
  stats show them;
- a task key reaches its own table only, reads and writes but drops
  nothing; cancelling the task stops its job and ends the key;
- killing the replica that owns a running Ray task (two replicas behind
  a load balancer's stand-in): the other takes the lease over and
  attaches to the same job (one job, one completed task);
- a computed column's backfill runs on Ray fragment by fragment (a Ray
  job whose submission id is the job id), fills the rows its `where`
  keeps and no others, and its key is dead once the job ended; when the
  replica following it dies, the job commits through the other, which
  finishes its record from Ray; a refresh stays in process;
- with no rule, the same task and backfill run in process as before."""

import json
import os
import signal
import socket
import threading
import time
import urllib.error
import urllib.request

import lance
import lance_namespace
import pyarrow as pa
import pytest
from conftest import fresh, ipc, new_root, sample, start_server
from lance_namespace import (
    AlterTableAddColumnsRequest,
    AlterTableBackfillColumnsRequest,
    CountTableRowsRequest,
    CreateMaterializedViewRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    DescribeTableRequest,
    InsertIntoTableRequest,
)
from test_auth import SECRET, call, jwt

RAY = os.environ.get("LANCE_CATALOG_TEST_RAY", "")
RAY_TOKEN = os.environ.get("LANCE_CATALOG_TEST_RAY_TOKEN", "")
RAY_PYTHON = os.environ.get("LANCE_CATALOG_TEST_RAY_PYTHON", "python")
if not RAY and os.environ.get("LANCE_CATALOG_TEST_RAY_REQUIRED") == "1":
    raise RuntimeError("LANCE_CATALOG_TEST_RAY is not set: the Ray executor would go untested")
pytestmark = pytest.mark.skipif(not RAY, reason="LANCE_CATALOG_TEST_RAY is not set (no Ray head)")

ROOT = {"authorization": f"Bearer {jwt('root')}"}
RULE = "ray:task_types=lance_compact|lance_scalar_index|lance_vector_index|backfill"


def ray_argv(*rules):
    argv = ["--auth", "required", "--bootstrap-admin", "root", "--jwt-secret", SECRET,
            "--task-poll", "0.2", "--ray-address", RAY, "--ray-python", RAY_PYTHON, "--ray-workers", "1"]
    if RAY_TOKEN:
        argv += ["--ray-token", RAY_TOKEN]
    for r in rules:
        argv += ["--executor-rule", r]
    return argv


def ray_jobs():
    """Every job the Ray cluster knows, through its own Jobs API."""
    req = urllib.request.Request(f"{RAY}/api/jobs/", headers={"authorization": f"Bearer {RAY_TOKEN}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def ray_job(submission_id):
    return next((j for j in ray_jobs() if j.get("submission_id") == submission_id), None)


def admin(url):
    return lance_namespace.connect("rest", {"uri": url, "header.Authorization": ROOT["authorization"]})


def oss(url, table, rest=""):
    return f"{url}/lance/oss/v1/table/{table}{rest}"


def submit(url, table, what, params=None):
    status, body, _ = call(oss(url, table, f"/{what}"), "POST", params or {}, ROOT)
    assert status == 200, body
    return body["task_id"]


def wait_task(url, table, task_id, until=("completed", "failed"), timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, body, _ = call(oss(url, table, f"/tasks/{task_id}"), "GET", None, ROOT)
        assert status == 200, body
        if body["task_info"]["status"] in until:
            return body["task_info"]
        time.sleep(0.3)
    raise AssertionError(f"task {task_id} never reached {until}")


def fragmented_table(url, team, name, fragments, rows=10):
    ns = admin(url)
    try:
        ns.create_namespace(CreateNamespaceRequest(id=[team]))
    except Exception:
        pass
    ns.create_table(CreateTableRequest(id=[team, name]), ipc(sample(0, rows)))
    for i in range(1, fragments):
        ns.insert_into_table(InsertIntoTableRequest(id=[team, name]), ipc(sample(i * rows, rows)))
    return ns


def vectors(n, dim=16):
    import random

    rnd = random.Random(7)
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "v": pa.FixedSizeListArray.from_arrays(
            pa.array([rnd.random() for _ in range(n * dim)], pa.float32()), dim),
    })


def read_all(url, team, name):
    ds = lance.dataset(namespace_client=admin(url), table_id=[team, name])
    return ds.to_table()


@pytest.fixture(scope="module")
def ray_server():
    started = start_server(new_root("lance-catalog-ray-"), *ray_argv(RULE))
    yield started
    started["proc"].terminate()
    started["proc"].wait(timeout=30)


def compacted(url, prefix, fragments):
    """A table of `fragments` fragments, compacted: its names, the task id
    and the task as it ended."""
    team = fresh(prefix)
    fragmented_table(url, team, "events", fragments)
    table = f"{team}$events"
    task_id = submit(url, table, "compact")
    info = wait_task(url, table, task_id)
    assert info["status"] == "completed", info
    return team, table, task_id, info


def test_compaction_runs_as_a_ray_job(ray_server):
    url = ray_server["url"]
    team, table, task_id, info = compacted(url, "ray", 30)
    r = info["result"]
    assert (r["executor"], r["executor_rule"], r["ray_submission_id"]) == ("ray", RULE, task_id), r
    assert (r["fragments_before"], r["fragments_after"]) == (30, 1), r
    assert r["fragments_removed"] == 30 and r["fragments_added"] == 1, r
    job = ray_job(task_id)
    assert job is not None and job["status"] == "SUCCEEDED", job
    assert job["metadata"]["lance_catalog_task"] == task_id
    rows = read_all(url, team, "events")
    assert sorted(rows.column("id").to_pylist()) == list(range(300))
    # The runner's key died with its task.
    key = job["runtime_env"]["env_vars"]["LANCE_CATALOG_TOKEN"]
    assert key.startswith("lct_")
    status, body, _ = call(f"{url}/v1/table/{table}/describe", "POST", {}, {"authorization": f"Bearer {key}"})
    assert status == 401, body


def test_index_builds_run_on_ray(ray_server):
    url, team = ray_server["url"], fresh("rayidx")
    ns = admin(url)
    ns.create_namespace(CreateNamespaceRequest(id=[team]))
    ns.create_table(CreateTableRequest(id=[team, "docs"]), ipc(vectors(1000)))
    ns.insert_into_table(InsertIntoTableRequest(id=[team, "docs"]), ipc(vectors(1000)))
    table = f"{team}$docs"
    btree = submit(url, table, "create_scalar_index", {"column": "id", "index_type": "BTREE", "name": "id_idx"})
    info = wait_task(url, table, btree)
    assert info["status"] == "completed", info
    assert (info["result"]["executor"], info["result"]["index_name"]) == ("ray", "id_idx"), info
    pq = submit(url, table, "create_vector_index",
                {"column": "v", "index_type": "IVF_PQ", "name": "v_idx", "num_partitions": 2,
                 "num_sub_vectors": 4, "sample_rate": 2})
    info = wait_task(url, table, pq)
    assert info["status"] == "completed", info
    assert info["result"]["executor"] == "ray", info
    for task_id in (btree, pq):
        assert ray_job(task_id)["status"] == "SUCCEEDED"
    for name, kind in (("id_idx", "BTREE"), ("v_idx", "IVF_PQ")):
        status, stats, _ = call(f"{url}/v1/table/{table}/index/{name}/stats", "POST", {}, ROOT)
        assert status == 200, stats
        assert stats["num_indexed_rows"] == 2000, stats
        assert kind.lower().replace("_", "") in str(stats.get("index_type", "")).lower().replace("_", ""), stats
    # A column the table lacks fails before any job starts, as in process.
    bad = submit(url, table, "create_scalar_index", {"column": "nope"})
    info = wait_task(url, table, bad)
    assert (info["status"], info["error"]["code"]) == ("failed", 12), info
    assert ray_job(bad) is None


def test_a_task_key_reaches_its_table_only_and_dies_with_a_cancel(ray_server):
    url, team = ray_server["url"], fresh("raykey")
    ns = admin(url)
    ns.create_namespace(CreateNamespaceRequest(id=[team]))
    ns.create_table(CreateTableRequest(id=[team, "big"]), ipc(vectors(2000)))
    ns.create_table(CreateTableRequest(id=[team, "other"]), ipc(sample(0, 5)))
    table = f"{team}$big"
    # Slow on one CPU: many partitions and iterations, so the job is
    # still running while the key is tried.
    task_id = submit(url, table, "create_vector_index",
                     {"column": "v", "index_type": "IVF_PQ", "num_partitions": 4, "num_sub_vectors": 4,
                      "sample_rate": 4, "max_iterations": 10000})
    job = None
    deadline = time.time() + 120
    while time.time() < deadline:
        job = ray_job(task_id)
        if job and job["status"] in ("PENDING", "RUNNING"):
            break
        time.sleep(0.3)
    assert job and job["status"] in ("PENDING", "RUNNING"), job
    key = {"authorization": f"Bearer {job['runtime_env']['env_vars']['LANCE_CATALOG_TOKEN']}"}
    status, body, _ = call(f"{url}/v1/table/{table}/describe", "POST", {}, key)
    assert status == 200, body
    # Nothing beyond what a runner calls, on its own table: no other table,
    # no delete or drop, no tasks of its own, no grants.
    for method, path, body in (
            ("POST", f"/v1/table/{team}$other/describe", {}),
            ("POST", f"/v1/table/{table}/drop", {}),
            ("POST", f"/v1/table/{table}/delete", {"predicate": "id >= 0"}),
            ("POST", f"/v1/namespace/{team}/drop", {}),
            ("POST", f"/lance/oss/v1/table/{table}/compact", {}),
            ("GET", "/v1/grants", None)):
        status, answer, _ = call(f"{url}{path}", method, body, key)
        assert status == 403, (path, status, answer)
    # A listing shows what the caller may see: its own table alone.
    status, answer, _ = call(f"{url}/v1/namespace/{team}/table/list", "GET", None, key)
    assert (status, answer["tables"]) == (200, ["big"]), answer
    # A running task cannot be deleted; cancelled, it ends failed and its job stops.
    status, body, _ = call(oss(url, table, f"/tasks/{task_id}"), "DELETE", None, ROOT)
    assert (status, body["code"]) == (409, 10001), body
    status, body, _ = call(oss(url, table, f"/tasks/{task_id}/cancel"), "POST", None, ROOT)
    assert status == 200, body
    assert (body["task_info"]["status"], body["task_info"]["error"]["error"]) == ("failed", "TaskCancelled"), body
    stopped = None
    deadline = time.time() + 60
    while time.time() < deadline:
        stopped = ray_job(task_id)
        if stopped["status"] in ("STOPPED", "FAILED", "SUCCEEDED"):
            break
        time.sleep(0.3)
    assert stopped["status"] == "STOPPED", stopped
    status, body, _ = call(f"{url}/v1/table/{table}/describe", "POST", {}, key)
    assert status == 401, body
    status, body, _ = call(oss(url, table, f"/tasks/{task_id}"), "DELETE", None, ROOT)
    assert status == 204, body
    # Nothing half-done: the table has no index and every row.
    assert read_all(url, team, "big").num_rows == 2000


class Balancer:
    """A load balancer's stand-in on loopback: each connection goes to the
    first replica that accepts it, as jobs reach a catalog behind one."""

    def __init__(self):
        self.backends = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            client, _ = self.sock.accept()
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        for backend in list(self.backends):
            host, port = backend.removeprefix("http://").split(":")
            try:
                upstream = socket.create_connection((host, int(port)), timeout=5)
            except OSError:
                continue
            upstream.settimeout(None)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()
            return
        client.close()

    @staticmethod
    def _pipe(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def hand_over(lb, root, argv, first, submission_id):
    """Once Ray has the job, a second replica joins behind the balancer and
    the first is killed; answers the second."""
    deadline = time.time() + 120
    while time.time() < deadline and ray_job(submission_id) is None:
        time.sleep(0.2)
    assert ray_job(submission_id) is not None
    second = start_server(root, *argv)
    lb.backends.append(second["url"])
    first["proc"].send_signal(signal.SIGKILL)
    first["proc"].wait(timeout=30)
    return second


def test_a_replica_taking_over_attaches_to_the_running_job():
    root = new_root("lance-catalog-ray-ha-")
    lb = Balancer()
    argv = ray_argv(RULE) + ["--task-lease", "3", "--ray-catalog-url", lb.url]
    first = start_server(root, *argv)
    lb.backends.append(first["url"])
    url, team = first["url"], fresh("rayha")
    fragmented_table(url, team, "events", 30)
    table = f"{team}$events"
    task_id = submit(url, table, "compact")
    second = hand_over(lb, root, argv, first, task_id)
    try:
        info = wait_task(second["url"], table, task_id)
        assert info["status"] == "completed", info
        assert info["result"]["ray_submission_id"] == task_id
        assert info["result"]["attempt"] == 2, info
        assert [j["submission_id"] for j in ray_jobs()].count(task_id) == 1
        assert sorted(read_all(second["url"], team, "events").column("id").to_pylist()) == list(range(300))
    finally:
        second["proc"].terminate()
        second["proc"].wait(timeout=30)


def job_state(url, job_id):
    status, body, _ = call(f"{url}/v1/job/{job_id}/describe", "POST", {}, ROOT)
    assert status == 200, body
    return body


def wait_job(url, job_id, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        job = job_state(url, job_id)
        if job["state"] in ("succeeded", "failed"):
            return job
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} never finished")


def backfilled(url, prefix, fragments):
    """A `fragments`-fragment table with a computed column, backfilled where
    id % 3 = 0: its namespace client, id, the job id and the job as it ended."""
    team = fresh(prefix)
    ns = fragmented_table(url, team, "events", fragments)
    tid = [team, "events"]
    ns.alter_table_add_columns(AlterTableAddColumnsRequest(
        id=tid, new_columns=[{"name": "ten_x", "computed": "x * 10 + id"}]))
    job = ns.alter_table_backfill_columns(AlterTableBackfillColumnsRequest(
        id=tid, column="ten_x", where="id % 3 = 0"))
    done = wait_job(url, job.job_id)
    assert done["state"] == "succeeded", done
    return ns, tid, job.job_id, done


def count(ns, tid, predicate):
    return ns.count_table_rows(CountTableRowsRequest(id=tid, predicate=predicate)).count


def test_a_backfill_runs_on_ray_fragment_by_fragment(ray_server):
    url = ray_server["url"]
    ns, tid, job_id, done = backfilled(url, "raybf", 6)
    assert done["details"]["executor"] == "ray", done
    assert done["details"]["executor_rule"] == RULE, done
    assert done["details"]["ray_submission_id"] == job_id, done
    assert done["details"]["fragments"] == "6", done
    # Ray ran it, under the job's id.
    job = ray_job(job_id)
    assert job is not None and job["status"] == "SUCCEEDED", job
    # Every row the filter keeps holds the expression, no other row changed.
    kept = len([i for i in range(60) if i % 3 == 0])
    assert done["rows_written"] == kept, done
    assert count(ns, tid, "ten_x = x * 10 + id") == kept
    assert count(ns, tid, "ten_x IS NULL") == 60 - kept
    # pylance reads every row through the catalog.
    table = read_all(url, *tid)
    assert table.num_rows == 60
    by_id = dict(zip(table.column("id").to_pylist(), table.column("ten_x").to_pylist()))
    assert by_id[9] == 9 * 0.5 * 10 + 9 and by_id[10] is None
    # The runner's key ended with the job.
    key = job["runtime_env"]["env_vars"]["LANCE_CATALOG_TOKEN"]
    assert key.startswith(f"lct_{job_id}_")
    status, body, _ = call(f"{url}/v1/table/{'$'.join(tid)}/describe", "POST", {}, {"authorization": f"Bearer {key}"})
    assert status == 401, body


def test_a_backfill_on_ray_outlives_its_replica():
    """The replica following a Ray backfill dies: the job runs on and
    commits through the other replica with its key, and that replica,
    finding the record silent, finishes it from Ray's outcome."""
    root = new_root("lance-catalog-ray-bf-ha-")
    lb = Balancer()
    argv = ray_argv(RULE) + ["--ray-catalog-url", lb.url]
    first = start_server(root, *argv)
    lb.backends.append(first["url"])
    team = fresh("raybfha")
    ns = fragmented_table(first["url"], team, "events", 6)
    tid = [team, "events"]
    ns.alter_table_add_columns(AlterTableAddColumnsRequest(
        id=tid, new_columns=[{"name": "ten_x", "computed": "x * 10 + id"}]))
    job_id = ns.alter_table_backfill_columns(AlterTableBackfillColumnsRequest(id=tid, column="ten_x")).job_id
    second = hand_over(lb, root, argv, first, job_id)
    try:
        # Its record is fresh a while yet: running, not failed.
        assert job_state(second["url"], job_id)["state"] == "running"
        done = wait_job(second["url"], job_id, timeout=240)
        assert done["state"] == "succeeded", done
        assert (done["details"]["executor"], done["details"]["ray_submission_id"]) == ("ray", job_id), done
        assert done["rows_written"] == 60, done
        assert [j["submission_id"] for j in ray_jobs()].count(job_id) == 1
        assert count(admin(second["url"]), tid, "ten_x = x * 10 + id") == 60
    finally:
        second["proc"].terminate()
        second["proc"].wait(timeout=30)


def test_a_refresh_stays_in_process_under_a_ray_rule(ray_server):
    url = ray_server["url"]
    team = fresh("rayview")
    ns = fragmented_table(url, team, "orders", 3)
    created = ns.create_materialized_view(CreateMaterializedViewRequest(
        id=[team, "thirds"], kind="query", source_query=f'SELECT id FROM "{team}$orders" WHERE id % 3 = 0',
        output_schema="", with_no_data=False))
    done = wait_job(url, created.job_id)
    assert done["state"] == "succeeded", done
    assert done["details"]["executor"] == "in_process", done
    assert done["rows_written"] == 10
    assert ray_job(created.job_id) is None


def test_without_a_rule_tasks_run_in_process():
    started = start_server(new_root("lance-catalog-ray-off-"), *ray_argv())
    try:
        _, _, task_id, info = compacted(started["url"], "rayoff", 5)
        assert info["result"]["executor"] == "in_process" and "executor_rule" not in info["result"], info
        assert (info["result"]["fragments_before"], info["result"]["fragments_after"]) == (5, 1)
        assert ray_job(task_id) is None
        ns, tid, job_id, done = backfilled(started["url"], "raybfoff", 3)
        assert done["details"]["executor"] == "in_process", done
        assert done["rows_written"] == 10 and count(ns, tid, "ten_x = x * 10 + id") == 10
        assert ray_job(job_id) is None
    finally:
        started["proc"].terminate()
        started["proc"].wait(timeout=30)
