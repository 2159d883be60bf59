"""The examples in docs/ run: every page's runnable blocks (see
docs_runner.py) run in order against a fresh server started as the page
asks, and must exit 0. A broken block fails its page."""
import glob
import os
import subprocess
import sys
import tempfile

import pytest

from conftest import ON_S3, new_root, start_server
from docs_runner import files, runnable, script, serve_flags

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs")
PAGES = sorted(p for p in glob.glob(os.path.join(DOCS, "**", "*.md"), recursive=True)
               if runnable(open(p).read()))


def run_page(text, name):
    """Run `text`'s blocks against a fresh server; answer the run."""
    workdir = tempfile.mkdtemp(prefix="lance-catalog-docs-")
    written = {}
    for fname, content in files(text).items():
        path = os.path.join(workdir, fname)
        with open(path, "w") as f:
            f.write(content + "\n")
        written[fname] = path
    flags = [written.get(f, f) for f in serve_flags(text)]
    root = new_root("lance-catalog-docs-") if ON_S3 else os.path.join(workdir, "data")
    s = start_server(root, *flags)
    try:
        prefix = flags[flags.index("--prefix") + 1] if "--prefix" in flags else ""
        env = dict(os.environ,
                   LANCE_URI=s["url"] + prefix,
                   ROOT_URI=root if ON_S3 else "file://" + os.path.realpath(root),
                   PYTHON=sys.executable,
                   PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
        return subprocess.run(["bash", "-c", script(text, name)], cwd=workdir, env=env,
                              capture_output=True, text=True, timeout=600)
    finally:
        s["proc"].terminate()
        s["proc"].wait(timeout=30)


def test_there_are_runnable_pages():
    assert PAGES, "no page of docs/ has a runnable block"


@pytest.mark.parametrize("page", PAGES, ids=[os.path.relpath(p, DOCS) for p in PAGES])
def test_page_runs(page):
    name = os.path.relpath(page, DOCS)
    run = run_page(open(page).read(), name)
    assert run.returncode == 0, f"{name}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"


def test_a_broken_block_fails_its_page():
    page = ("<!-- docs-test: serve -->\n"
            "```bash runnable\ncurl -sSf \"$LANCE_URI/v1/namespace/%24/list\" >/dev/null\n```\n"
            "Shown only:\n```bash\nfalse\n```\n"
            "```python runnable\nimport os\nassert os.environ['LANCE_URI']\n```\n")
    assert run_page(page, "ok.md").returncode == 0
    broken = page.replace("%24/list", "%24/no-such-action")
    run = run_page(broken, "broken.md")
    # It names the block that failed, and nothing after it ran.
    assert run.returncode != 0
    assert ">> broken.md:2" in run.stderr and ">> broken.md:9" not in run.stderr
    assert run_page(page.replace("assert os", "assert not os"), "py.md").returncode != 0
