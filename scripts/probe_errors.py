#!/usr/bin/env python3
"""Probe lance-catalog's REST gateway with client mistakes and hostile input.

Usage:
    python3 scripts/probe_errors.py http://127.0.0.1:PORT [--destructive] [--json-out FILE]

Sets up a namespace holding a real table (Arrow IPC create), a table
registered at a location that holds nothing, a declared table, a tag, a
branch and an index; then sends every hostile request below and prints one
row per request: op, input, HTTP status, spec code, message and flags.

Flags:
  5XX       the server answered 5xx (a client mistake reported as Internal)
  CONN      no HTTP answer at all (connection dropped: a handler panic?)
  TIMEOUT   no answer within --timeout seconds
  NOTPROB   an error answer that is not application/problem+json with a code
  CODE      a 4xx whose spec code is not among the ones the case expects
  ACCEPTED  the request was expected to be refused but succeeded

The exit status is 1 when any 5XX, CONN, TIMEOUT or NOTPROB row appears,
0 otherwise (CODE / ACCEPTED rows are reported but do not fail the run).

--destructive adds cases that destroy data (copying/deleting foreign
objects, deleting every version, dropping aliased tables, and last of all
dropping a table registered at the storage root). Only use it against a
throw-away server.

The file is long because it is a table: about 500 cases, one or a few
lines each, kept together so a reader sees every probe in one place.

Standard library only. The Arrow IPC bodies are embedded (generated with
pyarrow); when pyarrow is importable they are rebuilt with it instead.
"""

import argparse
import base64
import json
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zlib


def _d(s):
    return zlib.decompress(base64.b64decode(s))


# Arrow IPC streams (see _build_ipc_with_pyarrow for what they hold).
MAIN_IPC = _d("eNp9llFoHEUYx+dye8k1nnatZzxjrNc2pmmbtruzs3t7TdpcQsEiCgFFFApW24OK9rNq0CJaDhVREBRBKChSoaAUhIIgPgjNYx59EPFBMI++2TcLIue3u//a7B/bhf/+ft/uzszOTG7JcDgc9irG+CY7xk3DjJqaqavpUfG0NlrV9ezhXOQ3zRea06iPaj/awG+qt3FNuzVTmqrm9f5JPY9qH56ei/vnijbVbOwWrhnwhdX+mcx/KZ4xlzY9O7Xp2ZrmtZMvv9rP+x7N+zZmxPxcPF/j5zPKc2f6hXt57Ztm3nYsn62PtaiMcNuR7L1OZevR0Izl65E92NOTDjc8phNu4tmGmcBKNvJeTdXL57i+BQ/oCrf0joe1/tEUe9AzN49xc5tjhEjXvUrBerXg97i9hhrvbtar5XbrtXJ3t6y9m9dq9N7mNvX4Le6byv9Ps0LTrNLwN15nFBwz5fltoXHv+G9/iuNO8C5wK+iDd4PbwHvAG/t8LzgB3ge2wPvBSfABcAp8ENwOPgS2wR3gTnAXOA0+DM6Au8FZcA+4F9wHzoH7wQPgQTAAQ9CCEejAGEzADpiCXfAQOA8ugIfBI+Ai/Sl72Ns69rCBvfKxJ02s+STWso01msHc5zAni3dN8Q7ZeEvZd0vziOZRzeOaFc0Tmqc0z2iOa57VPK/p43v3YvYN0byiWdW8oXlT87ZmoHlX877mQ81Hmo81n2o+01zQfK75UvOV5pLma81lzbeaK5rvNv1eJZBQrETiJJZEOpJKV0K9GEpoJYwkdBLGEiYSdiRMJeyKDcRqGys2EuvExmITsR2xqdiuRIFEoUTaZSSRkyiWKJGoI1EqUVdcIC4UZ8XpiE5cLC4R1xGXiutKHEgcSmwljiTWF4olTiTuSJxK3JUkkCSUxEqifyTnr/7+519//3O+/GvewPZeA68vlj8HHlinz4OPehvYBCfAFjhJ7bajboM7wJ3gLnCa2s2g3g3OgnvAveA+arcf9QHwIBgUHIAmpHYW90EToQaNQ+3K7QYx6gT3QdNBDZqUxuviPmgOoQbNPOp5Gm8B9WHcB80R1KBZpPEGi8Ue93rkvbJfJF8j3yDPfsKb3V8qe3up7AF5j3yF/AT5WfIB+Qfkn5BfIL9I/g35FfIfyNfI18l/Iv+VfIP8D/Jr5NfJzXLZveWy15fL3iD3yZvkLfIp8jb5NPks+Rx5QO7IU/IF8h75UfJj5I+Rr5A/Sf40+XHyE+SnyE+Tv0R+lnyV/Bz5W+QD8nfI31se5v+HG/MvTQVQpQ==")
MERGE_IPC = _d("eNp9Ur1KA0EQ/i65S0K44oogFinyCNnNf5UtLHwNiQdaZAQVSRXyIBYpfAxBH0KsBH0D7RREztndCV4WzoWZb2b2m7mZuS2KojARkMGeNlI0kKDFFp8oZh/stVjHor28sNyynIl/xHU4Ieuw3ZMYl0WXpc5yky9YN7hGzNrfr3xO3X77UGIQPL/Ol9Z+9hzclbjdEjdhuVpcXOaudsPVBmp48vwk5Fukk2Xu7dj5GTout+mmzWQXUS3Mrdm+Tu0+Upam24clGlb8ueKYB+4IN8WBbDJ1VVGP3Yxv2J02+6nbqt31Pfw/iIESo/r0Agzjuz6mgkZwJSi9YxPkbYN6Vb4pxZKgb/zjRxX3WcWcUWn3kLeEUix2r+pvHuqTIk0DGtKIxjShKc1IcVCR0qQGpIakRqTGpCakpqRmpPukOUeTHpBeP7y+f37/rPe7eJt7/BD8EtzM/SqMCWyzb28D+9EU7n0Cvzp8V08=")
OTHER_IPC = _d("eNp1TksKg1AMnPd8fpAsXEhx6UF6nYK7QvEALr11OkmjlUIH8p8Mo6q6ARhg6CFoUKNjR6TCGZw65hKZa8boPyN3DVpnDaGRstU5uIaa8VyXx8u1hNG6lpHn4NCG7qFrENzCibg6qoLp9PnxOvFSwus9bhW+yPgPufTp5+/Y5cve/Fl9A+e9EdA=")
WRONGTYPE_IPC = _d("eNqdUjFOw0AQHNtnY4UrrrBQihQpKf2DUPIESkKwBEVAAoRAouAhPIDHpEZ5Bj845vYWchxOw0qzt7s3O95b2Xvv+wJwCDaBRYMaLSNaYZiDWUtv1EdsiTfiSvNT6rDBdYznWqMsZkRFPA4r+oYahj7ev8SeKnx7qjXoef0wrEP8ETl4T7izhFsT96vbu0G0G9EGSmwjvx7TvlmuhxBvyHHopO9AXup0D3/7yjDTZciN1Njqz/jATu8tjnRzVpRQGek/x7dNmFvZYtjtBnHnJXZ2iP1m9XTJPNAZU5tm/OOM32f8PtM9ye735fOkVmfvwD/yduTNRcJbXozXn57Tjs/FbszXxW/I6D/w8n8AX0eoOSc=")


def _build_ipc_with_pyarrow():
    """The same four bodies, built with pyarrow when it is available."""
    import pyarrow as pa  # noqa: F401  (optional)

    def ipc(table):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as w:
            for b in table.to_batches():
                w.write_batch(b)
        return sink.getvalue().to_pybytes()

    n = 64
    vec_t = pa.list_(pa.float32(), 4)
    main = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "name": pa.array([f"n{i}" for i in range(n)], pa.string()),
        "score": pa.array([None if i % 7 == 0 else i * 0.5 for i in range(n)], pa.float64()),
        "vec": pa.array([[float(i), float(i + 1), float(i + 2), float(i + 3)] for i in range(n)], vec_t),
    })
    other = pa.table({"other": pa.array([1, 2, 3], pa.int32())})
    wrongtype = pa.table({
        "id": pa.array(["a", "b"], pa.string()),
        "name": pa.array(["x", "y"], pa.string()),
        "score": pa.array([1.0, 2.0], pa.float64()),
        "vec": pa.array([[1.0] * 4, [2.0] * 4], vec_t),
    })
    return ipc(main), ipc(main.slice(0, 4)), ipc(other), ipc(wrongtype)


try:
    MAIN_IPC, MERGE_IPC, OTHER_IPC, WRONGTYPE_IPC = _build_ipc_with_pyarrow()
except Exception:  # pyarrow missing: the embedded bytes are the same streams
    pass

ARROW = "application/vnd.apache.arrow.stream"
OK = "ok"  # in a case's `want`: success is an acceptable answer

