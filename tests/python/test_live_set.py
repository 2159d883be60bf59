"""One answer to "what bytes are live" (issue 54), end to end with real
Lance data on a local root: a multi-base table's data directory, the
directory of a deregistered table a registered shallow clone reads, and
anything behind a symbolic link are never deleted by the reconciler's
repairs, reclaim, a drop, a purge or trash expiry; a drop that would break
a clone is refused (19) naming it; a trashed clone is named by its id and
trash id. Last, random estates (versions, tags, branches, clones of
versions, tags and branches, multi-base tables, deregistered and trashed
sources, prefix-sharing locations, links out of the root) go through every
deleting call with every file aged past every age rule, and afterwards
every live table, tag and branch reads whole and nothing outside the root
changed."""
import contextlib
import hashlib
import os
import random
import shutil
import tempfile
import time
import urllib.parse
import uuid

import lance
import pyarrow as pa
import pytest

from conftest import http_json, start_server

pytestmark = pytest.mark.local_fs

HOUR = 3600
DAY = 24 * HOUR
KINDS = ["binding_to_missing_warehouse", "table_without_data", "unowned_directory",
         "trash_without_bytes", "tasks_of_missing_table", "policy_of_missing_object"]


# ---------------------------------------------------------------- helpers

class _Srv:
    def __init__(self, root, *flags):
        self.root = root
        self.started = start_server(root, *flags)
        self.url = self.started["url"]

    def call(self, method, path, body=None):
        return http_json(method, self.url + path, body)

    def ok(self, method, path, body=None):
        s, b = self.call(method, path, body)
        assert s == 200, (method, path, s, b)
        return b

    def close(self):
        self.started["proc"].terminate()
        self.started["proc"].wait(timeout=30)


@contextlib.contextmanager
def _serving(root, *flags):
    srv = _Srv(root, *flags)
    try:
        yield srv
    finally:
        srv.close()


def _q(*parts):
    """A table or namespace id as a path segment."""
    return urllib.parse.quote("$".join(parts), safe="")


def _rows(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "s": pa.array([f"row{i}" for i in ids], pa.string())})


def _ids(ds):
    return sorted(ds.to_table().column("id").to_pylist())


def _age(root, seconds):
    """Every file, link and directory under `root` (the catalog's own
    records aside) last modified `seconds` ago; links are never followed."""
    past = time.time() - seconds
    for here, dirs, files in os.walk(root, followlinks=False):
        if here == root and "_catalog" in dirs:
            dirs.remove("_catalog")
        for name in dirs + files:
            os.utime(os.path.join(here, name), (past, past), follow_symlinks=False)


