"""`make load`'s script, short: every operation of the mix runs against two real `corpus serve`
processes, with no error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import PROJECT_ROOT


def test_a_short_load_runs_every_operation_without_an_error(tmp_path: Path) -> None:
    report_file = tmp_path / "load.json"
    done = subprocess.run(
        [
            sys.executable,
            "scripts/load.py",
            "--clients",
            "2",
            "--seconds",
            "120",
            "--max-requests",
            "16",
            "--json",
            str(report_file),
        ],
        cwd=PROJECT_ROOT,
        env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(report_file.read_text())
    assert report["errors"] == 0
    assert report["requests"] == 16
    assert set(report["operations"]) == {
        "search",
        "mcp_search_docs",
        "upload",
        "ask_extractive",
        "ask_model",
        "sign_in",
    }
