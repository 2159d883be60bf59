"""What an operator touches, through the real binary: /healthz, /readyz
(and gRPC health agreeing with it), /metrics scraped after real traffic
over REST, gRPC and Flight, JSON log lines, and the config file."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import grpc
import pyarrow.flight as flight
import pytest

from conftest import _binary, eventually, fresh, ipc, sample, start_server


def call(url, method="GET", body=None, headers=None):
    """(status, headers, body bytes) of one request."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    hdrs = {"Content-Type": "application/json"} if data is not None else {}
    hdrs.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def scrape(url):
    """The /metrics samples as {name{labels}: value}."""
    status, headers, body = call(url + "/metrics")
    assert status == 200
    assert headers["content-type"].startswith("application/openmetrics-text")
    text = body.decode()
    assert text.rstrip().endswith("# EOF")
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        key, value = line.rsplit(" ", 1)
        out[key] = float(value)
    return out


def sample_value(samples, name, **labels):
    """Sum of the samples of `name` whose labels include `labels`."""
    total = 0.0
    for key, value in samples.items():
        m = re.match(r"([^{]+)(?:\{(.*)\})?$", key)
        if m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += value
    return total


def grpc_health(url, service=""):
    """grpc.health.v1 Check over a raw channel: 1 SERVING, 2 NOT_SERVING."""
    channel = grpc.insecure_channel(url.removeprefix("http://"))
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    name = service.encode()
    request = (b"\x0a" + bytes([len(name)]) + name) if name else b""
    answer = check(request, timeout=10)
    channel.close()
    return answer[1] if len(answer) >= 2 else 0


def test_healthz_readyz_and_grpc_health_agree():
    root = tempfile.mkdtemp(prefix="lance-catalog-ready-")
    srv = start_server(root)
    url = srv["url"]
    try:
        assert call(url + "/healthz")[0] == 200
        status, _, body = call(url + "/readyz")
        assert status == 200 and json.loads(body)["status"] == "ready"
        assert grpc_health(url) == 1
        assert grpc_health(url, "lance.catalog.v1.LanceNamespaceService") == 1

        # The storage root goes away: within a check (every 2 s) not
        # ready, with the reason, on both; alive still.
        moved = root + ".away"
        os.rename(root, moved)
        assert eventually(lambda: call(url + "/readyz")[0] == 503)
        status, headers, body = call(url + "/readyz")
        problem = json.loads(body)
        assert headers["content-type"] == "application/problem+json"
        assert problem["code"] == 17 and "storage root" in problem["detail"], problem
        # The unauthenticated answer names no path.
        assert root not in body.decode()
        assert eventually(lambda: grpc_health(url) == 2)
        assert grpc_health(url, "lance.catalog.v1.CatalogControlService") == 2
        assert call(url + "/healthz")[0] == 200

        # It comes back: ready again, and so is gRPC health.
        os.rename(moved, root)
        assert eventually(lambda: call(url + "/readyz")[0] == 200)
        assert eventually(lambda: grpc_health(url) == 1)
    finally:
        srv["proc"].terminate()
        srv["proc"].wait(timeout=30)


def test_a_request_cut_off_is_no_longer_in_flight(server):
    """A client that goes away mid-body: its request is counted and is not
    left in flight."""
    import socket

    url = server["url"]
    host, port = url.removeprefix("http://").split(":")
    before = scrape(url)
    s = socket.create_connection((host, int(port)))
    s.sendall(b"POST /v1/table/a$b/insert HTTP/1.1\r\nHost: x\r\n"
              b"Content-Type: application/vnd.apache.arrow.stream\r\nContent-Length: 1000\r\n\r\n0123456789")
    time.sleep(0.3)
    s.close()
    # Only the scrape itself is in flight once the server has noticed.
    assert eventually(lambda: scrape(url)['lance_catalog_requests_in_flight{transport="rest"}'] == 1)
    after = scrape(url)
    assert sample_value(after, "lance_catalog_requests_total", operation="InsertIntoTable") > \
        sample_value(before, "lance_catalog_requests_total", operation="InsertIntoTable")


