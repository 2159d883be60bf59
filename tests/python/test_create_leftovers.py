"""Crash leftovers of the catalog's own creates: a create killed between
writing its bytes and recording its table leaves a directory no table
owns. The create recorded an intent first, so the sweep of a restarted
server removes exactly those bytes (an audit event each), while a
directory no intent names stays report-only. Real server, killed for
real (a fault point that aborts like kill -9, and kill -9 at random
points), over REST and Arrow Flight."""
import http.client
import json
import os
import random
import subprocess
import threading
import time
import urllib.parse

import pyarrow as pa
import pyarrow.flight as flight

from conftest import ON_S3, eventually, http_json, ipc, new_root, open_dataset, serve_argv, serve_env, start_server

# Intents expire fast and the sweep runs every second, so a dead create's
# bytes go within seconds of a restart.
FAST = ["--create-intent-expiry", "2s", "--trash-sweep-interval", "1s"]
ARROW = "application/vnd.apache.arrow.stream"


def _serve(root, fault=None):
    env = dict(os.environ, LANCE_CATALOG_FAULT=fault) if fault else None
    srv = start_server(root, *FAST, env=env)
    return srv["url"], srv["proc"]


def _cli(root, *args):
    argv = serve_argv(root, *FAST)
    argv[1:2] = list(args)
    out = subprocess.run(argv, capture_output=True, text=True, env=serve_env(root, *FAST), timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _orphans(root):
    return sorted(o["location"] for o in _cli(root, "reconcile")["orphans"])


def _big(mb):
    """About `mb` MiB of rows: 1,000 rows of 64 KiB each per 64 MiB."""
    n = max(1, mb * 16)
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "blob": pa.array([os.urandom(65536) for _ in range(n)], pa.binary()),
    })


def _create_rest(url, table_id, body):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    c.request("POST", f"/v1/table/{'$'.join(table_id)}/create", body=body, headers={"Content-Type": ARROW})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def _create_flight(url, table_id, tbl):
    client = flight.FlightClient(url.replace("http://", "grpc+tcp://"))
    try:
        writer, reader = client.do_put(flight.FlightDescriptor.for_path(*table_id), tbl.schema)
        writer.write_table(tbl, max_chunksize=64)
        writer.done_writing()
        reader.read()
        writer.close()
    finally:
        client.close()


def _create(transport, url, table_id, tbl, body):
    if transport == "rest":
        status, data = _create_rest(url, table_id, body)
        assert status == 200, data
    else:
        _create_flight(url, table_id, tbl)


def _plant(root, relative):
    """A directory with one file, put there by hand (no intent names it)."""
    if not ON_S3:
        os.makedirs(os.path.join(root, relative), exist_ok=True)
        with open(os.path.join(root, relative, "notes.txt"), "w") as f:
            f.write("kept by someone")
        return
    import pyarrow.fs as pafs
    from conftest import S3_ENDPOINT

    fs = pafs.S3FileSystem(endpoint_override=S3_ENDPOINT, access_key="test", secret_key="test",
                           region="us-east-1", scheme=urllib.parse.urlsplit(S3_ENDPOINT).scheme)
    with fs.open_output_stream(f"{root.removeprefix('s3://')}/{relative}/notes.txt") as f:
        f.write(b"kept by someone")


def _tables(url):
    s, body = http_json("GET", f"{url}/v1/table?delimiter=$")
    assert s == 200, body
    return sorted(body["tables"])


def _root_with_namespace(prefix, name):
    root = new_root(prefix)
    url, proc = _serve(root)
    s, body = http_json("POST", f"{url}/v1/namespace/{name}/create", {})
    assert s == 200, body
    proc.terminate()
    proc.wait(timeout=30)
    return root


