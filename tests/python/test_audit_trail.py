"""The audit trail on the real server: an answered request's event survives
a kill -9 of its replica, events reach a CloudEvent sink signed with the
operator's key (through a receiver that fails at first, and across a
replica killed before it sent them), the retention deletes old events,
and events an older version stored one record each are still listed."""
import hashlib
import hmac
import http.server
import json
import os
import subprocess
import threading
import time

import lance_namespace
import pytest
from lance_namespace_urllib3_client.models import ListNamespacesRequest

from conftest import http_json as _http, new_root, serve_argv, serve_env, start_server


def _events(url, limit=250, since=None):
    """Every event, a page at a time (also checks the pages' order)."""
    out, token = [], None
    while True:
        q = f"limit={limit}" + (f"&page_token={token}" if token else "") + (f"&since={since}" if since else "")
        s, body = _http("GET", f"{url}/v1/events?{q}")
        assert s == 200, body
        out.extend(body["events"])
        token = body.get("page_token")
        if not token:
            ids = [e["event_id"] for e in out]
            assert ids == sorted(ids) and len(ids) == len(set(ids)), "pages are in id order, no repeats"
            return out


def _created_namespaces(events):
    return {
        e["resource"]["id"][0]
        for e in events
        if e["outcome"] == "succeeded" and e["action"] == "create_namespace" and e["resource"]["id"]
    }


def _start(root, *extra, log=None):
    """The server with its output in `log` (a path), to read it after."""
    out = open(log, "w") if log else subprocess.DEVNULL
    proc = subprocess.Popen(serve_argv(root, *extra), stdout=out, stderr=subprocess.STDOUT, env=serve_env(root, *extra))
    deadline = time.time() + 60
    while time.time() < deadline:
        if log:
            text = open(log).read()
            if "listening on http://" in text:
                return text.split("listening on ")[1].split()[0], proc
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def test_no_answered_event_is_lost_when_its_replica_is_killed():
    root = new_root("lance-catalog-audit-kill-")
    srv = start_server(root)
    url, proc = srv["url"], srv["proc"]
    answered, lock, stop = set(), threading.Lock(), threading.Event()

    def writer(w):
        i = 0
        while not stop.is_set():
            name = f"k{w}x{i}"
            i += 1
            try:
                s, _ = _http("POST", f"{url}/v1/namespace/{name}/create", {})
            except Exception:
                return  # the server is gone
            if s == 200:
                with lock:
                    answered.add(name)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    while True:
        with lock:
            if len(answered) >= 120:
                break
        time.sleep(0.01)
    # Killed with requests in flight, right after answers went out.
    proc.kill()
    proc.wait(timeout=30)
    with lock:
        seen = set(answered)
    stop.set()
    for t in threads:
        t.join(timeout=60)

    again = start_server(root)
    try:
        events = _events(again["url"])
        missing = seen - _created_namespaces(events)
        assert not missing, f"{len(missing)} answered creates have no event: {sorted(missing)[:5]}"
        # And the namespaces themselves are there (the trail says no more
        # than what happened).
        ns = lance_namespace.connect("rest", {"uri": again["url"]})
        listed, token = set(), None
        while True:
            page = ns.list_namespaces(ListNamespacesRequest(id=[], limit=1000, page_token=token))
            listed.update(page.namespaces)
            token = page.page_token
            if not token:
                break
        assert seen <= listed
    finally:
        again["proc"].terminate()
        again["proc"].wait(timeout=30)


