#!/usr/bin/env python3
"""Reads the crate's imports and fails on a circle among its files or an
import from a lower layer to a higher one.

    python3 scripts/check_layers.py [--graph]

Every path a file names (`use crate::…`, `use super::…`, and paths written
inline, such as `crate::core::is_secret(…)` or `super::checks::table_id`)
is resolved to the file that defines it. The layers, lowest first:

    api, error < fault, telemetry < records < core < auth < governance
        < identity, rest, grpc, flight < server, reports, config, config_ray, config_users, config_file,
        audit_fill

A file may import its own layer or lower ones. `lib.rs`, `main.rs` and a
module's `mod.rs` declaring its children are not edges. `--graph` prints
every edge.
"""
import os
import re
import sys
from collections import defaultdict

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

LAYERS = [
    # The contract and its one error type.
    ["api", "error"],
    ["fault", "telemetry"],
    ["records"],
    ["core"],
    ["auth"],
    ["governance"],
    ["identity", "rest", "grpc", "flight"],
    ["server", "reports", "config", "config_doc", "config_ray", "config_users", "config_file", "audit_fill"],
]
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def modules():
    """Module path (tuple) -> file, for every .rs file under src/."""
    out = {}
    for dirpath, _, files in os.walk(SRC):
        for f in files:
            if not f.endswith(".rs"):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, SRC)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["main"]):
                rel = []
            out[tuple(rel)] = full
    return out


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # String literals name no modules.
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


PATH = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+|(?:crate|super)::\{)")
USE = re.compile(r"\buse\s+((?:crate|super)[^;]*);", re.S)


def expand(tree):
    """`a::{b, c::{d}}` -> ['a::b', 'a::c::d']."""
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        return [tree]
    head, rest = tree.split("{", 1)
    body = rest[: rest.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p and p != "self":
            out.extend(head + e for e in expand(p))
        elif p == "self":
            out.append(head.rstrip(":"))
    return out


def resolve(path, here, mods):
    """The module file a path names, from module `here`."""
    segs = path.split("::")
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    else:
        base = list(here)
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
    target = tuple(base)
    best = target if target in mods else None
    for s in segs:
        target = target + (s,)
        if target in mods:
            best = target
        else:
            break
    return best


def main():
    mods = modules()
    edges = defaultdict(set)
    for here, path in mods.items():
        is_mod = path.endswith("mod.rs") or here == ()
        text = strip_comments(open(path).read())
        # A file's inline unit tests (`#[cfg(test)] mod tests { use super::*; }`,
        # last in the file by convention) are a module of their own: their
        # `super` is the file, and what they import is not the file's.
        text = re.split(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text, maxsplit=1)[0]
        names = []
        for m in USE.finditer(text):
            names.extend(expand(m.group(1)))
        for m in PATH.finditer(text):
            names.append(m.group(1).rstrip(":{"))
        for name in names:
            # `super` is the parent of the module the file is (`a/b.rs` is
            # `a::b`, `a/mod.rs` is `a`).
            target = resolve(name, here, mods)
            if target is None or target == here or target == ():
                continue
            # A module file declaring its children is not an import.
            if is_mod and target[: len(here)] == here and len(target) == len(here) + 1:
                if re.search(rf"\bmod\s+{re.escape(target[-1])}\s*;", text):
                    continue
            edges[here].add(target)

    failures = []
    for src, targets in sorted(edges.items()):
        for dst in sorted(targets):
            if "--graph" in sys.argv:
                print(f"{'::'.join(src)} -> {'::'.join(dst)}")
            ls, ld = LAYER_OF.get(src[0]) if src else None, LAYER_OF.get(dst[0])
            if src and ls is None:
                failures.append(f"{'/'.join(src)}: no layer for {src[0]!r}")
            elif ls is not None and ld is not None and ld > ls:
                failures.append(
                    f"upward: {'/'.join(src)} ({src[0]}) imports {'/'.join(dst)} ({dst[0]})"
                )

    # Circles among files: strongly connected components (Tarjan).
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(mods):
        if v not in index:
            visit(v)
    for comp in sccs:
        failures.append("circle: " + " <-> ".join(sorted("/".join(c) for c in comp)))

    for f in failures:
        print(f)
    n_edges = sum(len(t) for t in edges.values())
    print(f"check_layers: {len(mods)} files, {n_edges} imports, {len(failures)} problems")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
