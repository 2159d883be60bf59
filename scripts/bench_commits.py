#!/usr/bin/env python3
"""Commits through the catalog beside direct Lance writes, in one run.

Every table in lance-catalog answers `managed_versioning: true`, so pylance
commits a write through it: it writes the data files and a staged manifest,
then asks the catalog to make that manifest the next version
(`create_table_version`). This script measures what that costs next to
pylance committing to a plain path on the same disk (its own
rename-if-not-exists commit), for small appends:

  - W writers, each appending to its own table, for W in --writers
    (default 1,4,8,16);
  - --shared writers (default 8) all appending to ONE table, where commits
    conflict and pylance rebases and retries them.

Each writer does --appends appends of --rows rows. Through the catalog an
append is

  lance.write_dataset(rows, namespace_client=ns, table_id=["bench", "tN"], mode="append")

with `ns = lance_namespace.connect("rest", {"uri": url})` (pylance's own
Rust REST client, as the Python tests use it); directly it is
`lance.write_dataset(rows, path, mode="append")` on a directory beside the
catalog's root. An append that still raises after pylance's own retries is
counted as a retry and attempted again, so every writer ends with exactly
--appends appends; its latency runs from its first attempt to its success.

Writers are processes (one pool, started and warmed before any clock), not
threads: each is its own client, as separate services are, with its own
interpreter, Lance runtime, HTTP connections and caches. pylance releases
the GIL inside a write, but the Python around each call (the namespace
client's describe, the request objects) holds it, and with 16 threads that
queueing would be charged mostly to the catalog side, which makes more
calls per append. Writers start together at an agreed instant; the wall
time runs from the first writer's start to the last one's end.

Per shape and side it reports commits per second (successful appends /
wall time), p50 and p99 milliseconds per append, retries, and the ratio
catalog / direct of commits/s and of p99. From the server's /metrics it
adds its own create_table_version time (mean, and a p50 interpolated in
the histogram's buckets), how many create_table_version calls it answered
per append (more than 1: pylance retried conflicts) and its other requests
per append, and its peak RSS (VmHWM). Each shape gets a fresh server over a
fresh root (and fresh direct paths), so shapes do not disturb each other.

After each run it verifies, through the path that wrote them, each table's
row count (initial --rows + appends * --rows per writer on it) and its
number of versions (appends + 1, for the shared table writers * appends +
1); for the catalog it also checks the version a plain Lance reader of the
table's directory sees. Mismatches are printed, not raised: it asserts
nothing and exits 0.

With --anchor another build (e.g. the commit before a change) runs in the
same rounds, on its own fresh servers and roots, and the table gains its
column and the ratio this build / anchor.

With --reference, Lance's own REST namespace server runs in the same rounds
too: pylance's `RestAdapter` serving its `DirectoryNamespace` with
`table_version_tracking_enabled` (the engine's own managed versioning,
the same three calls per append), in a process of its own. It is the
anchor for what serving these commits costs at all: every call the
client makes is a round trip neither build can remove, which direct
Lance never makes.

With --s3 URL (an S3-compatible server and bucket, e.g. moto through
scripts/s3_server.py, or SeaweedFS through scripts/sts_server.py) both
sides write there instead: the catalog's root and the direct paths are
fresh prefixes of that bucket, conditional puts are the commit point on
both sides, and the server gets the same storage options as flags that
pylance gets directly. Run it on a release build on a quiet machine
(client, server and any S3 server share the CPUs):

  cargo build --release
  python3 scripts/bench_commits.py --bin $CARGO_TARGET_DIR/release/lance-catalog
"""
import argparse
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid

import lance
import lance_namespace
import pyarrow as pa
from lance_namespace import CreateNamespaceRequest, DescribeTableRequest

# Where the tables live: a local directory, or with --s3 a bucket's prefix
# and the storage options both sides use (set in main()).
S3 = {"url": None, "options": {}, "work": None}


def s3_setup(url):
    """The storage options an S3-compatible server at `url` (with its
    bucket) needs, and the bucket URI every root and path goes under."""
    u = urllib.parse.urlsplit(url)
    bucket, _, prefix = u.path.strip("/").partition("/")
    options = {
        "aws_endpoint": f"{u.scheme}://{u.netloc}",
        "aws_access_key_id": os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        "aws_secret_access_key": os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
        "aws_region": "us-east-1",
        "allow_http": "true",
    }
    base = f"s3://{bucket}/{prefix.strip('/') + '/' if prefix.strip('/') else ''}bench-{uuid.uuid4().hex[:8]}"
    return base, options


