"""GET /openapi.json: valid OpenAPI 3.1 (by openapi-spec-validator), built
from the inventory, and its spec part is the vendored spec's paths."""
import json
import os
import urllib.request

import pytest

SPEC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "spec",
                    "lance-namespace-0.11.1.yaml")
METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def document(server):
    with urllib.request.urlopen(server["url"] + "/openapi.json", timeout=30) as r:
        assert r.headers["content-type"] == "application/json"
        return json.loads(r.read())


def operations(doc):
    """{operationId: (METHOD, path, {query parameter names})}."""
    params = doc.get("components", {}).get("parameters", {})
    out = {}
    for path, item in doc["paths"].items():
        shared = item.get("parameters", [])
        for method, op in item.items():
            if method not in METHODS:
                continue
            names = set()
            for p in shared + op.get("parameters", []):
                if "$ref" in p:
                    p = params[p["$ref"].rsplit("/", 1)[1]]
                if p["in"] == "query":
                    names.add(p["name"])
            out[op["operationId"]] = (method.upper(), path, names)
    return out


def test_document_is_valid_openapi(document):
    from openapi_spec_validator import validate

    validate(document)
    assert document["openapi"].startswith("3.1")


def test_document_covers_every_route_served(document):
    ops = operations(document)
    tags = {op["operationId"]: op["tags"][0]
            for item in document["paths"].values()
            for m, op in item.items() if m in METHODS}
    assert sum(1 for t in tags.values() if t == "Lance Namespace") == 54
    assert sum(1 for t in tags.values() if t == "Maintenance tasks") == 9  # the OSS API's 8, and cancel
    assert tags["CreateProject"] == "Control plane" and tags["ListTrash"] == "Control plane"
    for probe in ("Healthz", "Readyz", "Metrics", "OpenApi"):
        assert probe in ops
    # The document names each body by its message, and describes it.
    body = document["paths"]["/v1/table/{id}/describe"]["post"]["requestBody"]
    ref = body["content"]["application/json"]["schema"]["$ref"]
    described = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert {"id", "version", "with_table_uri"} <= set(described["properties"])


@pytest.mark.skipif(not os.path.exists(SPEC), reason="the vendored spec is not beside the project")
def test_spec_part_equals_the_vendored_spec(document):
    import yaml

    with open(SPEC) as f:
        spec = yaml.safe_load(f)
    theirs = operations(spec)
    ours = {k: v for k, v in operations(document).items() if k in theirs}
    assert set(ours) == set(theirs), set(theirs) ^ set(ours)
    for op_id, (method, path, names) in theirs.items():
        our_method, our_path, our_names = ours[op_id]
        assert (our_method, our_path) == (method, path), op_id
        # The spec's query parameters, exactly; the drops also take the
        # catalog's own `force` / `purge` (deletion protection, trash).
        assert names <= our_names, (op_id, names - our_names)
        assert our_names - names <= {"force", "purge"}, (op_id, our_names - names)
