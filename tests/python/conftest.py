"""The Python suite's shared parts: the real lance-catalog server on a free
port, and the helpers every test file uses (Arrow bodies, sample rows,
fresh names).

Against S3: with LANCE_CATALOG_TEST_S3=http://127.0.0.1:PORT/BUCKET[/PREFIX]
(an S3-compatible server, e.g. `scripts/s3_server.py PORT --bucket BUCKET`),
every root made by `new_root` is a fresh `s3://BUCKET/[PREFIX/]...` prefix,
and a server whose root (or control root) is on S3 gets the storage options
a user would give it: `--storage-option K=V` flags, or the
LANCE_CATALOG_STORAGE_OPTIONS variable when LANCE_CATALOG_TEST_S3_VIA=env.
Tests marked `local_fs` look at the local file system and are skipped there.
Without LANCE_CATALOG_TEST_S3 nothing changes."""
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pyarrow as pa
import pytest


def _binary():
    explicit = os.environ.get("LANCE_CATALOG_BIN")
    if explicit:
        return explicit
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "target"))
    return os.path.join(target, "debug", "lance-catalog")


S3_URL = os.environ.get("LANCE_CATALOG_TEST_S3", "")
ON_S3 = bool(S3_URL)
if ON_S3:
    _u = urllib.parse.urlsplit(S3_URL)
    S3_ENDPOINT = f"{_u.scheme}://{_u.netloc}"
    S3_BUCKET, _, S3_PREFIX = _u.path.strip("/").partition("/")
    assert S3_BUCKET, f"LANCE_CATALOG_TEST_S3={S3_URL!r} names no bucket"
    # What a user sets for an S3-compatible server on plain http.
    S3_OPTIONS = {
        "aws_endpoint": S3_ENDPOINT,
        # moto takes any; SeaweedFS (scripts/sts_server.py) its own.
        "aws_access_key_id": os.environ.get("LANCE_CATALOG_TEST_S3_KEY", "test"),
        "aws_secret_access_key": os.environ.get("LANCE_CATALOG_TEST_S3_SECRET", "test"),
        "aws_region": "us-east-1",
        "allow_http": "true",
    }
    # One prefix per test run, so runs against one bucket never meet.
    S3_RUN = f"{S3_PREFIX.strip('/') + '/' if S3_PREFIX.strip('/') else ''}run-{uuid.uuid4().hex[:8]}"
else:
    S3_OPTIONS = {}


def new_root(prefix):
    """A fresh, empty storage root: a new temporary directory, or on S3 a
    fresh prefix of the bucket."""
    if not ON_S3:
        return tempfile.mkdtemp(prefix=prefix)
    return f"s3://{S3_BUCKET}/{S3_RUN}/{prefix}{uuid.uuid4().hex[:8]}"


def storage_options_for(uri):
    """The storage options a client needs for `uri` ({} for a local one)."""
    return dict(S3_OPTIONS) if ON_S3 and str(uri).startswith("s3://") else {}


def serve_argv(root, *extra):
    """The command line of `lance-catalog serve` over `root` on a free
    port; on S3 (root or --control-root) with the storage options as
    flags (unless they go in the environment, see `serve_env`)."""
    argv = [_binary(), "serve", "--root", root, "--listen", "127.0.0.1:0", *extra]
    if _on_s3(root, extra) and os.environ.get("LANCE_CATALOG_TEST_S3_VIA", "flags") != "env":
        for k, v in S3_OPTIONS.items():
            argv += ["--storage-option", f"{k}={v}"]
        # The clients read table data with the credentials a describe
        # hands them. moto's STS accepts a session policy and never
        # applies it, so here that is the operator's opt-in to forwarding
        # its own; vended, scoped ones are tested on SeaweedFS
        # (test_vending.py).
        argv += ["--forward-storage-secrets"]
    return argv


def serve_env(root, *extra, env=None):
    """The server's environment: `env` (default: ours), on S3 with
    LANCE_CATALOG_STORAGE_OPTIONS when LANCE_CATALOG_TEST_S3_VIA=env.
    None when there is nothing to add (the server inherits ours)."""
    if _on_s3(root, extra) and os.environ.get("LANCE_CATALOG_TEST_S3_VIA", "flags") == "env":
        env = dict(os.environ if env is None else env)
        env["LANCE_CATALOG_STORAGE_OPTIONS"] = ",".join(f"{k}={v}" for k, v in S3_OPTIONS.items())
        env["LANCE_CATALOG_FORWARD_STORAGE_SECRETS"] = "true"
    return env


def _on_s3(root, extra):
    return ON_S3 and any(str(a).startswith("s3://") for a in (root, *extra))


def open_dataset(location, **kw):
    """lance.dataset(location), with the storage options an S3 location
    needs."""
    import lance

    options = storage_options_for(location)
    if options:
        kw["storage_options"] = {**options, **kw.get("storage_options", {})}
    return lance.dataset(location, **kw)