def place(*parts):
    """A fresh location under the run's work place: a local path, or an S3
    URI (created on first write)."""
    if S3["url"]:
        return "/".join([S3["url"], *parts])
    path = os.path.join(S3["work"], *parts)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def lance_options():
    return {"storage_options": S3["options"]} if S3["options"] else {}


# A failed append is attempted again at most this many times before the
# writer gives up on it (a safety valve: printed, never expected).
MAX_RETRIES = 50


def make_rows(n, start):
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "x": pa.array([i * 0.5 for i in ids], pa.float64()),
        "s": pa.array([f"s{i}" for i in ids], pa.string()),
    })


# ---------------------------------------------------------------- servers


def status_mb(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(rf"{key}:\s+(\d+) kB", f.read())
        return int(m.group(1)) / 1024 if m else float("nan")
    except OSError:
        return float("nan")


class Server:
    """One fresh lance-catalog process over its own root."""

    def __init__(self, binary, root):
        argv = [binary, "serve", "--root", root, "--listen", "127.0.0.1:0", "--workers", "0"]
        for k, v in S3["options"].items():
            argv += ["--storage-option", f"{k}={v}"]
        if S3["options"]:
            # The writers read and write the table's data themselves with
            # what a describe hands them: here the operator's own options.
            argv += ["--forward-storage-secrets"]
        self.start(argv, dict(os.environ, LANCE_CATALOG_LOG="warn"), binary)

    def start(self, argv, env, what):
        """Spawn it and wait for the address it says it listens on."""
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env)
        self.url = None
        for line in self.proc.stdout:
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                self.url = m.group(1)
                break
        if self.url is None:
            raise RuntimeError(f"{what} did not start")
        # Drain its output so a chatty server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def peak_rss(self):
        return status_mb(self.proc.pid, "VmHWM")

    def metrics(self):
        """The /metrics counters this script reads, or None when the server
        does not expose them."""
        try:
            with urllib.request.urlopen(self.url + "/metrics", timeout=30) as r:
                return parse_metrics(r.read().decode())
        except OSError:
            return None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


METRIC = re.compile(r"^(lance_catalog_request_duration_seconds_(?:sum|count|bucket)"
                    r"|lance_catalog_requests_total)\{([^}]*)\} (\S+)$")


def parse_metrics(text):
    """{"requests": {op: n}, "commit": {"sum": s, "count": n, "buckets": {le: n}}},
    the commit histogram summed over transports."""
    requests, commit = {}, {"sum": 0.0, "count": 0.0, "buckets": {}}
    for line in text.splitlines():
        m = METRIC.match(line)
        if not m:
            continue
        name, labels, value = m.group(1), dict(re.findall(r'(\w+)="([^"]*)"', m.group(2))), float(m.group(3))
        op = labels.get("operation")
        if name == "lance_catalog_requests_total":
            requests[op] = requests.get(op, 0) + value
        elif op == "CreateTableVersion":
            if name.endswith("_sum"):
                commit["sum"] += value
            elif name.endswith("_count"):
                commit["count"] += value
            else:
                le = float(labels["le"])
                commit["buckets"][le] = commit["buckets"].get(le, 0) + value
    return {"requests": requests, "commit": commit}


def server_side(before, after):
    """What the server saw between two /metrics snapshots: its
    create_table_version calls, their mean and interpolated p50 in ms, and
    every operation's request count; None without the metrics."""
    if not before or not after:
        return None
    b, a = before["commit"], after["commit"]
    count = a["count"] - b["count"]
    # Leaving out the /metrics reads of this script.
    requests = {op: n - before["requests"].get(op, 0) for op, n in after["requests"].items()
                if op != "Metrics"}
    out = {"calls": count, "requests": {op: n for op, n in requests.items() if n > 0},
           "mean_ms": None, "p50_ms": None}
    if count <= 0:
        return out
    out["mean_ms"] = (a["sum"] - b["sum"]) / count * 1000
    # The median lies in the first bucket holding half the calls; spread
    # its calls evenly over the bucket (Prometheus' histogram_quantile).
    lower, below = 0.0, 0.0
    for le in sorted(a["buckets"]):
        cum = a["buckets"][le] - b["buckets"].get(le, 0)
        if cum >= count / 2:
            if le == float("inf"):
                out["p50_ms"] = lower * 1000
            else:
                out["p50_ms"] = (lower + (le - lower) * (count / 2 - below) / max(cum - below, 1e-9)) * 1000
            break
        lower, below = le, cum
    return out