ROUTES = {
    "CreateNamespace": ("POST", "/v1/namespace/{id}/create"),
    "ListNamespaces": ("GET", "/v1/namespace/{id}/list"),
    "DescribeNamespace": ("POST", "/v1/namespace/{id}/describe"),
    "DropNamespace": ("POST", "/v1/namespace/{id}/drop"),
    "NamespaceExists": ("POST", "/v1/namespace/{id}/exists"),
    "ListTables": ("GET", "/v1/namespace/{id}/table/list"),
    "ListAllTables": ("GET", "/v1/table"),
    "RegisterTable": ("POST", "/v1/table/{id}/register"),
    "DescribeTable": ("POST", "/v1/table/{id}/describe"),
    "TableExists": ("POST", "/v1/table/{id}/exists"),
    "DropTable": ("POST", "/v1/table/{id}/drop"),
    "DeregisterTable": ("POST", "/v1/table/{id}/deregister"),
    "RestoreTable": ("POST", "/v1/table/{id}/restore"),
    "RenameTable": ("POST", "/v1/table/{id}/rename"),
    "UpdateTableSchemaMetadata": ("POST", "/v1/table/{id}/schema_metadata/update"),
    "ListTableVersions": ("POST", "/v1/table/{id}/version/list"),
    "CreateTableVersion": ("POST", "/v1/table/{id}/version/create"),
    "DescribeTableVersion": ("POST", "/v1/table/{id}/version/describe"),
    "BatchDeleteTableVersions": ("POST", "/v1/table/{id}/version/delete"),
    "BatchCreateTableVersions": ("POST", "/v1/table/version/batch-create"),
    "BatchCommitTables": ("POST", "/v1/table/batch-commit"),
    "AlterTableAlterColumns": ("POST", "/v1/table/{id}/alter_columns"),
    "UpdateFieldMetadata": ("POST", "/v1/table/{id}/update_field_metadata"),
    "AlterTableDropColumns": ("POST", "/v1/table/{id}/drop_columns"),
    "GetTableStats": ("POST", "/v1/table/{id}/stats"),
    "InsertIntoTable": ("POST", "/v1/table/{id}/insert"),
    "MergeInsertIntoTable": ("POST", "/v1/table/{id}/merge_insert"),
    "UpdateTable": ("POST", "/v1/table/{id}/update"),
    "DeleteFromTable": ("POST", "/v1/table/{id}/delete"),
    "QueryTable": ("POST", "/v1/table/{id}/query"),
    "CountTableRows": ("POST", "/v1/table/{id}/count_rows"),
    "CreateTable": ("POST", "/v1/table/{id}/create"),
    "ExplainTableQueryPlan": ("POST", "/v1/table/{id}/explain_plan"),
    "AnalyzeTableQueryPlan": ("POST", "/v1/table/{id}/analyze_plan"),
    "AlterTableAddColumns": ("POST", "/v1/table/{id}/add_columns"),
    "AlterTableBackfillColumns": ("POST", "/v1/table/{id}/backfill_column"),
    "RefreshMaterializedView": ("POST", "/v1/materialized_view/{id}/refresh"),
    "CreateMaterializedView": ("POST", "/v1/materialized_view/{id}/create"),
    "CreateTableIndex": ("POST", "/v1/table/{id}/create_index"),
    "CreateTableScalarIndex": ("POST", "/v1/table/{id}/create_scalar_index"),
    "ListTableIndices": ("POST", "/v1/table/{id}/index/list"),
    "DescribeTableIndexStats": ("POST", "/v1/table/{id}/index/{index_name}/stats"),
    "DropTableIndex": ("POST", "/v1/table/{id}/index/{index_name}/drop"),
    "ListTableTags": ("POST", "/v1/table/{id}/tags/list"),
    "GetTableTagVersion": ("POST", "/v1/table/{id}/tags/version"),
    "DeclareTable": ("POST", "/v1/table/{id}/declare"),
    "CreateTableTag": ("POST", "/v1/table/{id}/tags/create"),
    "DeleteTableTag": ("POST", "/v1/table/{id}/tags/delete"),
    "UpdateTableTag": ("POST", "/v1/table/{id}/tags/update"),
    "ListTableBranches": ("POST", "/v1/table/{id}/branches/list"),
    "CreateTableBranch": ("POST", "/v1/table/{id}/branches/create"),
    "DeleteTableBranch": ("POST", "/v1/table/{id}/branches/delete"),
    "DescribeTransaction": ("POST", "/v1/transaction/{id}/describe"),
    "AlterTransaction": ("POST", "/v1/transaction/{id}/alter"),
    "DescribeJob": ("POST", "/v1/job/{id}/describe"),
}

ARROW_OPS = {"CreateTable", "InsertIntoTable", "MergeInsertIntoTable"}


class Resp:
    def __init__(self, status=None, ctype="", raw=b"", error=None, elapsed=0.0):
        self.status = status
        self.ctype = ctype
        self.raw = raw
        self.error = error  # "CONN: ..." / "TIMEOUT" when there is no HTTP answer
        self.elapsed = elapsed
        self.json = None
        try:
            self.json = json.loads(raw.decode("utf-8")) if raw else None
        except (ValueError, UnicodeDecodeError):
            pass

    @property
    def ok(self):
        return self.status is not None and 200 <= self.status < 300


class Client:
    def __init__(self, base, timeout):
        self.base = base.rstrip("/")
        self.timeout = timeout

    def call(self, method, path, body=None, ctype=None, headers=None):
        data = None
        hdrs = dict(headers or {})
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            data = body.encode()
            hdrs.setdefault("Content-Type", ctype or "application/json")
        elif isinstance(body, bytes):
            data = body
            hdrs.setdefault("Content-Type", ctype or ARROW)
        if ctype:
            hdrs["Content-Type"] = ctype
        if method == "POST" and data is None:
            data = b""
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=hdrs)
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return Resp(r.status, r.headers.get("Content-Type", ""), r.read(),
                            elapsed=time.monotonic() - t0)
        except urllib.error.HTTPError as e:
            return Resp(e.code, e.headers.get("Content-Type", ""), e.read(),
                        elapsed=time.monotonic() - t0)
        except (socket.timeout, TimeoutError):
            return Resp(error="TIMEOUT", elapsed=time.monotonic() - t0)
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                return Resp(error="TIMEOUT", elapsed=time.monotonic() - t0)
            return Resp(error=f"CONN: {e.reason}", elapsed=time.monotonic() - t0)
        except Exception as e:  # RemoteDisconnected, ConnectionResetError, ...
            return Resp(error=f"CONN: {type(e).__name__}: {e}", elapsed=time.monotonic() - t0)

    def alive(self):
        r = self.call("GET", "/v1/namespace/$/list")
        return r.status == 200


def q(seg):
    return urllib.parse.quote(seg, safe="$")


def route(op, id_=None, index=None, query=None):
    method, tmpl = ROUTES[op]
    path = tmpl
    if "{id}" in path:
        path = path.replace("{id}", q(id_))
    if "{index_name}" in path:
        path = path.replace("{index_name}", q(index))
    if query:
        path += "?" + query
    return method, path


class Case:
    def __init__(self, op, id_=None, body=None, *, index=None, query=None, headers=None,
                 ctype=None, want=None, note="", then=None):
        self.op = op
        self.id = id_
        self.body = body
        self.index = index
        self.query = query
        self.headers = headers
        self.ctype = ctype
        self.want = want  # tuple of acceptable spec codes (and/or OK), or None
        self.note = note
        self.then = then  # callback(ctx, resp) run after the case (cleanup)

    def describe(self):
        method, path = route(self.op, self.id, self.index, self.query)
        if isinstance(self.body, bytes):
            body = f"<arrow {self.note or 'body'} {len(self.body)}B>"
        elif self.body is None:
            body = ""
        else:
            body = json.dumps(self.body, separators=(",", ":"))
        extra = ""
        if self.headers:
            extra = " " + " ".join(f"[{k}: {v}]" for k, v in self.headers.items())
        return f"{method} {path} {body}{extra}".strip()


class Ctx:
    """What the setup created."""


def must(resp, what):
    if not resp.ok:
        msg = resp.error or (resp.raw[:400].decode("utf-8", "replace"))
        print(f"setup failed: {what}: {resp.status} {msg}", file=sys.stderr)
        sys.exit(2)
    return resp


def setup(c, destructive):
    x = Ctx()
    tag = uuid.uuid4().hex[:8]
    x.tag = tag
    x.ns = f"probe_{tag}"
    x.T = f"{x.ns}$t"
    x.E = f"{x.ns}$empty"      # registered at a location that holds nothing
    x.E3 = f"{x.ns}$empty_d"   # the same, to be dropped
    x.D = f"{x.ns}$declared"   # declared, never written
    x.X = f"{x.ns}$missing"    # does not exist
    x.TA = f"{x.ns}$t_cols"    # real table for column changes (some may wrongly succeed)
    x.TB = f"{x.ns}$t_fill"    # real table with a computed column, for backfills
    x.TC = f"{x.ns}$t_noname"  # real table whose column gets renamed to ""
    x.TD = f"{x.ns}$t_drop"    # real table to drop every column of
    x.V = f"{x.ns}$victim"     # only for --destructive
    x.T2 = f"{x.ns}$t2"        # only for --destructive

    def call(op, id_=None, body=None, index=None, query=None, ctype=None):
        m, p = route(op, id_, index, query)
        return c.call(m, p, body, ctype)

    must(call("CreateNamespace", x.ns, {}), "create namespace")
    must(call("CreateTable", x.T, MAIN_IPC), "create table t")
    must(call("CreateTableIndex", x.T, {"column": "id", "index_type": "BTREE", "name": "id_idx"}),
         "create index id_idx")
    must(call("InsertIntoTable", x.T, MERGE_IPC), "insert into t")
    must(call("CreateTableTag", x.T, {"tag": "v1", "version": 1}), "create tag v1")
    must(call("CreateTableBranch", x.T, {"name": "b1"}), "create branch b1")
    d = must(call("DescribeTable", x.T, {}), "describe t").json
    x.T_location = d.get("location", "")
    x.T_dir = x.T_location.rstrip("/").rsplit("/", 1)[-1]
    v = must(call("ListTableVersions", x.T, {"descending": True, "limit": 1}), "list versions").json
    x.T_version = v["versions"][0]["version"]
    x.T_manifest = v["versions"][0]["manifest_path"]
    must(call("CreateTable", x.TA, MAIN_IPC), "create table t_cols")
    must(call("CreateTable", x.TC, MAIN_IPC), "create table t_noname")
    must(call("CreateTable", x.TD, MAIN_IPC), "create table t_drop")
    must(call("CreateTable", x.TB, MAIN_IPC), "create table t_fill")
    must(call("AlterTableAddColumns", x.TB, {"new_columns": [{"name": "c_ok", "computed": "id * 2"}]}),
         "add computed column c_ok")
    must(call("RegisterTable", x.E, {"location": f"probe_nothing_{tag}"}), "register empty")
    must(call("RegisterTable", x.E3, {"location": f"probe_nothing_d_{tag}"}), "register empty_d")
    must(call("DeclareTable", x.D, {}), "declare")
    if destructive:
        must(call("CreateTable", x.V, MAIN_IPC), "create victim")
        must(call("InsertIntoTable", x.V, MERGE_IPC), "insert victim")
        must(call("CreateTable", x.T2, MAIN_IPC), "create t2")
        v = must(call("ListTableVersions", x.V, {"descending": True, "limit": 1}), "victim versions").json
        x.V_version = v["versions"][0]["version"]
        x.V_manifest = v["versions"][0]["manifest_path"]
        v = must(call("ListTableVersions", x.T2, {"descending": True, "limit": 1}), "t2 versions").json
        x.T2_version = v["versions"][0]["version"]
        d = must(call("DescribeTable", x.T2, {}), "describe t2").json
        x.T2_dir = d.get("location", "").rstrip("/").rsplit("/", 1)[-1]
    return x


