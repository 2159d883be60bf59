#!/usr/bin/env python3
"""Fails when an operation is named by its spelling outside the inventory:
a quoted operation name (`"create_table"`, `"CreateTable"`) anywhere in
`src/` but `src/api/inventory.rs` and `src/api/ops.rs`, which define them.
Code names an operation by its handle (`op::CreateTable`, its `.action`
or `.name`) and decides by its facts.

    python3 scripts/check_op_names.py
"""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
INVENTORY = os.path.join(ROOT, "src", "api", "inventory.rs")
DEFINING = {INVENTORY, os.path.join(ROOT, "src", "api", "ops.rs")}


def main():
    names = set()
    for line in open(INVENTORY):
        m = re.match(r"\s*(\w+) => (\w+)\(", line)
        if m:
            names.update(m.groups())
    found = []
    for f in sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.rs"), recursive=True)):
        if os.path.abspath(f) in {os.path.abspath(d) for d in DEFINING}:
            continue
        for n, line in enumerate(open(f), 1):
            code = line.split("//", 1)[0]
            for m in re.finditer(r'"([A-Za-z_]+)"', code):
                if m.group(1) in names:
                    found.append(f"{os.path.relpath(f, ROOT)}:{n}: {m.group(0)}")
    for f in found:
        print(f)
    print(f"check_op_names: {len(names) // 2} operations, {len(found)} named by spelling")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
