"""Callers cannot steer the server's own requests (issue 54, item 3): a
create's `storage_options` and a namespace's `lance.storage.*` properties
that name where requests go (an endpoint, plain HTTP), where credentials
come from (a role, a token file) are refused (13, naming the option) over
REST and gRPC, before any request is made: a loopback listener standing
where a steered request would go is never reached. What a caller may set
(a region) stays settable. On a local root always; on an S3 root too when
LANCE_CATALOG_TEST_S3 is set."""

import json
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import grpc
import pytest
from conftest import ON_S3, fresh, ipc, new_root, sample, start_server
from test_auth import SECRET, call, jwt
from test_grpc import stubs  # noqa: F401  (a fixture)

ARROW = "application/vnd.apache.arrow.stream"
# What a caller may not set, each with a value that would steer a request.
STEERING = [
    ("aws_endpoint", None),  # the listener's address
    ("aws_role_arn", "arn:aws:iam::1:role/x"),
    ("aws_web_identity_token_file", "/etc/passwd"),
    ("allow_http", "true"),
]


class Listener:
    """A loopback TCP listener counting the connections it is offered:
    where a steered request would go."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.hits = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.hits += 1
            conn.close()

    def close(self):
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture()
def listener():
    it = Listener()
    yield it
    it.close()


ROOTS = ["local", pytest.param("s3", marks=pytest.mark.skipif(not ON_S3, reason="LANCE_CATALOG_TEST_S3 is not set"))]


@pytest.fixture(scope="module", params=ROOTS)
def guarded(request):
    root = tempfile.mkdtemp(prefix="lance-catalog-ssrf-") if request.param == "local" else new_root("ssrf-")
    started = start_server(root, "--auth", "required", "--bootstrap-admin", "root", "--jwt-secret", SECRET)
    url = started["url"]
    admin = {"authorization": f"Bearer {jwt('root')}"}
    team = fresh("ssrf")
    assert call(f"{url}/v1/namespace/{team}/create", "POST", {}, admin)[0] == 200
    status, made, _ = call(f"{url}/v1/grants", "POST",
                           {"resource": {"kind": "namespace", "id": [team]}, "principal": "bob", "relation": "writer"},
                           admin)
    assert status == 200, made
    yield {"url": url, "team": team, "bob": {"authorization": f"Bearer {jwt('bob')}"}}
    started["proc"].terminate()
    started["proc"].wait(timeout=30)


def post_arrow(url, body, headers):
    """A POST with an Arrow IPC body: (status, decoded JSON body)."""
    req = urllib.request.Request(url, data=body, method="POST", headers={"content-type": ARROW, **headers})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def quiet(listener):
    """The listener's count, once anything in flight would have arrived."""
    time.sleep(0.3)
    return listener.hits


def refused_naming(status, body, option):
    assert (status, body and body.get("code")) == (400, 13), f"{option}: {status} {body}"
    assert option in body["error"], body


def test_a_creates_storage_options_cannot_steer(guarded, listener):
    url, team, bob = guarded["url"], guarded["team"], guarded["bob"]
    for key, value in STEERING:
        options = json.dumps({key: value or listener.endpoint})
        path = f"/v1/table/{team}%24x/create?storage_options={urllib.parse.quote(options, safe='')}"
        status, body = post_arrow(url + path, ipc(sample(0, 3)), bob)
        refused_naming(status, body, key)
    # Nothing was made by the refused creates.
    status, body, _ = call(f"{url}/v1/table/{team}%24x/exists", "POST", {}, bob)
    assert status == 404, body
    assert quiet(listener) == 0, "the listener was reached"