REFERENCE_MAIN = """
import sys, json, time
import lance.namespace
props = json.loads(sys.argv[1])
adapter = lance.namespace.RestAdapter("dir", props, host="127.0.0.1", port=0)
adapter.start()
print(f"listening on http://127.0.0.1:{adapter.port}", flush=True)
while True:
    time.sleep(3600)
"""


class ReferenceServer(Server):
    """Lance's own REST namespace over its directory namespace, with its
    managed versioning on, in a process of its own (no /metrics)."""

    def __init__(self, root):
        props = {"root": root, "table_version_tracking_enabled": "true"}
        props.update({f"storage.{k}": v for k, v in S3["options"].items()})
        if S3["options"]:
            # Its clients write the data themselves with the options it
            # answers, as the catalog's get them (--forward-storage-secrets).
            props["vend_input_storage_options"] = "true"
        self.start([sys.executable, "-c", REFERENCE_MAIN, json.dumps(props)], None,
                   "Lance's RestAdapter")

    def metrics(self):
        return None


# ---------------------------------------------------------------- writers


def warm(job):
    """Runs once in each pool process before any clock: the imports are
    done at start, this pays Lance's first-write costs (runtime, object
    store) outside the measurement."""
    path, s3 = job
    S3.update(s3)
    lance.write_dataset(make_rows(1, 0), path, mode="create", **lance_options())
    time.sleep(0.5)  # keep this process busy so the next warm-up lands on another
    return os.getpid()


def writer(job):
    """One writer: job["appends"] appends of job["rows"] rows to one table,
    starting at job["start_at"] (time.monotonic, which is one clock for
    every process on Linux)."""
    if job["url"]:
        ns = lance_namespace.connect("rest", {"uri": job["url"]})
        tid = job["table_id"]
        ns.describe_table(DescribeTableRequest(id=tid))  # opens the connection before the clock

        def append(rows):
            lance.write_dataset(rows, namespace_client=ns, table_id=tid, mode="append")
    else:
        options = {"storage_options": job["options"]} if job.get("options") else {}

        def append(rows):
            lance.write_dataset(rows, job["path"], mode="append", **options)
    rows = make_rows(job["rows"], job["seed"])
    time.sleep(max(0.0, job["start_at"] - time.monotonic()))

    latencies, retries, errors, gave_up = [], 0, [], 0
    start = time.monotonic()
    for _ in range(job["appends"]):
        t0 = time.monotonic()
        for attempt in range(MAX_RETRIES + 1):
            try:
                append(rows)
                latencies.append(time.monotonic() - t0)
                break
            except Exception as e:  # noqa: BLE001 -- any failure is a failed attempt, tried again
                retries += 1
                if len(errors) < 3:
                    errors.append(f"{type(e).__name__}: {str(e)[:300]}")
        else:
            gave_up += 1
    return {"start": start, "end": time.monotonic(), "latencies": latencies,
            "retries": retries, "errors": errors, "gave_up": gave_up}


