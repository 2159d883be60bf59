#!/usr/bin/env python3
"""Fails on a broken link in README.md or docs/: a relative link to a file
that is not there, or to an anchor no heading of that page makes; a page
of docs/ that docs/SUMMARY.md does not list, or a listed page missing.

    python3 scripts/check_links.py

Anchors are spelled as GitHub and mdBook spell a heading's: lower case,
punctuation dropped, spaces as `-`, a repeated heading `-1`, `-2`…
Links in code blocks and spans are not links; http(s) links are not
followed (CI's network is closed)."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DOCS = os.path.join(ROOT, "docs")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```+|~~~+)")


def prose(text):
    """`text` without fenced blocks and code spans, line by line."""
    out, fence = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif line.strip().startswith(fence):
                fence = None
            out.append("")
            continue
        out.append("" if fence else re.sub(r"`[^`]*`", "", line))
    return out


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    return "".join(c for c in text if c.isalnum() or c in "-_ ").replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in prose(open(path, encoding="utf-8").read()):
        m = HEADING.match(line)
        if not m:
            continue
        s = slug(m.group(2))
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    # Explicit anchors: <a id="…"> / <a name="…">.
    for m in re.finditer(r"<a\s+(?:id|name)=\"([^\"]+)\"", open(path, encoding="utf-8").read()):
        out.add(m.group(1))
    return out


def pages():
    out = [os.path.join(ROOT, "README.md")]
    for d, _, files in os.walk(DOCS):
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".md")]
    return out


def main():
    problems, cache = [], {}
    for page in pages():
        rel = os.path.relpath(page, ROOT)
        for n, line in enumerate(prose(open(page, encoding="utf-8").read()), 1):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                    continue  # http:, mailto: …
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if not os.path.exists(full):
                    problems.append(f"{rel}:{n}: {target}: no such file")
                    continue
                if anchor and full.endswith(".md"):
                    if full not in cache:
                        cache[full] = anchors(full)
                    if anchor not in cache[full]:
                        problems.append(f"{rel}:{n}: {target}: no heading makes #{anchor}")
    summary = os.path.join(DOCS, "SUMMARY.md")
    if os.path.isdir(DOCS):
        listed = set()
        if os.path.exists(summary):
            for line in prose(open(summary, encoding="utf-8").read()):
                for m in LINK.finditer(line):
                    listed.add(os.path.normpath(os.path.join(DOCS, m.group(1).partition("#")[0])))
        else:
            problems.append("docs/SUMMARY.md: missing")
        for page in pages()[1:]:
            if page != summary and os.path.normpath(page) not in listed:
                problems.append(f"{os.path.relpath(page, ROOT)}: not listed in docs/SUMMARY.md")
    for p in problems:
        print(p)
    print(f"check_links: {len(pages())} pages, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