def deregister_if_ok(ctx_id):
    """A `then` hook: undo a registration that should have been refused."""
    def hook(c, resp):
        if resp.ok:
            m, p = route("DeregisterTable", ctx_id)
            c.call(m, p, {})
    return hook


def empty_table_cases(tid, kind):
    """Well-formed requests on a table whose location holds no dataset: each
    should answer a 4xx (mostly 4 TableNotFound), never 500."""
    NF = (4,)
    return [
        Case("DescribeTable", tid, {"load_detailed_metadata": True}, want=(OK,), note=kind),
        Case("DescribeTable", tid, {"version": 1}, want=(OK, 4, 11), note=kind),
        Case("DescribeTable", tid, {"tag": "v1"}, want=(4, 8), note=kind),
        Case("DescribeTable", tid, {"branch": "b1"}, want=(4, 22), note=kind),
        Case("ListTableVersions", tid, {}, want=(OK, 4), note=kind),
        Case("DescribeTableVersion", tid, {}, want=(4, 11), note=kind),
        Case("DescribeTableVersion", tid, {"version": 1}, want=(4, 11), note=kind),
        Case("CreateTableVersion", tid, {"version": 1, "manifest_path": "nope"}, want=(4, 13), note=kind),
        Case("BatchDeleteTableVersions", tid, {"ranges": [{"start_version": 1, "end_version": 2}]},
             want=(OK, 4), note=kind),
        Case("RestoreTable", tid, {"version": 1}, want=NF + (11,), note=kind),
        Case("UpdateTableSchemaMetadata", tid, {"k": "v"}, want=NF, note=kind),
        Case("UpdateFieldMetadata", tid, {"updates": [{"path": "id", "metadata": {"a": "b"}}]},
             want=NF, note=kind),
        Case("AlterTableAddColumns", tid, {"new_columns": [{"name": "c2", "expression": "1"}]},
             want=NF, note=kind),
        Case("AlterTableAddColumns", tid, {"new_columns": [{"name": "c3", "computed": "1"}]},
             want=NF, note=kind),
        Case("AlterTableAlterColumns", tid, {"alterations": [{"path": "id", "rename": "id2"}]},
             want=NF, note=kind),
        Case("AlterTableDropColumns", tid, {"columns": ["name"]}, want=NF, note=kind),
        Case("GetTableStats", tid, {}, want=NF, note=kind),
        Case("UpdateTable", tid, {"updates": [["score", "1.0"]]}, want=NF, note=kind),
        Case("UpdateTable", tid, {"updates": [["score", "1.0"]], "branch": "b1"}, want=NF + (22,), note=kind),
        Case("DeleteFromTable", tid, {"predicate": "id > 0"}, want=NF, note=kind),
        Case("DeleteFromTable", tid, {"predicate": "id > 0", "branch": "b1"}, want=NF + (22,), note=kind),
        Case("QueryTable", tid, {"k": 10, "vector": {}}, want=NF, note=kind),
        Case("QueryTable", tid, {"k": 10, "vector": {}, "branch": "b1"}, want=NF + (22,), note=kind),
        Case("CountTableRows", tid, {}, want=NF, note=kind),
        Case("CountTableRows", tid, {"predicate": "id >"}, want=NF + (13,), note=kind),
        Case("ExplainTableQueryPlan", tid, {"query": {"k": 10, "vector": {}}}, want=NF, note=kind),
        Case("AnalyzeTableQueryPlan", tid, {"k": 10, "vector": {}}, want=NF, note=kind),
        Case("AlterTableBackfillColumns", tid, {"column": "c3"}, want=NF, note=kind),
        Case("CreateTableIndex", tid, {"column": "id", "index_type": "BTREE"}, want=NF, note=kind),
        Case("CreateTableScalarIndex", tid, {"column": "id", "index_type": "BITMAP"}, want=NF, note=kind),
        Case("CreateTableIndex", tid, {"column": "id", "index_type": "BTREE", "branch": "b1"},
             want=NF + (22,), note=kind),
        Case("ListTableIndices", tid, {}, want=NF, note=kind),
        Case("DescribeTableIndexStats", tid, {}, index="id_idx", want=NF + (6,), note=kind),
        Case("DropTableIndex", tid, None, index="id_idx", want=NF + (6,), note=kind),
        Case("ListTableTags", tid, None, want=NF, note=kind),
        Case("GetTableTagVersion", tid, {"tag": "v1"}, want=NF + (8,), note=kind),
        Case("CreateTableTag", tid, {"tag": "v9", "version": 1}, want=NF + (11,), note=kind),
        Case("UpdateTableTag", tid, {"tag": "v9", "version": 1}, want=NF + (8,), note=kind),
        Case("DeleteTableTag", tid, {"tag": "v9"}, want=NF + (8,), note=kind),
        Case("ListTableBranches", tid, None, want=NF, note=kind),
        Case("CreateTableBranch", tid, {"name": "bx"}, want=NF, note=kind),
        Case("DeleteTableBranch", tid, {"name": "bx"}, want=NF + (22,), note=kind),
        Case("DescribeTransaction", tid + "$1", {}, want=NF + (10,), note=kind),
        Case("AlterTransaction", tid + "$1", {"actions": []}, want=NF + (10,), note=kind),
        Case("RefreshMaterializedView", tid, {}, want=(13,), note=kind),
    ]


