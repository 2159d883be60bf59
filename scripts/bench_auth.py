#!/usr/bin/env python3
"""describe_table latency with `--auth required` beside `--auth none`, in one
run: two servers on two fresh roots, one table each, N keep-alive calls to
each in alternating rounds; prints the medians and their ratio.

    LANCE_CATALOG_BIN=target/release/lance-catalog python3 scripts/bench_auth.py [N]
"""
import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SECRET = "bench-secret-of-at-least-32-bytes"


def jwt(sub):
    enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
    head = enc(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = enc(json.dumps({"sub": sub, "exp": int(time.time()) + 3600}).encode())
    sig = enc(hmac.new(SECRET.encode(), head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


def start(*flags):
    binary = os.environ.get("LANCE_CATALOG_BIN", "target/release/lance-catalog")
    root = tempfile.mkdtemp(prefix="lance-catalog-bench-")
    proc = subprocess.Popen([binary, "serve", "--root", root, "--listen", "127.0.0.1:0", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in proc.stdout:
        m = re.search(r"listening on http://(\S+)", line)
        if m:
            host, port = m.group(1).rsplit(":", 1)
            return proc, host, int(port)
    raise RuntimeError("server did not start")


def request(conn, method, path, body=b"", headers=None, ctype="application/json"):
    conn.request(method, path, body=body, headers={"content-type": ctype, **(headers or {})})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{method} {path}: {r.status} {data[:200]!r}")
    return data


def setup(conn, headers):
    import pyarrow as pa
    request(conn, "POST", "/v1/namespace/b/create", b"{}", headers)
    sink = pa.BufferOutputStream()
    tbl = pa.table({"id": pa.array(range(100), pa.int64())})
    with pa.ipc.new_stream(sink, tbl.schema) as w:
        w.write_table(tbl)
    request(conn, "POST", "/v1/table/b%24t/create", sink.getvalue().to_pybytes(), headers,
            "application/vnd.apache.arrow.stream")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    open_proc, oh, op = start("--auth", "none")
    auth_proc, ah, ap = start("--auth", "required", "--bootstrap-admin", "root", "--jwt-secret", SECRET)
    try:
        plain = http.client.HTTPConnection(oh, op)
        secured = http.client.HTTPConnection(ah, ap)
        bearer = {"authorization": f"Bearer {jwt('root')}"}
        setup(plain, {})
        setup(secured, bearer)
        key = json.loads(request(secured, "POST", "/v1/api-keys", json.dumps({"principal": "root"}).encode(),
                                 bearer))["key"]
        variants = {"none": (plain, {}), "required, bearer JWT": (secured, bearer),
                    "required, API key": (secured, {"x-api-key": key})}
        times = {name: [] for name in variants}
        for _ in range(n):
            for name, (conn, headers) in variants.items():
                t = time.perf_counter()
                request(conn, "POST", "/v1/table/b%24t/describe", b"{}", headers)
                times[name].append(time.perf_counter() - t)
        base = statistics.median(times["none"])
        print(f"describe_table, {n} calls each, one keep-alive client, interleaved")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"  auth {name:22s} median {med * 1000:.3f} ms  p90 {sorted(ts)[int(n * 0.9)] * 1000:.3f} ms"
                  f"  ratio {med / base:.3f}")
    finally:
        for p in (open_proc, auth_proc):
            p.terminate()
            p.wait(timeout=30)


if __name__ == "__main__":
    main()
