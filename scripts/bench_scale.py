#!/usr/bin/env python3
"""Catalog write costs as the catalog grows: lance-catalog beside the
reference server (and optionally another build, --anchor), in one run, with
the same client.

Each server gets a fresh root holding namespace `bench`; at each --scales
size the namespace is grown to that many declared tables (rows appended to
`__manifest` directly, then indexed as the catalog's upkeep leaves it, so
100,000 take seconds), and then, over one keep-alive HTTP/1.1 connection,
the median of --n calls of each write:

  declare        POST /v1/table/bench$x<i>/declare
  create 100     POST /v1/table/bench$c<i>/create (100 rows, Arrow IPC)
  rename         POST /v1/table/bench$c<i>/rename
  deregister     POST /v1/table/bench$r<i>/deregister (the renamed ones)
  register       POST /v1/table/bench$g<i>/register at the location it answered
  drop           POST /v1/table/bench$x<i>/drop
  namespace      POST /v1/namespace/bench_n<i>/create

It prints one table per write: milliseconds at each size, the growth from
the smallest size, ours / reference, and the server's RSS at each size.

With --events 1000,100000,1000000 it times the audit trail instead: at each
size a fresh control root gets that many events at a steady 278 a second
ending 2 minutes ago (`lance-catalog audit-fill`, segments of 20 as a busy replica's
group commits write them), then the median of --n reads of the first page
(`GET /v1/events?limit=100`), the page after it (its `page_token`), and the
page of the last second (`since=`), as written and after the upkeep merged
the closed slots; and the RSS after them. (The reference has no trail.)

It asserts nothing. Run it on a release build on a quiet machine (with
--work-dir /dev/shm the roots sit on a tmpfs: on a shared disk whose file
system slows as a run creates and deletes files, the servers measured later
pay for the earlier ones):

  cargo build --release
  python3 scripts/bench_scale.py --bin $CARGO_TARGET_DIR/release/lance-catalog --scales 1000,10000,100000
  python3 scripts/bench_scale.py --bin $CARGO_TARGET_DIR/release/lance-catalog --events 1000,100000,1000000
"""
import argparse
import os
import json
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_meta import REFERENCE, Client, arrow_body, free_port, grow_manifest, rss_mb, start, stop_all  # noqa: E402


ARROW = "application/vnd.apache.arrow.stream"


def grow(root, have, scale):
    """Declared tables bench$d<i> (have <= i < scale), appended to the
    root's `__manifest` in one write and then compacted and indexed: the
    state a catalog that declared them one by one and kept its manifest up
    is in."""
    import lance

    if scale <= have:
        return
    grow_manifest(root, have, scale)
    path = os.path.join(root, "__manifest")
    lance.dataset(path).optimize.compact_files()
    ds = lance.dataset(path)
    if not any(i["name"] == "location_btree" for i in ds.list_indices()):
        # The catalog's upkeep builds it on its first pass over a root.
        ds.create_scalar_index("location", "BTREE", name="location_btree")
    lance.dataset(path).optimize.optimize_indices()


def timed(c, method, path, body=None, ctype="application/json"):
    t0 = time.perf_counter()
    try:
        c.call(method, path, body, ctype)
    except RuntimeError as e:
        return float("nan"), str(e)
    return (time.perf_counter() - t0) * 1e3, None