def test_metrics_move_with_traffic_on_every_transport(server):
    url = server["url"]
    before = scrape(url)
    top = fresh("metrics")
    assert call(f"{url}/v1/namespace/{top}/create", "POST", {})[0] == 200
    status, _, _ = call(f"{url}/v1/table/{top}$t/create", "POST", ipc(sample(0, 100)),
                        {"Content-Type": "application/vnd.apache.arrow.stream"})
    assert status == 200
    status, _, _ = call(f"{url}/v1/table/{top}$t/insert", "POST", ipc(sample(100, 50)),
                        {"Content-Type": "application/vnd.apache.arrow.stream"})
    assert status == 200
    status, _, answer = call(f"{url}/v1/table/{top}$t/query", "POST", {"k": 1000, "vector": {}})
    assert status == 200, answer
    assert call(f"{url}/v1/table/{top}$nope/describe", "POST", {})[0] == 404
    # gRPC: a describe of a missing table (code 4 again, by another transport).
    channel = grpc.insecure_channel(url.removeprefix("http://"))
    describe = channel.unary_unary(
        "/lance.catalog.v1.LanceNamespaceService/DescribeTable",
        request_serializer=lambda b: b, response_deserializer=lambda b: b)
    missing = f"{top}".encode()
    # DescribeTableRequest: field 3 (id), repeated string.
    req = b"\x1a" + bytes([len(missing)]) + missing + b"\x1a\x04nope"
    with pytest.raises(grpc.RpcError) as err:
        describe(req, timeout=10)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    channel.close()
    # Flight: the whole table back.
    fc = flight.FlightClient(url.replace("http://", "grpc+tcp://"))
    got = fc.do_get(flight.Ticket(json.dumps({"id": [top, "t"]}).encode())).read_all()
    assert got.num_rows == 150
    fc.close()
    # A maintenance task, submitted and run by this replica's worker.
    status, _, body = call(f"{url}/lance/oss/v1/table/{top}.t/compact?delimiter=.", "POST", {})
    assert status == 200, body
    task_id = json.loads(body)["task_id"]
    for _ in range(1200):
        s, _, b = call(f"{url}/lance/oss/v1/table/{top}.t/tasks/{task_id}?delimiter=.")
        if json.loads(b)["task_info"]["status"] in ("completed", "failed"):
            break
        time.sleep(0.05)
    assert json.loads(b)["task_info"]["status"] == "completed", b

    after = scrape(url)
    moved = lambda name, **l: sample_value(after, name, **l) - sample_value(before, name, **l)
    assert moved("lance_catalog_requests_total", operation="CreateTable", transport="rest") == 1
    assert moved("lance_catalog_requests_total", operation="InsertIntoTable", transport="rest") == 1
    assert moved("lance_catalog_requests_total", operation="DescribeTable", transport="grpc") == 1
    assert moved("lance_catalog_requests_total", operation="DoGet", transport="flight") == 1
    assert moved("lance_catalog_request_duration_seconds_count", operation="QueryTable", transport="rest") == 1
    assert moved("lance_catalog_errors_total", operation="DescribeTable", code="4", error="TableNotFound") == 2
    assert moved("lance_catalog_errors_total", transport="grpc", code="4") == 1
    # Bytes: the insert's Arrow body in, the query's and the DoGet's answers out.
    assert moved("lance_catalog_bytes_total", operation="InsertIntoTable", direction="in") >= len(ipc(sample(100, 50)))
    assert moved("lance_catalog_bytes_total", operation="QueryTable", direction="out") > 1000
    assert moved("lance_catalog_bytes_total", operation="DoGet", transport="flight", direction="out") > 1000
    assert moved("lance_catalog_maintenance_tasks_total", task_type="lance_compact", event="submitted") == 1
    assert moved("lance_catalog_maintenance_tasks_total", task_type="lance_compact", event="completed") == 1
    assert "lance_catalog_requests_in_flight{transport=\"rest\"}" in after
    # The scrape itself is in flight while it is rendered.
    assert after["lance_catalog_requests_in_flight{transport=\"rest\"}"] >= 1


def test_registry_conflicts_are_counted(server):
    """Concurrent changes of one project race on its record: the losers
    are counted as conflicts and retried."""
    url = server["url"]
    project = fresh("race").replace("_", "-")
    status, _, body = call(f"{url}/v1/projects", "POST", {"project_id": project})
    assert status == 200, body
    before = scrape(url)
    for round_ in range(10):
        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(
                lambda i: call(f"{url}/v1/projects/{project}", "PATCH",
                               {"description": f"r{round_}-{i}"})[0], range(16)))
        assert all(s == 200 for s in results), results
        after = scrape(url)
        if sample_value(after, "lance_catalog_registry_conflicts_total") > \
                sample_value(before, "lance_catalog_registry_conflicts_total"):
            break
    conflicts = sample_value(after, "lance_catalog_registry_conflicts_total") - \
        sample_value(before, "lance_catalog_registry_conflicts_total")
    retries = sample_value(after, "lance_catalog_registry_retries_total") - \
        sample_value(before, "lance_catalog_registry_retries_total")
    assert conflicts >= 1
    assert retries >= 1


