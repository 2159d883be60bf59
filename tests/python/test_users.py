"""Local users with a name and password through the real clients: curl -u,
pylance's lance_namespace REST client with an `Authorization: Basic` header
(`header.Authorization`), grpcio with Basic call metadata, and
pyarrow.flight's `authenticate_basic_token` whose session token then
carries DoGet and DoPut. A reader reads and cannot write; a wrong password,
an unknown user, a disabled user, a changed password and a deleted user are
refused alike and audited; another replica refuses an old password within
the users' trust bound (5 s)."""

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import grpc
import lance
import lance_namespace
import pyarrow.flight as flight
import pytest
from conftest import fresh, ipc, new_root, sample, start_server
from test_auth import SECRET, jwt
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    DescribeTableRequest,
    InsertIntoTableRequest,
)

PASSWORD = "correct horse battery"
TRUST_BOUND_S = 5


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def call(url, method="GET", body=None, headers=None):
    req = urllib.request.Request(url, method=method, headers={"content-type": "application/json", **(headers or {})},
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def curl(*args):
    """curl's status line and body (`-u` sends Basic credentials)."""
    out = subprocess.run(["curl", "-sS", "-w", "\n%{http_code}", *args], capture_output=True, text=True, check=True)
    body, _, status = out.stdout.rpartition("\n")
    return int(status), json.loads(body or "null")


@pytest.fixture(scope="module")
def users(tmp_path_factory):
    # The servers' output is kept (conftest's drain), to be searched for
    # passwords; the setting is put back when the module is done.
    logs = tmp_path_factory.mktemp("server-logs")
    before = os.environ.get("LANCE_CATALOG_TEST_SERVER_LOGS")
    os.environ["LANCE_CATALOG_TEST_SERVER_LOGS"] = str(logs)
    root = new_root("lance-catalog-users-")
    flags = ("--auth", "required", "--bootstrap-admin", "root", "--jwt-secret", SECRET,
             "--login-max-failures", "50")
    a = start_server(root, *flags)
    b = start_server(root, *flags)
    url = a["url"]
    admin = {"authorization": f"Bearer {jwt('root')}"}
    team = fresh("users")
    assert call(f"{url}/v1/namespace/{team}/create", "POST", {}, admin)[0] == 200
    ns = lance_namespace.connect("rest", {"uri": url, "header.Authorization": f"Bearer {jwt('root')}"})
    ns.create_table(CreateTableRequest(id=[team, "t"]), ipc(sample(0, 12)))
    status, _ = call(f"{url}/v1/grants", "POST", {"resource": {"kind": "namespace", "id": [team]},
                                                    "principal": "group:readers", "relation": "reader"}, admin)
    assert status == 200
    yield {"url": url, "other": b["url"], "team": team, "admin": admin, "logs": logs, "root": root}
    for proc in (a["proc"], b["proc"]):
        proc.terminate()
        proc.wait(timeout=30)
    if before is None:
        os.environ.pop("LANCE_CATALOG_TEST_SERVER_LOGS", None)
    else:
        os.environ["LANCE_CATALOG_TEST_SERVER_LOGS"] = before


def make_user(u, name, groups=("readers",)):
    status, made = call(f"{u['url']}/v1/users", "POST",
                        {"username": name, "password": PASSWORD, "groups": list(groups)}, u["admin"])
    assert status == 200, made
    assert PASSWORD not in json.dumps(made) and "argon2" not in json.dumps(made)
    return made


def grpc_stubs(tmp_path):
    import grpc_tools
    proto_dir = os.path.join(os.path.dirname(__file__), "..", "..", "proto")
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    subprocess.check_call([sys.executable, "-m", "grpc_tools.protoc", f"-I{proto_dir}", f"-I{well_known}",
                           f"--python_out={tmp_path}", f"--grpc_python_out={tmp_path}", "lance_catalog.proto"])
    sys.path.insert(0, str(tmp_path))
    import lance_catalog_pb2 as pb
    import lance_catalog_pb2_grpc as pb_grpc
    return pb, pb_grpc


def test_curl_and_pylance_sign_in_with_a_name_and_password(users):
    u, tid = users, [users["team"], "t"]
    make_user(u, "rhea")
    status, info = curl("-u", f"rhea:{PASSWORD}", f"{u['url']}/v1/users/rhea")
    assert status == 200 and info["username"] == "rhea" and info["groups"] == ["readers"]
    status, body = curl("-u", f"rhea:{PASSWORD}", "-X", "POST", "-H", "content-type: application/json",
                        "-d", "{}", f"{u['url']}/v1/table/{u['team']}$t/count_rows")
    assert (status, body) == (200, 12)

    # A session from the name and password, used, then ended (sign-out).
    status, session = curl("-u", f"rhea:{PASSWORD}", "-X", "POST", "-H", "content-type: application/json",
                           "-d", "{}", f"{u['url']}/v1/sessions")
    assert status == 200 and session["token"].startswith("lcs_"), session
    bearer = ["-H", f"authorization: Bearer {session['token']}"]
    assert curl(*bearer, f"{u['url']}/v1/users/rhea")[0] == 200
    assert curl(*bearer, "-X", "DELETE", f"{u['url']}/v1/sessions")[0] == 200
    assert curl(*bearer, f"{u['url']}/v1/users/rhea")[0] == 401

    rhea = lance_namespace.connect("rest", {"uri": u["url"], "header.Authorization": basic("rhea", PASSWORD)})
    assert rhea.describe_table(DescribeTableRequest(id=tid)).location
    assert rhea.count_table_rows(CountTableRowsRequest(id=tid)).count == 12
    assert lance.dataset(namespace_client=rhea, table_id=tid).count_rows() == 12
    with pytest.raises(Exception) as refused:
        rhea.insert_into_table(InsertIntoTableRequest(id=tid), ipc(sample(100, 1)))
    assert "may not" in str(refused.value)
    with pytest.raises(Exception):
        rhea.create_namespace(CreateNamespaceRequest(id=[u["team"], "rheas"]))
    assert lance.dataset(namespace_client=rhea, table_id=tid).count_rows() == 12


def test_grpc_metadata_and_flight_handshake(users, tmp_path):
    u, tid = users, [users["team"], "t"]
    make_user(u, "gus")
    pb, pb_grpc = grpc_stubs(tmp_path)
    channel = grpc.insecure_channel(u["url"].removeprefix("http://"))
    stub = pb_grpc.LanceNamespaceServiceStub(channel)
    as_gus = [("authorization", basic("gus", PASSWORD))]
    assert stub.CountTableRows(pb.CountTableRowsRequest(id=tid), metadata=as_gus).count == 12
    with pytest.raises(grpc.RpcError) as err:
        stub.CreateNamespace(pb.CreateNamespaceRequest(id=[u["team"], "gus"]), metadata=as_gus)
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as err:
        stub.CountTableRows(pb.CountTableRowsRequest(id=tid), metadata=[("authorization", basic("gus", "wrong"))])
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    control = pb_grpc.CatalogControlServiceStub(channel)
    assert control.GetUser(pb.GetUserRequest(username="gus"), metadata=as_gus).groups == ["readers"]
    with pytest.raises(grpc.RpcError) as err:
        control.ListUsers(pb.ListUsersRequest(), metadata=as_gus)
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    channel.close()

    client = flight.connect(u["url"].replace("http://", "grpc://"))
    with pytest.raises(flight.FlightUnauthenticatedError):
        client.authenticate_basic_token("gus", "not the password")
    header = client.authenticate_basic_token("gus", PASSWORD)
    assert header[0] == b"authorization" and header[1].startswith(b"Bearer lcs_")
    as_token = flight.FlightCallOptions(headers=[header])
    ticket = flight.Ticket(json.dumps({"id": tid}).encode())
    assert client.do_get(ticket, as_token).read_all().num_rows == 12

    descriptor = flight.FlightDescriptor.for_command(json.dumps({"op": "create", "id": [u["team"], "flown"]}))
    table = sample(0, 3)
    with pytest.raises(flight.FlightUnauthorizedError):
        writer, reader = client.do_put(descriptor, table.schema, as_token)
        writer.write_table(table)
        writer.done_writing()
        reader.read()
        writer.close()

    # The same token on REST and on another replica (one signing key).
    bearer = {"authorization": header[1].decode()}
    for url in (u["url"], u["other"]):
        status, info = call(f"{url}/v1/users/gus", "GET", None, bearer)
        assert status == 200, info

    # Deleted: the token stops here at once, and on the other replica
    # within the trust bound.
    assert call(f"{u['url']}/v1/users/gus", "DELETE", None, u["admin"])[0] == 200
    with pytest.raises(flight.FlightUnauthenticatedError):
        client.do_get(ticket, as_token).read_all()
    deadline = time.monotonic() + TRUST_BOUND_S + 1
    while call(f"{u['other']}/v1/users/gus", "GET", None, bearer)[0] != 401:
        assert time.monotonic() < deadline, "a deleted user's token still works on the other replica"
        time.sleep(0.2)


def test_every_refusal_is_alike_and_audited(users):
    u = users
    make_user(u, "wren")
    make_user(u, "dot")
    assert call(f"{u['url']}/v1/users/dot", "POST", {"disabled": True}, u["admin"])[0] == 200
    make_user(u, "cass")
    status, _ = call(f"{u['url']}/v1/users/cass/password", "POST",
                     {"password": "a brand new one", "current_password": PASSWORD}, {"authorization": basic("cass", PASSWORD)})
    assert status == 200

    answers = []
    for who, password in (("wren", "wrong password"), ("nobody-at-all", PASSWORD), ("dot", PASSWORD),
                          ("cass", PASSWORD)):
        status, body = curl("-u", f"{who}:{password}", f"{u['url']}/v1/server/info")
        assert status == 401 and body["code"] == 16, (who, body)
        answers.append(body["error"])
    assert len(set(answers)) == 1, answers

    status, events = call(f"{u['url']}/v1/events?limit=1000", "GET", None, u["admin"])
    assert status == 200
    refused = [e for e in events["events"] if e["action"] == "authenticate" and e["resource"]["kind"] == "user"]
    for who in ("wren", "nobody-at-all", "dot", "cass"):
        assert any(e["resource"]["id"] == [who] and e["outcome"] == "denied" and e["code"] == 16 for e in refused), who
    assert PASSWORD not in json.dumps(events) and "wrong password" not in json.dumps(events)


def test_a_changed_password_is_refused_at_once_here_and_soon_on_another_replica(users):
    u = users
    make_user(u, "ivo")
    old = {"authorization": basic("ivo", PASSWORD)}
    for url in (u["url"], u["other"]):
        assert call(f"{url}/v1/users/ivo", "GET", None, old)[0] == 200
    status, _ = call(f"{u['url']}/v1/users/ivo/password", "POST",
                     {"password": "ivo's new passphrase", "current_password": PASSWORD}, old)
    assert status == 200
    changed = time.monotonic()
    assert call(f"{u['url']}/v1/users/ivo", "GET", None, old)[0] == 401
    while call(f"{u['other']}/v1/users/ivo", "GET", None, old)[0] != 401:
        assert time.monotonic() - changed < TRUST_BOUND_S + 1, "the old password still works on the other replica"
        time.sleep(0.2)
    new = {"authorization": basic("ivo", "ivo's new passphrase")}
    assert call(f"{u['other']}/v1/users/ivo", "GET", None, new)[0] == 200


def test_no_password_reaches_the_logs(users):
    logged = "".join(p.read_text() for p in users["logs"].iterdir())
    assert "listening on" in logged, "no server log was kept"
    for secret in (PASSWORD, "ivo's new passphrase", "a brand new one", "wrong password"):
        assert secret not in logged


@pytest.mark.local_fs
def test_the_stored_record_holds_only_the_hash_and_its_parameters(users):
    u = users
    found = []
    for dirpath, _, files in os.walk(u["root"]):
        for name in files:
            text = open(os.path.join(dirpath, name), errors="replace").read()
            if '"password_hash"' in text:
                found.append(text)
    assert found
    for text in found:
        record = json.loads(text)
        value = record.get("value", record)
        assert value["password_hash"].startswith("$argon2id$v=19$m=19456,t=2,p=1$"), value
        assert PASSWORD not in text and "ivo's new passphrase" not in text