def writes_at(url, scale, n):
    """Median ms of each write at this size, `n` calls each."""
    c = Client(url)
    body = arrow_body(100)
    out, errors = {}, {}

    def run(name, calls):
        times = []
        for method, path, b, ctype in calls:
            ms, err = timed(c, method, path, b, ctype)
            if err:
                errors[name] = err
                break
            times.append(ms)
        out[name] = statistics.median(times) if times else float("nan")

    tag = f"{scale}"
    run("declare", [("POST", f"/v1/table/bench$x{tag}_{i}/declare", b"{}", "application/json") for i in range(n)])
    run("create, 100 rows", [("POST", f"/v1/table/bench$c{tag}_{i}/create", body, ARROW) for i in range(n)])
    run("rename", [("POST", f"/v1/table/bench$c{tag}_{i}/rename",
                    f'{{"new_table_name": "r{tag}_{i}"}}'.encode(), "application/json") for i in range(n)])
    # Deregister the renamed tables, then register each back under a new
    # name at the location the deregister answered.
    locations = []
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        try:
            answer = json.loads(c.call("POST", f"/v1/table/bench$r{tag}_{i}/deregister", b"{}"))
        except RuntimeError as e:
            errors["deregister"] = str(e)
            break
        times.append((time.perf_counter() - t0) * 1e3)
        locations.append(answer.get("location", ""))
    out["deregister"] = statistics.median(times) if times else float("nan")
    run("register", [("POST", f"/v1/table/bench$g{tag}_{i}/register",
                      json.dumps({"location": loc}).encode(), "application/json")
                     for i, loc in enumerate(locations)])
    run("drop", [("POST", f"/v1/table/bench$x{tag}_{i}/drop", b"{}", "application/json") for i in range(n)])
    run("namespace create", [("POST", f"/v1/namespace/bench_n{tag}_{i}/create", b"{}", "application/json")
                             for i in range(n)])
    return out, errors


def audit_files(root):
    return sum(len(fs) for _, _, fs in os.walk(os.path.join(root, "_catalog", "control", "audit")))


def pages(url, n, since_ms):
    """Median ms of the first page, the next one and the last second's."""
    c = Client(url)
    first = json.loads(c.call("GET", "/v1/events?limit=100"))
    token = first.get("page_token", "")
    out = {}
    for name, path in (("first page", "/v1/events?limit=100"),
                       ("next page", f"/v1/events?limit=100&page_token={token}"),
                       ("last second", f"/v1/events?limit=100&since={since_ms}")):
        times = [timed(c, "GET", path)[0] for _ in range(n)]
        out[name] = statistics.median(times)
    got = json.loads(c.call("GET", f"/v1/events?limit=100&since={since_ms}"))["events"]
    return out, len(first["events"]), len(got)