def run_server(args, env=None):
    """Start the binary with `args`; answer (process, url, lines) where
    `lines` collects its output."""
    proc = subprocess.Popen([_binary(), "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    url = None
    for line in proc.stdout:
        lines.append(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            url = m.group(1)
            break
    assert url, "".join(lines)
    threading.Thread(target=lambda: [lines.append(l) for l in proc.stdout], daemon=True).start()
    return proc, url, lines


def test_json_log_has_one_line_per_request():
    root = tempfile.mkdtemp(prefix="lance-catalog-log-")
    proc, url, lines = run_server(["--root", root, "--listen", "127.0.0.1:0", "--log-format", "json"])
    try:
        top = fresh("log")
        call(f"{url}/v1/namespace/{top}/create", "POST", {}, {"x-request-id": "req-given-1"})
        status, headers, body = call(f"{url}/v1/table/{top}$missing/describe", "POST", {})
        assert status == 404
        given_id = headers["x-request-id"]
        # The maintenance API's problems name the request id as instance.
        status, headers, body = call(f"{url}/lance/oss/v1/table/{top}.missing/tasks/abc?delimiter=.")
        oss_problem = json.loads(body)
        assert oss_problem["instance"] == headers["x-request-id"]
        deadline = time.time() + 5
        while time.time() < deadline:
            records = [json.loads(l) for l in list(lines) if l.startswith("{")]
            requests = [r for r in records if r.get("message") == "request"]
            if len(requests) >= 3:
                break
            time.sleep(0.05)
        assert all(l.startswith("{") for l in lines if l.strip() and "listening on" not in l), lines
        by_id = {r["request_id"]: r for r in requests}
        created = by_id["req-given-1"]
        assert created["operation"] == "CreateNamespace" and created["status"] == 200
        assert created["transport"] == "rest" and created["principal"] == "-"
        assert isinstance(created["duration_ms"], float) and "code" not in created
        failed = by_id[given_id]
        assert failed["operation"] == "DescribeTable" and failed["status"] == 404
        assert failed["code"] == 4 and failed["error"] == "TableNotFound"
        oss = by_id[oss_problem["instance"]]
        assert oss["operation"] == "GetLanceTaskStatus" and oss["status"] == 404
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_config_file_precedence_and_redaction(tmp_path):
    root_file = tmp_path / "from-file"
    root_env = tmp_path / "from-env"
    cfg = tmp_path / "catalog.toml"
    cfg.write_text(
        f'root = "{root_file}"\n'
        'listen = "127.0.0.1:0"\n'
        'log_format = "json"\n'
        'task_quota = 5\n'
        'workers = 0\n'
        'storage_options = ["aws_secret_access_key=VERY-SECRET", "aws_region=eu-west-1"]\n'
        'ray_token = "RAY-SECRET"\n'
        'trash_purge_expired = true\n')
    env = dict(os.environ, LANCE_CATALOG_ROOT=str(root_env))
    proc, url, lines = run_server(["--config", str(cfg), "--task-quota", "9"], env=env)
    try:
        text = "".join(lines)
        assert "VERY-SECRET" not in text and "RAY-SECRET" not in text
        effective = next(json.loads(l) for l in lines if '"effective configuration"' in l)
        config = json.loads(effective["config"])
        assert config["root"] == {"value": str(root_env), "source": "env"}
        assert config["task_quota"] == {"value": "9", "source": "flag"}
        assert config["workers"] == {"value": "0", "source": "file"}
        assert config["trash_purge_expired"]["source"] == "file"
        assert config["max_json_body"]["source"] == "default"
        assert config["storage_options"]["value"] == [
            "aws_secret_access_key=<redacted>", "aws_region=eu-west-1"]
        # A setting marked secret where it is defined is never logged.
        assert config["ray_token"] == {"value": "<redacted>", "source": "file"}
        # The root the server uses is the environment's, not the file's.
        assert call(f"{url}/v1/namespace/{fresh('cfg')}/create", "POST", {})[0] == 200
        assert os.path.isdir(root_env) and not os.path.exists(root_file)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    bad = tmp_path / "bad.toml"
    bad.write_text('root = "/tmp/x"\nlisten_adress = "0.0.0.0:1"\n')
    run = subprocess.run([_binary(), "serve", "--config", str(bad)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    assert "unknown key `listen_adress`" in run.stderr
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('task_quota = "many"\n')
    run = subprocess.run([_binary(), "serve", "--config", str(wrong)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2 and "many" in run.stderr, run.stderr
