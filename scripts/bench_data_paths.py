#!/usr/bin/env python3
"""Benchmark the data paths side by side, in one run: N rows (int, float and
string columns) written and then fully scanned

  - through the catalog's REST API (one Arrow IPC stream in, an IPC file out),
  - through the catalog's Arrow Flight service (DoPut, DoGet),
  - with pylance directly on the same local disk (write_dataset, to_table).

It reports the median of --repeat runs for each path, the ratios to direct
Lance, and the server's peak resident memory (VmHWM). Not a test: run it by
hand, on a release build:

  cargo build --release
  python3 scripts/bench_data_paths.py --bin target/release/lance-catalog
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import lance
import lance_namespace
import numpy as np
import pyarrow as pa
import pyarrow.flight as flight
from lance_namespace import CreateNamespaceRequest, CreateTableRequest


def make_table(n):
    rng = np.random.default_rng(7)
    cities = np.array(["Lisbon", "Oslo", "Lima", "Osaka", "Quito", "Perth"])
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "qty": pa.array(rng.integers(0, 1000, n, dtype=np.int32)),
        "price": pa.array(rng.random(n) * 100.0),
        "score": pa.array(rng.random(n, dtype=np.float32)),
        "name": pa.array([f"item-{i:08d}" for i in range(n)]),
        "city": pa.array(cities[rng.integers(0, len(cities), n)]),
    })


def ipc_stream(tbl, chunk):
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, tbl.schema) as w:
        w.write_table(tbl, max_chunksize=chunk)
    return sink.getvalue().to_pybytes()


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(r"VmHWM:\s+(\d+) kB", f.read())
    return int(m.group(1)) / 1024 if m else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/lance-catalog")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--paths", default="lance,flight,rest",
                    help="a comma-separated subset of lance,flight,rest (lance is always run)")
    ap.add_argument("--chunk", type=int, default=65536,
                    help="rows per record batch sent over REST and Flight")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="lance-bench-")
    root = os.path.join(work, "catalog")
    proc = subprocess.Popen([a.bin, "serve", "--root", root, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = None
    for line in proc.stdout:
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            url = m.group(1)
            break
    try:
        ns = lance_namespace.connect("rest", {"uri": url})
        ns.create_namespace(CreateNamespaceRequest(id=["bench"]))
        fc = flight.FlightClient(url.replace("http://", "grpc+tcp://"))
        tbl = make_table(a.rows)
        paths = set(a.paths.split(",")) | {"lance"}
        results = {k: ([], []) for k in ("rest", "flight", "lance") if k in paths}

        def rest_run(r):
            # One request with the whole IPC stream (encoding included).
            t, _ = timed(lambda: ns.create_table(
                CreateTableRequest(id=["bench", f"rest{r}"]), ipc_stream(tbl, a.chunk)))
            results["rest"][0].append(t)
            t, got = timed(lambda: pa.ipc.open_file(ns.query_table(
                {"id": ["bench", f"rest{r}"], "k": a.rows, "vector": {}}).data).read_all())
            assert got.num_rows == a.rows
            results["rest"][1].append(t)

        def flight_run(r):
            def put():
                w, rd = fc.do_put(flight.FlightDescriptor.for_path("bench", f"flight{r}"), tbl.schema)
                w.write_table(tbl, max_chunksize=a.chunk)
                w.done_writing()
                out = json.loads(rd.read().to_pybytes())
                w.close()
                return out
            t, out = timed(put)
            assert out["num_rows"] == a.rows
            results["flight"][0].append(t)
            ticket = flight.Ticket(json.dumps({"id": ["bench", f"flight{r}"]}).encode())
            t, got = timed(lambda: fc.do_get(ticket).read_all())
            assert got.num_rows == a.rows
            results["flight"][1].append(t)

        def lance_run(r):
            path = os.path.join(work, f"direct{r}.lance")
            t, _ = timed(lambda: lance.write_dataset(tbl, path))
            results["lance"][0].append(t)
            t, got = timed(lambda: lance.dataset(path).to_table())
            assert got.num_rows == a.rows
            results["lance"][1].append(t)

        for r in range(a.repeat):
            for name, run in (("rest", rest_run), ("flight", flight_run), ("lance", lance_run)):
                if name in paths:
                    run(r)

        med = {k: (statistics.median(v[0]), statistics.median(v[1])) for k, v in results.items()}
        base_w, base_r = med["lance"]
        print(f"rows: {a.rows}, repeats: {a.repeat}, batches of {a.chunk} rows "
              f"over REST and Flight, median seconds")
        print(f"{'path':8} {'write':>8} {'scan':>8} {'write/lance':>12} {'scan/lance':>11}")
        for k in ("lance", "flight", "rest"):
            if k not in med:
                continue
            w, s = med[k]
            print(f"{k:8} {w:8.3f} {s:8.3f} {w / base_w:12.2f} {s / base_r:11.2f}")
        print(f"server peak RSS: {peak_rss_mb(proc.pid):.0f} MiB")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
