"""Start the real lance-catalog server on a free port for the Python suite."""
import os
import re
import subprocess
import tempfile
import threading

import pytest


def _binary():
    explicit = os.environ.get("LANCE_CATALOG_BIN")
    if explicit:
        return explicit
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "target"))
    return os.path.join(target, "debug", "lance-catalog")


@pytest.fixture(scope="session")
def server():
    root = tempfile.mkdtemp(prefix="lance-catalog-py-")
    proc = subprocess.Popen(
        [_binary(), "serve", "--root", root, "--listen", "127.0.0.1:0"],
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
    # Keep reading the server's output: a full pipe would block its logging.
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    yield {"url": url, "root": root}
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture()
def ns(server):
    import lance_namespace

    return lance_namespace.connect("rest", {"uri": server["url"]})