def test_a_namespaces_storage_properties_cannot_steer(guarded, listener):
    url, team, bob = guarded["url"], guarded["team"], guarded["bob"]
    for key, value in STEERING:
        prop = f"lance.storage.{key}"
        status, body, _ = call(f"{url}/v1/namespace/{team}%24ep/create", "POST",
                               {"properties": {prop: value or listener.endpoint}}, bob)
        refused_naming(status, body, key)
    # A region that is no region name is refused too.
    status, body, _ = call(f"{url}/v1/namespace/{team}%24ep/create", "POST",
                           {"properties": {"lance.storage.aws_region": "x.evil.example#"}}, bob)
    refused_naming(status, body, "aws_region")
    # What a caller may set stays settable.
    status, body, _ = call(f"{url}/v1/namespace/{team}%24ok/create", "POST",
                           {"properties": {"lance.storage.aws_region": "eu-west-1"}}, bob)
    assert status == 200, body
    status, body, _ = call(f"{url}/v1/namespace/{team}%24ok/describe", "POST", {}, bob)
    assert status == 200 and body["properties"]["lance.storage.aws_region"] == "eu-west-1", body
    # A table below it is made and read with the server's own storage.
    status, body = post_arrow(f"{url}/v1/table/{team}%24ok%24t/create", ipc(sample(0, 4)), bob)
    assert status == 200, body
    status, body, _ = call(f"{url}/v1/table/{team}%24ok%24t/count_rows", "POST", {}, bob)
    assert (status, body) == (200, 4)
    assert quiet(listener) == 0, "the listener was reached"


def test_the_same_over_grpc(guarded, listener, stubs):  # noqa: F811
    pb, pb_grpc = stubs
    url, team = guarded["url"], guarded["team"]
    as_bob = [("authorization", f"Bearer {jwt('bob')}")]
    channel = grpc.insecure_channel(url.removeprefix("http://"))
    s = pb_grpc.LanceNamespaceServiceStub(channel)
    try:
        def refused(rpc, request, option):
            with pytest.raises(grpc.RpcError) as err:
                rpc(request, metadata=as_bob)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (option, err.value)
            assert dict(err.value.trailing_metadata())["lance-error-code"] == "13", option
            assert option in err.value.details(), err.value.details()

        for key, value in STEERING:
            value = value or listener.endpoint
            refused(s.CreateNamespace,
                    pb.CreateNamespaceRequest(id=[team, "gep"], properties={f"lance.storage.{key}": value}), key)
            refused(s.CreateTable,
                    pb.CreateTableRequest(id=[team, "gx"], storage_options={key: value}, data=ipc(sample(0, 3))), key)
        # What a caller may set stays settable.
        s.CreateNamespace(pb.CreateNamespaceRequest(id=[team, "gok"],
                                                    properties={"lance.storage.aws_region": "eu-west-1"}),
                          metadata=as_bob)
        made = s.CreateTable(pb.CreateTableRequest(id=[team, "gok", "t"], data=ipc(sample(0, 2))), metadata=as_bob)
        assert made.version == 1
        with pytest.raises(grpc.RpcError) as err:
            s.DescribeTable(pb.DescribeTableRequest(id=[team, "gx"]), metadata=as_bob)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        channel.close()
    assert quiet(listener) == 0, "the listener was reached"


def test_a_refusal_names_the_endpoint_beside_plain_http(guarded, listener, stubs):  # noqa: F811
    """The endpoint and plain HTTP together, as a redirect needs them: the
    refusal names the endpoint (over REST and gRPC)."""
    pb, pb_grpc = stubs
    url, team, bob = guarded["url"], guarded["team"], guarded["bob"]
    options = {"aws_endpoint": listener.endpoint, "allow_http": "true"}
    path = f"/v1/table/{team}%24x/create?storage_options={urllib.parse.quote(json.dumps(options), safe='')}"
    status, body = post_arrow(url + path, ipc(sample(0, 3)), bob)
    assert (status, body and body.get("code")) == (400, 13), f"{status} {body}"
    channel = grpc.insecure_channel(url.removeprefix("http://"))
    try:
        with pytest.raises(grpc.RpcError) as err:
            pb_grpc.LanceNamespaceServiceStub(channel).CreateTable(
                pb.CreateTableRequest(id=[team, "gx"], data=ipc(sample(0, 3)), storage_options=options),
                metadata=[("authorization", f"Bearer {jwt('bob')}")])
    finally:
        channel.close()
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value
    assert quiet(listener) == 0, "the listener was reached"
    assert "aws_endpoint" in body["error"], body
    assert "aws_endpoint" in err.value.details(), err.value.details()
