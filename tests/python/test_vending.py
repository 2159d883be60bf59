"""Vended credentials through the real clients, on a real S3 + STS server
that enforces session policies (SeaweedFS, scripts/sts_server.py; CI sets
LANCE_CATALOG_TEST_STS=http://127.0.0.1:PORT/BUCKET). The server runs
with --auth required and the operator's own credentials only it holds:
clients bring none, and get what their grants allow for one table.

- a reader's pylance reads through the namespace; its append fails at the
  storage layer; its credentials reach no other table;
- a writer's pylance appends through the namespace, and lancedb's
  connect_namespace reads and adds with the writer's key alone;
- with a short cap (--vend-max-seconds) a long read refreshes (a second
  hand-out is in the audit trail) and keeps reading; after the grant is
  revoked the refresh is refused and the read fails."""

import os
import time
import urllib.parse
import uuid

import lance
import lance_namespace
import lancedb
import pytest
from conftest import fresh, ipc, sample, start_server
from lance_namespace import CreateTableRequest, DescribeTableRequest
from test_auth import SECRET, call, jwt

STS_URL = os.environ.get("LANCE_CATALOG_TEST_STS", "")
pytestmark = pytest.mark.skipif(not STS_URL, reason="LANCE_CATALOG_TEST_STS is not set")
ADMIN_SECRET = "adminsecret"
ROLE = "arn:aws:iam::000000000000:role/LanceVendor"
CAP = 4


@pytest.fixture(scope="module")
def vending():
    u = urllib.parse.urlsplit(STS_URL)
    endpoint, bucket = f"{u.scheme}://{u.netloc}", u.path.strip("/")
    options = {"aws_endpoint": endpoint, "aws_access_key_id": "admin", "aws_secret_access_key": ADMIN_SECRET,
               "aws_region": "us-east-1", "allow_http": "true"}
    argv = ["--auth", "required", "--bootstrap-admin", "root", "--jwt-secret", SECRET,
            "--vend-role-arn", ROLE, "--vend-max-seconds", str(CAP)]
    for k, v in options.items():
        argv += ["--storage-option", f"{k}={v}"]
    started = start_server(f"s3://{bucket}/py-vending-{uuid.uuid4().hex[:8]}", *argv)
    url = started["url"]
    root = {"authorization": f"Bearer {jwt('root')}"}
    team = fresh("vend")
    assert call(f"{url}/v1/namespace/{team}/create", "POST", {}, root)[0] == 200
    admin = client(url, "root")
    for t in ("t1", "t2"):
        admin.create_table(CreateTableRequest(id=[team, t]), ipc(sample(0, 100)))
    for who, relation in (("rita", "reader"), ("wes", "writer")):
        status, made, _ = call(f"{url}/v1/grants", "POST",
                               {"resource": {"kind": "table", "id": [team, "t1"]}, "principal": who,
                                "relation": relation}, root)
        assert status == 200, made
    status, key, _ = call(f"{url}/v1/api-keys", "POST", {"principal": "wes"}, root)
    assert status == 200, key
    yield {"url": url, "team": team, "root": root, "endpoint": endpoint, "wes_key": key["key"]}
    started["proc"].terminate()
    started["proc"].wait(timeout=30)


def client(url, who):
    return lance_namespace.connect("rest", {"uri": url, "header.Authorization": f"Bearer {jwt(who)}"})


def handed_to(v, who):
    """How many hand-outs the audit trail records for `who`."""
    status, events, _ = call(f"{v['url']}/v1/events?limit=1000", "GET", None, v["root"])
    assert status == 200, events
    assert ADMIN_SECRET not in str(events)
    return sum(1 for e in events["events"] if e.get("vended") and e.get("principal") == who)


def test_a_reader_reads_its_table_and_nothing_else(vending):
    v, tid = vending, [vending["team"], "t1"]
    rita = client(v["url"], "rita")
    answer = rita.describe_table(DescribeTableRequest(id=tid))
    opts = answer.storage_options
    assert opts["aws_access_key_id"] != "admin" and ADMIN_SECRET not in opts.values()
    assert "aws_session_token" in opts and "expires_at_millis" in opts

    ds = lance.dataset(namespace_client=rita, table_id=tid)
    assert ds.count_rows() == 100
    with pytest.raises(OSError):
        lance.write_dataset(sample(1000, 1), namespace_client=rita, table_id=tid, mode="append")
    assert lance.dataset(namespace_client=rita, table_id=tid).count_rows() == 100

    other = client(v["url"], "root").describe_table(DescribeTableRequest(id=[v["team"], "t2"])).location
    with pytest.raises(Exception):
        lance.dataset(other, storage_options=opts).count_rows()


def test_a_writer_appends_and_lancedb_needs_no_credentials_of_its_own(vending):
    v, tid = vending, [vending["team"], "t1"]
    wes = client(v["url"], "wes")
    before = lance.dataset(namespace_client=wes, table_id=tid).count_rows()
    lance.write_dataset(sample(5000, 3), namespace_client=wes, table_id=tid, mode="append")
    assert lance.dataset(namespace_client=wes, table_id=tid).count_rows() == before + 3

    db = lancedb.connect_namespace("rest", {"uri": v["url"], "header.x-api-key": v["wes_key"]})
    table = db.open_table("t1", namespace_path=[v["team"]])
    assert table.count_rows() == before + 3
    table.add(sample(6000, 2))
    assert table.count_rows() == before + 5
    assert handed_to(v, "wes") >= 2


def test_a_long_read_refreshes_and_a_revoked_grant_ends_it(vending):
    v, tid = vending, [vending["team"], "t1"]
    rita = client(v["url"], "rita")
    ds = lance.dataset(namespace_client=rita, table_id=tid)
    first = handed_to(v, "rita")
    deadline = time.time() + CAP * 2.5
    while time.time() < deadline:
        assert ds.to_table().num_rows >= 100
        time.sleep(0.5)
    assert handed_to(v, "rita") > first, "no refresh was seen"

    status, grants, _ = call(f"{v['url']}/v1/grants?principal=rita", "GET", None, v["root"])
    assert status == 200, grants
    for g in grants["grants"]:
        assert call(f"{v['url']}/v1/grants/{g['grant_id']}", "DELETE", None, v["root"])[0] == 200
    time.sleep(CAP + 1)
    with pytest.raises(Exception):
        ds.to_table()