def _snapshot(top, mtimes=False):
    """Every file and link under `top` (not followed): content hash, and
    with `mtimes` the modification time too."""
    out = {}
    for here, dirs, files in os.walk(top, followlinks=False):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(here, d))]:
            full = os.path.join(here, name)
            rel = os.path.relpath(full, top)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
                continue
            with open(full, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            out[rel] = (digest, os.stat(full).st_mtime_ns) if mtimes else digest
    return out


def _outside_dir(prefix):
    """A directory outside every root, with a few files, aged like the
    rest (so no age rule is what keeps them)."""
    out = tempfile.mkdtemp(prefix=prefix)
    for rel in ("index.idx", "sub/deep.bin", "f.lance"):
        os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
        with open(os.path.join(out, rel), "wb") as f:
            f.write(os.urandom(512))
    past = time.time() - 30 * DAY
    for here, dirs, files in os.walk(out):
        for name in dirs + files:
            os.utime(os.path.join(here, name), (past, past))
    return out


def _plant(root, rel, age):
    full = os.path.join(root, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(b"z" * 100)
    past = time.time() - age
    os.utime(full, (past, past))
    os.utime(os.path.dirname(full), (past, past))


def _drifts(report):
    return sorted((d["kind"], d["subject"]) for d in report["drifts"])


def _overlaps(a, b):
    a, b = a.strip("/"), b.strip("/")
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _no_control_chars(value):
    """No string anywhere in `value` holds a control character (an
    internal placement key such as "\\u0001trash:...")."""
    if isinstance(value, str):
        return not any(ord(c) < 32 for c in value) and "trash:" not in value
    if isinstance(value, dict):
        return all(_no_control_chars(k) and _no_control_chars(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_no_control_chars(v) for v in value)
    return True


def _trash(srv):
    return srv.ok("GET", "/v1/trash")["entries"]


# ---------------------------------------------------------------- 1

def test_multi_base_table_is_live():
    root = tempfile.mkdtemp(prefix="lc-live-mb-")
    mb = os.path.join(root, "ext", "mb.lance")
    bulk = os.path.join(root, "bulk")
    lance.write_dataset(_rows(0, 100), mb, mode="create",
                        initial_bases=[lance.DatasetBasePath(bulk, name="bulk")], target_bases=["bulk"])
    lance.write_dataset(_rows(100, 50), mb, mode="append", target_bases=["bulk"])
    lance.dataset(mb).delete("id < 10")
    expected = list(range(10, 150))
    assert [f for f in os.listdir(bulk) if f.endswith(".lance")], "pylance wrote no data into the base"
    assert _ids(lance.dataset(mb)) == expected
    with _serving(root) as srv:
        srv.ok("POST", "/v1/namespace/w/create", {})
        srv.ok("POST", f"/v1/table/{_q('w', 'mb')}/register", {"location": "ext/mb.lance"})
        for age in (2 * HOUR, 8 * DAY):
            _age(root, age)
            # The control: a directory nothing owns or reads is found and goes.
            _plant(root, "stray/x.bin", age)
            found = _drifts(srv.ok("GET", "/v1/reconciliation"))
            assert found == [("unowned_directory", "stray")], found
            bulk_before = _snapshot(bulk)
            mb_before = _snapshot(mb)
            done = srv.ok("POST", "/v1/reconciliation/repair", {"kinds": ["unowned_directory"]})
            said = {d["subject"]: d.get("repaired") for d in done["drifts"]}
            assert said == {"stray": "removed 1 objects, 100 bytes"}, done
            assert not os.path.exists(os.path.join(root, "stray"))
            assert _snapshot(bulk) == bulk_before
            assert _snapshot(mb) == mb_before
            # Every other repair kind leaves it too.
            srv.ok("POST", "/v1/reconciliation/repair", {"kinds": KINDS})
            assert _snapshot(bulk) == bulk_before and _snapshot(mb) == mb_before
            assert srv.ok("GET", "/v1/reconciliation")["drifts"] == []
            # Its own scan names nothing (its data is not below it at all).
            report = srv.ok("GET", f"/v1/table/{_q('w', 'mb')}/orphans")
            assert report["orphans"] == [] and report["transactions"] == [], report
            # It reads whole: by path and through the catalog.
            assert _ids(lance.dataset(mb)) == expected
            assert srv.ok("POST", f"/v1/table/{_q('w', 'mb')}/count_rows", {}) == len(expected)
            described = srv.ok("POST", f"/v1/table/{_q('w', 'mb')}/describe", {})
            assert _ids(lance.dataset(described["location"])) == expected

        # What kept the base live was the table: dropped, the base is
        # nobody's, reported, and its repair removes it.
        srv.ok("POST", f"/v1/table/{_q('w', 'mb')}/drop")
        assert not os.path.exists(mb) and os.path.isdir(bulk)
        found = _drifts(srv.ok("GET", "/v1/reconciliation"))
        assert ("unowned_directory", "bulk") in found, found
        srv.ok("POST", "/v1/reconciliation/repair", {"kinds": ["unowned_directory"]})
        assert not os.path.exists(bulk)
    shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- 2

def test_deregistered_source_read_by_clone_is_live():
    root = tempfile.mkdtemp(prefix="lc-live-clone-")
    src = os.path.join(root, "p", "src.lance")
    clone = os.path.join(root, "q", "clone.lance")
    lance.write_dataset(_rows(0, 100), src)
    ds = lance.write_dataset(_rows(100, 50), src, mode="append")
    ds.delete("id % 10 == 0")
    ds = lance.dataset(src)
    expected = _ids(ds)
    ds.shallow_clone(clone, ds.version)
    # The source moves on: the clone reads only older versions' files.
    lance.write_dataset(_rows(1000, 5), src, mode="overwrite")
    assert _ids(lance.dataset(clone)) == expected
    with _serving(root) as srv:
        srv.ok("POST", "/v1/namespace/p/create", {})
        srv.ok("POST", f"/v1/table/{_q('p', 'src')}/register", {"location": "p/src.lance"})
        srv.ok("POST", f"/v1/table/{_q('p', 'clone')}/register", {"location": "q/clone.lance"})
        src_files = _snapshot(src)

        # Dropping the source would break the clone: refused, naming it.
        s, refused = srv.call("POST", f"/v1/table/{_q('p', 'src')}/drop")
        assert s != 200 and refused["code"] == 19, (s, refused)
        assert "p$clone" in refused["detail"], refused
        assert _snapshot(src) == src_files
        srv.ok("POST", f"/v1/table/{_q('p', 'src')}/describe", {})

        # The source's own scan names the clone; nothing is an orphan.
        report = srv.ok("GET", f"/v1/table/{_q('p', 'src')}/orphans")
        assert report["clones"] == [{"id": ["p", "clone"]}], report
        assert report["orphans"] == [] and report["transactions"] == [], report

        # Deregistered, its bytes are still live: the clone reads them.
        srv.ok("POST", f"/v1/table/{_q('p', 'src')}/deregister", {})
        _age(root, 8 * DAY)
        src_files = _snapshot(src)
        clone_files = _snapshot(clone)
        found = _drifts(srv.ok("GET", "/v1/reconciliation"))
        assert not [f for f in found if _overlaps(f[1], "p/src.lance")], found
        assert found == [], found
        done = srv.ok("POST", "/v1/reconciliation/repair", {"kinds": KINDS})
        assert done["drifts"] == [], done
        assert _snapshot(src) == src_files and _snapshot(clone) == clone_files
        assert _ids(lance.dataset(clone)) == expected
        assert srv.ok("POST", f"/v1/table/{_q('p', 'clone')}/count_rows", {}) == len(expected)
        report = srv.ok("GET", f"/v1/table/{_q('p', 'clone')}/orphans")
        assert report["orphans"] == [] and report["transactions"] == [], report

        # A control: the clone deregistered too, nothing reads the source
        # any more, and it is reported (not repaired here).
        srv.ok("POST", f"/v1/table/{_q('p', 'clone')}/deregister", {})
        found = _drifts(srv.ok("GET", "/v1/reconciliation"))
        assert ("unowned_directory", "p") in found, found

        # Both registered again, in one namespace: a cascade drop deletes
        # them together (they may read each other's bytes).
        srv.ok("POST", f"/v1/table/{_q('p', 'src')}/register", {"location": "p/src.lance"})
        srv.ok("POST", f"/v1/table/{_q('p', 'clone')}/register", {"location": "q/clone.lance"})
        assert srv.ok("GET", "/v1/reconciliation")["drifts"] == []
        srv.ok("POST", "/v1/namespace/p/drop", {"behavior": "Cascade"})
        assert not os.path.exists(src) and not os.path.exists(clone)
        tables = srv.ok("GET", "/v1/table?delimiter=$")["tables"]
        assert tables == [], tables
    shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- 3

def test_symlinks_are_never_followed():
    root = tempfile.mkdtemp(prefix="lc-live-links-")
    outside = _outside_dir("lc-live-outside-")
    t = os.path.join(root, "s", "t.lance")
    lance.write_dataset(_rows(0, 50), t)
    lance.write_dataset(_rows(50, 50), t, mode="append")
    link = f"_indices/{uuid.uuid4()}"
    file_link = f"data/{uuid.uuid4().hex}.lance"
    os.makedirs(os.path.join(t, "_indices"), exist_ok=True)
    os.symlink(outside, os.path.join(t, link))
    os.symlink(os.path.join(outside, "f.lance"), os.path.join(t, file_link))
    os.symlink(outside, os.path.join(root, "zz_link"))
    os.symlink(os.path.join(outside, "index.idx"), os.path.join(root, "zz_file"))
    outside_before = _snapshot(outside, mtimes=True)
    with _serving(root) as srv:
        srv.ok("POST", "/v1/namespace/s/create", {})
        srv.ok("POST", f"/v1/table/{_q('s', 't')}/register", {"location": "s/t.lance"})
        _age(root, 8 * DAY)

        # (a) Links inside a table: listed as links, never as orphans.
        report = srv.ok("GET", f"/v1/table/{_q('s', 't')}/orphans")
        assert report.get("symlinks") == sorted([link, file_link]), report
        named = [f["path"] for k in ("orphans", "transactions", "unverifiable") for f in report[k]]
        assert not [p for p in named if _overlaps(p, link) or p == file_link], report
        asked = [f"{link}/index.idx", f"{link}/sub/deep.bin", file_link, link]
        done = srv.ok("POST", f"/v1/table/{_q('s', 't')}/reclaim", {"paths": asked})
        assert done["deleted"] == [] and done["bytes_deleted"] == 0, done
        kept = {k["path"]: k["reason"] for k in done["kept"]}
        assert sorted(kept) == sorted(asked), kept
        # What lies behind a link, and the file link, are kept as such; the
        # directory link itself (the path `symlinks` names) is checked last.
        assert {p: r for p, r in kept.items() if p != link} == \
            {p: "symbolic_link" for p in asked if p != link}, kept
        assert os.path.islink(os.path.join(t, link)) and os.path.islink(os.path.join(t, file_link))
        assert _snapshot(outside, mtimes=True) == outside_before

        # (b) Links at the root: reported as links, no repair.
        rec = srv.ok("GET", "/v1/reconciliation")
        links = {d["subject"]: d for d in rec["drifts"] if d["kind"] == "symbolic_link"}
        assert sorted(links) == ["zz_file", "zz_link"], rec
        assert all("repair" not in d for d in links.values()), rec
        assert [d for d in rec["drifts"] if d["kind"] != "symbolic_link"] == [], rec
        for kinds in (["unowned_directory"], ["symbolic_link"], KINDS + ["symbolic_link"]):
            done = srv.ok("POST", "/v1/reconciliation/repair", {"kinds": kinds})
            assert all(not d.get("repaired") or d["repaired"].startswith("left alone")
                       for d in done["drifts"]), done
            assert os.path.islink(os.path.join(root, "zz_link"))
            assert os.path.islink(os.path.join(root, "zz_file"))
            assert _snapshot(outside, mtimes=True) == outside_before
        assert _ids(lance.dataset(t)) == list(range(100))

        # (c) A drop removes the table's directory, the links in it as
        # links: nothing behind them.
        srv.ok("POST", f"/v1/table/{_q('s', 't')}/drop")
        assert not os.path.lexists(t)
        assert _snapshot(outside, mtimes=True) == outside_before
    shutil.rmtree(root, ignore_errors=True)
    assert _snapshot(outside, mtimes=True) == outside_before
    shutil.rmtree(outside, ignore_errors=True)
    # The path the scan named under `symlinks`, asked back, is kept as a
    # symbolic link (not as "missing").
    assert kept[link] == "symbolic_link", kept


def test_cleanup_never_deletes_through_a_link():
    """The cleanup task is a deleting path too: a link inside the table
    (an index directory pointing out of the root) is not followed."""
    root = tempfile.mkdtemp(prefix="lc-live-cleanup-")
    outside = _outside_dir("lc-live-cleanup-out-")
    t = os.path.join(root, "s", "t.lance")
    lance.write_dataset(_rows(0, 10), t)
    lance.write_dataset(_rows(10, 10), t, mode="append")
    link = f"_indices/{uuid.uuid4()}"
    os.makedirs(os.path.join(t, "_indices"))
    os.symlink(outside, os.path.join(t, link))
    outside_before = _snapshot(outside, mtimes=True)
    with _serving(root, "--task-poll", "0.1") as srv:
        srv.ok("POST", "/v1/namespace/s/create", {})
        srv.ok("POST", f"/v1/table/{_q('s', 't')}/register", {"location": "s/t.lance"})
        _age(root, 8 * DAY)
        task = srv.ok("POST", f"/lance/oss/v1/table/{_q('s', 't')}/cleanup", {"retain_versions": 1})["task_id"]
        deadline = time.time() + 120
        while True:
            st = srv.ok("GET", f"/lance/oss/v1/table/{_q('s', 't')}/tasks/{task}")["task_info"]
            if st["status"] in ("completed", "failed"):
                break
            assert time.time() < deadline, st
            time.sleep(0.1)
        assert os.path.islink(os.path.join(t, link))
        assert _snapshot(outside, mtimes=True) == outside_before, st
        assert _ids(lance.dataset(t)) == list(range(20))
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(outside, ignore_errors=True)


# ---------------------------------------------------------------- 4

def test_trashed_clone_is_named_by_id():
    root = tempfile.mkdtemp(prefix="lc-live-trash-")
    src = os.path.join(root, "s", "src.lance")
    cl = os.path.join(root, "s", "cl.lance")
    lance.write_dataset(_rows(0, 40), src)
    lance.write_dataset(_rows(40, 40), src, mode="append")
    lance.dataset(src).shallow_clone(cl, 1)
    with _serving(root, "--trash-grace", "1d", "--trash-sweep-interval", "0") as srv:
        srv.ok("POST", "/v1/namespace/s/create", {})
        srv.ok("POST", f"/v1/table/{_q('s', 'src')}/register", {"location": "s/src.lance"})
        srv.ok("POST", f"/v1/table/{_q('s', 'cl')}/register", {"location": "s/cl.lance"})
        srv.ok("POST", f"/v1/table/{_q('s', 'cl')}/drop")
        [entry] = [e for e in _trash(srv) if e["id"] == ["s", "cl"]]
        cl_tid = entry["trash_id"]

        report = srv.ok("GET", f"/v1/table/{_q('s', 'src')}/orphans")
        assert report["clones"] == [{"id": ["s", "cl"], "trash_id": cl_tid}], report
        assert _no_control_chars(report), report
        whole = srv.ok("GET", "/v1/namespace/s/orphans")
        assert _no_control_chars(whole), whole

        # A drop at once of the source is refused, naming the trashed clone.
        s, refused = srv.call("POST", f"/v1/table/{_q('s', 'src')}/drop?purge=true")
        assert s != 200 and refused["code"] == 19, (s, refused)
        assert cl_tid in refused["detail"] and "s$cl" in refused["detail"], refused
        assert _no_control_chars(refused["detail"]), refused

        # Into trash it goes (its bytes stay); purging it is refused while
        # the clone's entry stands, and the reconciler names neither.
        srv.ok("POST", f"/v1/table/{_q('s', 'src')}/drop")
        [entry] = [e for e in _trash(srv) if e["id"] == ["s", "src"]]
        src_tid = entry["trash_id"]
        _age(root, 8 * DAY)
        s, refused = srv.call("DELETE", f"/v1/trash/{src_tid}")
        assert s != 200 and refused["code"] == 19, (s, refused)
        assert cl_tid in refused["detail"] and _no_control_chars(refused["detail"]), refused
        assert srv.ok("GET", "/v1/reconciliation")["drifts"] == []
        srv.ok("POST", "/v1/reconciliation/repair", {"kinds": KINDS})
        assert _ids(lance.dataset(cl)) == list(range(40))
        assert _ids(lance.dataset(src)) == list(range(80))

        # The clone purged, the source's purge goes through.
        srv.ok("DELETE", f"/v1/trash/{cl_tid}")
        assert not os.path.exists(cl)
        srv.ok("DELETE", f"/v1/trash/{src_tid}")
        assert not os.path.exists(src)
        assert _trash(srv) == []
    shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- 5

# Prefix-sharing and nested locations; none overlaps another.
LOCATIONS = ["p/a", "p/ab", "p/a_b", "p/a.lance", "q/x/deep/t", "q/x/deep/t2", "q/x/deeper", "n/m", "n/mm/o"]
SEEDS = range(20)


class _Table:
    def __init__(self, name, loc):
        self.name, self.loc = name, loc
        self.ids = []           # latest version's ids
        self.tags = {}          # tag -> ids
        self.branches = {}      # branch -> ids
        self.reads = set()      # names of tables whose bytes it reads (_reads_of)
        self.bases = []         # base directories (relative) it writes to
        self.state = "registered"   # registered | trash | deregistered | gone
        self.trash_id = None
        self.planted = None     # an old file no manifest names, planted
        self.reclaimed = False  # a reclaim ran on it after the planting


def _build_estate(rng, root):
    """Write the estate with pylance; answer {name: _Table}."""
    locs = rng.sample(LOCATIONS, rng.randint(5, 7))
    n_src = rng.randint(2, 3)
    tables = {}
    for i, loc in enumerate(locs[:n_src]):
        t = _Table(f"s{i}", loc)
        path = os.path.join(root, loc)
        versions = {}
        next_id = i * 10_000
        kw = {}
        if rng.random() < 0.5:
            others = [o for o in tables.values()]
            choices = [f"bulk/b{i}", f"p/abulk{i}"] + [f"{o.loc}/extra{i}" for o in others]
            base = rng.choice(choices)
            t.bases.append(base)
            kw = {"initial_bases": [lance.DatasetBasePath(os.path.join(root, base), name="b")],
                  "target_bases": ["b"]}
        ds = lance.write_dataset(_rows(next_id, 30), path, mode="create", **kw)
        next_id += 30
        ids = list(range(i * 10_000, next_id))
        versions[ds.version] = ids
        for _ in range(rng.randint(1, 3)):
            op = rng.choice(["append", "append", "delete", "overwrite"])
            target = {"target_bases": ["b"]} if kw and rng.random() < 0.7 else {}
            if op == "append":
                ds = lance.write_dataset(_rows(next_id, 20), path, mode="append", **target)
                ids = ids + list(range(next_id, next_id + 20))
                next_id += 20
            elif op == "overwrite":
                ds = lance.write_dataset(_rows(next_id, 25), path, mode="overwrite", **target)
                ids = list(range(next_id, next_id + 25))
                next_id += 25
            else:
                ds = lance.dataset(path)
                ds.delete("id % 3 == 0")
                ds = lance.dataset(path)
                ids = [x for x in ids if x % 3 != 0]
            versions[ds.version] = ids
        ds = lance.dataset(path)
        for j, v in enumerate(rng.sample(sorted(versions), rng.randint(0, min(2, len(versions))))):
            ds.tags.create(f"t{j}", v)
            t.tags[f"t{j}"] = versions[v]
        if rng.random() < 0.5:
            v = rng.choice(sorted(versions))
            branch = ds.create_branch("exp", v)
            lance.write_dataset(_rows(next_id, 7), branch, mode="append")
            t.branches["exp"] = versions[v] + list(range(next_id, next_id + 7))
            next_id += 7
        t.ids = versions[max(versions)]
        t.versions = versions
        tables[t.name] = t
    sources = list(tables.values())
    for k, loc in enumerate(locs[n_src:]):
        s = rng.choice(sources)
        c = _Table(f"c{k}", loc)
        c.bases = list(s.bases)
        ref_kind = rng.choice(["version", "version", "tag", "branch"])
        src_ds = lance.dataset(os.path.join(root, s.loc))
        if ref_kind == "tag" and s.tags:
            ref = rng.choice(sorted(s.tags))
            c.ids = s.tags[ref]
        elif ref_kind == "branch" and s.branches:
            ref = ("exp", None)
            c.ids = s.branches["exp"]
        else:
            ref = rng.choice(sorted(s.versions))
            c.ids = s.versions[ref]
        src_ds.shallow_clone(os.path.join(root, loc), ref)
        if rng.random() < 0.4:
            start = 900_000 + k * 100
            lance.write_dataset(_rows(start, 5), os.path.join(root, loc), mode="append")
            c.ids = c.ids + list(range(start, start + 5))
        tables[c.name] = c
    for t in tables.values():
        t.reads = _reads_of(root, t, tables)
    return tables


def _reads_of(root, t, tables):
    """The other tables whose locations hold files some retained version
    of `t` (every version of its main line, its branch's head) reads: by
    the base of each data and deletion file."""
    path = os.path.join(root, t.loc)
    ds = lance.dataset(path)
    heads = [lance.dataset(path, version=v["version"]) for v in ds.versions()]
    heads += [ds.checkout_version((b, None)) for b in t.branches]
    used = set()
    for head in heads:
        bases = {i: b.path for i, b in head.base_paths().items()}
        for frag in head.get_fragments():
            md = frag.metadata
            files = list(md.files) + ([md.deletion_file] if md.deletion_file else [])
            used.update(bases[f.base_id] for f in files if f.base_id is not None)
    return {o.name for o in tables.values() if o is not t
            and any(_overlaps(os.path.relpath(u, root), o.loc) for u in used)}


def _readers(tables, t):
    """The live tables (registered or in trash) that read `t`'s bytes."""
    return sorted(u.name for u in tables.values()
                  if u is not t and u.state in ("registered", "trash") and t.name in u.reads)


def _live_dirs(tables):
    """What no repair may remove: every live table's location and bases,
    and the location of every table a live table reads."""
    out = set()
    for t in tables.values():
        if t.state in ("registered", "trash"):
            out.add(t.loc)
            out.update(t.bases)
            out.update(tables[r].loc for r in t.reads)
    return out


def _check_refusal(tables, t, s, body, what):
    readers = _readers(tables, t)
    if readers:
        assert s != 200 and body["code"] == 19, (what, t.name, readers, s, body)
        assert any(f"e${r}" in body["detail"] for r in readers), (what, body)
        assert _no_control_chars(body["detail"]), body
        return False
    assert s == 200, (what, t.name, "nothing reads it", s, body)
    return True


def _run_estate(seed):
    rng = random.Random(seed)
    root = tempfile.mkdtemp(prefix=f"lc-live-prop{seed}-")
    outside = _outside_dir(f"lc-live-prop{seed}-out-")
    tables = _build_estate(rng, root)
    # Links out of the root: at the root, in a namespace-like directory,
    # inside a table (a directory and a file).
    os.symlink(outside, os.path.join(root, "zz_out"))
    os.makedirs(os.path.join(root, "p"), exist_ok=True)
    os.symlink(os.path.join(outside, "f.lance"), os.path.join(root, "p", "a_link"))
    inside = rng.choice(sorted(tables.values(), key=lambda x: x.name))
    os.makedirs(os.path.join(root, inside.loc, "_indices"), exist_ok=True)
    os.symlink(outside, os.path.join(root, inside.loc, "_indices", str(uuid.uuid4())))
    os.symlink(os.path.join(outside, "index.idx"), os.path.join(root, inside.loc, "data_link.lance"))
    outside_before = _snapshot(outside, mtimes=True)

    expiry = rng.random() < 0.4
    flags = ["--trash-sweep-interval", "0", "--task-poll", "0.1"]
    flags += ["--trash-grace", "2s", "--trash-purge-expired"] if expiry else ["--trash-grace", "1d"]
    log = []
    with _serving(root, *flags) as srv:
        srv.ok("POST", "/v1/namespace/e/create", {})
        for t in sorted(tables.values(), key=lambda x: x.name):
            srv.ok("POST", f"/v1/table/{_q('e', t.name)}/register", {"location": t.loc})
        _age(root, 8 * DAY)
        # Untouched, no table has an orphan: what other tables wrote into
        # it (a multi-base table's base) is theirs.
        for t in tables.values():
            report = srv.ok("GET", f"/v1/table/{_q('e', t.name)}/orphans")
            assert report["orphans"] == [] and report["transactions"] == [], (seed, t.name, report)
        found = srv.ok("GET", "/v1/reconciliation")
        assert [d for d in found["drifts"] if d["kind"] != "symbolic_link"] == [], (seed, found)
        # Real leftovers beside the live bytes: an old data file no
        # manifest names in some tables, a stray directory at the root and
        # others next to tables.
        for t in sorted(tables.values(), key=lambda x: x.name):
            if rng.random() < 0.5:
                t.planted = f"{t.loc}/data/{uuid.uuid4().hex}.lance"
                _plant(root, t.planted, 8 * DAY)
        for rel in ("zz_stray/x.bin", "p/a_stray/y.bin", "q/x/deep/t_stray/z.bin"):
            _plant(root, rel, 8 * DAY)

        ops = []
        names = sorted(tables)
        # Sources most: they are what clones and multi-base tables read.
        sources = [n for n in names if n.startswith("s")]
        for _ in range(rng.randint(8, 14)):
            ops.append(rng.choice([
                ("deregister", rng.choice(names)), ("drop", rng.choice(names)),
                ("drop", rng.choice(sources)), ("drop_now", rng.choice(sources)), ("purge", None),
                ("drop_now", rng.choice(names)), ("drop_now", rng.choice(names)),
                ("purge", None), ("reclaim", rng.choice(names)), ("reclaim", rng.choice(names)),
                ("repair", rng.choice(KINDS)), ("repair", "unowned_directory"),
                ("cleanup", rng.choice(names)), ("sweep", None),
            ]))
        ops.append(("repair", "unowned_directory"))
        ops.append(("sweep", None))
        for op, name in ops:
            # Nothing outside the root changed, op by op.
            assert _snapshot(outside, mtimes=True) == outside_before, (seed, log)
            t = tables.get(name) if name else None
            log.append([op, name])
            tid = _q("e", name) if name else None
            if op == "deregister" and t.state == "registered":
                srv.ok("POST", f"/v1/table/{tid}/deregister", {})
                t.state = "deregistered"
                log[-1].append("done")
            elif op == "drop" and t.state == "registered":
                srv.ok("POST", f"/v1/table/{tid}/drop")
                [entry] = [e for e in _trash(srv) if e["id"] == ["e", name] and e["trash_id"] not in
                           {u.trash_id for u in tables.values()}]
                t.state, t.trash_id = "trash", entry["trash_id"]
                log[-1].append("in trash")
            elif op == "drop_now" and t.state == "registered":
                s, body = srv.call("POST", f"/v1/table/{tid}/drop?purge=true")
                if _check_refusal(tables, t, s, body, "drop"):
                    t.state = "gone"
                    assert not os.path.lexists(os.path.join(root, t.loc)), (seed, t.name)
                log[-1].append(t.state)
            elif op == "purge":
                trashed = [u for u in tables.values() if u.state == "trash"]
                if trashed:
                    u = rng.choice(sorted(trashed, key=lambda x: x.name))
                    s, body = srv.call("DELETE", f"/v1/trash/{u.trash_id}")
                    if _check_refusal(tables, u, s, body, "purge"):
                        u.state = "gone"
                        assert not os.path.lexists(os.path.join(root, u.loc)), (seed, u.name)
                    log[-1] += [u.name, u.state]
            elif op == "reclaim" and t.state == "registered":
                report = srv.ok("GET", f"/v1/table/{tid}/orphans")
                paths = [f["path"] for k in ("orphans", "transactions", "unverifiable") for f in report[k]]
                paths += report.get("symlinks", [])
                if paths:
                    done = srv.ok("POST", f"/v1/table/{tid}/reclaim", {"paths": paths})
                    for f in done["deleted"]:
                        assert not any(_overlaps(f["path"], l) for l in report.get("symlinks", [])), done
                    log[-1].append(len(done["deleted"]))
                t.reclaimed = True
            elif op == "repair":
                before = _live_snapshot(root, tables)
                done = srv.ok("POST", "/v1/reconciliation/repair", {"kinds": [name]})
                for d in done["drifts"]:
                    if d["kind"] == "unowned_directory":
                        live = [l for l in _live_dirs(tables) if _overlaps(d["subject"], l)]
                        assert not live, (seed, "a live directory reported unowned", d, live)
                    if d["kind"] == "symbolic_link":
                        assert "repair" not in d and "repaired" not in d, d
                assert _live_snapshot(root, tables) == before, (seed, name, done)
                log[-1].append([d["subject"] for d in done["drifts"] if d.get("repaired", "").startswith("removed")])
            elif op == "cleanup" and t.state == "registered":
                task = srv.ok("POST", f"/lance/oss/v1/table/{tid}/cleanup", {"retain_versions": 1})["task_id"]
                deadline = time.time() + 120
                while True:
                    st = srv.ok("GET", f"/lance/oss/v1/table/{tid}/tasks/{task}")["task_info"]
                    if st["status"] in ("completed", "failed"):
                        break
                    assert time.time() < deadline, st
                    time.sleep(0.1)
                assert st["status"] == "completed", (seed, t.name, st)
                _age(root, 8 * DAY)
                log[-1].append(st["result"].get("old_versions_removed"))
            elif op == "sweep" and expiry:
                if any(u.state == "trash" for u in tables.values()):
                    time.sleep(2.2)
                for _ in range(4):
                    swept = srv.ok("POST", "/v1/trash/sweep", {})
                    purged = {e["trash_id"] for e in swept["purged"]}
                    for u in tables.values():
                        if u.state == "trash" and u.trash_id in purged:
                            # Entries are purged one by one: a reader
                            # purged in the same sweep may go first.
                            readers = _readers(tables, u)
                            assert all(tables[r].trash_id in purged for r in readers), (seed, u.name, readers, swept)
                    for u in tables.values():
                        if u.state == "trash" and u.trash_id in purged:
                            u.state = "gone"
                            assert not os.path.lexists(os.path.join(root, u.loc)), (seed, u.name)
                    if not purged:
                        break
                for u in tables.values():
                    if u.state == "trash":
                        assert _readers(tables, u), (seed, "an expired entry nothing reads was kept", u.name)
                log[-1].append(sorted(u.name for u in tables.values() if u.state == "gone"))
            elif op == "sweep":
                swept = srv.ok("POST", "/v1/trash/sweep", {})
                assert swept["purged"] == [] and swept["expired"] == [], swept

        # Afterwards: what the server holds is what the model says.
        registered = sorted(srv.ok("GET", "/v1/table?delimiter=$")["tables"])
        assert registered == sorted(f"e${t.name}" for t in tables.values() if t.state == "registered"), (seed, log)
        in_trash = sorted(e["trash_id"] for e in _trash(srv))
        assert in_trash == sorted(t.trash_id for t in tables.values() if t.state == "trash"), (seed, log)
        for t in tables.values():
            if t.state == "registered":
                assert srv.ok("POST", f"/v1/table/{_q('e', t.name)}/count_rows", {}) == len(t.ids), (seed, t.name)
    # Every live table, tag and branch reads whole (the server stopped:
    # nothing runs in between).
    for t in tables.values():
        if t.state not in ("registered", "trash"):
            continue
        ds = lance.dataset(os.path.join(root, t.loc))
        assert _ids(ds) == sorted(t.ids), (seed, t.name, log)
        for tag, ids in t.tags.items():
            assert _ids(ds.checkout_version(tag)) == sorted(ids), (seed, t.name, tag, log)
        for branch, ids in t.branches.items():
            assert _ids(ds.checkout_version((branch, None))) == sorted(ids), (seed, t.name, branch, log)
    assert _snapshot(outside, mtimes=True) == outside_before, (seed, log)
    # The leftovers went where asked: a reclaimed table's planted file, the
    # stray directory at the root.
    for t in tables.values():
        if t.planted and t.reclaimed and t.state in ("registered", "trash"):
            assert not os.path.exists(os.path.join(root, t.planted)), (seed, t.name, log)
    assert not os.path.exists(os.path.join(root, "zz_stray")), (seed, log)
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(outside, ignore_errors=True)
    return log


def _live_snapshot(root, tables):
    return {d: _snapshot(os.path.join(root, d)) for d in sorted(_live_dirs(tables))}


@pytest.mark.parametrize("seed", SEEDS)
def test_live_set_property(seed):
    _run_estate(seed)
