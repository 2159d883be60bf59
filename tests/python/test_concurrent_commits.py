"""Concurrent writers through the namespace, as Lance clients commit
(managed versioning: each new version through create_table_version):
Lance's own conflict rules decide, no commit is lost or made twice, and
the row counts and version lists come out exact. Runs on local disk and,
in CI, again with every root on S3 (conditional puts)."""

import threading

import lance
import lance_namespace
from lance_namespace import (
    CreateNamespaceRequest,
    ListTableVersionsRequest,
)

from conftest import fresh, sample

WRITERS = 8
APPENDS = 8
ROWS = 3


def _client(server):
    return lance_namespace.connect("rest", {"uri": server["url"]})


def _run(threads):
    errors = []

    def guarded(fn):
        def run():
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))
        return run

    started = [threading.Thread(target=guarded(t)) for t in threads]
    for t in started:
        t.start()
    for t in started:
        t.join(timeout=300)
    assert not errors, errors


def _versions(ns, tid):
    listed = ns.list_table_versions(ListTableVersionsRequest(id=tid)).versions
    return sorted(v.version for v in listed)


def test_writers_of_their_own_tables_lose_nothing(server):
    ns = _client(server)
    top = fresh("cc")
    ns.create_namespace(CreateNamespaceRequest(id=[top]))
    tids = [[top, f"t{w}"] for w in range(WRITERS)]
    for tid in tids:
        lance.write_dataset(sample(0, ROWS), namespace_client=ns, table_id=tid)

    def writer(tid):
        def run():
            own = _client(server)
            for k in range(APPENDS):
                lance.write_dataset(sample(100 + k * ROWS, ROWS), namespace_client=own,
                                    table_id=tid, mode="append")
        return run

    _run([writer(tid) for tid in tids])
    for tid in tids:
        ds = lance.dataset(namespace_client=ns, table_id=tid)
        assert ds.count_rows() == ROWS * (1 + APPENDS)
        assert _versions(ns, tid) == list(range(1, APPENDS + 2))


def test_writers_of_one_table_each_commit_once(server):
    ns = _client(server)
    top = fresh("cc")
    ns.create_namespace(CreateNamespaceRequest(id=[top]))
    tid = [top, "shared"]
    lance.write_dataset(sample(0, ROWS), namespace_client=ns, table_id=tid)

    def writer(w):
        def run():
            own = _client(server)
            for k in range(APPENDS):
                start = 1000 * (w + 1) + k * ROWS
                # Past its retry budget pylance gives up on a commit that
                # never landed ("Too many concurrent writers", on a slow
                # store): the writer sends that append again.
                for attempt in range(5):
                    try:
                        lance.write_dataset(sample(start, ROWS), namespace_client=own,
                                            table_id=tid, mode="append")
                        break
                    except OSError as e:
                        if "Too many concurrent writers" not in str(e) or attempt == 4:
                            raise
        return run

    _run([writer(w) for w in range(WRITERS)])
    ds = lance.dataset(namespace_client=ns, table_id=tid)
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    expected = list(range(ROWS)) + [
        1000 * (w + 1) + k * ROWS + i
        for w in range(WRITERS) for k in range(APPENDS) for i in range(ROWS)
    ]
    # Every append is there exactly once: none lost, none doubled.
    assert sorted(ids) == sorted(expected)
    assert _versions(ns, tid) == list(range(1, WRITERS * APPENDS + 2))