def percentile(sorted_values, q):
    """Nearest-rank percentile."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, -(-len(sorted_values) * q // 100) - 1))
    return sorted_values[int(k)]


def run_writers(pool, jobs, at_start=None):
    """Runs the jobs, one per pool process, from one instant; `at_start`
    is called just before it (after the writers' own set-up calls)."""
    start_at = time.monotonic() + 1.5  # every pool process has its job by then
    for job in jobs:
        job["start_at"] = start_at
    pending = pool.map_async(writer, jobs, chunksize=1)
    if at_start:
        time.sleep(max(0.0, start_at - 0.2 - time.monotonic()))
        at_start()
    results = pending.get()
    lat = sorted(x for r in results for x in r["latencies"])
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    errors = [e for r in results for e in r["errors"]]
    return {
        "appends": len(lat),
        "wall": wall,
        "rate": len(lat) / wall if wall > 0 else float("nan"),
        "p50": percentile(lat, 50) * 1000,
        "p99": percentile(lat, 99) * 1000,
        "retries": sum(r["retries"] for r in results),
        "gave_up": sum(r["gave_up"] for r in results),
        "errors": list(dict.fromkeys(errors))[:3],
    }


# ---------------------------------------------------------------- one shape


def table_plan(shape):
    """Writers per table: [1] * W for a table each, [S] for the shared table."""
    kind, n = shape
    return [1] * n if kind == "each" else [n]


def shape_name(shape):
    kind, n = shape
    if kind == "each":
        return f"{n} writer{'s' if n > 1 else ''}, a table each"
    return f"{n} writer{'s' if n > 1 else ''}, one shared table"


def check(got_rows, got_versions, want_rows, want_versions, extra=""):
    if got_rows == want_rows and got_versions == want_versions and not extra:
        return None
    return f"rows {got_rows} (want {want_rows}), versions {got_versions} (want {want_versions}){extra}"


def run_direct(pool, shape, a, where):
    plan = table_plan(shape)
    paths = [place(where, "direct", f"t{i}.lance") for i in range(len(plan))]
    for p in paths:
        lance.write_dataset(make_rows(a.rows, 0), p, mode="create", **lance_options())
    jobs = [{"url": None, "path": p, "options": S3["options"], "appends": a.appends, "rows": a.rows,
             "seed": (j + 1) * 1_000_000}
            for p, writers in zip(paths, plan) for j in range(writers)]
    out = run_writers(pool, jobs)

    problems = []
    for p, writers in zip(paths, plan):
        try:
            ds = lance.dataset(p, **lance_options())
            bad = check(ds.count_rows(), len(ds.versions()),
                        a.rows * (1 + writers * a.appends), writers * a.appends + 1)
        except Exception as e:  # noqa: BLE001 -- a table that cannot be read is a finding, printed
            bad = f"unreadable: {type(e).__name__}: {str(e)[:200]}"
        if bad:
            problems.append(f"{os.path.basename(p)}: {bad}")
    out["verify"] = problems
    return out


def run_catalog(pool, shape, a, binary, root):
    """Through a namespace server: a lance-catalog `binary`, or with
    binary None Lance's own REST namespace (--reference)."""
    plan = table_plan(shape)
    server = Server(binary, root) if binary else ReferenceServer(root)
    try:
        ns = lance_namespace.connect("rest", {"uri": server.url})
        ns.create_namespace(CreateNamespaceRequest(id=["bench"]))
        tids = [["bench", f"t{i}"] for i in range(len(plan))]
        for tid in tids:
            lance.write_dataset(make_rows(a.rows, 0), namespace_client=ns, table_id=tid, mode="create")
        jobs = [{"url": server.url, "table_id": tid, "appends": a.appends, "rows": a.rows,
                 "seed": (j + 1) * 1_000_000}
                for tid, writers in zip(tids, plan) for j in range(writers)]
        snapshot = {}
        out = run_writers(pool, jobs, at_start=lambda: snapshot.update(before=server.metrics()))
        after = server.metrics()
        before = snapshot.get("before")
        if binary:
            out["server"] = server_side(before, after)
        out["peak_rss"] = server.peak_rss()

        problems = []
        for tid, writers in zip(tids, plan):
            want_versions = writers * a.appends + 1
            try:
                ds = lance.dataset(namespace_client=ns, table_id=tid)
                # What a plain Lance reader of the directory sees: the
                # catalog publishes each staged manifest after recording it.
                disk = lance.dataset(ds.uri, **lance_options()).version
                extra = "" if disk == want_versions else f", a plain reader of the directory sees version {disk}"
                bad = check(ds.count_rows(), len(ds.versions()),
                            a.rows * (1 + writers * a.appends), want_versions, extra)
            except Exception as e:  # noqa: BLE001 -- a table that cannot be read is a finding, printed
                bad = f"unreadable: {type(e).__name__}: {str(e)[:200]}"
            if bad:
                problems.append(f"{tid[-1]}: {bad}")
        out["verify"] = problems
        return out
    finally:
        server.stop()


# ---------------------------------------------------------------- report


def rate_text(r):
    return f"{r:,.1f}" if r < 100 else f"{r:,.0f}"


def cell(r):
    text = f"{rate_text(r['rate'])} commits/s, p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, {r['retries']} retries"
    s = r.get("server")
    if s and s["mean_ms"] is not None:
        text += f"; server commit mean {s['mean_ms']:.1f} ms, p50 ~{s['p50_ms']:.1f} ms"
    return text


def ratio(x, y):
    return (f"{x['rate'] / y['rate']:.2f}x commits/s, "
            f"{x['p99'] / y['p99']:.2f}x p99")


def detail(side, shape, r, a):
    n = sum(table_plan(shape)) * a.appends
    print(f"  {side:8} {r['appends']}/{n} appends in {r['wall']:.2f} s: {cell(r)}")
    if r["gave_up"]:
        print(f"           GAVE UP on {r['gave_up']} appends after {MAX_RETRIES} retries each")
    for e in r["errors"]:
        print(f"           failed attempt: {e}")
    s = r.get("server")
    if "server" in r and not s:
        print("           server: no /metrics histogram for create_table_version")
    elif s:
        per = ", ".join(f"{op} {c / max(r['appends'], 1):.2f}" for op, c in sorted(s["requests"].items()))
        print(f"           server: {s['calls']:.0f} create_table_version calls for {r['appends']} appends; "
              f"requests per append: {per}")
    if "peak_rss" in r:
        print(f"           server peak RSS {r['peak_rss']:.0f} MiB")
    if r["verify"]:
        for p in r["verify"]:
            print(f"           VERIFY MISMATCH {p}")
    else:
        print(f"           verify: OK (row counts and version counts of {len(table_plan(shape))} table(s))")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the lance-catalog binary (a release build)")
    ap.add_argument("--anchor", help="another lance-catalog binary run in the same rounds (before/after)")
    ap.add_argument("--reference", action="store_true",
                    help="also run Lance's own REST namespace (RestAdapter, managed versioning on)")
    ap.add_argument("--writers", default="1,4,8,16",
                    help="comma-separated writer counts, each writer on a table of its own")
    ap.add_argument("--shared", type=int, default=8, help="writers on one shared table (0: skip)")
    ap.add_argument("--appends", type=int, default=15, help="appends per writer")
    ap.add_argument("--rows", type=int, default=100, help="rows per append (and in each initial table)")
    ap.add_argument("--work-dir", help="where the roots and direct paths go (default: a temporary directory)")
    ap.add_argument("--s3", help="an S3-compatible server and bucket (http://host:port/bucket) to write to instead")
    a = ap.parse_args()
    if a.s3:
        S3["url"], S3["options"] = s3_setup(a.s3)

    shapes = [("each", int(w)) for w in a.writers.split(",") if w.strip()]
    if a.shared > 0:
        shapes.append(("shared", a.shared))
    builds = {"catalog": a.bin}
    if a.anchor:
        builds["anchor"] = a.anchor
    if a.reference:
        builds["lance-rest"] = None
    work = tempfile.mkdtemp(prefix="bench-commits-", dir=a.work_dir)
    S3["work"] = work
    size = max(n for _, n in shapes)
    # spawn, not fork: the parent already runs Lance's threads.
    pool = multiprocessing.get_context("spawn").Pool(size)
    try:
        pool.map(warm, [(place(f"warm{i}.lance"), dict(S3)) for i in range(size)], chunksize=1)
        print(f"{a.appends} appends of {a.rows} rows per writer; writers are processes; "
              f"binary {a.bin}" + (f", anchor {a.anchor}" if a.anchor else "")
              + (f"; on S3 at {a.s3}" if a.s3 else "; on local disk"))
        results = {}
        for i, shape in enumerate(shapes):
            print(f"\n{shape_name(shape)}")
            shape_dir = os.path.join(work, f"shape{i}")
            got = {"direct": run_direct(pool, shape, a, f"shape{i}")}
            detail("direct", shape, got["direct"], a)
            for tag, binary in builds.items():
                root = place(f"shape{i}", f"root-{tag}")
                got[tag] = run_catalog(pool, shape, a, binary, root)
                detail(tag, shape, got[tag], a)
            results[shape] = got
            shutil.rmtree(shape_dir, ignore_errors=True)

        print()
        head = "| shape | through the catalog | direct Lance | ratio |"
        rule = "|---|---|---|---|"
        if a.anchor:
            head += " anchor build, through the catalog | this build / anchor |"
            rule += "---|---|"
        if a.reference:
            head += " Lance's own REST namespace | ratio to direct | this build / Lance's REST |"
            rule += "---|---|---|"
        print(head)
        print(rule)
        for shape, got in results.items():
            row = f"| {shape_name(shape)} | {cell(got['catalog'])} | {cell(got['direct'])} | " \
                  f"{ratio(got['catalog'], got['direct'])} |"
            if a.anchor:
                row += f" {cell(got['anchor'])} | {ratio(got['catalog'], got['anchor'])} |"
            if a.reference:
                ref = got["lance-rest"]
                row += f" {cell(ref)} | {ratio(ref, got['direct'])} | {ratio(got['catalog'], ref)} |"
            print(row)
        bad = [f"{shape_name(s)} ({side})" for s, got in results.items() for side, r in got.items()
               if r["verify"] or r["gave_up"]]
        print("\nverification: " + ("OK everywhere" if not bad else "MISMATCHES in " + "; ".join(bad)))
    finally:
        pool.terminate()
        pool.join()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
