"""`corpus sources add|list|sync|remove`, in this process, on a database of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.sources.test_sync import Repo
from tests.support import create_migrated_database, run_corpus_here


def test_the_command_line_adds_lists_syncs_and_removes_a_source(
    server_url: str, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = create_migrated_database(server_url, data_dir, "corpus_sources_cli")
    monkeypatch.setenv("CORPUS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CORPUS_SOURCE_ROOTS", str(tmp_path))
    repo = Repo(tmp_path / "repo")
    repo.write("docs/one.md", "# One\n\nThe first page about the cassowary.\n")
    repo.write("docs/two.md", "# Two\n\nThe second page about the cassowary.\n")
    repo.write("notes/skip.md", "# Skipped\n\nLeft out by the include glob.\n")
    repo.commit("pages")

    added = run_corpus_here(
        ["sources", "add", str(repo.path), "--include", "docs/**", "--schedule", "60"], url
    )
    assert added.returncode == 0, added.stderr
    match = re.search(r"added source ([0-9a-f-]{36})", added.stdout)
    assert match is not None
    source_id = match.group(1)

    listed = run_corpus_here(["sources", "list"], url)
    assert listed.returncode == 0
    assert source_id in listed.stdout
    assert "0 documents" in listed.stdout

    synced = run_corpus_here(["sources", "sync", source_id], url)
    assert synced.returncode == 0, synced.stderr
    assert "sync succeeded" in synced.stdout
    assert "2 added, 0 updated, 0 removed, 0 unchanged, 0 failed" in synced.stdout
    assert "file" in synced.stderr  # the progress bar

    repo.write("docs/broken.pdf", b"%PDF-1.4 not a pdf at all")
    repo.commit("a broken file")
    failed = run_corpus_here(["sources", "sync", source_id], url)
    assert failed.returncode == 1
    assert "0 added, 0 updated, 0 removed, 2 unchanged, 1 failed" in failed.stdout
    assert "failed docs/broken.pdf" in failed.stderr

    mirror = tmp_path / "data" / "sources" / f"{source_id}.git"
    assert (mirror / "HEAD").exists()
    removed = run_corpus_here(["sources", "remove", source_id], url)
    assert removed.returncode == 0, removed.stderr
    assert f"removed source {source_id} and its 2 documents" in removed.stdout
    assert not mirror.exists()
    assert source_id not in run_corpus_here(["sources", "list"], url).stdout


def test_a_source_the_command_line_refuses_is_not_kept(
    server_url: str, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = create_migrated_database(server_url, data_dir, "corpus_sources_cli")
    monkeypatch.setenv("CORPUS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("CORPUS_SOURCE_ROOTS", raising=False)
    refused = run_corpus_here(["sources", "add", "--kind", "folder", str(tmp_path)], url)
    assert refused.returncode == 2
    assert "CORPUS_SOURCE_ROOTS" in refused.stderr
    bad_branch = run_corpus_here(["sources", "add", str(tmp_path), "--branch", "-x"], url)
    assert bad_branch.returncode == 2
    assert run_corpus_here(["sources", "list"], url).stdout == ""
    unknown = run_corpus_here(["sources", "sync", "00000000-0000-0000-0000-000000000000"], url)
    assert unknown.returncode == 1
    assert "source not found" in unknown.stderr