class _Receiver(http.server.BaseHTTPRequestHandler):
    got = []
    failures_left = 3
    lock = threading.Lock()

    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        with _Receiver.lock:
            if _Receiver.failures_left > 0:
                _Receiver.failures_left -= 1
                self.send_response(503)
                self.end_headers()
                return
            _Receiver.got.append((dict(self.headers), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_the_sink_posts_signed_cloudevents_at_least_once_across_failures_and_a_kill(tmp_path):
    secret = "sink-secret-0123456789"
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    sink = ["--audit-sink-url", f"http://127.0.0.1:{receiver.server_port}/events",
            "--audit-sink-secret", secret, "--audit-sink-delay", "1s", "--audit-sink-source", "/test/catalog"]
    root = new_root("lance-catalog-audit-sink-")
    log = str(tmp_path / "first.log")
    url, proc = _start(root, *sink, log=log)
    try:
        for i in range(4):
            s, body = _http("POST", f"{url}/v1/namespace/s{i}/create", {})
            assert s == 200, body
        deadline = time.time() + 60
        while time.time() < deadline and len(_created_namespaces(_posted())) < 4:
            time.sleep(0.2)
        assert _created_namespaces(_posted()) == {f"s{i}" for i in range(4)}, "sent after 3 refusals"
        # Answered, then killed at once: the next replica sends them.
        for i in range(4, 7):
            s, body = _http("POST", f"{url}/v1/namespace/s{i}/create", {})
            assert s == 200, body
        proc.kill()
        proc.wait(timeout=30)
        assert secret not in open(log).read(), "the sink's key is never logged"
        url, proc = _start(root, *sink, log=str(tmp_path / "second.log"))
        deadline = time.time() + 90  # the dead sender's lease runs out first
        while time.time() < deadline and len(_created_namespaces(_posted())) < 7:
            time.sleep(0.5)
        assert _created_namespaces(_posted()) == {f"s{i}" for i in range(7)}
    finally:
        proc.kill()
        receiver.shutdown()
    for headers, body in _Receiver.got:
        h = {k.lower(): v for k, v in headers.items()}
        assert h["content-type"] == "application/cloudevents+json"
        mac = hmac.new(secret.encode(), f"{h['x-lance-catalog-timestamp']}.".encode() + body, hashlib.sha256)
        assert h["x-lance-catalog-signature"] == "sha256=" + mac.hexdigest()
        ev = json.loads(body)
        assert ev["specversion"] == "1.0" and ev["source"] == "/test/catalog"
        assert ev["id"] == ev["data"]["event_id"] and ev["type"] == "dev.lance-catalog.audit.succeeded"


def _posted():
    with _Receiver.lock:
        return [json.loads(b)["data"] for _, b in _Receiver.got]


def test_the_retention_deletes_old_events_and_a_bad_value_stops_the_start():
    root = new_root("lance-catalog-audit-keep-")
    srv = start_server(root, "--audit-retention", "2s", "--audit-upkeep-interval", "1s")
    try:
        s, body = _http("POST", f"{srv['url']}/v1/namespace/old/create", {})
        assert s == 200, body
        assert "old" in _created_namespaces(_events(srv["url"]))
        # Its 10-second slot ends, then 2 s pass, then a pass runs.
        deadline = time.time() + 30
        while time.time() < deadline and "old" in _created_namespaces(_events(srv["url"])):
            time.sleep(0.5)
        assert "old" not in _created_namespaces(_events(srv["url"]))
        s, _ = _http("POST", f"{srv['url']}/v1/namespace/new/create", {})
        assert "new" in _created_namespaces(_events(srv["url"]))
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)
    bad = subprocess.run(serve_argv(root, "--audit-retention", "soon"), env=serve_env(root),
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--audit-retention" in bad.stderr


@pytest.mark.local_fs
def test_events_an_older_version_stored_as_records_are_still_listed():
    root = new_root("lance-catalog-audit-old-")
    # The layout versions before segments wrote: one record per event.
    old = {"event_id": "1700000000000-0123456789ab", "at_ms": 1700000000000, "action": "drop_table",
           "resource": {"kind": "table", "id": ["a", "t"]}, "outcome": "succeeded"}
    d = os.path.join(root, "_catalog", "control", "event", old["event_id"])
    os.makedirs(d)
    with open(os.path.join(d, "v00000000000000000001.json"), "w") as f:
        json.dump({"value": old}, f)
    srv = start_server(root)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not _events(srv["url"]):
            time.sleep(0.2)
        events = _events(srv["url"])
        assert events and events[0] == old
        left = [f for _, _, fs in os.walk(os.path.join(root, "_catalog", "control", "event")) for f in fs]
        assert not left, "moved, not copied"
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)


def test_each_committed_version_is_an_event_with_its_table_and_version(server, ns):
    """pylance declares the table and commits its first write and each
    append through create_table_version: each commit is an event naming
    the table's real id and the version it made."""
    import lance
    from lance_namespace import CreateNamespaceRequest

    from conftest import fresh, sample

    top = fresh("audit")
    ns.create_namespace(CreateNamespaceRequest(id=[top]))
    tid = [top, "t"]
    lance.write_dataset(sample(0, 5), namespace_client=ns, table_id=tid)
    for k in range(3):
        lance.write_dataset(sample(5 + k, 1), namespace_client=ns, table_id=tid, mode="append")
    ours = [e for e in _events(server["url"]) if e["resource"].get("id") == tid and e["outcome"] == "succeeded"]
    commits = [e for e in ours if e["action"] == "create_table_version"]
    assert sorted(e["version"] for e in commits) == [1, 2, 3, 4], commits
    real = {e["resource"].get("object_id") for e in ours}
    assert len(real) == 1 and None not in real, ours
