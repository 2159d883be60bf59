"""Two replicas on one root: a write through one is seen by the very next
read through the other (the metadata cache is keyed by the manifest's
version and probes for a newer one on every read)."""
import json
import urllib.error
import urllib.request

from conftest import fresh, ipc, new_root, sample, start_server


def call(url, method="POST", body=b"{}", ctype="application/json"):
    req = urllib.request.Request(url, data=body, method=method,
                                 headers={"Content-Type": ctype} if body is not None else {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_a_write_on_one_replica_is_read_at_once_on_the_other():
    root = new_root("lance-catalog-coherence-")
    a = start_server(root)
    b = start_server(root)
    A, B = a["url"], b["url"]
    try:
        for round_ in range(10):
            top = fresh(f"coh{round_}")
            # B reads first (so it holds the manifest), A writes, B reads again.
            assert call(f"{B}/v1/namespace/{top}/exists")[0] == 404
            assert call(f"{A}/v1/namespace/{top}/create")[0] == 200
            assert call(f"{B}/v1/namespace/{top}/exists")[0] == 200

            status, body = call(f"{B}/v1/namespace/{top}/table/list", "GET", None)
            assert status == 200 and json.loads(body)["tables"] == []
            # B's "no" is kept only while the manifest stays as it is.
            assert call(f"{B}/v1/table/{top}$t/exists")[0] == 404
            status, _ = call(f"{A}/v1/table/{top}$t/create", body=ipc(sample(0, 3)),
                             ctype="application/vnd.apache.arrow.stream")
            assert status == 200
            status, body = call(f"{B}/v1/namespace/{top}/table/list", "GET", None)
            assert json.loads(body)["tables"] == ["t"], body

            status, body = call(f"{B}/v1/table/{top}$t/describe")
            assert status == 200
            assert "lance-catalog.protected" not in (json.loads(body).get("properties") or {})
            assert call(f"{A}/v1/table/{top}$t/protection", body=b'{"protected": true}')[0] == 200
            status, body = call(f"{B}/v1/table/{top}$t/describe")
            assert json.loads(body)["properties"]["lance-catalog.protected"] == "true", body
            assert call(f"{A}/v1/table/{top}$t/protection", body=b'{"protected": false}')[0] == 200

            assert call(f"{B}/v1/table/{top}$t/exists")[0] == 200
            body = json.dumps({"new_table_name": "u"}).encode()
            assert call(f"{A}/v1/table/{top}$t/rename", body=body)[0] == 200
            assert call(f"{B}/v1/table/{top}$t/exists")[0] == 404
            assert call(f"{B}/v1/table/{top}$t/describe")[0] == 404
            assert call(f"{B}/v1/table/{top}$u/exists")[0] == 200
            status, body = call(f"{B}/v1/table?limit=1000", "GET", None)
            listed = json.loads(body)["tables"]
            assert f"{top}$u" in listed and f"{top}$t" not in listed, body

            assert call(f"{A}/v1/table/{top}$u/drop", body=None)[0] == 200
            assert call(f"{B}/v1/table/{top}$u/exists")[0] == 404
            status, body = call(f"{B}/v1/namespace/{top}/table/list", "GET", None)
            assert json.loads(body)["tables"] == []
            status, body = call(f"{B}/v1/table?limit=1000", "GET", None)
            assert f"{top}$u" not in json.loads(body)["tables"], body
    finally:
        for s in (a, b):
            s["proc"].terminate()
            s["proc"].wait(timeout=30)
