"""Two lance-catalog processes sharing one control root race on the
registries: creates of one project id, and bindings of one top-level
namespace, give exactly one 200 and 409s for the rest; concurrent updates
of one warehouse (status, protection, properties) all land."""
import json
import threading
import urllib.error
import urllib.request

from conftest import fresh, new_root, start_server, storage_options_for


def call(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def race(n, fn):
    """Run fn(i) for i in range(n) at once; answer the results in order."""
    results = [None] * n
    barrier = threading.Barrier(n)

    def run(i):
        barrier.wait()
        results[i] = fn(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_two_processes_never_lose_a_registry_race():
    root = new_root("lance-catalog-race-")
    control = new_root("lance-catalog-control-")
    wroot = new_root("lance-catalog-warehouse-")
    # Two replicas with warehouses on, sharing one control root.
    flags = ("--warehouses", "on", "--control-root", control)
    servers = [start_server(root, *flags), start_server(root, *flags)]
    try:
        urls = [s["url"] for s in servers]
        project = fresh("race")
        results = race(8, lambda i: call("POST", f"{urls[i % 2]}/v1/projects",
                                         {"project_id": project, "description": f"writer {i}"}))
        statuses = sorted(s for s, _ in results)
        assert statuses == [200] + [409] * 7, results
        assert all(b["code"] == 10004 for s, b in results if s == 409), results
        status, listed = call("GET", f"{urls[1]}/v1/projects")
        assert [p["project_id"] for p in listed["projects"]] == [project]

        body = {"warehouse_id": "w", "project_id": project, "root": wroot}
        if storage_options_for(wroot):
            body["storage_options"] = storage_options_for(wroot)
        status, _ = call("POST", f"{urls[0]}/v1/warehouses", body)
        assert status == 200

        # One top-level namespace, bound by 8 doors at once: one wins.
        results = race(8, lambda i: call("POST", f"{urls[i % 2]}/v1/warehouses/w/namespaces",
                                         {"namespace": "sales"}))
        statuses = sorted(s for s, _ in results)
        assert statuses == [200] + [409] * 7, results
        assert all(b["code"] == 2 for s, b in results if s == 409), results
        status, bound = call("GET", f"{urls[1]}/v1/warehouses/w/namespaces")
        assert bound["namespaces"] == ["sales"], bound

        # Status, protection and properties of one warehouse, changed at
        # once from both replicas: every change lands.
        def change(i):
            url = f"{urls[i % 2]}/v1/warehouses/w"
            if i == 0:
                return call("PATCH", url, {"status": "quarantined"})
            if i == 1:
                return call("POST", url + "/protection", {"protected": True})
            return call("PATCH", url, {"properties": {f"k{i}": str(i)}})
        results = race(8, change)
        assert all(s == 200 for s, _ in results), results
        status, w = call("GET", f"{urls[0]}/v1/warehouses/w")
        assert w["status"] == "quarantined", w
        assert w["protected"] is True, w
        assert w["properties"] == {f"k{i}": str(i) for i in range(2, 8)}, w
    finally:
        for s in servers:
            s["proc"].terminate()
            s["proc"].wait(timeout=30)