def events_bench(a, work, env):
    sizes = [int(s) for s in a.events.split(",") if s.strip()]
    rows = []
    for size in sizes:
        root = f"{work}/events{size}"
        # Ending 2 minutes ago: every slot is closed, so the upkeep merges all.
        end_ms = int(time.time() * 1000) - 120_000
        t0 = time.perf_counter()
        subprocess.run([a.bin, "audit-fill", "--control-root", f"{root}/_catalog/control", "--events", str(size),
                        "--ending-ago", "120"],
                       check=True, stdout=subprocess.DEVNULL)
        fill_s = time.perf_counter() - t0
        since = end_ms - 1000
        row = {"size": size, "fill s": fill_s, "files written": audit_files(root)}
        for phase, upkeep in (("written", "0"), ("merged", "1s")):
            proc, url = start([a.bin, "serve", "--root", root, "--listen", "127.0.0.1:0", "--workers", "0",
                               "--audit-upkeep-interval", upkeep], env=env)
            try:
                if phase == "merged":
                    last = -1
                    while (now := audit_files(root)) != last:
                        last = now
                        time.sleep(3)
                    row["files merged"] = last
                times, first_n, last_n = pages(url, a.n, since)
                for k, v in times.items():
                    row[f"{k}, {phase}"] = v
                row[f"RSS {phase}"] = rss_mb(proc.pid)
                row["page sizes"] = (first_n, last_n)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        rows.append(row)
    print(f"\nAudit trail pages (limit 100), median ms of {a.n} reads; events at 278/s ending at the fill\n")
    keys = [k for k in rows[0] if k not in ("size", "page sizes")]
    print("| events |" + "".join(f" {k} |" for k in keys))
    print("|---|" + "---|" * len(keys))
    for r in rows:
        print(f"| {r['size']:,} |" + "".join(
            f" {r[k]:.2f} |" if isinstance(r[k], float) else f" {r[k]:,} |" for k in keys))
    base = rows[0]
    for k in keys:
        if "page" in k or "second" in k or "RSS" in k:
            print(f"{k}: {rows[-1][k] / base[k]:.2f}x from {base['size']:,} to {rows[-1]['size']:,} events")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the lance-catalog binary")
    ap.add_argument("--anchor", help="another lance-catalog binary to run in the same rounds")
    ap.add_argument("--scales", default="1000,10000", help="comma-separated table counts")
    ap.add_argument("--n", type=int, default=30, help="calls of each write at each size")
    ap.add_argument("--no-reference", action="store_true", help="skip the reference server")
    ap.add_argument("--events", help="comma-separated audit trail sizes: time pages instead of writes")
    ap.add_argument("--trash-grace", help="serve ours (and the anchor) with this --trash-grace: drops go to trash")
    ap.add_argument("--work-dir", help="where the servers' roots go (default: the system's temp directory); "
                    "a tmpfs such as /dev/shm keeps a disk's drift out of the ratios")
    a = ap.parse_args()
    if a.events:
        work = tempfile.mkdtemp(prefix="bench-events-", dir=a.work_dir)
        try:
            events_bench(a, work, dict(os.environ, LANCE_CATALOG_LOG="warn"))
        finally:
            stop_all({}, work)
        return
    scales = [int(s) for s in a.scales.split(",") if s.strip()]

    work = tempfile.mkdtemp(prefix="bench-scale-", dir=a.work_dir)
    servers, roots = {}, {}
    env = dict(os.environ, LANCE_CATALOG_LOG="warn")
    try:
        for name, binary in (("ours", a.bin), ("anchor", a.anchor)):
            if binary:
                roots[name] = f"{work}/{name}"
                grace = ["--trash-grace", a.trash_grace] if a.trash_grace else []
                servers[name] = start([binary, "serve", "--root", roots[name], "--listen", "127.0.0.1:0",
                                       "--workers", "0", *grace], env=env)
        if not a.no_reference:
            roots["reference"] = f"{work}/reference"
            servers["reference"] = start([sys.executable, "-c", REFERENCE, roots["reference"], str(free_port())])
        results, errors = {}, {}
        for name, (_, url) in servers.items():
            Client(url).call("POST", "/v1/namespace/bench/create", b"{}")
            have = 0
            for s in scales:
                grow(roots[name], have, s)
                have = s
                results[(name, s)], errs = writes_at(url, s, a.n)
                if name != "reference":
                    results[(name, s)]["RSS MiB"] = rss_mb(servers[name][0].pid)
                for k, v in errs.items():
                    errors.setdefault((name, k), v)

        names = list(servers)
        print(f"\nWrites as namespace `bench` grows (declared tables); median ms of {a.n} calls on one "
              f"keep-alive connection at each size\n")
        head = "| write | tables |" + "".join(f" {n} |" for n in names) + " ours growth |"
        sub = "|---|---|" + "---|" * len(names) + "---|"
        if "reference" in names:
            head += " ours / reference |"
            sub += "---|"
        if "anchor" in names:
            head += " ours / anchor |"
            sub += "---|"
        print(head)
        print(sub)
        for w in results[(names[0], scales[0])]:
            base = results[("ours", scales[0])][w]
            for s in scales:
                row = f"| {w} | {s:,} |" + "".join(f" {results[(n, s)].get(w, float('nan')):.2f} |" for n in names)
                row += f" {results[('ours', s)][w] / base:.2f}x |"
                if "reference" in names:
                    row += f" {results[('ours', s)][w] / results[('reference', s)].get(w, float('nan')):.2f} |"
                if "anchor" in names:
                    row += f" {results[('ours', s)][w] / results[('anchor', s)][w]:.2f} |"
                print(row)
        for (name, w), e in errors.items():
            print(f"\n{name} {w}: {e}")
        for name, (proc, _) in servers.items():
            if name != "reference":
                print(f"\n{name}: RSS after the run {rss_mb(proc.pid):.0f} MiB")
    finally:
        stop_all(servers, work)


if __name__ == "__main__":
    main()
