"""The Python suite's shared parts: the real lance-catalog server on a free
port, and the helpers every test file uses (Arrow bodies, sample rows,
fresh names)."""
import os
import re
import subprocess
import tempfile
import threading
import uuid

import pyarrow as pa
import pytest


def _binary():
    explicit = os.environ.get("LANCE_CATALOG_BIN")
    if explicit:
        return explicit
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "target"))
    return os.path.join(target, "debug", "lance-catalog")


def start_server(root, *extra):
    """Start the real server on a free port over `root` (with `extra`
    flags); answer its url, root and process. Its output is drained so a
    chatty server never blocks."""
    proc = subprocess.Popen(
        [_binary(), "serve", "--root", root, "--listen", "127.0.0.1:0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = None
    for line in proc.stdout:
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            url = m.group(1)
            break
    if url is None:
        proc.kill()
        raise RuntimeError("lance-catalog did not start")
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    return {"url": url, "root": root, "proc": proc}


@pytest.fixture(scope="session")
def server():
    started = start_server(tempfile.mkdtemp(prefix="lance-catalog-py-"))
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