def hostile_cases(x):
    T, X, ns, TA = x.T, x.X, x.ns, x.TA
    vT = x.T_version
    L = []
    a = L.append

    # ---------------------------------------------------------------- namespaces
    a(Case("CreateNamespace", f"{ns}$n1", {"properties": {"a": 1}}, want=(13,), note="non-string property"))
    a(Case("CreateNamespace", f"{ns}$n2", {"mode": "bogus"}, want=(13,)))
    a(Case("CreateNamespace", f"{ns}$n3", {"properties": {"lance-catalog.committed_version": "x"}},
           want=(13,), note="reserved property key"))
    a(Case("CreateNamespace", f"{ns}$a$$b", {}, want=(13,), note="empty id segment"))
    a(Case("CreateNamespace", f"{ns}$" + "x" * 2000, {}, want=(13,), note="over-long segment"))
    a(Case("ListNamespaces", ns, query="limit=-1", want=(13,)))
    a(Case("ListNamespaces", ns, query="limit=ten", want=(13,)))
    a(Case("ListNamespaces", ns, query="page_token=%FF%FE", want=(OK, 13)))
    a(Case("ListTables", ns, query="limit=99999999999", want=(13,)))
    a(Case("ListTables", ns, query="include_declared=maybe", want=(13,)))
    a(Case("ListAllTables", None, query="page_token=zzzz&limit=0", want=(OK,)))
    a(Case("ListAllTables", None, query="delimiter=", want=(13,)))
    a(Case("DropNamespace", ns, {"behavior": "bogus"}, want=(13,)))
    a(Case("DropNamespace", ns, {"mode": 7}, want=(13,), note="wrong type"))
    a(Case("DescribeNamespace", "nope$deeper", {}, want=(1,)))
    a(Case("NamespaceExists", "a/b", {}, want=(13,), note="path separator in id"))
    a(Case("DescribeNamespace", ns, "[1,2]", want=(13,), note="JSON array body"))
    a(Case("DescribeNamespace", ns, "{bad json", want=(13,), note="malformed JSON"))
    a(Case("DescribeNamespace", ns, {"id": ["other"]}, want=(13,), note="body id disagrees with path"))

    # ---------------------------------------------------------------- register / declare
    for loc, note, want in [
        ("", "empty location = the storage root", (13,)),
        (".", "dot location", (13,)),
        ("__manifest", "the catalog's own manifest", (13,)),
        ("__manifest/x", "inside the catalog's manifest", (13,)),
        ("a/b/c", "nested location", (13, OK)),
        ("a//b/./c/", "non-canonical nested location", (13, OK)),
        ("../escape", "path traversal", (13,)),
        ("/etc", "absolute path", (13,)),
        ("file:///etc", "absolute URI", (13,)),
        (x.T_dir, "another table's directory (alias)", (13,)),
        (x.T_dir + "/_versions", "inside another table's directory", (13,)),
        ("_catalog", "the catalog's job-record directory", (13,)),
        ("_versions", "a Lance-internal directory name", (13, OK)),
        ("x\\y", "backslash", (13,)),
    ]:
        rid = f"{ns}$reg_{abs(hash(note)) % 100000}"
        a(Case("RegisterTable", rid, {"location": loc}, want=want, note=note,
               then=deregister_if_ok(rid)))
    a(Case("RegisterTable", f"{ns}$reg_mode", {"location": "zz", "mode": "bogus"}, want=(13,)))
    a(Case("RegisterTable", f"{ns}$reg_nol", {}, want=(13,), note="missing location"))
    a(Case("RegisterTable", f"{ns}$reg_int", {"location": 5}, want=(13,), note="wrong type"))
    a(Case("DeclareTable", f"{ns}$decl1", {"location": "../x"}, want=(13,)))
    a(Case("DeclareTable", f"{ns}$decl2", {"location": "/etc"}, want=(13,)))
    a(Case("DeclareTable", f"{ns}$decl3", {"properties": {"lance-catalog.x": "y"}}, want=(13,)))
    a(Case("DeclareTable", x.T, {}, want=(5,), note="already exists"))

    # ---------------------------------------------------------------- describe
    a(Case("DescribeTable", T, {"load_detailed_metadata": True, "version": 999999}, want=(11,)))
    a(Case("DescribeTable", T, {"load_detailed_metadata": True, "version": -1}, want=(11, 13)))
    a(Case("DescribeTable", T, {"version": 999999}, want=(11,), note="version without details"))
    a(Case("DescribeTable", T, {"tag": "nope"}, want=(8,)))
    a(Case("DescribeTable", T, {"branch": "nope"}, want=(22,)))
    a(Case("DescribeTable", T, {"branch": "../escape"}, want=(13, 22)))
    a(Case("DescribeTable", T, {"branch": "b1", "version": 999999}, want=(11,)))
    a(Case("DescribeTable", T, {"branch": "b1", "version": -1}, want=(11, 13)))
    a(Case("DescribeTable", T, {"tag": "../../x"}, want=(8, 13)))
    a(Case("DescribeTable", T, {"version": "one"}, want=(13,), note="wrong type"))
    a(Case("DescribeTable", T, {"version": 2 ** 70}, want=(13,), note="beyond i64"))

    # ---------------------------------------------------------------- versions
    a(Case("CreateTableVersion", T, {"version": vT + 1, "manifest_path": ""}, want=(13,)))
    a(Case("CreateTableVersion", T, {"version": vT + 1, "manifest_path": "no/such/manifest"}, want=(13,)))
    a(Case("CreateTableVersion", T, {"version": vT + 1, "manifest_path": "a/../b"}, want=(13,)))
    a(Case("CreateTableVersion", T, {"version": vT + 1, "manifest_path": "/"}, want=(13,)))
    a(Case("CreateTableVersion", T, {"version": vT + 1,
                                      "manifest_path": x.T_manifest.rsplit("/", 1)[0]},
           want=(13,), note="staging path is the _versions directory"))
    a(Case("CreateTableVersion", T, {"version": 0, "manifest_path": "x"}, want=(13, 14)))
    a(Case("CreateTableVersion", T, {"version": -1, "manifest_path": "x"}, want=(13,)))
    a(Case("CreateTableVersion", T, {"version": 2 ** 63 - 1, "manifest_path": "x"}, want=(13, 14)))
    a(Case("CreateTableVersion", T, {"version": vT + 1, "manifest_path": "x", "naming_scheme": "V9"},
           want=(13,)))
    a(Case("CreateTableVersion", T, {"version": vT + 1, "manifest_path": "x", "branch": "nope"},
           want=(22, 13)))
    a(Case("CreateTableVersion", T, {"version": vT + 1, "manifest_path": "x", "branch": "../escape"},
           want=(13,)))
    a(Case("CreateTableVersion", T, {"version": vT + 1, "manifest_path": ""}, want=(13,)))
    a(Case("CreateTableVersion", T, {"manifest_path": "x"}, want=(13,), note="missing version"))
    a(Case("CreateTableVersion", T, {"version": vT + 1}, want=(13,), note="missing manifest_path"))
    a(Case("CreateTableVersion", X, {"version": 1, "manifest_path": "x"}, want=(4,)))
    a(Case("DescribeTableVersion", T, {"version": -1}, want=(11, 13)))
    a(Case("DescribeTableVersion", T, {"version": 0}, want=(11,)))
    a(Case("DescribeTableVersion", T, {"version": 2 ** 63 - 1}, want=(11,)))
    a(Case("DescribeTableVersion", T, {"branch": "nope"}, want=(22,)))
    a(Case("DescribeTableVersion", T, {"branch": "../escape"}, want=(13,)))
    a(Case("ListTableVersions", T, None, query="limit=-1", want=(OK, 13)))
    a(Case("ListTableVersions", T, None, query="branch=nope", want=(22,)))
    a(Case("ListTableVersions", T, None, query="branch=..%2Fescape", want=(13,)))
    a(Case("ListTableVersions", T, {"limit": "x"}, want=(13,)))
    a(Case("BatchDeleteTableVersions", T, {"ranges": []}, want=(13,)))
    a(Case("BatchDeleteTableVersions", T, {"ranges": [{"start_version": 900, "end_version": 800}]},
           want=(13, OK)))
    a(Case("BatchDeleteTableVersions", T, {"ranges": [{"start_version": 0, "end_version": 2 ** 63 - 1}]},
           want=(13,)))
    a(Case("BatchDeleteTableVersions", T, {"ranges": [{"start_version": 900, "end_version": 901}],
                                            "branch": "nope"}, want=(22,)))
    a(Case("BatchDeleteTableVersions", T, {"ranges": [{"start_version": 900, "end_version": 901}],
                                            "branch": "../escape"}, want=(13,)))
    a(Case("BatchDeleteTableVersions", T, {}, want=(13,), note="missing ranges"))
    a(Case("BatchCreateTableVersions", None, {"entries": []}, want=(13,)))
    a(Case("BatchCreateTableVersions", None,
           {"entries": [{"id": T.split("$"), "version": vT + 1, "manifest_path": ""}]}, want=(13,)))
    a(Case("BatchCreateTableVersions", None,
           {"entries": [{"id": T.split("$"), "version": vT + 1, "manifest_path": x.T_manifest}]},
           want=(13,), note="staging = the published manifest"))
    a(Case("BatchCreateTableVersions", None,
           {"entries": [{"id": [], "version": 1, "manifest_path": "x"}]}, want=(13,)))
    a(Case("BatchCreateTableVersions", None,
           {"entries": [{"id": X.split("$"), "version": 1, "manifest_path": "x"}]}, want=(4,)))
    a(Case("BatchCommitTables", None, {"operations": []}, want=(13,)))
    a(Case("BatchCommitTables", None, {"operations": [{}]}, want=(13,)))
    a(Case("BatchCommitTables", None, {"operations": [
        {"declare_table": {"id": [ns, "bc1"], "location": "../escape"}}]}, want=(13,)))
    a(Case("BatchCommitTables", None, {"operations": [
        {"declare_table": {"id": [ns, "bc2"], "location": "__manifest"}}]}, want=(13,)))
    a(Case("BatchCommitTables", None, {"operations": [
        {"delete_table_versions": {"id": T.split("$"),
                                   "ranges": [{"start_version": -5, "end_version": -1}]}}]},
        want=(13,)))
    a(Case("BatchCommitTables", None, {"operations": [
        {"create_table_version": {"id": T.split("$"), "version": vT + 1, "manifest_path": ""}}]},
        want=(13,)))
    a(Case("RestoreTable", T, {"version": 0}, want=(11, 13)))
    a(Case("RestoreTable", T, {"version": -1}, want=(13,)))
    a(Case("RestoreTable", T, {"version": 999999}, want=(11,)))
    a(Case("RestoreTable", T, {"version": 1, "branch": "nope"}, want=(22,)))
    a(Case("RestoreTable", T, {"version": 1, "branch": "../escape"}, want=(13,)))
    a(Case("RestoreTable", T, {}, want=(13,), note="missing version"))

    # ---------------------------------------------------------------- create / insert / merge
    a(Case("CreateTable", f"{ns}$c1", b"", want=(13,), note="empty body"))
    a(Case("CreateTable", f"{ns}$c2", b"garbage-not-arrow", want=(13,), note="garbage body"))
    a(Case("CreateTable", f"{ns}$c3", MAIN_IPC[: len(MAIN_IPC) // 2], want=(13,), note="truncated body"))
    a(Case("CreateTable", f"{ns}$c4", MAIN_IPC, query="mode=bogus", want=(13,), note="main"))
    a(Case("CreateTable", f"{ns}$c5", MAIN_IPC, query="properties=notjson", want=(13,), note="main"))
    a(Case("CreateTable", f"{ns}$c6", MAIN_IPC, headers={"x-lance-table-location": "/etc/x"},
           want=(13,), note="main"))
    a(Case("CreateTable", f"{ns}$c7", MAIN_IPC, headers={"x-lance-table-location": "__manifest"},
           want=(13,), note="main"))
    a(Case("CreateTable", f"{ns}$c7b", MAIN_IPC, headers={"x-lance-table-location": "_catalog"},
           want=(13,), note="main, at the job-record directory", then=deregister_if_ok(f"{ns}$c7b")))
    a(Case("CreateTable", f"{ns}$c8", MAIN_IPC, headers={"x-lance-table-properties": "[1]"},
           want=(13,), note="main"))
    a(Case("CreateTable", f"{ns}$c9", MAIN_IPC, ctype="text/plain", want=(13,), note="main"))
    a(Case("CreateTable", X + "$deeper", MAIN_IPC, want=(1, 4), note="missing parent"))
    a(Case("CreateTable", T, MAIN_IPC, want=(5,), note="already exists"))
    a(Case("InsertIntoTable", T, OTHER_IPC, want=(20,), note="other schema"))
    a(Case("InsertIntoTable", T, WRONGTYPE_IPC, want=(20,), note="id as string"))
    a(Case("InsertIntoTable", T, MERGE_IPC, query="mode=bogus", want=(13,), note="main"))
    a(Case("InsertIntoTable", T, MERGE_IPC, query="branch=nope", want=(22,), note="main"))
    a(Case("InsertIntoTable", T, MERGE_IPC, query="branch=..%2Fescape", want=(13, 22), note="main"))
    a(Case("InsertIntoTable", T, OTHER_IPC, query="branch=b1", want=(20,), note="other schema on branch"))
    a(Case("InsertIntoTable", X, MERGE_IPC, want=(4,), note="main"))
    a(Case("MergeInsertIntoTable", T, MERGE_IPC, query="on=nope", want=(12,), note="main"))
    a(Case("MergeInsertIntoTable", T, MERGE_IPC, want=(13,), note="no on"))
    a(Case("MergeInsertIntoTable", T, OTHER_IPC, query="on=other", want=(20, 12, 13), note="other schema"))
    a(Case("MergeInsertIntoTable", T, WRONGTYPE_IPC, query="on=id&when_matched_update_all=true",
           want=(20,), note="id as string"))
    a(Case("MergeInsertIntoTable", T, MERGE_IPC,
           query="on=id&when_matched_update_all=true&when_matched_update_all_filt=id%20%3E", want=(13,),
           note="bad filter"))
    a(Case("MergeInsertIntoTable", T, MERGE_IPC,
           query="on=id&when_matched_update_all=true&when_matched_update_all_filt=nope%20%3E%201",
           want=(13, 12), note="filter on missing column"))
    a(Case("MergeInsertIntoTable", T, MERGE_IPC,
           query="on=id&when_not_matched_by_source_delete=true&when_not_matched_by_source_delete_filt=nope%20%3E%201",
           want=(13, 12), note="filter on missing column"))
    a(Case("MergeInsertIntoTable", T, MERGE_IPC,
           query="on=id&branch=b1&when_matched_update_all=true&when_matched_update_all_filt=id%20%3E",
           want=(13,), note="bad filter on branch"))
    a(Case("MergeInsertIntoTable", T, MERGE_IPC, query="on=id&branch=nope", want=(22,), note="main"))
    a(Case("MergeInsertIntoTable", T, MERGE_IPC, query="on=id&timeout=soon", want=(OK, 13), note="main"))

    # ---------------------------------------------------------------- schema / columns
    a(Case("UpdateTableSchemaMetadata", TA, {"": "v"}, want=(13,)))
    a(Case("UpdateTableSchemaMetadata", TA, {"k": 5}, want=(13,), note="non-string value"))
    a(Case("UpdateTableSchemaMetadata", TA, {"k": "v", "branch": "nope"}, want=(22,)))
    a(Case("UpdateTableSchemaMetadata", TA, {"k": "v", "branch": "../escape"}, want=(13, 22)))
    a(Case("UpdateTableSchemaMetadata", TA, {"k": "v", "context": {"lance-catalog.unset_keys": "notjson"}},
           want=(13,)))
    a(Case("UpdateFieldMetadata", TA, {"updates": []}, want=(13,)))
    a(Case("UpdateFieldMetadata", TA, {"updates": [{"path": "nope", "metadata": {"a": "b"}}]}, want=(12,)))
    a(Case("UpdateFieldMetadata", TA, {"updates": [{"path": "", "metadata": {"a": "b"}}]}, want=(12, 13)))
    a(Case("UpdateFieldMetadata", TA, {"updates": [{"path": "vec.item", "metadata": {"a": "b"}}]},
           want=(OK, 12)))
    a(Case("UpdateFieldMetadata", TA, {"updates": [{"path": "id", "metadata": {"a": "b"}}],
                                      "branch": "nope"}, want=(22,)))
    a(Case("UpdateFieldMetadata", TA, {"updates": [{"path": "id", "metadata": {"a": "b"}}],
                                      "branch": "../escape"}, want=(13, 22)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": []}, want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_bad", "expression": "1 +"}]},
           want=(13,), note="SQL syntax error"))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_bad", "expression": "nope + 1"}]},
           want=(12, 13), note="unknown column in expression"))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_bad", "expression": "id + 'x'"}]},
           want=(13,), note="type error in expression"))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "id", "expression": "1"}]},
           want=(13, 20), note="existing column name"))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "", "expression": "1"}]}, want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_dup", "expression": "1"},
                                                       {"name": "c_dup", "expression": "2"}]},
           want=(13,), note="same name twice"))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_null", "expression": None}]},
           want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_x", "expression": "1"}],
                                       "branch": "nope"}, want=(22,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_cmp", "computed": "nope + 1"}]},
           want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_cmp", "computed": "1 +"}]}, want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "id", "computed": "1"}]}, want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_cmp", "computed": "1",
                                                        "expression": "1"}]}, want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "c_cmp2", "computed": "1"}],
                                       "branch": "nope"}, want=(22,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "vc", "virtual_column": {
        "input_columns": ["id"], "outputs": [{"column": "vo", "data_type": {"type": "nonsense"}}],
        "image": "i", "udf": "u", "udf_name": "n", "udf_version": "1"}}]}, want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "vc", "virtual_column": {
        "input_columns": ["id"], "outputs": [], "image": "i", "udf": "u", "udf_name": "n",
        "udf_version": "1"}}]}, want=(13,)))
    a(Case("AlterTableAddColumns", TA, {"new_columns": [{"name": "vc", "virtual_column": {
        "input_columns": ["id"], "outputs": [{"column": "id", "data_type": {"type": "int64"}}],
        "image": "i", "udf": "u", "udf_name": "n", "udf_version": "1"}}]}, want=(13,)))
    a(Case("AlterTableAlterColumns", TA, {"alterations": []}, want=(13, OK)))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "nope", "rename": "x"}]}, want=(12,)))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "id", "rename": "name"}]},
           want=(13, 20), note="rename onto an existing column"))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "id", "data_type": "nonsense"}]},
           want=(13,)))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "id", "data_type": 5}]}, want=(13,)))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "name", "data_type": "int64"}]},
           want=(13, 20), note="unsupported cast"))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "vec", "data_type": "utf8"}]},
           want=(13, 20), note="unsupported cast"))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "score", "nullable": False}]},
           want=(13, 20), note="non-null on a column holding nulls"))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "id", "rename": "a"},
                                                         {"path": "name", "rename": "a"}]},
           want=(13, 20), note="two columns renamed to one name"))
    a(Case("AlterTableAlterColumns", TA, {"alterations": [{"path": "id", "rename": "x"}], "branch": "nope"},
           want=(22,)))
    a(Case("AlterTableDropColumns", TA, {"columns": []}, want=(13, OK)))
    a(Case("AlterTableDropColumns", TA, {"columns": ["nope"]}, want=(12,)))
    a(Case("AlterTableDropColumns", TA, {"columns": [""]}, want=(12, 13)))
    a(Case("AlterTableDropColumns", x.TD, {"columns": ["id", "name", "score", "vec"]},
           want=(13, 20), note="every column"))
    a(Case("AlterTableDropColumns", TA, {"columns": ["name"], "branch": "nope"}, want=(22,)))
    a(Case("AlterTableDropColumns", TA, {"columns": ["name"], "branch": "../escape"}, want=(13, 22)))

    # did any accepted change above leave t_cols unusable?
    a(Case("QueryTable", TA, {"k": 10, "vector": {}}, want=(OK,), note="t_cols after the column cases"))
    a(Case("CountTableRows", TA, {"predicate": "score > 1"}, want=(OK, 12), note="t_cols after the column cases"))
    a(Case("DescribeTable", TA, {"load_detailed_metadata": True}, want=(OK,), note="t_cols after the column cases"))
    # a column renamed to the empty string, then read
    a(Case("AlterTableAlterColumns", x.TC, {"alterations": [{"path": "score", "rename": ""}]}, want=(13,),
           note="rename to the empty string"))
    a(Case("QueryTable", x.TC, {"k": 10, "vector": {}}, want=(OK,), note="after a column was renamed to \"\""))
    a(Case("CountTableRows", x.TC, {"predicate": "id > 1"}, want=(OK,), note="after a column was renamed to \"\""))
    a(Case("ExplainTableQueryPlan", x.TC, {"query": {"k": 10, "vector": {}}}, want=(OK,),
           note="after a column was renamed to \"\""))
    a(Case("DescribeTable", x.TC, {"load_detailed_metadata": True}, want=(OK,),
           note="after a column was renamed to \"\""))
    a(Case("InsertIntoTable", x.TC, MERGE_IPC, want=(OK, 20), note="after a column was renamed to \"\""))
    # ---------------------------------------------------------------- stats / DML / queries
    a(Case("GetTableStats", T, {"branch": "nope"}, want=(22,)))
    a(Case("GetTableStats", T, {"branch": "../escape"}, want=(13,)))
    a(Case("UpdateTable", T, {"updates": []}, want=(13,)))
    a(Case("UpdateTable", T, {"updates": [["id"]]}, want=(13,)))
    a(Case("UpdateTable", T, {"updates": [["nope", "1"]]}, want=(12, 13)))
    a(Case("UpdateTable", T, {"updates": [["score", "nope + 1"]]}, want=(12, 13)))
    a(Case("UpdateTable", T, {"updates": [["score", "1 +"]]}, want=(13,)))
    a(Case("UpdateTable", T, {"updates": [["id", "'abc'"]]}, want=(13, 20), note="type mismatch"))
    a(Case("UpdateTable", T, {"updates": [["score", "1.0"]], "predicate": "id >"}, want=(13,)))
    a(Case("UpdateTable", T, {"updates": [["score", "1.0"]], "predicate": "nope > 1"}, want=(12, 13)))
    a(Case("UpdateTable", T, {"updates": [["score", "1.0"]], "predicate": "id > 'x'"}, want=(13, OK)))
    a(Case("UpdateTable", T, {"updates": [["score", "1.0"]], "branch": "nope"}, want=(22,)))
    a(Case("UpdateTable", T, {"updates": [["score", "1.0"]], "branch": "../escape"}, want=(13, 22)))
    a(Case("UpdateTable", T, {"updates": [["score", "1.0"]], "branch": "b1", "predicate": "id >"},
           want=(13,), note="bad predicate on branch"))
    a(Case("UpdateTable", T, {"updates": [["nope", "1"]], "branch": "b1"}, want=(12, 13)))
    a(Case("UpdateTable", T, {"updates": [["score", "1 +"]], "branch": "b1"}, want=(13,)))
    a(Case("UpdateTable", T, {"updates": [["score", "1.0"]], "properties": {"lance-catalog.x": "1"}},
           want=(13,)))
    a(Case("DeleteFromTable", T, {"predicate": ""}, want=(13,)))
    a(Case("DeleteFromTable", T, {}, want=(13,), note="missing predicate"))
    a(Case("DeleteFromTable", T, {"predicate": "id >"}, want=(13,)))
    a(Case("DeleteFromTable", T, {"predicate": "nope = 1"}, want=(12, 13)))
    a(Case("DeleteFromTable", T, {"predicate": "id = 'abc'"}, want=(13, OK)))
    a(Case("DeleteFromTable", T, {"predicate": "id >", "branch": "b1"}, want=(13,), note="on branch"))
    a(Case("DeleteFromTable", T, {"predicate": "nope = 1", "branch": "b1"}, want=(12, 13), note="on branch"))
    a(Case("DeleteFromTable", T, {"predicate": "id > 1000", "branch": "nope"}, want=(22,)))
    a(Case("DeleteFromTable", T, {"predicate": "id > 1000", "branch": "../escape"}, want=(13, 22)))

    qbase = {"k": 10, "vector": {}}

    def qq(**kw):
        d = dict(qbase)
        d.update(kw)
        return d

    for label, body, want in [
        ("bad filter", qq(filter="id >"), (13,)),
        ("filter on missing column", qq(filter="nope = 1"), (12, 13)),
        ("filter type error", qq(filter="vec > 1"), (13,)),
        ("project missing column", qq(columns={"column_names": ["nope"]}), (12, 13)),
        ("alias bad expression", qq(columns={"column_aliases": {"a": "nope + 1"}}), (12, 13)),
        ("alias syntax error", qq(columns={"column_aliases": {"a": "1 +"}}), (13,)),
        ("vector wrong dimension", qq(vector={"single_vector": [1.0, 2.0]}, vector_column="vec"), (13,)),
        ("default vector column missing", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}), (12, 13)),
        ("vector on non-vector column", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]},
                                           vector_column="name"), (13,)),
        ("vector on missing column", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]},
                                        vector_column="nope"), (12, 13)),
        ("multi_vector ragged", qq(vector={"multi_vector": [[1.0], [1.0, 2.0, 3.0, 4.0]]}, vector_column="vec"), (13,)),
        ("k negative", qq(k=-1), (13, OK)),
        ("offset negative", qq(offset=-1), (13,)),
        ("version huge", qq(version=999999), (11,)),
        ("version negative", qq(version=-1), (11, 13)),
        ("distance bogus", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec", distance_type="bogus"), (13,)),
        ("nprobes negative", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec", nprobes=-1), (13,)),
        ("refine_factor negative", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec", refine_factor=-1),
         (13, OK)),
        ("ef negative", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec", ef=-1), (13, OK)),
        ("bounds inverted", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec", lower_bound=10.0,
                               upper_bound=1.0), (13, OK)),
        ("fts without index", qq(full_text_query={"string_query": {"query": "n1"}}), (13, 6)),
        ("fts on missing column", qq(full_text_query={"string_query": {"query": "n1", "columns": ["nope"]}}),
         (12, 13)),
        ("fts structured empty", qq(full_text_query={"structured_query": {"query": {}}}), (13,)),
        ("fts on int column", qq(full_text_query={"string_query": {"query": "n1", "columns": ["id"]}}), (13,)),
        ("missing k", {"vector": {}}, (13,)),
        ("missing vector", {"k": 10}, (13,)),
        ("k too big for i32", qq(k=2 ** 40), (13,)),
        ("k = i32::MAX with vector", qq(k=2 ** 31 - 1, vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec"),
         (OK, 13)),
        ("k = i32::MAX, refine i32::MAX", qq(k=2 ** 31 - 1, refine_factor=2 ** 31 - 1,
                                             vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec"), (OK, 13)),
        ("branch nope", qq(branch="nope"), (22,)),
        ("branch escape", qq(branch="../escape"), (13, 22)),
        ("bad filter on branch", qq(branch="b1", filter="id >"), (13,)),
        ("missing column filter on branch", qq(branch="b1", filter="nope = 1"), (12, 13)),
        ("project missing on branch", qq(branch="b1", columns={"column_names": ["nope"]}), (12, 13)),
        ("vector wrong dim on branch", qq(branch="b1", vector={"single_vector": [1.0]}, vector_column="vec"), (13,)),
        ("default vector column missing on branch", qq(branch="b1", vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}), (12, 13)),
        ("vector on non-vector column on branch", qq(branch="b1", vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="name"), (13,)),
        ("fts without index on branch", qq(branch="b1", full_text_query={"string_query": {"query": "n1"}}), (13,)),
        ("alias bad expression on branch", qq(branch="b1", columns={"column_aliases": {"a": "nope + 1"}}), (12, 13)),
        ("version huge on branch", qq(branch="b1", version=999999), (11,)),
        ("version negative on branch", qq(branch="b1", version=-1), (11, 13)),
        ("offset negative on branch", qq(branch="b1", offset=-1), (13,)),
        ("distance bogus on branch", qq(branch="b1", vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec",
                                        distance_type="bogus"), (13,)),
    ]:
        a(Case("QueryTable", T, body, want=want, note=label))
    a(Case("QueryTable", X, qbase, want=(4,)))

    for label, body, want in [
        ("bad predicate", {"predicate": "id >"}, (13,)),
        ("predicate on missing column", {"predicate": "nope > 1"}, (12, 13)),
        ("predicate type error", {"predicate": "vec > 1"}, (13,)),
        ("version huge", {"version": 999999}, (11,)),
        ("version negative", {"version": -1}, (11, 13)),
        ("branch nope", {"branch": "nope"}, (22,)),
        ("branch escape", {"branch": "../escape"}, (13,)),
        ("bad predicate on branch", {"branch": "b1", "predicate": "id >"}, (13,)),
        ("missing column on branch", {"branch": "b1", "predicate": "nope > 1"}, (12, 13)),
        ("bad predicate at old version", {"version": 1, "predicate": "id >"}, (13,)),
    ]:
        a(Case("CountTableRows", T, body, want=want, note=label))

    for label, q_ in [
        ("bad filter", qq(filter="id >")),
        ("filter on missing column", qq(filter="nope = 1")),
        ("project missing column", qq(columns={"column_names": ["nope"]})),
        ("vector wrong dimension", qq(vector={"single_vector": [1.0, 2.0]}, vector_column="vec")),
        ("vector on non-vector column", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]},
                                           vector_column="name")),
        ("offset negative", qq(offset=-1)),
        ("distance bogus", qq(vector={"single_vector": [1.0, 2.0, 3.0, 4.0]}, vector_column="vec", distance_type="bogus")),
        ("fts without index", qq(full_text_query={"string_query": {"query": "n1"}})),
        ("version huge", qq(version=999999)),
        ("version negative", qq(version=-1)),
    ]:
        w = (11,) if "version huge" in label else (13, 12, 11)
        if "fts without index" in label:
            w = w + (OK,)  # a plan can be shown even though running it fails
        a(Case("ExplainTableQueryPlan", T, {"query": q_}, want=w, note=label))
        a(Case("AnalyzeTableQueryPlan", T, q_, want=w, note=label))
    a(Case("ExplainTableQueryPlan", T, {"query": qbase, "branch": "nope"}, want=(22,), note="branch ignored?"))
    a(Case("ExplainTableQueryPlan", T, {}, want=(13,), note="missing query"))

    # ---------------------------------------------------------------- indices
    for label, body, want in [
        ("missing column", {"column": "nope", "index_type": "BTREE"}, (12,)),
        ("empty column", {"column": "", "index_type": "BTREE"}, (12, 13)),
        ("bogus type", {"column": "id", "index_type": "BOGUS"}, (13,)),
        ("BTREE on vector", {"column": "vec", "index_type": "BTREE"}, (13,)),
        ("IVF_PQ on int", {"column": "id", "index_type": "IVF_PQ"}, (13,)),
        ("IVF_FLAT on string", {"column": "name", "index_type": "IVF_FLAT"}, (13,)),
        ("INVERTED on int", {"column": "id", "index_type": "INVERTED"}, (13,)),
        ("LABEL_LIST on string", {"column": "name", "index_type": "LABEL_LIST"}, (13,)),
        ("RTREE on int", {"column": "id", "index_type": "RTREE"}, (13,)),
        ("duplicate name", {"column": "score", "index_type": "BTREE", "name": "id_idx"}, (7,)),
        ("bad language", {"column": "name", "index_type": "INVERTED", "language": "Klingon"}, (13,)),
        ("bad base_tokenizer", {"column": "name", "index_type": "INVERTED", "base_tokenizer": "nope"}, (13,)),
        ("negative max_token_length", {"column": "name", "index_type": "INVERTED",
                                       "max_token_length": -1}, (13,)),
        ("bad distance", {"column": "vec", "index_type": "IVF_FLAT", "distance_type": "bogus"}, (13,)),
        ("bad num_bits", {"column": "vec", "index_type": "IVF_RQ", "num_bits": 99}, (13,)),
        ("name with slash", {"column": "score", "index_type": "BTREE", "name": "a/b"}, (13, OK)),
        ("missing index_type", {"column": "id"}, (13,)),
        ("branch nope", {"column": "score", "index_type": "BTREE", "branch": "nope"}, (22,)),
        ("branch escape", {"column": "score", "index_type": "BTREE", "branch": "../escape"}, (13, 22)),
        ("missing column on branch", {"column": "nope", "index_type": "BTREE", "branch": "b1"}, (12,)),
        ("IVF_PQ on int on branch", {"column": "id", "index_type": "IVF_PQ", "branch": "b1"}, (13,)),
        ("BTREE on vector on branch", {"column": "vec", "index_type": "BTREE", "branch": "b1"}, (13,)),
    ]:
        a(Case("CreateTableIndex", T, body, want=want, note=label))
    a(Case("CreateTableScalarIndex", T, {"column": "vec", "index_type": "IVF_PQ"}, want=(13,)))
    a(Case("CreateTableScalarIndex", T, {"column": "nope", "index_type": "BTREE"}, want=(12,)))
    a(Case("CreateTableScalarIndex", T, {"column": "vec", "index_type": "BITMAP"}, want=(13,)))
    a(Case("ListTableIndices", T, {"version": 999999}, want=(11,)))
    a(Case("ListTableIndices", T, {"version": -1}, want=(11, 13)))
    a(Case("ListTableIndices", T, {"limit": -1}, want=(OK, 13)))
    a(Case("ListTableIndices", T, {"branch": "nope"}, want=(22,), note="branch ignored?"))
    a(Case("DescribeTableIndexStats", T, {}, index="nope", want=(6,)))
    a(Case("DescribeTableIndexStats", T, {"version": 999999}, index="id_idx", want=(11,)))
    a(Case("DescribeTableIndexStats", T, {"version": -1}, index="id_idx", want=(11, 13)))
    a(Case("DescribeTableIndexStats", T, {"branch": "nope"}, index="id_idx", want=(22,), note="branch ignored?"))
    a(Case("DropTableIndex", T, None, index="nope", want=(6,)))
    a(Case("DropTableIndex", T, None, index="nope", query="branch=b1", want=(6,)))
    a(Case("DropTableIndex", T, None, index="id_idx", query="branch=nope", want=(22,)))
    a(Case("DropTableIndex", T, None, index="id_idx", query="branch=..%2Fescape", want=(13, 22)))

    # ---------------------------------------------------------------- tags
    for label, op, body, want in [
        ("empty tag", "CreateTableTag", {"tag": "", "version": 1}, (13,)),
        ("slash tag", "CreateTableTag", {"tag": "a/b", "version": 1}, (13,)),
        ("dotdot tag", "CreateTableTag", {"tag": "..", "version": 1}, (13,)),
        ("space tag", "CreateTableTag", {"tag": "a b", "version": 1}, (13,)),
        ("unicode tag", "CreateTableTag", {"tag": "t\u00e9g\u2603", "version": 1}, (13, OK)),
        ("long tag", "CreateTableTag", {"tag": "t" * 5000, "version": 1}, (13,)),
        ("lock tag", "CreateTableTag", {"tag": "x.lock", "version": 1}, (13, OK)),
        ("version 0", "CreateTableTag", {"tag": "z0", "version": 0}, (13,)),
        ("version huge", "CreateTableTag", {"tag": "z1", "version": 999999}, (11,)),
        ("duplicate", "CreateTableTag", {"tag": "v1", "version": 1}, (9,)),
        ("branch nope", "CreateTableTag", {"tag": "z2", "version": 1, "branch": "nope"}, (22,)),
        ("missing", "GetTableTagVersion", {"tag": "nope"}, (8,)),
        ("empty", "GetTableTagVersion", {"tag": ""}, (13,)),
        ("slash", "GetTableTagVersion", {"tag": "../../x"}, (8, 13)),
        ("missing", "DeleteTableTag", {"tag": "nope"}, (8,)),
        ("slash", "DeleteTableTag", {"tag": "../x"}, (8, 13)),
        ("missing", "UpdateTableTag", {"tag": "nope", "version": 1}, (8,)),
        ("version huge", "UpdateTableTag", {"tag": "v1", "version": 999999}, (11,)),
        ("version negative", "UpdateTableTag", {"tag": "v1", "version": -1}, (13,)),
    ]:
        a(Case(op, T, body, want=want, note=label))
    a(Case("ListTableTags", T, None, query="limit=-1", want=(OK, 13)))

    # ---------------------------------------------------------------- branches
    for label, op, body, want in [
        ("empty name", "CreateTableBranch", {"name": ""}, (13,)),
        ("dotdot name", "CreateTableBranch", {"name": "../escape"}, (13,)),
        ("space name", "CreateTableBranch", {"name": "a b"}, (13,)),
        ("main", "CreateTableBranch", {"name": "main"}, (13, 23)),
        ("duplicate", "CreateTableBranch", {"name": "b1"}, (23,)),
        ("lock name", "CreateTableBranch", {"name": "x.lock"}, (13,)),
        ("trailing slash", "CreateTableBranch", {"name": "x/"}, (13,)),
        ("from_version huge", "CreateTableBranch", {"name": "bz1", "from_version": 999999}, (11, 13)),
        ("from_version 0", "CreateTableBranch", {"name": "bz2", "from_version": 0}, (13,)),
        ("from_branch missing", "CreateTableBranch", {"name": "bz3", "from_branch": "nope"}, (13, 22)),
        ("from_branch escape", "CreateTableBranch", {"name": "bz4", "from_branch": "../escape"}, (13, 22)),
        ("missing", "DeleteTableBranch", {"name": "nope"}, (22,)),
        ("main", "DeleteTableBranch", {"name": "main"}, (13,)),
        ("empty", "DeleteTableBranch", {"name": ""}, (13,)),
        ("escape", "DeleteTableBranch", {"name": "../escape"}, (13, 22)),
    ]:
        a(Case(op, T, body, want=want, note=label))

    # ---------------------------------------------------------------- transactions
    for txn, want in [("garbage", (10,)), ("0", (10,)), ("999999", (10,)), ("-1", (10,)),
                      ("99999999999999999999999", (10,)), ("%20", (10, 13))]:
        a(Case("DescribeTransaction", f"{T}${txn}", {}, want=want, note=f"txn {txn!r}"))
    a(Case("AlterTransaction", f"{T}$garbage", {"actions": []}, want=(10,)))
    a(Case("AlterTransaction", f"{T}$1", {"actions": [{"setStatusAction": {"status": "bogus"}}]},
           want=(13,)))
    a(Case("AlterTransaction", f"{T}$1", {"actions": [{"setPropertyAction": {"key": "uuid", "value": "x"}}]},
           want=(13,)))
    a(Case("AlterTransaction", f"{T}$1", {"actions": [{"setPropertyAction": {"key": "k", "value": "x",
                                                                             "mode": "bogus"}}]},
           want=(13,)))
    a(Case("AlterTransaction", f"{T}$1", {"actions": [{"unsetPropertyAction": {"key": "k", "mode": "fail"}}]},
           want=(13,)))
    a(Case("AlterTransaction", f"{T}$1", {}, want=(13,), note="missing actions"))
    a(Case("DescribeTransaction", x.ns + "$1", {}, want=(4, 13), note="namespace as table"))
    a(Case("DescribeTransaction", "t", {}, want=(13,), note="too short"))

    # ---------------------------------------------------------------- backfill / views / jobs / rename
    TB = x.TB
    a(Case("AlterTableBackfillColumns", TB, {"column": "nope"}, want=(12,)))
    a(Case("AlterTableBackfillColumns", TB, {"column": ""}, want=(12, 13)))
    a(Case("AlterTableBackfillColumns", TB, {"column": "score"}, want=(13,), note="no computed binding"))
    a(Case("AlterTableBackfillColumns", TB, {}, want=(13,), note="missing column"))
    a(Case("AlterTableBackfillColumns", TB, {"column": "c_ok", "where": "id >"}, want=(13,)))
    a(Case("AlterTableBackfillColumns", TB, {"column": "c_ok", "where": "nope > 1"}, want=(12, 13)))
    a(Case("AlterTableBackfillColumns", TB, {"column": "c_ok", "read_version": 999999}, want=(11,)))
    a(Case("AlterTableBackfillColumns", TB, {"column": "c_ok", "read_version": -1}, want=(11, 13)))
    a(Case("AlterTableBackfillColumns", TB, {"column": "c_ok", "branch": "nope"}, want=(22,)))
    a(Case("AlterTableBackfillColumns", TB, {"column": "c_ok", "branch": "../escape"}, want=(13, 22)))
    a(Case("DescribeJob", "no-such-job", {}, want=(10000,)))
    a(Case("DescribeJob", "..%2F..%2Fx", {}, want=(10000, 13)))
    qsrc = f'SELECT id FROM "{T}"'
    for label, body, want in [
        ("bad SQL", {"kind": "query", "source_query": "SELEC nope", "output_schema": ""}, (13,)),
        ("missing table", {"kind": "query", "source_query": f'SELECT * FROM "{X}"', "output_schema": ""}, (4,)),
        ("unknown column", {"kind": "query", "source_query": f'SELECT nope FROM "{T}"', "output_schema": ""},
         (12, 13)),
        ("DDL", {"kind": "query", "source_query": f'DROP TABLE "{T}"', "output_schema": ""}, (13,)),
        ("two statements", {"kind": "query", "source_query": qsrc + "; " + qsrc, "output_schema": ""}, (13,)),
        ("empty query", {"kind": "query", "source_query": "", "output_schema": ""}, (13,)),
        ("bad output_schema", {"kind": "query", "source_query": qsrc, "output_schema": "!!notbase64"}, (13,)),
        ("non-arrow output_schema", {"kind": "query", "source_query": qsrc,
                                     "output_schema": base64.b64encode(b"hello").decode()}, (13,)),
        ("bogus kind", {"kind": "bogus", "source_query": qsrc, "output_schema": ""}, (13,)),
        ("udtf without schema", {"kind": "udtf", "source_query": "", "output_schema": ""}, (13,)),
        ("escape table name", {"kind": "query", "source_query": 'SELECT * FROM "../x"', "output_schema": ""},
         (4, 13)),
        ("system table", {"kind": "query", "source_query": "SELECT * FROM information_schema.tables",
                          "output_schema": ""}, (13, 4)),
    ]:
        a(Case("CreateMaterializedView", f"{ns}$mv_{abs(hash(label)) % 10000}", body, want=want, note=label))
    a(Case("CreateMaterializedView", T, {"kind": "query", "source_query": qsrc, "output_schema": ""},
           want=(5,), note="onto an existing table"))
    a(Case("RefreshMaterializedView", T, {}, want=(13,), note="a plain table"))
    a(Case("RefreshMaterializedView", X, {}, want=(4,)))
    a(Case("RenameTable", T, {"new_table_name": ""}, want=(13,)))
    a(Case("RenameTable", T, {"new_table_name": "a$b"}, want=(13,)))
    a(Case("RenameTable", T, {"new_table_name": "t"}, want=(13,), note="same name"))
    a(Case("RenameTable", T, {"new_table_name": "declared"}, want=(5,), note="onto a declared table"))
    a(Case("RenameTable", T, {"new_table_name": "z", "new_namespace_id": ["nope"]}, want=(1,)))
    a(Case("RenameTable", T, {"new_table_name": "z", "new_namespace_id": [""]}, want=(13,)))
    a(Case("RenameTable", T, {}, want=(13,), note="missing new_table_name"))
    return L


