"""Turns a page of docs/ into one bash script, so its examples can run.

A fenced block whose info string is `bash runnable` or `python runnable`
runs; every other block is only shown. A page's runnable blocks run in
order as one bash script (`set -euo pipefail`): bash blocks verbatim, so
their shell variables carry on, and Python blocks on the Python that runs
the tests, fed on standard input (they see exported variables only).

A page says how its server is started with one comment line:

    <!-- docs-test: serve --prefix /lance --auth required -->

(the words after `serve` are flags to `lance-catalog serve`; default
none), and may have the test write a file first, which a flag then names:

    <!-- docs-test: file admin-password = a long passphrase -->
 The test gives every script `LANCE_URI` (the server's base URL,
prefix included), `ROOT_URI` (its root as a URI) and `PYTHON`."""
import re

FENCE = re.compile(r"^(```+|~~~+)\s*(\S*)\s*(.*)$")
DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*serve\b(.*?)-->")
FILE = re.compile(r"<!--\s*docs-test:\s*file\s+(\S+)\s*=\s*(.*?)\s*-->")
PY_END = "LANCE_DOCS_PYTHON_BLOCK_END"


def blocks(text):
    """Every fenced block of `text` as (language, attributes, body, line)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        fence, lang, attrs = m.group(1), m.group(2), m.group(3).split()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        out.append((lang, attrs, "\n".join(body) + "\n", start))
        i += 1
    return out


def runnable(text):
    """The runnable blocks of a page: (language, body, line)."""
    return [(lang, body, line) for lang, attrs, body, line in blocks(text)
            if "runnable" in attrs and lang in ("bash", "sh", "python")]


def serve_flags(text):
    """The flags a page asks its server to start with."""
    m = DIRECTIVE.search(text)
    return m.group(1).split() if m else []


def files(text):
    """The files a page asks to have written before its server starts."""
    return dict(FILE.findall(text))


def script(text, page="page"):
    """The page's runnable blocks as one bash script (empty: none)."""
    parts = []
    for lang, body, line in runnable(text):
        # Said before each block, so a failure names the block it is in.
        parts.append(f"echo '>> {page}:{line}' >&2")
        if lang == "python":
            if PY_END in body:
                raise ValueError(f"{page}:{line}: a Python block names {PY_END}")
            parts.append(f'"$PYTHON" - <<\'{PY_END}\'\n{body}{PY_END}')
        else:
            parts.append(body)
    if not parts:
        return ""
    return "set -euo pipefail\n" + "\n".join(parts)
