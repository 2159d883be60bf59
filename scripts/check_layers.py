#!/usr/bin/env python3
"""Reads the crate's imports and fails on a circle among its files or an
import from a lower layer to a higher one.

    python3 scripts/check_layers.py [--graph | --inside]

Every path a file names (`use crate::…`, `use super::…`, and paths written
inline, such as `crate::core::is_secret(…)` or `super::checks::table_id`)
is resolved to the file that defines it. The layers, lowest first:

    api, error < fault, telemetry < records < core < auth < governance
        < transport < rest, grpc, flight < app (the server, its settings,
        the reports)

A file may import its own layer or lower ones. `lib.rs`, `main.rs` and a
module's `mod.rs` declaring its children are not edges. `--graph` prints
every edge.

Inside every folder (`src`, `src/core`, `src/core/table`, …), each folder
taken as a house of its own: `--inside` reads the same file imports and
counts, per folder, how its rooms import each other. A room is a direct
child of the folder: a file (`core/live.rs`) or a subfolder with
everything under it (`core/table/`, with `core/table.rs` if there is
one). An import from a file of room `a` to a file of room `b` of the same
folder is an edge `a -> b` of that folder (`core/table/tables.rs`
importing `core/data/rows.rs` is `table -> data` inside `src/core`); an
import of the folder's own `mod.rs` (`super::Catalog`) is not an edge
between rooms. Per folder it reports:

- circles: strongly connected components of the room graph with more
  than one room (rooms that import each other, directly or round about);
- imports in circles: the file imports whose two rooms are in the same
  circle (every one of them has to go, or turn, for the circle to open
  by moving whole rooms; the issue's "22 inside src/core" is this count);
- back up: the fewest file imports that run back up against some order
  of the rooms, lowest first (a minimum feedback arc set weighted by file
  imports: exact, by dynamic programming over subsets, for a circle of up
  to 12 rooms; above that Eades–Lin–Smyth's greedy order improved by
  moving one room at a time). Removing or turning those imports would
  layer the folder.

`--inside` prints only that: every folder with a circle, each circle's
best order and the imports that run back up, and exits 1 while any
circle stands. The default run checks the layers and files and then the
same, and fails on either.
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
    ["transport"],
    ["rest", "grpc", "flight"],
    ["app"],
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


def import_edges(mods):
    """Module -> the set of modules it imports (its own file's imports)."""
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
    return edges


def strongly_connected(nodes, succ):
    """The strongly connected components of a graph (Tarjan, iterative),
    each a sorted list, in a deterministic order."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def back_up_cost(order, weight):
    """The weight of the edges running back up an order (lowest first):
    `u -> v` with `v` above `u`."""
    place = {n: i for i, n in enumerate(order)}
    return sum(w for (u, v), w in weight.items() if place[u] < place[v])


def best_order(rooms, weight):
    """An order of one circle's rooms, lowest first, with the fewest
    imports running back up: exact up to 12 rooms, else a greedy order
    improved by moving single rooms."""
    n = len(rooms)
    if n <= 12:
        # cost[v][S]: the weight of imports from the rooms of S to v (all
        # back up when v is placed right above S).
        idx = {r: i for i, r in enumerate(rooms)}
        w = [[0] * n for _ in range(n)]
        for (u, v), c in weight.items():
            w[idx[u]][idx[v]] += c
        full = 1 << n
        cost = []
        for v in range(n):
            row = [0] * full
            for S in range(1, full):
                low = S & -S
                row[S] = row[S ^ low] + w[low.bit_length() - 1][v]
            cost.append(row)
        best = [None] * full
        best[0] = (0, ())
        for S in range(full):
            if best[S] is None:
                continue
            c0, order = best[S]
            for v in range(n):
                if S >> v & 1:
                    continue
                T = S | 1 << v
                cand = (c0 + cost[v][S], order + (v,))
                if best[T] is None or cand < best[T]:
                    best[T] = cand
        return [rooms[i] for i in best[full - 1][1]]
    # Eades–Lin–Smyth (a room importing none of the rest goes lowest, one
    # none imports goes highest, else the one importing most, net, goes
    # highest), then single moves while one lowers the count.
    left, high, low_end = set(rooms), [], []
    while left:
        out = {r: sum(c for (u, v), c in weight.items() if u == r and v in left and v != r) for r in left}
        inn = {r: sum(c for (u, v), c in weight.items() if v == r and u in left and u != r) for r in left}
        sinks = sorted(r for r in left if out[r] == 0)
        if sinks:
            low_end.extend(sinks)
            left -= set(sinks)
            continue
        sources = sorted(r for r in left if inn[r] == 0)
        if sources:
            high.extend(sources)
            left -= set(sources)
            continue
        r = max(sorted(left), key=lambda r: out[r] - inn[r])
        high.append(r)
        left.discard(r)
    order = low_end + high[::-1]
    cost = back_up_cost(order, weight)
    improved = True
    while improved:
        improved = False
        for r in list(order):
            rest = [x for x in order if x != r]
            for i in range(len(rest) + 1):
                cand = rest[:i] + [r] + rest[i:]
                c = back_up_cost(cand, weight)
                if c < cost:
                    order, cost, improved = cand, c, True
    return order


def inside(mods, edges):
    """Per folder (module path), how its rooms import each other:
    {folder: {"rooms", "circles": [(rooms, order, imports in circle,
    imports back up)]}} for every folder with rooms."""
    # Every file import, placed in the one folder where its ends part.
    pairs = defaultdict(list)
    for a, targets in edges.items():
        for b in targets:
            k = 0
            while k < min(len(a), len(b)) and a[k] == b[k]:
                k += 1
            if len(a) > k and len(b) > k:
                pairs[a[:k]].append((a[k], b[k], a, b))
    folders = {m[:i] for m in mods for i in range(len(m))}
    report = {}
    for folder in sorted(folders):
        rooms = {m[len(folder)] for m in mods if len(m) > len(folder) and m[: len(folder)] == folder}
        succ = defaultdict(set)
        for ra, rb, _, _ in pairs.get(folder, ()):
            succ[ra].add(rb)
        circles = []
        for comp in strongly_connected(rooms, succ):
            if len(comp) < 2:
                continue
            members = set(comp)
            imports = [p for p in pairs[folder] if p[0] in members and p[1] in members]
            weight = defaultdict(int)
            for ra, rb, _, _ in imports:
                weight[(ra, rb)] += 1
            order = best_order(comp, weight)
            place = {r: i for i, r in enumerate(order)}
            back = sorted(p for p in imports if place[p[0]] < place[p[1]])
            circles.append((comp, order, sorted(imports), back))
        report[folder] = {"rooms": len(rooms), "circles": circles}
    return report


def print_inside(report, detail):
    """One line per folder with a circle (and, with `detail`, each circle's
    order and its imports running back up), then the totals; the number of
    circles."""
    totals = [0, 0, 0]
    for folder, r in report.items():
        circles = r["circles"]
        if not circles:
            continue
        n_in = sum(len(c[2]) for c in circles)
        n_back = sum(len(c[3]) for c in circles)
        totals[0] += len(circles)
        totals[1] += n_in
        totals[2] += n_back
        name = "/".join(("src",) + folder)
        shown = "; ".join(" ".join(c[0]) for c in circles)
        print(
            f"inside {name}: {r['rooms']} rooms, {len(circles)} circles ({shown}), "
            f"{n_in} imports in circles, {n_back} back up"
        )
        if detail:
            for comp, order, imports, back in circles:
                print(f"  circle, lowest first: {' < '.join(order)}")
                for ra, rb, a, b in back:
                    print(f"    back up: {'/'.join(a)} ({ra}) imports {'/'.join(b)} ({rb})")
    print(
        f"check_layers --inside: {len(report)} folders, {totals[0]} circles, "
        f"{totals[1]} imports in circles, {totals[2]} back up"
    )
    return totals[0]


def main():
    mods = modules()
    edges = import_edges(mods)
    if "--inside" in sys.argv:
        circles = print_inside(inside(mods, edges), detail=True)
        sys.exit(1 if circles else 0)

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

    # Circles among files.
    for comp in strongly_connected(mods, edges):
        if len(comp) > 1:
            failures.append("circle: " + " <-> ".join("/".join(c) for c in comp))

    for f in failures:
        print(f)
    n_edges = sum(len(t) for t in edges.values())
    print(f"check_layers: {len(mods)} files, {n_edges} imports, {len(failures)} problems")
    # Inside each folder, its rooms are layered too: a circle among them
    # fails the check as a circle among files does.
    circles = print_inside(inside(mods, edges), detail=True)
    sys.exit(1 if failures or circles else 0)


if __name__ == "__main__":
    main()
