#!/usr/bin/env python3
"""describe_table latency with `--auth required` beside `--auth none`, in one
run: servers on fresh roots, one table each, N keep-alive calls to each in
alternating rounds; prints the medians and their ratios.

    LANCE_CATALOG_BIN=target/release/lance-catalog python3 scripts/bench_auth.py [N] [--anchor OTHER_BIN]

Callers: the server admin (a bearer JWT, and an API key), a principal
holding one grant on the table (the grant lookup along the object's
chain), and a local user with that grant, by name and password (HTTP Basic:
an Argon2id check on its first call, then the password remembered) and by
a session token from POST /v1/sessions. A last table times the first,
cold Basic call of fresh users: the Argon2id check itself. With `--anchor`, the same servers of another build run interleaved
in the same rounds, and each variant's median is also given as a ratio to
the anchor's (e.g. a build before a change).
"""
import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import statistics
import subprocess
import tempfile
import time

SECRET = "bench-secret-of-at-least-32-bytes"


def jwt(sub):
    enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
    head = enc(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = enc(json.dumps({"sub": sub, "exp": int(time.time()) + 3600}).encode())
    sig = enc(hmac.new(SECRET.encode(), head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


def start(binary, *flags):
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


def servers(binary, procs):
    """The variants of one build: name -> (connection, headers)."""
    open_proc, oh, op = start(binary, "--auth", "none")
    auth_proc, ah, ap = start(binary, "--auth", "required", "--bootstrap-admin", "root",
                              "--jwt-secret", SECRET)
    procs += [open_proc, auth_proc]
    plain = http.client.HTTPConnection(oh, op)
    secured = http.client.HTTPConnection(ah, ap)
    bearer = {"authorization": f"Bearer {jwt('root')}"}
    setup(plain, {})
    setup(secured, bearer)
    key = json.loads(request(secured, "POST", "/v1/api-keys", json.dumps({"principal": "root"}).encode(),
                             bearer))["key"]
    grant = {"resource": {"kind": "table", "id": ["b", "t"]}, "principal": "rita", "relation": "reader"}
    request(secured, "POST", "/v1/grants", json.dumps(grant).encode(), bearer)
    user = {"username": "ursa", "password": "ursa's long password"}
    request(secured, "POST", "/v1/users", json.dumps(user).encode(), bearer)
    grant["principal"] = "ursa"
    request(secured, "POST", "/v1/grants", json.dumps(grant).encode(), bearer)
    basic = {"authorization": "Basic " + base64.b64encode(b"ursa:ursa's long password").decode()}
    session = json.loads(request(secured, "POST", "/v1/sessions", b"{}", basic))["token"]
    return {"none": (plain, {}), "required, admin JWT": (secured, bearer),
            "required, admin API key": (secured, {"x-api-key": key}),
            "required, table reader JWT": (secured, {"authorization": f"Bearer {jwt('rita')}"}),
            "required, local user Basic": (secured, basic),
            "required, local user session": (secured, {"authorization": f"Bearer {session}"})}


def cold_sign_ins(conn, admin, n):
    """The first Basic call of `n` fresh users (Argon2id each time), seconds."""
    times = []
    for i in range(n):
        user = {"username": f"cold{i}", "password": f"cold user {i}'s password"}
        request(conn, "POST", "/v1/users", json.dumps(user).encode(), admin)
        basic = {"authorization": "Basic " + base64.b64encode(f"cold{i}:{user['password']}".encode()).decode()}
        t = time.perf_counter()
        request(conn, "GET", f"/v1/users/cold{i}", b"", basic)
        times.append(time.perf_counter() - t)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=500)
    parser.add_argument("--anchor", help="another build's binary, run interleaved")
    args = parser.parse_args()
    binary = os.environ.get("LANCE_CATALOG_BIN", "target/release/lance-catalog")
    procs = []
    try:
        builds = {"": servers(binary, procs)}
        if args.anchor:
            builds["anchor "] = servers(args.anchor, procs)
        variants = {f"{tag}{name}": v for tag, vs in builds.items() for name, v in vs.items()}
        times = {name: [] for name in variants}
        for _ in range(args.n):
            for name, (conn, headers) in variants.items():
                t = time.perf_counter()
                request(conn, "POST", "/v1/table/b%24t/describe", b"{}", headers)
                times[name].append(time.perf_counter() - t)
        med = {name: statistics.median(ts) for name, ts in times.items()}
        print(f"describe_table, {args.n} calls each, one keep-alive client per server, interleaved")
        for name, ts in times.items():
            base = med["anchor none" if name.startswith("anchor ") else "none"]
            line = (f"  {name:34s} median {med[name] * 1000:.3f} ms  p90 {sorted(ts)[int(args.n * 0.9)] * 1000:.3f} ms"
                    f"  / none {med[name] / base:.3f}")
            if args.anchor and not name.startswith("anchor "):
                line += f"  / anchor {med[name] / med['anchor ' + name]:.3f}"
            print(line)
        secured, admin = builds[""]["required, admin JWT"]
        cold = cold_sign_ins(secured, admin, 20)
        print(f"first Basic call of 20 fresh users (Argon2id m=19456 KiB, t=2, p=1): median "
              f"{statistics.median(cold) * 1000:.1f} ms, max {max(cold) * 1000:.1f} ms; "
              f"/ remembered Basic {statistics.median(cold) / med['required, local user Basic']:.0f}x")
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)


if __name__ == "__main__":
    main()