def test_a_create_killed_after_writing_is_swept_away_and_only_it():
    root = _root_with_namespace("lc-leftover-", "a")
    tbl = _big(2)
    body = ipc(tbl)

    # Killed (aborted as by kill -9) right after the bytes, before the
    # record: once over REST, once over Flight.
    for transport, name in (("rest", "t_rest"), ("flight", "t_flight")):
        url, proc = _serve(root, fault="create.written:1")
        try:
            _create(transport, url, ["a", name], tbl, body)
            raise AssertionError("the create answered although the server aborted")
        except (AssertionError, OSError, http.client.HTTPException, flight.FlightError, pa.ArrowException) as e:
            if "answered" in str(e):
                raise
        assert proc.wait(timeout=30) != 0
    _plant(root, "by_hand")

    # While their intents are fresh, the two creates may still be writing:
    # their bytes are live, and only the planted directory is unowned.
    left = _cli(root, "reconcile")["orphans"]
    assert [o["location"] for o in left] == ["by_hand"], left

    # Once the intents went untouched for the expiry, the creates are
    # dead: two datasets no table owns, and the planted directory.
    time.sleep(2.5)
    left = _cli(root, "reconcile")["orphans"]
    assert sorted(o["dataset"] for o in left) == [False, True, True], left
    assert "by_hand" in [o["location"] for o in left]

    # The sweep report names both dead creates, and would remove them.
    [wh] = _cli(root, "maintenance", "sweep")["warehouses"]
    leftovers = wh["create_leftovers"]
    assert sorted(tuple(l["table"]) for l in leftovers) == [("a", "t_flight"), ("a", "t_rest")], leftovers
    assert {l["outcome"] for l in leftovers} == {"would_remove"}
    assert sorted(l["location"] for l in leftovers) == sorted(o["location"] for o in left if o["dataset"])
    # A report removes nothing.
    assert len(_cli(root, "reconcile")["orphans"]) == 3

    # A restarted server's sweep removes exactly those.
    url, proc = _serve(root)
    try:
        assert eventually(lambda: _orphans(root) == ["by_hand"], 60) is True, _orphans(root)
        s, events = http_json("GET", f"{url}/v1/events")
        assert s == 200, events
        removed = [e for e in events["events"] if e["action"] == "remove_create_leftover"]
        assert sorted(tuple(e["resource"]["id"]) for e in removed) == [("a", "t_flight"), ("a", "t_rest")]
        assert all(e["resource"]["object_id"] for e in removed), removed
        # Nothing of them is recorded; the names are free again.
        assert _tables(url) == []
        _create("rest", url, ["a", "t_rest"], tbl, body)
        _create("flight", url, ["a", "t_flight"], tbl, body)
        assert _tables(url) == ["a$t_flight", "a$t_rest"]
        # A live table's bytes are never a leftover, and its intent is gone.
        time.sleep(2.5)
        [wh] = _cli(root, "maintenance", "sweep")["warehouses"]
        assert wh["create_leftovers"] == []
        assert _orphans(root) == ["by_hand"]
        # The project's reports, by warehouse, say the same.
        s, sweep = http_json("GET", f"{url}/v1/projects/default/maintenance_sweep")
        assert s == 200, sweep
        [wh] = sweep["warehouses"]
        assert (wh["warehouse_id"], wh["create_leftovers"]) == ("default", [])
        assert sorted(t["id"][1] for t in wh["tables"]) == ["t_flight", "t_rest"]
        s, health = http_json("GET", f"{url}/v1/projects/default/index_health")
        assert s == 200, health
        assert sorted(t["id"][1] for t in health["warehouses"][0]["tables"]) == ["t_flight", "t_rest"]
        s, missing = http_json("GET", f"{url}/v1/projects/nope/maintenance_sweep")
        assert (s, missing["code"]) == (404, 10003), missing
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_kill_9_at_random_points_of_creates_leaves_no_unowned_directory():
    root = _root_with_namespace("lc-leftover-kill-", "k")
    tbl = _big(30)
    body = ipc(tbl)
    rng = random.Random(int(os.environ.get("LANCE_CATALOG_TEST_SEED", time.time())))
    attempted = []
    for i in range(6):
        transport = ("rest", "flight")[i % 2]
        url, proc = _serve(root)
        name = f"t{i}_{transport}"
        attempted.append(name)
        worker = threading.Thread(target=lambda: _swallow(_create, transport, url, ["k", name], tbl, body))
        worker.start()
        time.sleep(rng.uniform(0.05, 1.5))
        proc.kill()
        proc.wait(timeout=30)
        worker.join(timeout=120)

    url, proc = _serve(root)
    try:
        # After the sweep no directory is left that no table owns.
        assert eventually(lambda: _orphans(root) == [], 60) is True, _orphans(root)
        # Each create either stands whole or left nothing.
        for t in _tables(url):
            assert t.split("$")[1] in attempted
            s, d = http_json("POST", f"{url}/v1/table/{t}/describe", {})
            assert s == 200, d
            assert open_dataset(d["location"]).count_rows() == tbl.num_rows
        s, events = http_json("GET", f"{url}/v1/events")
        removed = [e["resource"]["id"][1] for e in events["events"] if e["action"] == "remove_create_leftover"]
        assert not set(removed) & {t.split("$")[1] for t in _tables(url)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _swallow(fn, *args):
    try:
        fn(*args)
    except Exception:
        pass
