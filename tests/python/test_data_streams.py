"""The REST data path streams: create and insert bodies are decoded as they
arrive (chunked uploads included), a body that breaks off or does not match
its Content-MD5 commits nothing, an early refusal reaches a client that is
still sending, and a query answer is sent as the scan produces it."""
import base64
import hashlib
import http.client
import json
import urllib.parse

import pyarrow as pa
from lance_namespace import CountTableRowsRequest, ListTableVersionsRequest

from conftest import fresh, fresh_namespace, ipc, data_dirs, sample

ARROW = "application/vnd.apache.arrow.stream"


def _conn(server):
    u = urllib.parse.urlsplit(server["url"])
    return http.client.HTTPConnection(u.hostname, u.port, timeout=120)


def _post(server, path, body, headers=None, chunked=False):
    """POST `body` (bytes); chunked sends it in 64 KiB pieces without a
    Content-Length, as a streaming client does."""
    c = _conn(server)
    hdrs = {"Content-Type": ARROW, **(headers or {})}
    if chunked:
        pieces = (body[i:i + 65536] for i in range(0, len(body), 65536))
        c.request("POST", path, body=pieces, headers=hdrs, encode_chunked=True)
    else:
        c.request("POST", path, body=body, headers=hdrs)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def _code(data):
    return json.loads(data)["code"]


def _rows(n, start=0):
    return sample(start, n)


def _batched_ipc(tbl, chunk):
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, tbl.schema) as w:
        w.write_table(tbl, max_chunksize=chunk)
    return sink.getvalue().to_pybytes()


def test_chunked_create_and_insert_stream_in(server, ns):
    name = fresh_namespace(ns)
    t = fresh("t")
    body = _batched_ipc(_rows(200_000), 10_000)
    r, data = _post(server, f"/v1/table/{name}$%s/create" % t, body, chunked=True)
    assert r.status == 200, data
    assert json.loads(data)["version"] == 1
    r, data = _post(server, f"/v1/table/{name}${t}/insert", _batched_ipc(_rows(50_000, 200_000), 7_000),
                    chunked=True)
    assert r.status == 200, data
    answer = json.loads(data)
    assert answer["version"] == 2 and answer["num_inserted_rows"] == 50_000
    assert ns.count_table_rows(CountTableRowsRequest(id=[name, t])).count == 250_000


def test_a_body_that_breaks_off_commits_nothing(server, ns):
    name = fresh_namespace(ns)
    t = fresh("t")
    whole = _batched_ipc(_rows(100_000), 10_000)
    cut = whole[: len(whole) * 2 // 3]
    before = data_dirs(server["root"])
    r, data = _post(server, f"/v1/table/{name}${t}/create", cut, chunked=True)
    assert r.status == 400 and _code(data) == 13, data
    r, data = _post(server, f"/v1/table/{name}${t}/exists", b"{}", {"Content-Type": "application/json"})
    assert r.status == 404, data
    assert data_dirs(server["root"]) == before, "a failed create left a directory"

    r, data = _post(server, f"/v1/table/{name}${t}/create", ipc(_rows(10)))
    assert r.status == 200, data
    r, data = _post(server, f"/v1/table/{name}${t}/insert", cut, chunked=True)
    assert r.status == 400 and _code(data) == 13, data
    assert ns.count_table_rows(CountTableRowsRequest(id=[name, t])).count == 10
    versions = ns.list_table_versions(ListTableVersionsRequest(id=[name, t])).versions
    assert len(versions) == 1, versions


def test_content_md5_is_checked_on_a_streamed_body(server, ns):
    name = fresh_namespace(ns)
    t = fresh("t")
    body = _batched_ipc(_rows(50_000), 5_000)
    wrong = base64.b64encode(hashlib.md5(body + b"x").digest()).decode()
    before = data_dirs(server["root"])
    r, data = _post(server, f"/v1/table/{name}${t}/create", body, {"Content-MD5": wrong}, chunked=True)
    assert r.status == 400 and _code(data) == 13, data
    assert "Content-MD5" in data.decode()
    r, _ = _post(server, f"/v1/table/{name}${t}/exists", b"{}", {"Content-Type": "application/json"})
    assert r.status == 404
    assert data_dirs(server["root"]) == before
    right = base64.b64encode(hashlib.md5(body).digest()).decode()
    r, data = _post(server, f"/v1/table/{name}${t}/create", body, {"Content-MD5": right}, chunked=True)
    assert r.status == 200, data


def test_an_early_refusal_reaches_a_client_still_sending(server, ns):
    # 30 MB to a namespace that does not exist: refused before the body is
    # read, yet the client, which sends it all before reading, gets the 404.
    body = _batched_ipc(_rows(1_000_000), 50_000)
    assert len(body) > 20_000_000
    missing = fresh("nowhere")
    for chunked in (False, True):
        r, data = _post(server, f"/v1/table/{missing}$t/create", body, chunked=chunked)
        assert r.status == 404 and _code(data) == 1, data
        r, data = _post(server, f"/v1/table/{missing}$t/insert", body, chunked=chunked)
        assert r.status == 404, data


def test_a_query_answer_streams_out(server, ns):
    name = fresh_namespace(ns)
    t = fresh("t")
    n = 300_000
    r, data = _post(server, f"/v1/table/{name}${t}/create", _batched_ipc(_rows(n), 20_000))
    assert r.status == 200, data
    c = _conn(server)
    c.request("POST", f"/v1/table/{name}${t}/query", body=json.dumps({"k": n, "vector": {}}),
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    assert r.status == 200
    assert r.getheader("Content-Type") == "application/vnd.apache.arrow.file"
    # Sent as it is produced: no length known up front.
    assert r.getheader("Content-Length") is None
    assert r.getheader("Transfer-Encoding") == "chunked"
    got = pa.ipc.open_file(r.read()).read_all()
    c.close()
    assert got.num_rows == n
    assert sorted(got.column("id").to_pylist()) == list(range(n))
    # A planning error still has its status: it comes before the first byte.
    r, data = _post(server, f"/v1/table/{name}${t}/query",
                    json.dumps({"k": 5, "vector": {}, "filter": "no_such_column > 1"}).encode(),
                    {"Content-Type": "application/json"})
    assert r.status == 404 and _code(data) == 12, data
