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

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
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


# Issue 54, items 4 to 6: another table's bytes through a case, names
# that are URI syntax or policy wildcards, and the server's own key id.

ARROW = "application/vnd.apache.arrow.stream"


def post_rows(url, rows, headers):
    """A create's POST with an Arrow IPC body: (status, decoded body)."""
    req = urllib.request.Request(url, data=ipc(rows), method="POST", headers={"content-type": ARROW, **headers})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def path_id(*parts):
    """A table or namespace id as a path segment: `$`-joined, URL-encoded."""
    return urllib.parse.quote("$".join(parts), safe="")


def bearer(who):
    return {"authorization": f"Bearer {jwt(who)}"}


def s3(v, opts=None):
    """A pyarrow S3 file system on the vending store, with `opts`' session
    (default: the operator's own credentials)."""
    import pyarrow.fs as pafs

    if opts is None:
        creds = {"access_key": "admin", "secret_key": ADMIN_SECRET}
    else:
        creds = {"access_key": opts["aws_access_key_id"], "secret_key": opts["aws_secret_access_key"],
                 "session_token": opts["aws_session_token"]}
    return pafs.S3FileSystem(endpoint_override=v["endpoint"], scheme="http", region="us-east-1",
                             retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=1), **creds)


def store_path(location):
    """An s3:// location (a URI, segments percent-encoded) as the store's
    bucket/key path: decoded once, as the store keeps it."""
    return urllib.parse.unquote(location.removeprefix("s3://")).rstrip("/")


def objects_of(v, location):
    """Every object key below an s3:// location (as bucket/key paths)."""
    import pyarrow.fs as pafs

    infos = s3(v).get_file_info(pafs.FileSelector(store_path(location), recursive=True))
    return [i.path for i in infos if i.type == pafs.FileType.File]


def reaches(v, opts, location, keys, dataset=True, write=True):
    """What `opts` reach of the table at `location`: a listing, each of
    `keys` read, an object written (unless not `write`), the dataset
    opened (unless not `dataset`: a refused open takes Lance's retries,
    seconds)."""
    import pyarrow.fs as pafs

    fs, got = s3(v, opts), []
    try:
        fs.get_file_info(pafs.FileSelector(store_path(location), recursive=True))
        got.append("list")
    except OSError:
        pass
    for key in keys:
        try:
            with fs.open_input_stream(key) as f:
                f.read()
            got.append(key)
        except OSError:
            pass
    try:
        if write:
            with fs.open_output_stream(store_path(location) + "/planted") as f:
                f.write(b"x")
            got.append("write")
    except OSError:
        pass
    try:
        if dataset:
            lance.dataset(location, storage_options=opts).count_rows()
            got.append("dataset")
    except Exception:
        pass
    return got


