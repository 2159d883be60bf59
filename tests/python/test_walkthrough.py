"""The walkthrough of docs/walkthrough.md (scripts/walkthrough.sh: the Gravitino seed's
examples, nested locations included) runs to the end against the real
server with the /lance prefix: without authentication, and with
`--auth required` as a local user's name and password (curl -u, the
Gravitino seed's "local user" form)."""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import ON_S3, is_dir, new_root, start_server

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "walkthrough.sh")


@pytest.mark.skipif(shutil.which("jq") is None, reason="the walkthrough pipes answers through jq")
@pytest.mark.parametrize("as_user", [False, True], ids=["bearer", "local-user"])
def test_walkthrough_runs_verbatim(as_user):
    workdir = tempfile.mkdtemp(prefix="lance-catalog-walk-")
    root = new_root("lance-catalog-walk-") if ON_S3 else os.path.join(workdir, "lance-catalog-data")
    flags, user = (), {}
    if as_user:
        password_file = os.path.join(workdir, "admin-password")
        with open(password_file, "w") as f:
            f.write("walker's long password\n")
        flags = ("--auth", "required", "--bootstrap-admin", "walker",
                 "--bootstrap-admin-password-file", password_file)
        user = {"LANCE_USER": "walker", "LANCE_PASSWORD": "walker's long password"}
    s = start_server(root, "--prefix", "/lance", *flags)
    try:
        env = dict(os.environ,
                   LANCE_URI=s["url"] + "/lance",
                   ROOT_URI=root if ON_S3 else "file://" + os.path.realpath(root),
                   PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
                   **user)
        run = subprocess.run(["bash", SCRIPT], cwd=workdir, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        # The last answer lists the seed's three tables.
        for name in ("table01", "table03", "table04"):
            assert f'"{name}"' in run.stdout, run.stdout[-2000:]
        # lance/demo/articles was dropped: on S3 nothing is left of lance/demo
        # (no empty directories there), locally its empty parent stays.
        for d in (() if ON_S3 else ("lance/demo",)) + ("lance_catalog/schema/table01", "lance_catalog/schema/table03"):
            assert is_dir(root, d), d
        if ON_S3:
            assert not is_dir(root, "lance/demo/articles")
    finally:
        s["proc"].terminate()
        s["proc"].wait(timeout=30)
