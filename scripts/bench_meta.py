#!/usr/bin/env python3
"""Metadata latency and throughput, lance-catalog beside the reference
server, in one run, with the same client.

The reference is pylance's own REST server (`lance.namespace.RestAdapter`
over a directory namespace, as `shared/reference/ref_server.py` starts it).
Both get a fresh root holding namespace `bench` with --tables small tables,
then, over raw keep-alive HTTP/1.1:

  - latency, 1 client: describe_table, table_exists, namespace_exists,
    list_tables (median and p99 of --requests calls after a warm-up);
  - throughput, --connections connections (spread over client processes,
    so the client's GIL is not the limit): describe_table and list_tables
    for --seconds each;
  - optionally (--list-scale 1000,10000,100000): pages of 100 of
    list_tables and list_all_tables at that many tables in one namespace
    (declared tables, appended to `__manifest` directly), first and middle
    pages, repeated and right after a write.

It prints one table with both servers and the ratio, and exits 0; it
asserts nothing. With --anchor another build of lance-catalog (e.g. the
commit before a change) runs in the same rounds, beside them, and the table
gains its column and the ratio to it. Run it on a release build on a quiet machine:

  cargo build --release
  python3 scripts/bench_meta.py --bin $CARGO_TARGET_DIR/release/lance-catalog
"""
import argparse
import http.client
import json
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import pyarrow as pa

REFERENCE = """
import os, signal, sys, time
import lance.namespace
root, port = sys.argv[1], int(sys.argv[2])
srv = lance.namespace.RestAdapter("dir", {"root": root}, host="127.0.0.1", port=port)
srv.start()
print(f"listening on http://127.0.0.1:{srv.port}", flush=True)
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
while not stop:
    time.sleep(0.2)
srv.stop()
"""


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv, env=None):
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    for line in proc.stdout:
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, m.group(1)
    raise RuntimeError(f"{argv[0]} did not start")


class Client:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, url):
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)

    def call(self, method, path, body=None, ctype="application/json"):
        headers = {"Content-Type": ctype} if body is not None else {}
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        data = r.read()
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: {r.status} {data[:300]!r}")
        return data


def stop_all(servers, work):
    """Stops every benchmarked server and removes the scratch directory."""
    for proc, _ in servers.values():
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    shutil.rmtree(work, ignore_errors=True)


def arrow_body(n=10):
    tbl = pa.table({"id": pa.array(range(n), pa.int64()), "s": pa.array([f"s{i}" for i in range(n)])})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, tbl.schema) as w:
        w.write_table(tbl)
    return sink.getvalue().to_pybytes()


# The measured calls: (name, method, path, body).
CALLS = [
    ("describe_table", "POST", "/v1/table/bench$t0/describe", b"{}"),
    ("table_exists", "POST", "/v1/table/bench$t0/exists", b"{}"),
    ("namespace_exists", "POST", "/v1/namespace/bench/exists", b"{}"),
    ("list_tables", "GET", "/v1/namespace/bench/table/list", None),
]


def populate(url, tables):
    c = Client(url)
    c.call("POST", "/v1/namespace/bench/create", b"{}")
    body = arrow_body()
    for i in range(tables):
        c.call("POST", f"/v1/table/bench$t{i}/create", body, "application/vnd.apache.arrow.stream")


