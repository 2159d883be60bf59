"""About 500 client mistakes and hostile requests (scripts/probe_errors.py)
against the real server: none may answer 5xx, drop the connection, time
out, or answer an error without a problem document and a spec code."""
import os
import subprocess
import sys

PROBE = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "probe_errors.py")


def test_hostile_requests_get_spec_codes(server):
    run = subprocess.run(
        [sys.executable, PROBE, server["url"]],
        capture_output=True, text=True, timeout=600,
    )
    summary = [l for l in run.stdout.splitlines() if "requests:" in l]
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert summary and summary[-1].split()[1] == "requests:", summary
    assert " 0 5xx/no-answer/non-problem" in summary[-1], summary[-1]