def read_only_alias_cases(x):
    """Registrations the core should refuse, with a read through each one, then
    deregistration (deregister leaves data in place)."""
    ns = x.ns
    L = []
    for rid, loc, note in [(f"{ns}$mf", "__manifest", "table registered at __manifest"),
                           (f"{ns}$alias", x.T_dir, "table registered at t's directory")]:
        L.append(Case("RegisterTable", rid, {"location": loc}, want=(13,), note=note))
        L.append(Case("QueryTable", rid, {"k": 100, "vector": {}}, want=(4, 13),
                      note=f"read through {note}"))
        L.append(Case("CountTableRows", rid, {}, want=(4, 13), note=f"read through {note}"))
        L.append(Case("DeregisterTable", rid, {}, want=(OK, 4), note="cleanup"))
    return L


def destructive_cases(x):
    ns, T2, V = x.ns, x.T2, x.V
    L = []
    a = L.append
    # 1. create_table_version "staging" = another table's published manifest:
    #    the engine copies it into t2 and then deletes it from the victim.
    a(Case("CreateTableVersion", T2, {"version": x.T2_version + 1, "manifest_path": x.V_manifest},
           want=(13,), note="staging = another table's published manifest"))
    a(Case("CountTableRows", V, {}, want=(OK,), note="victim after the foreign copy"))
    a(Case("DescribeTableVersion", V, {"version": x.V_version}, want=(OK,),
           note="victim's latest version after the foreign copy"))
    a(Case("QueryTable", T2, {"k": 10, "vector": {}}, want=(OK,), note="t2 after the foreign copy"))
    a(Case("GetTableStats", T2, {}, want=(OK,), note="t2 after the foreign copy"))
    # 2. batch_delete with a negative range deletes every version
    a(Case("BatchDeleteTableVersions", V, {"ranges": [{"start_version": -5, "end_version": -1}]},
           want=(13,), note="negative range = every version"))
    a(Case("CountTableRows", V, {}, want=(OK, 4), note="victim after deleting every version"))
    a(Case("QueryTable", V, {"k": 10, "vector": {}}, want=(OK, 4), note="victim after deleting every version"))
    a(Case("DescribeTable", V, {"load_detailed_metadata": True}, want=(OK, 4),
           note="victim after deleting every version"))
    a(Case("InsertIntoTable", V, MERGE_IPC, want=(OK, 4, 19), note="victim after deleting every version"))
    # 3. an alias registered at t2's directory, dropped: t2's data goes with it
    alias = f"{ns}$alias2"
    a(Case("RegisterTable", alias, {"location": x.T2_dir}, want=(13,), note="alias of t2"))
    a(Case("DropTable", alias, None, want=(OK, 4), note="drop the alias"))
    a(Case("QueryTable", T2, {"k": 10, "vector": {}}, want=(OK, 4), note="t2 after its alias was dropped"))
    a(Case("GetTableStats", T2, {}, want=(OK, 4), note="t2 after its alias was dropped"))
    a(Case("DropTable", T2, None, want=(OK, 4), note="t2 after its alias was dropped"))
    # 4. last: a table registered at the storage root, dropped
    root = f"{ns}$rootreg"
    a(Case("RegisterTable", root, {"location": ""}, want=(13,), note="table at the storage root"))
    a(Case("DropTable", root, None, want=(13, 4), note="drop the table at the storage root"))
    a(Case("ListNamespaces", "$", None, want=(OK,), note="catalog after the root-table drop"))
    a(Case("DescribeTable", x.T, {}, want=(OK,), note="t after the root-table drop"))
    return L


