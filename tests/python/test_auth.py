"""--auth required through the real clients: lance_namespace (inside
pylance) with an API key or a bearer token as its `header.*` settings,
grpcio with call metadata, and pyarrow.flight with call headers. A
principal without a grant is refused (403 / PERMISSION_DENIED / code 15);
no credentials is 401 with WWW-Authenticate."""

import base64
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request

import grpc
import lance_namespace
import pyarrow.flight as flight
import pytest
from conftest import fresh, ipc, new_root, open_dataset, sample, start_server
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DescribeTableRequest,
    ListTablesRequest,
)

SECRET = "python-test-secret-of-32-bytes!!"


def jwt(sub):
    """An HS256 token, signed here as an identity provider would."""
    enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
    head = enc(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = enc(json.dumps({"sub": sub, "exp": int(time.time()) + 600}).encode())
    sig = enc(hmac.new(SECRET.encode(), head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


def call(url, method="GET", body=None, headers=None):
    req = urllib.request.Request(url, method=method, headers={"content-type": "application/json", **(headers or {})},
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null"), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null"), dict(e.headers)


@pytest.fixture(scope="module")
def secured():
    started = start_server(new_root("lance-catalog-auth-"),
                           "--auth", "required", "--bootstrap-admin", "root", "--jwt-secret", SECRET)
    url = started["url"]
    root = {"authorization": f"Bearer {jwt('root')}"}
    team = fresh("team")
    status, _, _ = call(f"{url}/v1/namespace/{team}/create", "POST", {}, root)
    assert status == 200
    keys = {}
    for who in ("alice", "bob"):
        status, made, _ = call(f"{url}/v1/api-keys", "POST", {"principal": who}, root)
        assert status == 200, made
        keys[who] = made["key"]
    status, _, _ = call(f"{url}/v1/grants", "POST",
                        {"resource": {"kind": "namespace", "id": [team]}, "principal": "alice", "relation": "writer"},
                        root)
    assert status == 200
    yield {"url": url, "team": team, "keys": keys, "root": root}
    started["proc"].terminate()
    started["proc"].wait(timeout=30)


def test_rest_clients_with_keys_and_tokens(secured):
    url, team, keys = secured["url"], secured["team"], secured["keys"]
    status, body, headers = call(f"{url}/v1/namespace/{team}/describe", "POST", {})
    assert status == 401 and body["code"] == 16
    assert "www-authenticate" in {k.lower() for k in headers}

    alice = lance_namespace.connect("rest", {"uri": url, "header.x-api-key": keys["alice"]})
    tid = [team, "t"]
    alice.create_table(CreateTableRequest(id=tid), ipc(sample(0, 4)))
    assert alice.list_tables(ListTablesRequest(id=[team])).tables == ["t"]
    location = alice.describe_table(DescribeTableRequest(id=tid)).location
    assert open_dataset(location).count_rows() == 4

    # The same through a bearer token (no grant of its own: only the key's
    # principal holds one).
    carol = lance_namespace.connect("rest", {"uri": url, "header.Authorization": f"Bearer {jwt('carol')}"})
    with pytest.raises(Exception) as refused:
        carol.describe_table(DescribeTableRequest(id=tid))
    assert "may not" in str(refused.value)
    bob = lance_namespace.connect("rest", {"uri": url, "header.x-api-key": keys["bob"]})
    with pytest.raises(Exception):
        bob.create_namespace(CreateNamespaceRequest(id=[team, "bobs"]))


def test_grpc_and_flight_carry_credentials(secured, tmp_path):
    import os, subprocess, sys
    import grpc_tools
    url, team, keys = secured["url"], secured["team"], secured["keys"]
    alice = lance_namespace.connect("rest", {"uri": url, "header.x-api-key": keys["alice"]})
    tid = [team, "g"]
    alice.create_table(CreateTableRequest(id=tid), ipc(sample(0, 3)))

    proto_dir = os.path.join(os.path.dirname(__file__), "..", "..", "proto")
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    subprocess.check_call([sys.executable, "-m", "grpc_tools.protoc", f"-I{proto_dir}", f"-I{well_known}",
                           f"--python_out={tmp_path}", f"--grpc_python_out={tmp_path}", "lance_catalog.proto"])
    sys.path.insert(0, str(tmp_path))
    import lance_catalog_pb2 as pb
    import lance_catalog_pb2_grpc as pb_grpc
    channel = grpc.insecure_channel(url.removeprefix("http://"))
    stub = pb_grpc.LanceNamespaceServiceStub(channel)
    with pytest.raises(grpc.RpcError) as err:
        stub.CountTableRows(pb.CountTableRowsRequest(id=tid))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    n = stub.CountTableRows(pb.CountTableRowsRequest(id=tid), metadata=[("x-api-key", keys["alice"])])
    assert n.count == 3
    with pytest.raises(grpc.RpcError) as err:
        stub.CountTableRows(pb.CountTableRowsRequest(id=tid), metadata=[("x-api-key", keys["bob"])])
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    channel.close()

    client = flight.connect(url.replace("http://", "grpc://"))
    ticket = flight.Ticket(json.dumps({"id": tid}).encode())
    with pytest.raises(flight.FlightUnauthenticatedError):
        client.do_get(ticket).read_all()
    as_alice = flight.FlightCallOptions(headers=[(b"x-api-key", keys["alice"].encode())])
    assert client.do_get(ticket, as_alice).read_all().num_rows == 3
    as_bob = flight.FlightCallOptions(headers=[(b"x-api-key", keys["bob"].encode())])
    with pytest.raises(flight.FlightUnauthorizedError):
        client.do_get(ticket, as_bob).read_all()


def test_flight_put_needs_write(secured):
    import pyarrow as pa
    url, team, keys = secured["url"], secured["team"], secured["keys"]
    client = flight.connect(url.replace("http://", "grpc://"))
    descriptor = flight.FlightDescriptor.for_command(json.dumps({"op": "create", "id": [team, "flown"]}))
    table = sample(0, 5)

    def put(headers):
        options = flight.FlightCallOptions(headers=headers)
        writer, reader = client.do_put(descriptor, table.schema, options)
        writer.write_table(table)
        writer.done_writing()
        reader.read()
        writer.close()

    with pytest.raises(flight.FlightUnauthorizedError):
        put([(b"x-api-key", keys["bob"].encode())])
    put([(b"x-api-key", keys["alice"].encode())])
    alice = lance_namespace.connect("rest", {"uri": url, "header.x-api-key": keys["alice"]})
    assert "flown" in alice.list_tables(ListTablesRequest(id=[team])).tables