def list_dirs(root):
    """Every directory name below `root` (a local path or an s3:// URI)."""
    if not str(root).startswith("s3://"):
        return [d for _, dirs, _ in os.walk(root) for d in dirs]
    import pyarrow.fs as pafs

    fs = pafs.S3FileSystem(endpoint_override=S3_ENDPOINT, access_key="test", secret_key="test",
                           region="us-east-1", scheme=urllib.parse.urlsplit(S3_ENDPOINT).scheme)
    infos = fs.get_file_info(pafs.FileSelector(root.removeprefix("s3://"), recursive=True, allow_not_found=True))
    return [i.base_name for i in infos if i.type == pafs.FileType.Directory]


def data_dirs(root):
    """Every directory below `root` as a path relative to it, leaving out
    the catalog's own `_catalog/` area: the server writes its records there
    on its own schedule (maintenance rounds, jobs), so a test that asks
    whether a failed write left anything behind compares the rest."""
    if not str(root).startswith("s3://"):
        found = [os.path.relpath(os.path.join(at, d), root) for at, dirs, _ in os.walk(root) for d in dirs]
    else:
        import pyarrow.fs as pafs

        fs = pafs.S3FileSystem(endpoint_override=S3_ENDPOINT, access_key="test", secret_key="test",
                               region="us-east-1", scheme=urllib.parse.urlsplit(S3_ENDPOINT).scheme)
        base = root.removeprefix("s3://").rstrip("/")
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        found = [i.path.removeprefix(base + "/") for i in infos if i.type == pafs.FileType.Directory]
    return {d for d in found if d != "_catalog" and not d.startswith("_catalog/")}


def is_dir(root, relative):
    """Whether `relative` below `root` holds anything (a local directory,
    or an S3 prefix with objects)."""
    if not str(root).startswith("s3://"):
        return os.path.isdir(os.path.join(root, relative))
    base = root.rstrip("/").removeprefix("s3://")
    parent, _, name = f"{base}/{relative.strip('/')}".rpartition("/")
    return name in list_dirs(f"s3://{parent}")


def pytest_configure(config):
    config.addinivalue_line("markers", "local_fs: reads the local file system directly; skipped on S3")


def pytest_collection_modifyitems(config, items):
    if not ON_S3:
        return
    skip = pytest.mark.skip(reason="looks at the local file system (LANCE_CATALOG_TEST_S3 is set)")
    for item in items:
        if "local_fs" in item.keywords:
            item.add_marker(skip)


def start_server(root, *extra, env=None):
    """Start the real server on a free port over `root` (with `extra`
    flags, and `env` for its environment: default ours); answer its url,
    root and process. Its output is drained so a chatty server never
    blocks."""
    proc = subprocess.Popen(
        serve_argv(root, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=serve_env(root, *extra, env=env),
    )
    url = None
    head = []
    for line in proc.stdout:
        head.append(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            url = m.group(1)
            break
    if url is None:
        proc.kill()
        raise RuntimeError("lance-catalog did not start:\n" + "".join(head[-40:]))
    threading.Thread(target=_drain, args=(proc, head), daemon=True).start()
    return {"url": url, "root": root, "proc": proc}


def eventually(check, timeout=10.0):
    """Poll `check` until it answers truthy; answer its last value."""
    deadline = time.time() + timeout
    while True:
        got = check()
        if got or time.time() > deadline:
            return got
        time.sleep(0.1)


def _drain(proc, head):
    """Read the server's output to its end; with LANCE_CATALOG_TEST_SERVER_LOGS
    (a directory) keep it there, one file per server."""
    logs = os.environ.get("LANCE_CATALOG_TEST_SERVER_LOGS")
    if not logs:
        for _ in proc.stdout:
            pass
        return
    os.makedirs(logs, exist_ok=True)
    with open(os.path.join(logs, f"server-{proc.pid}.log"), "w") as out:
        out.write(f"# {' '.join(proc.args)}\n" + "".join(head))
        for line in proc.stdout:
            out.write(line)
            out.flush()


@pytest.fixture(scope="session")
def server():
    started = start_server(new_root("lance-catalog-py-"))
    yield started
    started["proc"].terminate()
    started["proc"].wait(timeout=30)


@pytest.fixture()
def ns(server):
    import lance_namespace

    return lance_namespace.connect("rest", {"uri": server["url"]})


def ipc(tbl):
    """A pyarrow table as Arrow IPC stream bytes (create/insert bodies)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, tbl.schema) as w:
        w.write_table(tbl)
    return sink.getvalue().to_pybytes()


def sample(start, n):
    """Rows start..start+n: an int64 id, a float and a string."""
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "x": pa.array([i * 0.5 for i in ids], pa.float64()),
        "s": pa.array([f"s{i}" for i in ids], pa.string()),
    })


def fresh(prefix="py"):
    """A name no other test uses on the shared server."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def fresh_namespace(ns, prefix="py"):
    """Create a namespace with a fresh name and answer the name."""
    from lance_namespace import CreateNamespaceRequest

    name = fresh(prefix)
    ns.create_namespace(CreateNamespaceRequest(id=[name]))
    return name


def query_ids(ns, tid):
    """The sorted ids of every row of table `tid`, through QueryTable."""
    r = ns.query_table({"id": tid, "k": 1000, "vector": {}, "columns": {"column_names": ["id"]}})
    return sorted(pa.ipc.open_file(r.data).read_all().column("id").to_pylist())


def http_json(method, url, body=None):
    """One JSON call: (status, decoded body), errors included."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")