def classify(case, r):
    """(code, message, flags) for one answer."""
    flags = []
    code = None
    msg = ""
    if r.error:
        flags.append("TIMEOUT" if r.error == "TIMEOUT" else "CONN")
        return code, r.error, flags
    body = r.json if isinstance(r.json, dict) else None
    if not r.ok:
        if body is not None:
            code = body.get("code")
            msg = str(body.get("detail") or body.get("error") or "")
        else:
            msg = r.raw[:300].decode("utf-8", "replace")
        if r.status >= 500:
            flags.append("5XX")
        is_problem = r.ctype.split(";")[0].strip().lower() == "application/problem+json"
        if not is_problem or body is None or not isinstance(code, int):
            flags.append("NOTPROB")
        elif case.want is not None and r.status < 500 and code not in case.want:
            flags.append("CODE")
    else:
        if case.want is not None and OK not in case.want:
            flags.append("ACCEPTED")
        if r.raw:
            msg = r.raw[:160].decode("utf-8", "replace") if r.json is not None else f"<{len(r.raw)} bytes {r.ctype}>"
    return code, msg, flags


def run(c, cases, rows, ctx_label):
    for case in cases:
        method, path = route(case.op, case.id, case.index, case.query)
        body = case.body
        r = c.call(method, path, body, case.ctype, case.headers)
        code, msg, flags = classify(case, r)
        rows.append({
            "group": ctx_label,
            "op": case.op,
            "note": case.note,
            "input": case.describe(),
            "status": r.status,
            "code": code,
            "want": [w for w in (case.want or ())],
            "message": msg,
            "flags": flags,
            "seconds": round(r.elapsed, 2),
        })
        if case.then:
            case.then(c, r)
        if "CONN" in flags or "TIMEOUT" in flags:
            if not c.alive():
                rows.append({"group": ctx_label, "op": "(server)", "note": "", "input": "GET /v1/namespace/$/list",
                             "status": None, "code": None, "want": [], "message": "server no longer answers",
                             "flags": ["CONN"], "seconds": 0})
                return False
    return True