def latency(url, requests):
    c = Client(url)
    out = {}
    for name, method, path, body in CALLS:
        for _ in range(max(20, requests // 10)):
            c.call(method, path, body)
        times = []
        for _ in range(requests):
            t0 = time.perf_counter()
            c.call(method, path, body)
            times.append(time.perf_counter() - t0)
        times.sort()
        out[name] = (statistics.median(times) * 1e3, times[int(len(times) * 0.99) - 1] * 1e3)
    return out


def _load(args):
    url, method, path, body, threads, seconds = args
    count = [0] * threads
    deadline = time.perf_counter() + seconds

    def run(i):
        c = Client(url)
        while time.perf_counter() < deadline:
            c.call(method, path, body)
            count[i] += 1

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(count)


def throughput(url, connections, seconds, procs):
    out = {}
    per = max(1, connections // procs)
    with multiprocessing.Pool(procs) as pool:
        for name, method, path, body in (CALLS[0], CALLS[3]):
            t0 = time.perf_counter()
            done = sum(pool.map(_load, [(url, method, path, body, per, seconds)] * procs))
            out[name] = done / (time.perf_counter() - t0)
    return out


def grow_manifest(root, have, scale):
    """Add declared tables bench$d<i> (have <= i < scale) to the root's
    `__manifest` directly: the rows N declares would leave (a table record
    with a location and no data), written in one append so 100,000 of them
    take seconds. Both servers read `__manifest` as their source of truth."""
    import lance

    if scale <= have:
        return
    path = os.path.join(root, "__manifest")
    schema = lance.dataset(path).schema
    ids = [f"bench$d{i:07d}" for i in range(have, scale)]
    rows = pa.table({
        "object_id": pa.array(ids, pa.string()),
        "object_type": pa.array(["table"] * len(ids), pa.string()),
        "location": pa.array([f"{i:08x}_{t}" for i, t in enumerate(ids, have)], pa.string()),
        "metadata": pa.nulls(len(ids), pa.string()),
        "base_objects": pa.nulls(len(ids), schema.field("base_objects").type),
    }).cast(schema)
    lance.write_dataset(rows, path, mode="append")


def median_ms(c, method, path, n=30, before=None):
    """Median ms of `n` calls; NaN when the server does not serve the call."""
    try:
        c.call(method, path)
    except RuntimeError:
        return float("nan")
    times = []
    for _ in range(n):
        if before:
            before()
        t0 = time.perf_counter()
        c.call(method, path)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def list_at_scale(url, root, scale, have):
    """At `scale` declared tables in namespace `bench`: median ms of the
    first 100-table page of list_tables (repeated, and right after a write,
    which changes the manifest's version), of a page from the middle, and of
    the first page of list_all_tables."""
    grow_manifest(root, have, scale)
    c = Client(url)
    middle = f"d{scale // 2:07d}"
    writes = iter(range(10**6))

    def write():
        # A namespace create: a new manifest version, no table added.
        c.call("POST", f"/v1/namespace/w{next(writes)}_{scale}/create", b"{}")
    first = "/v1/namespace/bench/table/list?limit=100"
    median_ms(c, "GET", first, n=3)
    return {
        "first page": median_ms(c, "GET", first),
        "first page after a write": median_ms(c, "GET", first, n=10, before=write),
        "middle page": median_ms(c, "GET", f"{first}&page_token={middle}"),
        "list_all_tables page": median_ms(c, "GET", "/v1/table?limit=100"),
    }


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return float("nan")
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the lance-catalog binary (a release build)")
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--procs", type=int, default=4, help="client processes for the throughput runs")
    ap.add_argument("--anchor", help="another lance-catalog binary to run in the same rounds (before/after)")
    ap.add_argument("--list-scale", default="", help="comma-separated table counts, e.g. 1000,10000")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="bench-meta-")
    servers = {}
    try:
        ours, ours_url = start([a.bin, "serve", "--root", f"{work}/ours", "--listen", "127.0.0.1:0",
                                "--workers", "0"], env=dict(os.environ, LANCE_CATALOG_LOG="warn"))
        idle_rss = rss_mb(ours.pid)
        ref, ref_url = start([sys.executable, "-c", REFERENCE, f"{work}/ref", str(free_port())])
        servers = {"ours": (ours, ours_url), "reference": (ref, ref_url)}
        roots = {"ours": f"{work}/ours", "reference": f"{work}/ref"}
        if a.anchor:
            servers["anchor"] = start([a.anchor, "serve", "--root", f"{work}/anchor", "--listen",
                                       "127.0.0.1:0", "--workers", "0"],
                                      env=dict(os.environ, LANCE_CATALOG_LOG="warn"))
            roots["anchor"] = f"{work}/anchor"
        results = {}
        for name, (_, url) in servers.items():
            populate(url, a.tables)
        for name, (_, url) in servers.items():
            results[name] = {"latency": latency(url, a.requests)}
        for name, (_, url) in servers.items():
            results[name]["throughput"] = throughput(url, a.connections, a.seconds, a.procs)
        scales = [int(s) for s in a.list_scale.split(",") if s.strip()]
        for name, (_, url) in servers.items():
            have, curve = 0, {}
            for s in scales:
                curve[s] = list_at_scale(url, roots[name], s, have)
                have = s
            results[name]["scale"] = curve

        print(f"\n{a.tables} tables; latency: median (p99) of {a.requests} calls on one keep-alive "
              f"connection; throughput: {a.connections} connections over {a.procs} client processes, "
              f"{a.seconds:g} s each\n")
        anc = "anchor" in results
        head = "| measure | ours | reference | ours / reference |" + (" anchor | ours / anchor |" if anc else "")
        print(head)
        print("|---|---|---|---|" + ("---|---|" if anc else ""))
        for name, _, _, _ in CALLS:
            o, r = results["ours"]["latency"][name], results["reference"]["latency"][name]
            row = f"| {name}, 1 client | {o[0]:.3f} ms ({o[1]:.2f}) | {r[0]:.3f} ms ({r[1]:.2f}) | {o[0] / r[0]:.2f} |"
            if anc:
                x = results["anchor"]["latency"][name]
                row += f" {x[0]:.3f} ms ({x[1]:.2f}) | {o[0] / x[0]:.2f} |"
            print(row)
        for name in ("describe_table", "list_tables"):
            o, r = results["ours"]["throughput"][name], results["reference"]["throughput"][name]
            row = f"| {name}, {a.connections} connections | {o:,.0f} /s | {r:,.0f} /s | {o / r:.2f} (throughput) |"
            if anc:
                x = results["anchor"]["throughput"][name]
                row += f" {x:,.0f} /s | {o / x:.2f} (throughput) |"
            print(row)
        if scales:
            print("\nList pages of 100 (median ms) as the namespace grows (declared tables):\n")
            print("| tables | measure | ours | reference | ours / reference |")
            print("|---|---|---|---|---|")
        for s in scales:
            for m in results["ours"]["scale"][s]:
                o, r = results["ours"]["scale"][s][m], results["reference"]["scale"][s][m]
                print(f"| {s:,} | {m} | {o:.2f} | {r:.2f} | {o / r:.2f} |")
        print(f"\nours: idle RSS at start {idle_rss:.0f} MiB, after the run {rss_mb(ours.pid):.0f} MiB")
    finally:
        stop_all(servers, work)


if __name__ == "__main__":
    main()