def test_another_tables_bytes_are_not_reached_through_a_case(vending):
    v, url, root = vending, vending["url"], vending["root"]
    for n in ("a", "b"):
        assert call(f"{url}/v1/namespace/{n}/create", "POST", {}, root)[0] == 200
    status, made = post_rows(f"{url}/v1/table/{path_id('b', 'vic')}/create", sample(0, 10),
                             {**root, "x-lance-table-location": "shared/victim"})
    assert status == 200, made
    victim = made["location"]
    assert victim.rstrip("/").endswith("/shared/victim"), made
    keys = objects_of(v, victim)
    assert any("_versions" in k for k in keys) and any(k.endswith(".lance") for k in keys), keys
    status, made, _ = call(f"{url}/v1/table/{path_id('b', 'cafe')}/declare", "POST",
                           {"location": "shared/caf\u00e9"}, root)
    assert status == 200, made
    status, made, _ = call(f"{url}/v1/grants", "POST",
                           {"resource": {"kind": "namespace", "id": ["a"]}, "principal": "bob", "relation": "writer"},
                           root)
    assert status == 200, made
    bob = bearer("bob")

    for i, location in enumerate(["shared/VICTIM", "SHARED/victim", "shared/victim/inner", "Shared",
                                  "shared/Victim/inner", "SHARED/CAFE\u0301"]):
        status, body, _ = call(f"{url}/v1/table/{path_id('a', f'case{i}')}/declare", "POST",
                               {"location": location}, bob)
        assert (status, (body or {}).get("code")) == (400, 13), f"{location}: {status} {body}"
        assert "overlap" in body["error"] and "b$" not in body["error"], body
    status, body = post_rows(f"{url}/v1/table/{path_id('a', 'x')}/create", sample(0, 2),
                             {**bob, "x-lance-table-location": "shared/Victim"})
    assert (status, (body or {}).get("code")) == (400, 13), body
    status, body, _ = call(f"{url}/v1/table/{path_id('a', 'x')}/exists", "POST", {}, bob)
    assert status == 404, body

    # Whatever bob can get: his own table's credentials (create and
    # describe), and a declare's at any place he may still declare.
    handed = []
    status, made = post_rows(f"{url}/v1/table/{path_id('a', 'mine')}/create", sample(0, 2), bob)
    assert status == 200, made
    handed.append(("create a$mine", made.get("storage_options")))
    status, described, _ = call(f"{url}/v1/table/{path_id('a', 'mine')}/describe", "POST", {}, bob)
    assert status == 200, described
    handed.append(("describe a$mine", described.get("storage_options")))
    for i, location in enumerate(["shared/victim2", "shared/vic", "shared/victim/", "./shared/victim",
                                  "shared//victim", "shared/./victim", "\u017fhared/victim", "shared/victim\u200b",
                                  "shared/victim ", "shared/VIC\u0301TIM"]):
        status, body, _ = call(f"{url}/v1/table/{path_id('a', f'near{i}')}/declare", "POST",
                               {"location": location}, bob)
        assert status in (200, 400), f"{location}: {status} {body}"
        if status == 200:
            handed.append((f"declare at {location!r}", body.get("storage_options")))
    vended = [(what, o) for what, o in handed if o and "aws_session_token" in o]
    assert len(vended) >= 2, handed
    # The same checks reach bob's own table: a refusal below is the policy's.
    mine = objects_of(v, described["location"])
    assert reaches(v, described["storage_options"], described["location"], mine, write=False) == [
        "list", *mine, "dataset"]
    for what, opts in vended:
        assert opts["aws_access_key_id"] != "admin", what
        assert reaches(v, opts, victim, keys) == [], f"{what} reaches b$vic"
    # The victim is intact.
    status, body, _ = call(f"{url}/v1/table/{path_id('b', 'vic')}/count_rows", "POST", {}, root)
    assert (status, body) == (200, 10)


NAMES = ["t?x", "t%2Fx", "t%x", "t{x}", "t\u00e9", "t x", "t#x", "t*x"]
# Names whose real key holds what a session policy reads as a wildcard: the
# server may refuse to vend for them (19) rather than scope by a pattern.
WILDCARDS = {"t?x", "t*x"}


