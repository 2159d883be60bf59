"""An S3-compatible server on 127.0.0.1 for tests: moto's S3, one request at a time.

    ~/.cache/lance-catalog/moto-venv/bin/python scripts/s3_server.py [PORT] [--bucket NAME]...

Run it with a Python that has `moto[s3]==5.2.5`, flask and flask-cors (not the
client venv). PORT 0 (the default) picks a free port. When the server is
ready it prints one line:

    s3_server ready on http://127.0.0.1:PORT port=PORT buckets=a,b

Why the lock: moto's PutObject with `If-None-Match: *` (and If-Match) checks
whether the key exists and *then* stores it, with nothing in between. Under
moto's own threaded server two racing conditional creates of one key can
both win (measured: 1 key in 200 under a 16-way race), which is exactly the
compare-and-swap Lance commits and the catalog's records rely on. Running
every request, body included, under one lock makes check-then-store atomic.

It exits on SIGTERM/SIGINT, and when the process that started it dies (so a
killed test run leaves no server behind). Data lives in RAM only;
`POST /moto-api/reset` clears it.
"""
import argparse
import os
import signal
import sys
import threading
import time

from werkzeug.serving import make_server
from werkzeug.test import Client

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)

# The same WSGI app `moto_server` serves (it picks the S3 backend from the
# Host header; 127.0.0.1 falls through to S3, path-style).
moto_app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()


def serialized(environ, start_response):
    """moto's app with the whole request under one lock: the request body is
    read and the response body fully produced before another request runs."""
    with lock:
        result = moto_app(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()
    return [body]


def create_bucket(name, host):
    """PUT /NAME through the app itself (moto needs no signature)."""
    resp = Client(serialized).put(f"/{name}", headers={"Host": host})
    if resp.status_code not in (200, 409):  # 409: it exists already
        sys.exit(f"s3_server: cannot create bucket {name!r}: {resp.status_code} {resp.get_data(as_text=True)[:300]}")


def exit_with_parent(parent):
    """Leave when our parent dies (we are then re-parented)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("port", nargs="?", type=int, default=0, help="0 (default): a free port")
    p.add_argument("--bucket", action="append", default=[], help="create this bucket at start (repeatable)")
    args = p.parse_args()

    threading.Thread(target=exit_with_parent, args=(os.getppid(),), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))

    # Threads accept connections (HTTP/1.1 keep-alive works); the lock runs
    # one request at a time.
    srv = make_server("127.0.0.1", args.port, serialized, threaded=True, request_handler=MotoRequestHandler)
    port = srv.server_port
    for name in args.bucket:
        create_bucket(name, f"127.0.0.1:{port}")
    print(f"s3_server ready on http://127.0.0.1:{port} port={port} buckets={','.join(args.bucket)}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
