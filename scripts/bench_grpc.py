#!/usr/bin/env python3
"""gRPC call latency of one lance-catalog build beside another, in one run.

Both builds get a fresh root holding namespace `bench` with a narrow table
(3 columns) and a wide one (--columns columns, so a described schema is a
large message), then the same grpcio client (stubs generated from proto/
at start) calls each, alternating builds round by round:

  describe_table (narrow and wide, with detailed metadata), table_exists,
  list_tables, count_table_rows, list_table_versions.

It prints the median and p99 of each call per build and the ratio, and
exits 0; it asserts nothing. Run it on release builds:

  python3 scripts/bench_grpc.py --bin NEW/lance-catalog --anchor OLD/lance-catalog
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import grpc
import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_meta import start, stop_all  # noqa: E402  (the same server handling)

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "proto")


def stubs():
    import grpc_tools

    out = tempfile.mkdtemp(prefix="bench-grpc-stubs-")
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    subprocess.check_call([
        sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}", f"-I{well_known}",
        f"--python_out={out}", f"--grpc_python_out={out}", "lance_catalog.proto"])
    sys.path.insert(0, out)
    import lance_catalog_pb2 as pb
    import lance_catalog_pb2_grpc as pb_grpc
    return pb, pb_grpc


def ipc(table):
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def populate(pb, stub, columns):
    stub.CreateNamespace(pb.CreateNamespaceRequest(id=["bench"]))
    narrow = pa.table({"id": list(range(10)), "x": [0.5] * 10, "s": [f"s{i}" for i in range(10)]})
    stub.CreateTable(pb.CreateTableRequest(id=["bench", "narrow"], data=ipc(narrow)))
    wide = pa.table({f"c{i}": pa.array(range(10), pa.int64()) for i in range(columns)})
    stub.CreateTable(pb.CreateTableRequest(id=["bench", "wide"], data=ipc(wide)))


def calls(pb, stub):
    return [
        ("describe_table", lambda: stub.DescribeTable(
            pb.DescribeTableRequest(id=["bench", "narrow"], load_detailed_metadata=True))),
        ("describe_table (wide)", lambda: stub.DescribeTable(
            pb.DescribeTableRequest(id=["bench", "wide"], load_detailed_metadata=True))),
        ("table_exists", lambda: stub.TableExists(pb.TableExistsRequest(id=["bench", "narrow"]))),
        ("list_tables", lambda: stub.ListTables(pb.ListTablesRequest(id=["bench"]))),
        ("count_table_rows", lambda: stub.CountTableRows(
            pb.CountTableRowsRequest(id=["bench", "narrow"]))),
        ("list_table_versions", lambda: stub.ListTableVersions(
            pb.ListTableVersionsRequest(id=["bench", "narrow"]))),
    ]


def timed(call, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the lance-catalog binary (a release build)")
    ap.add_argument("--anchor", required=True, help="another build, run in the same rounds")
    ap.add_argument("--requests", type=int, default=300, help="calls per call, build and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--columns", type=int, default=200, help="columns of the wide table")
    a = ap.parse_args()
    pb, pb_grpc = stubs()
    work = tempfile.mkdtemp(prefix="bench-grpc-")
    servers = {}
    try:
        clients = {}
        for label, binary in (("this", a.bin), ("anchor", a.anchor)):
            argv = [binary, "serve", "--root", os.path.join(work, label), "--listen", "127.0.0.1:0",
                    "--workers", "0"]
            servers[label] = start(argv, env=dict(os.environ, LANCE_CATALOG_LOG="warn"))
            channel = grpc.insecure_channel(servers[label][1].removeprefix("http://"))
            stub = pb_grpc.LanceNamespaceServiceStub(channel)
            populate(pb, stub, a.columns)
            clients[label] = calls(pb, stub)
        times = {label: {} for label in clients}
        for _ in range(a.rounds):
            for label, measured in clients.items():
                for name, call in measured:
                    timed(call, max(10, a.requests // 10))
                    times[label].setdefault(name, []).extend(timed(call, a.requests))
        print(f"| call | this build median / p99 ms | anchor median / p99 ms | ratio (median) |")
        print("|---|---|---|---|")
        for name, _ in clients["this"]:
            row = []
            for label in ("this", "anchor"):
                t = sorted(times[label][name])
                row.append((statistics.median(t) * 1e3, t[int(len(t) * 0.99) - 1] * 1e3))
            print(f"| {name} | {row[0][0]:.3f} / {row[0][1]:.3f} | {row[1][0]:.3f} / "
                  f"{row[1][1]:.3f} | {row[0][0] / row[1][0]:.2f} |")
    finally:
        stop_all(servers, work)


if __name__ == "__main__":
    main()
