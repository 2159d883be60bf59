#!/usr/bin/env python3
"""Benchmark the data paths side by side, in one run: N rows (int, float and
string columns) written, appended and fully read back

  - with pylance directly on the same local disk (the anchor), and, as a
    second anchor, pylance writing the same rows as a stream of --chunk-row
    batches, each in its own buffers (what a Flight or REST writer hands
    Lance: batches decoded off the wire one by one),
  - through the catalog's REST API (create with one Arrow IPC stream body;
    appends of --append-rows per insert request; query of every row as an
    Arrow IPC file), over one raw keep-alive HTTP/1.1 connection,
  - through the catalog's Arrow Flight service (DoPut, DoGet),

and, apart, the fixed cost of a small write: --small 100-row creates (each a
new table) and inserts per path.

Each catalog path runs against its own fresh server process, so each
reports its own peak resident memory (VmHWM). REST bodies are encoded before
the clock starts (a client holds its body before it sends it); the time it
took pyarrow to encode them is printed apart. It reports the median of
--repeat runs, the ratio of each path to direct Lance, the server's idle
RSS and its cold start (spawn to the first answered /healthz). Not a test:
run it by hand, on a release build:

  cargo build --release
  python3 scripts/bench_data_paths.py --bin $CARGO_TARGET_DIR/release/lance-catalog

With --anchor another build (the commit before a change, say) serves the
same REST and Flight runs in the same rounds, on servers of its own, and
each of its rows gains the ratio of this build to it.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

import lance
import numpy as np
import pyarrow as pa
import pyarrow.flight as flight


def make_table(n, start=0):
    rng = np.random.default_rng(7 + start)
    cities = np.array(["Lisbon", "Oslo", "Lima", "Osaka", "Quito", "Perth"])
    return pa.table({
        "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "qty": pa.array(rng.integers(0, 1000, n, dtype=np.int32)),
        "price": pa.array(rng.random(n) * 100.0),
        "score": pa.array(rng.random(n, dtype=np.float32)),
        "name": pa.array([f"item-{i:08d}" for i in range(start, start + n)]),
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


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(rf"{key}:\s+(\d+) kB", f.read())
    return int(m.group(1)) / 1024 if m else float("nan")


class Server:
    """One fresh lance-catalog process over its own root."""

    def __init__(self, binary, work, name):
        root = os.path.join(work, f"root-{name}")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen([binary, "serve", "--root", root, "--listen", "127.0.0.1:0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = None
        for line in self.proc.stdout:
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                self.url = m.group(1)
                break
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()
        host, port = self.url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=300)
        while True:
            try:
                if self.call("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                self.conn.close()
            time.sleep(0.001)
        self.cold_start = time.perf_counter() - t0
        time.sleep(0.5)
        self.idle_rss = status_kb(self.proc.pid, "VmRSS")
        assert self.call("POST", "/v1/namespace/bench/create", b"{}")[0] == 200

    def call(self, method, path, body=None, ctype="application/json"):
        self.conn.request(method, path, body=body, headers={"Content-Type": ctype})
        r = self.conn.getresponse()
        return r.status, r.read()

    def peak_rss(self):
        return status_kb(self.proc.pid, "VmHWM")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def small_writes(n, work, paths):
    """Median milliseconds of n 100-row creates (each a new table, so each
    one moves the catalog's manifest) and n 100-row inserts, per path
    (`paths`: name -> (rest server, flight put)), interleaved."""
    tbl = make_table(100)
    body = ipc_stream(tbl, 100)
    ctype = "application/vnd.apache.arrow.stream"
    ms = {"lance": {"create": [], "insert": []}}

    def rest_write(rest, path):
        status, out = rest.call("POST", path, body, ctype)
        assert status == 200, out

    for name in paths:
        for via in ("rest", "flight"):
            ms[f"{via}{name}"] = {"create": [], "insert": []}
    for i in range(n):
        ms["lance"]["create"].append(timed(lambda: lance.write_dataset(
            tbl, os.path.join(work, f"small{i}.lance")))[0])
        for name, (rest, flight_put) in paths.items():
            ms[f"rest{name}"]["create"].append(
                timed(lambda: rest_write(rest, f"/v1/table/bench$small{i}/create"))[0])
            ms[f"flight{name}"]["create"].append(timed(lambda: flight_put(f"small{i}", tbl))[0])
    for i in range(n):
        ms["lance"]["insert"].append(timed(lambda: lance.write_dataset(
            tbl, os.path.join(work, "small0.lance"), mode="append"))[0])
        for name, (rest, flight_put) in paths.items():
            ms[f"rest{name}"]["insert"].append(
                timed(lambda: rest_write(rest, "/v1/table/bench$small0/insert"))[0])
            ms[f"flight{name}"]["insert"].append(
                timed(lambda: flight_put("small0", tbl, "insert"))[0])
    return {k: {op: statistics.median(v) * 1000 for op, v in ops.items()} for k, ops in ms.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/lance-catalog")
    ap.add_argument("--anchor", help="another lance-catalog binary run in the same rounds (before/after)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--append-rows", type=int, default=50_000,
                    help="rows per insert request (and per direct append) in the append run")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=65536,
                    help="rows per record batch sent over REST and Flight")
    ap.add_argument("--small", type=int, default=30,
                    help="100-row creates and inserts per path for the small-write figures (0: skip)")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="lance-bench-")
    tbl = make_table(a.rows)
    parts = [make_table(a.append_rows, s) for s in range(0, a.rows, a.append_rows)]
    enc_t, body = timed(lambda: ipc_stream(tbl, a.chunk))
    part_bodies = [ipc_stream(p, a.chunk) for p in parts]
    tags = [""] + (["@anchor"] if a.anchor else [])
    paths = ["lance", "lance-stream"] + [f"{via}{t}" for t in tags for via in ("rest", "flight")]
    results = {k: {"write": [], "append": [], "scan": []} for k in paths}
    servers = {}
    for t in tags:
        binary = a.anchor if t else a.bin
        for via in ("rest", "flight"):
            servers[f"{via}{t}"] = Server(binary, work, f"{via}{t}")
    try:
        clients = {t: flight.FlightClient(servers[f"flight{t}"].url.replace("http://", "grpc+tcp://"))
                   for t in tags}

        def lance_run(r):
            path = os.path.join(work, f"direct{r}.lance")
            results["lance"]["write"].append(timed(lambda: lance.write_dataset(tbl, path))[0])
            apath = os.path.join(work, f"append{r}.lance")

            def appends():
                for i, p in enumerate(parts):
                    lance.write_dataset(p, apath, mode="create" if i == 0 else "append")
            results["lance"]["append"].append(timed(appends)[0])
            t, got = timed(lambda: lance.dataset(path).to_table())
            assert got.num_rows == a.rows
            results["lance"]["scan"].append(t)

            # Batches copied apart before the clock starts, as if decoded.
            chunks = [pa.RecordBatch.from_arrays([pa.concat_arrays([c]) for c in b.columns],
                                                 schema=b.schema)
                      for b in tbl.to_batches(max_chunksize=a.chunk)]
            spath = os.path.join(work, f"stream{r}.lance")
            results["lance-stream"]["write"].append(timed(lambda: lance.write_dataset(
                pa.RecordBatchReader.from_batches(tbl.schema, chunks), spath))[0])

        def rest_run(r, tag):
            rest = servers[f"rest{tag}"]
            t, (status, _) = timed(lambda: rest.call(
                "POST", f"/v1/table/bench$rest{r}/create", body, "application/vnd.apache.arrow.stream"))
            assert status == 200
            results[f"rest{tag}"]["write"].append(t)

            def appends():
                for i, b in enumerate(part_bodies):
                    op = "create" if i == 0 else "insert"
                    status, out = rest.call("POST", f"/v1/table/bench$app{r}/{op}", b,
                                            "application/vnd.apache.arrow.stream")
                    assert status == 200, out
            results[f"rest{tag}"]["append"].append(timed(appends)[0])

            def query():
                status, out = rest.call("POST", f"/v1/table/bench$rest{r}/query",
                                        json.dumps({"k": a.rows, "vector": {}}).encode())
                assert status == 200
                return pa.ipc.open_file(out).read_all()
            t, got = timed(query)
            assert got.num_rows == a.rows
            results[f"rest{tag}"]["scan"].append(t)

        def flight_put(name, t, op="create", tag=""):
            desc = flight.FlightDescriptor.for_command(json.dumps({"op": op, "id": ["bench", name]}))
            w, rd = clients[tag].do_put(desc, t.schema)
            w.write_table(t, max_chunksize=a.chunk)
            w.done_writing()
            out = json.loads(rd.read().to_pybytes())
            w.close()
            return out

        def flight_run(r, tag):
            t, out = timed(lambda: flight_put(f"flight{r}", tbl, tag=tag))
            assert out["num_rows"] == a.rows
            results[f"flight{tag}"]["write"].append(t)

            def appends():
                for i, p in enumerate(parts):
                    flight_put(f"app{r}", p, "create" if i == 0 else "insert", tag)
            results[f"flight{tag}"]["append"].append(timed(appends)[0])
            ticket = flight.Ticket(json.dumps({"id": ["bench", f"flight{r}"]}).encode())
            t, got = timed(lambda: clients[tag].do_get(ticket).read_all())
            assert got.num_rows == a.rows
            results[f"flight{tag}"]["scan"].append(t)

        for r in range(a.repeat):
            lance_run(r)
            for tag in tags:
                rest_run(r, tag)
                flight_run(r, tag)

        small_paths = {t: (servers[f"rest{t}"],
                           lambda name, tb, op="create", t=t: flight_put(name, tb, op, t))
                       for t in tags}
        small = small_writes(a.small, work, small_paths) if a.small else None

        med = {k: {m: statistics.median(v) for m, v in ms.items() if v} for k, ms in results.items()}
        base = med["lance"]
        print(f"rows: {a.rows}, repeats: {a.repeat} (median seconds), batches of {a.chunk} rows, "
              f"appends of {a.append_rows} rows ({len(parts)} requests)")
        print(f"{'path':12} {'write':>7} {'append':>7} {'scan':>7} {'write/L':>8} {'append/L':>9} "
              f"{'scan/L':>7} {'peak RSS':>9}")
        for k in paths:
            m = med[k]
            if k == "lance-stream":
                print(f"{k:12} {m['write']:7.3f} {'-':>7} {'-':>7} {m['write'] / base['write']:8.2f}")
                continue
            peak = f"{servers[k].peak_rss():.0f} MiB" if k in servers else "-"
            print(f"{k:12} {m['write']:7.3f} {m['append']:7.3f} {m['scan']:7.3f} "
                  f"{m['write'] / base['write']:8.2f} {m['append'] / base['append']:9.2f} "
                  f"{m['scan'] / base['scan']:7.2f} {peak:>9}")
        for via in ("rest", "flight") if a.anchor else ():
            m, anchor = med[via], med[f"{via}@anchor"]
            print(f"{via} against the anchor build (this / anchor): write "
                  f"{m['write'] / anchor['write']:.2f}, append {m['append'] / anchor['append']:.2f}, "
                  f"scan {m['scan'] / anchor['scan']:.2f}")
        stream = med["lance-stream"]["write"]
        print(f"write against Lance writing the same stream of batches: REST "
              f"{med['rest']['write'] / stream:.2f}, Flight {med['flight']['write'] / stream:.2f}")
        print(f"REST body: {len(body) / 1e6:.1f} MB, encoded by pyarrow in {enc_t:.3f} s (not timed above)")
        if small:
            for op in ("create", "insert"):
                base_ms = small["lance"][op]
                for t in tags:
                    rest_ms, flight_ms = small[f"rest{t}"][op], small[f"flight{t}"][op]
                    print(f"small {op}{t} (100 rows, median of {a.small}): Lance {base_ms:.2f} ms, "
                          f"REST {rest_ms:.2f} ms ({rest_ms / base_ms:.2f}), "
                          f"Flight {flight_ms:.2f} ms ({flight_ms / base_ms:.2f})")
        starts = [s.cold_start * 1000 for s in servers.values()]
        idle = [s.idle_rss for s in servers.values()]
        print(f"server cold start (spawn to first /healthz answer): {min(starts):.0f}-{max(starts):.0f} ms; "
              f"idle RSS {min(idle):.0f}-{max(idle):.0f} MiB")
    finally:
        for s in servers.values():
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
