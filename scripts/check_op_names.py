#!/usr/bin/env python3
"""Fails when an operation is named by its spelling outside the inventory:
a quoted operation name (`"create_table"`, `"CreateTable"`) anywhere in
`src/` but `src/api/inventory.rs` and `src/api/ops.rs`, which define them.
Code names an operation by its handle (`op::CreateTable`, its `.action`
or `.name`) and decides by its facts.

It fails on fragments too: a quoted piece of an operation's name handed to
`contains`, `starts_with`, `ends_with`, `strip_prefix` or `strip_suffix`
(`op.contains("materialized_view")`) decides by spelling as much as the
whole name does. A call counts when its literal has at least four
characters, a letter among them, and is part of some operation's name
(either spelling), and its receiver holds an operation: a variable or
field named `op`, `action`, `name`, `operation`, `kind`, `op_name` or
`action_name` (`access.action.starts_with(…)`, `op.as_str().contains(…)`).
Other receivers (an error's text, a policy document) are not read.

    python3 scripts/check_op_names.py
"""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
INVENTORY = os.path.join(ROOT, "src", "api", "inventory.rs")
DEFINING = {INVENTORY, os.path.join(ROOT, "src", "api", "ops.rs")}

# What an operation is held in.
HOLDERS = {"op", "action", "name", "operation", "kind", "op_name", "action_name"}
# Calls that leave the receiver's text as it is (looked through).
THROUGH = {"as_str", "as_ref", "to_string", "to_owned", "to_lowercase", "to_ascii_lowercase", "borrow"}
FRAGMENT = re.compile(
    r"(?P<recv>[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*(?:\(\))?)*)"
    r"\s*\.\s*(?P<call>contains|starts_with|ends_with|strip_prefix|strip_suffix)"
    r'\(\s*&?"(?P<lit>(?:\\.|[^"\\])*)"'
)


def holds_op(receiver):
    """Whether a receiver (`access.action`, `op.as_str()`) holds an operation."""
    segs = [s.strip().removesuffix("()") for s in receiver.split(".")]
    while len(segs) > 1 and segs[-1] in THROUGH:
        segs.pop()
    return segs[-1] in HOLDERS


def main():
    names = set()
    for line in open(INVENTORY):
        m = re.match(r"\s*(\w+) => (\w+)\(", line)
        if m:
            names.update(m.groups())
    found, fragments = [], []
    for f in sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.rs"), recursive=True)):
        if os.path.abspath(f) in {os.path.abspath(d) for d in DEFINING}:
            continue
        rel = os.path.relpath(f, ROOT)
        code_lines = []
        for n, line in enumerate(open(f), 1):
            code = line.split("//", 1)[0]
            code_lines.append(code.rstrip("\n"))
            for m in re.finditer(r'"([A-Za-z_]+)"', code):
                if m.group(1) in names:
                    found.append(f"{rel}:{n}: {m.group(0)}")
        # Fragments, over the whole file: a call may break across lines.
        text = "\n".join(code_lines)
        for m in FRAGMENT.finditer(text):
            lit = m.group("lit")
            if len(lit) < 4 or not re.search(r"[A-Za-z]", lit):
                continue
            if not holds_op(m.group("recv")):
                continue
            of = sorted(n for n in names if lit in n)
            if not of:
                continue
            n = text.count("\n", 0, m.start("call")) + 1
            recv = re.sub(r"\s+", "", m.group("recv"))
            shown = ", ".join(of[:3]) + (", …" if len(of) > 3 else "")
            fragments.append(
                f'{rel}:{n}: {recv}.{m.group("call")}("{lit}") (part of {shown})'
            )
    for f in found + fragments:
        print(f)
    print(
        f"check_op_names: {len(names) // 2} operations, {len(found)} named by spelling, "
        f"{len(fragments)} by a fragment"
    )
    sys.exit(1 if found or fragments else 0)


if __name__ == "__main__":
    main()