def short(s, n):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "\u2026"


def print_table(rows, width_input=90, width_msg=110):
    print(f"{'#':>4} {'status':>6} {'code':>5} {'flags':<16} {'op':<26} input / message")
    for i, r in enumerate(rows, 1):
        flags = ",".join(r["flags"])
        note = ("  (" + short(r["note"], 50) + ")") if r["note"] else ""
        print(f"{i:>4} {str(r['status']):>6} {str(r['code']):>5} {flags:<16} {r['op']:<26} "
              f"{short(r['input'], width_input)}{note}")
        if r["flags"] or (r["status"] or 0) >= 400:
            want = "/".join(str(w) for w in r["want"]) if r["want"] else "-"
            print(f"{'':>4} {'':>6} {'':>5} {'':<16} {'':<26} -> [want {want}] {short(r['message'], width_msg)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base_url", help="e.g. http://127.0.0.1:2333 (include any --prefix)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per request (default 180)")
    ap.add_argument("--destructive", action="store_true",
                    help="also run cases that destroy data (throw-away servers only)")
    ap.add_argument("--json-out", help="write every row as JSON to this file")
    ap.add_argument("--cleanup", action="store_true",
                    help="drop the probe namespace (cascade) at the end; never with --destructive")
    args = ap.parse_args()

    c = Client(args.base_url, args.timeout)
    if not c.alive():
        print(f"{args.base_url} does not answer GET /v1/namespace/$/list", file=sys.stderr)
        return 2
    x = setup(c, args.destructive)
    print(f"probe namespace {x.ns}; table t at version {x.T_version} in {x.T_location}")

    rows = []
    alive = True
    for label, cases in [
        ("registered-empty", empty_table_cases(x.E, "registered, no dataset")),
        ("declared", empty_table_cases(x.D, "declared, no dataset")),
        ("hostile", hostile_cases(x)),
        ("alias", read_only_alias_cases(x)),
        ("registered-empty-drop", [Case("DropTable", x.E3, None, want=(OK,), note="registered, no dataset"),
                                   Case("DeregisterTable", x.E, {}, want=(OK,), note="registered, no dataset")]),
    ] + ([("destructive", destructive_cases(x))] if args.destructive else []):
        if not alive:
            break
        alive = run(c, cases, rows, label)

    print_table(rows)
    bad = [r for r in rows if {"5XX", "CONN", "TIMEOUT", "NOTPROB"} & set(r["flags"])]
    codes = [r for r in rows if "CODE" in r["flags"]]
    accepted = [r for r in rows if "ACCEPTED" in r["flags"]]
    print()
    print(f"{len(rows)} requests: {len(bad)} 5xx/no-answer/non-problem, "
          f"{len(codes)} unexpected 4xx codes, {len(accepted)} accepted-but-should-fail")
    for title, sel in [("5xx / no answer / non-problem bodies", bad),
                       ("4xx with an unexpected spec code", codes),
                       ("accepted although they should have been refused", accepted)]:
        if not sel:
            continue
        print(f"\n== {title}")
        for r in sel:
            want = "/".join(str(w) for w in r["want"]) if r["want"] else "-"
            print(f"- [{r['group']}] {r['op']}: {r['input']}" + (f"  ({r['note']})" if r["note"] else ""))
            print(f"    -> {r['status']} code {r['code']} (want {want}) {','.join(r['flags'])}: "
                  f"{short(r['message'], 300)}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"namespace": x.ns, "rows": rows}, f, indent=1)
    if not alive:
        print("\nthe server stopped answering; later cases did not run", file=sys.stderr)
    if args.cleanup and not args.destructive and alive:
        m, p = route("DropNamespace", x.ns)
        c.call(m, p, {"behavior": "cascade"})
    return 1 if bad or not alive else 0


if __name__ == "__main__":
    sys.exit(main())
