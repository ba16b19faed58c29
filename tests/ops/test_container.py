"""The container path, as far as this machine (no docker daemon) can check it quickly:
compose.yaml against the Compose Specification's schema, and the image's layout for the sample
corpus. `scripts/check_container.py` runs the Dockerfile's build steps and the image's command
here (minutes: not part of the suite)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.documents import files
from tests.support import PROJECT_ROOT

CHECKER = Path(sys.executable).parent / "check-jsonschema"


def _validate(compose: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHECKER), "--builtin-schema", "vendor.compose-spec", str(compose)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_compose_file_follows_the_compose_specification(tmp_path: Path) -> None:
    assert _validate(PROJECT_ROOT / "compose.yaml").returncode == 0
    # The validator refuses what the specification does (a misspelt key, a port as a number
    # where a list is due), so the pass above means something.
    broken = tmp_path / "compose.yaml"
    text = (PROJECT_ROOT / "compose.yaml").read_text()
    broken.write_text(text.replace("depends_on:\n      db:", "depends_onn:\n      db:", 1))
    assert _validate(broken).returncode == 1


def test_the_sample_corpus_is_found_in_the_working_folder_of_an_installed_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The image installs `app` into site-packages, with README.md and docs/ in its working
    # folder (/srv/corpus), where migrations find alembic.ini too.
    site_packages = tmp_path / "site-packages"
    site_packages.mkdir()
    monkeypatch.setattr(files, "PROJECT_ROOT", site_packages)
    workdir = tmp_path / "srv"
    (workdir / "docs").mkdir(parents=True)
    (workdir / "README.md").write_text("# Corpus\n")
    (workdir / "docs" / "DEPLOYMENT.md").write_text("# Deploying Corpus\n")
    monkeypatch.chdir(workdir)
    assert files.sample_files() == [workdir / "README.md", workdir / "docs" / "DEPLOYMENT.md"]
    monkeypatch.chdir(tmp_path)
    assert files.sample_files() is None