def test_names_that_are_uri_syntax_vend_for_their_own_table_only(vending):
    v, url, root = vending, vending["url"], vending["root"]
    team = fresh("names")
    assert call(f"{url}/v1/namespace/{team}/create", "POST", {}, root)[0] == 200
    siblings = {}
    # A plain sibling, and siblings a wildcard or a decoding slip would name.
    for name in ("sib", "tax", "t", "t/x", "t%25x"):
        status, made = post_rows(f"{url}/v1/table/{path_id(team, name)}/create", sample(0, 7), root)
        if name == "sib":
            assert status == 200, made
        if status == 200:
            siblings[name] = (made["location"], objects_of(v, made["location"]))
    for i, name in enumerate(NAMES):
        status, made = post_rows(f"{url}/v1/table/{path_id(team, name)}/create", sample(0, 10 + i), root)
        assert status == 200, f"{name!r}: {status} {made}"
        assert "adminsecret" not in str(made) and (made.get("storage_options") or {}).get(
            "aws_access_key_id") != "admin", made
        status, made, _ = call(f"{url}/v1/grants", "POST",
                               {"resource": {"kind": "table", "id": [team, name]}, "principal": "rhea",
                                "relation": "reader"}, root)
        assert status == 200, made
    rhea = bearer("rhea")
    outcomes = {}
    for i, name in enumerate(NAMES):
        status, described, _ = call(f"{url}/v1/table/{path_id(team, name)}/describe", "POST", {}, rhea)
        if status != 200:
            assert name in WILDCARDS, f"{name!r}: {status} {described}"
            assert (described or {}).get("code") == 19 and "wildcard" in described["error"], described
            outcomes[name] = "refused"
            continue
        opts = described["storage_options"]
        assert "aws_session_token" in opts and opts["aws_access_key_id"] != "admin", described
        ds = lance.dataset(described["location"], storage_options=opts)
        assert ds.count_rows() == 10 + i, name
        assert sorted(ds.to_table(columns=["id"]).column("id").to_pylist()) == list(range(10 + i))
        own = objects_of(v, described["location"])
        assert reaches(v, opts, described["location"], own, dataset=False, write=False) == ["list", *own], name
        for sibling, (location, keys) in siblings.items():
            got = reaches(v, opts, location, keys, dataset=sibling == "sib")
            assert got == [], f"{name!r}'s credentials reach {sibling!r}: {got}"
        outcomes[name] = "read"
    assert all(outcomes.get(n) == "read" for n in NAMES if n not in WILDCARDS), outcomes


def test_the_servers_key_id_never_leaves_with_an_answer(vending):
    v, url, root = vending, vending["url"], vending["root"]

    def clean(answer, what):
        text = json.dumps(answer)
        assert ADMIN_SECRET not in text, f"{what}: {text}"
        assert '"aws_access_key_id": "admin"' not in text and '"access_key_id": "admin"' not in text, f"{what}: {text}"

    # rita's grant may be gone (the refresh test revokes it): a reader of our own.
    status, made, _ = call(f"{url}/v1/grants", "POST",
                           {"resource": {"kind": "table", "id": [v["team"], "t1"]}, "principal": "rory",
                            "relation": "reader"}, root)
    assert status == 200, made
    status, described, _ = call(f"{url}/v1/table/{path_id(v['team'], 't1')}/describe", "POST", {}, bearer("rory"))
    assert status == 200, described
    clean(described, "a reader's describe")
    opts = described["storage_options"]
    assert opts["aws_access_key_id"] != "admin" and "aws_session_token" in opts, opts
    status, handed, _ = call(f"{url}/v1/events?limit=1000", "GET", None, root)
    assert status == 200
    ids = [e.get("access_key_id") or (e.get("vended") or {}).get("access_key_id") for e in handed["events"]
           if e.get("vended") and e.get("principal") == "rory"]
    assert "admin" not in ids, ids

    # A location the store's policies would read as a pattern: refused
    # where the catalog vends (400 / 13), naming no key id.
    for i, location in enumerate(["shared/s*", "shared/s?", "shared/${aws:username}"]):
        status, declared, _ = call(f"{url}/v1/table/{path_id(v['team'], f'star{i}')}/declare", "POST",
                                   {"location": location}, root)
        assert (status, declared.get("code")) == (400, 13), f"{location}: {status} {declared}"
        clean(declared, f"declare at {location!r}")
        if status == 200:
            assert "aws_session_token" not in (declared.get("storage_options") or {}), declared
            status, described, _ = call(f"{url}/v1/table/{path_id(v['team'], f'star{i}')}/describe", "POST", {},
                                        root)
            clean(described, f"describe of the table at {location!r}")
    # A create whose name holds a wildcard commits without credentials.
    status, made = post_rows(f"{url}/v1/table/{path_id(v['team'], 'w*')}/create", sample(0, 2), root)
    assert status == 200, made
    clean(made, "create of w*")
    status, described, _ = call(f"{url}/v1/table/{path_id(v['team'], 'w*')}/describe", "POST", {}, root)
    clean(described, "describe of w*")
