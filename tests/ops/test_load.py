"""`make load` and `make fault`, short: every operation of the mix runs against two real `corpus
serve` processes, PostgreSQL is restarted or one process killed in the middle, and requests
fail only cleanly (no error besides), the service recovers, and every acknowledged upload is
there afterwards; a research job running on the killed process is then read as failed. (A run
without a fault is the same run minus the fault: these cover it.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import PROJECT_ROOT

OPERATIONS = {"search", "mcp_search_docs", "upload", "ask_extractive", "ask_model", "sign_in"}


def _load(report_file: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/load.py", "--json", str(report_file), *args],
        cwd=PROJECT_ROOT,
        env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("fault", ["restart-postgres", "kill-app"])
def test_a_fault_in_the_middle_of_a_load_fails_requests_cleanly_and_loses_nothing(
    fault: str, tmp_path: Path
) -> None:
    report_file = tmp_path / "fault.json"
    done = _load(
        report_file,
        "--clients",
        "2",
        "--seconds",
        "120",
        "--max-requests",
        "40",
        "--fault",
        fault,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(report_file.read_text())
    assert report["errors"] == 0
    assert set(report["operations"]) == OPERATIONS
    assert report["acknowledged_writes"] >= 2
    assert report["fault"]["kind"] == fault
    assert report["fault"]["recovered_after_s"] is not None
    assert report["acknowledged_missing"] == 0
    if fault == "kill-app":
        # The deep research job running on the killed process is not left "running": its
        # owner reads it failed, with the reason, from the live process.
        job = report["fault"]["research_job"]
        assert job["status"] == "failed"
        assert "stopped before it finished" in job["answer"]
