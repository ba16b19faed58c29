"""Which files a source takes, and what a document names in its code (pure rules)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.sources import stale
from app.sources.files import selected
from app.sources.git import Commit


@pytest.mark.parametrize(
    ("path", "include", "exclude", "taken"),
    [
        ("docs/a.md", [], [], True),
        ("src/app.py", [], [], False),  # not a type we read
        (".github/notes.md", [], [], False),  # hidden
        ("docs/deep/er/a.md", ["docs/**/*.md"], [], True),
        ("docs/a.md", ["docs/**/*.md"], [], True),
        ("notes/a.md", ["docs/**/*.md"], [], False),
        ("docs/a.md", ["docs/*.md"], [], True),
        ("docs/x/a.md", ["docs/*.md"], [], False),  # `*` stays in one segment
        ("docs/drafts/a.md", [], ["docs/drafts/**"], False),
        ("CHANGELOG.md", [], ["**/CHANGELOG.md"], False),
    ],
)
def test_a_source_takes_the_files_its_globs_select(
    path: str, include: list[str], exclude: list[str], taken: bool
) -> None:
    assert selected(path, include, exclude) is taken


def test_a_document_names_the_paths_and_distinctive_identifiers_of_its_code() -> None:
    markdown = (
        "# Guide\n\nRun `corpus ingest` or call `ingest_paths()` from `app/bench/ingest.py`; "
        "the `SecretBox` seals it, see `config.toml` and https://example.com/a/b.\n\n"
        "```python\nfrom app.kit.secrets import SecretBox\nbox = SecretBox(key)\nrun(x)\n```\n"
        "Plain prose naming load_config outside code is not counted.\n"
    )
    named = stale.names(markdown)
    assert {"ingest_paths", "app/bench/ingest.py", "secretbox", "config.toml"} <= set(named)
    assert "load_config" not in named
    assert "run" not in named  # too common to say which code it means
    assert "corpus" not in named


def test_a_commit_flags_a_document_through_definitions_and_moved_files_it_names() -> None:
    def is_document(path: str) -> bool:
        return path.endswith(".md")

    commit = Commit(
        sha="c2",
        date=datetime(2026, 1, 2, tzinfo=UTC),
        changes={
            "app/cli.py": ["def load_config(path, strict):", "    run_things(ingest_paths)"],
            "app/old_name.py": ["x = 1"],
            "docs/other.md": ["def mentions_in_a_doc():"],
        },
        deleted={"app/old_name.py"},
    )
    assert stale.finding(commit, ["load_config"], is_document) == {
        "commit": "c2",
        "date": "2026-01-02T00:00:00+00:00",
        "paths": ["app/cli.py"],
        "identifiers": ["load_config"],
    }
    # A file that changed in place, or a line that only uses a name, is not enough.
    assert stale.finding(commit, ["cli.py", "ingest_paths"], is_document) is None
    # A named file that moved away is.
    moved = stale.finding(commit, ["old_name.py"], is_document)
    assert moved is not None
    assert moved["paths"] == ["app/old_name.py"]
    # A change to another document is not a change to code.
    assert stale.finding(commit, ["mentions_in_a_doc"], is_document) is None
    older = Commit(sha="c1", date=datetime(2026, 1, 1, tzinfo=UTC), changes=commit.changes)
    # Newest first: only what comes before the document's own commit is after it.
    history = [commit, older]
    found = stale.findings(history, ["load_config"], "c1", older.date, is_document)
    assert [flag["commit"] for flag in found] == ["c2"]
    assert stale.findings(history, ["load_config"], "c2", commit.date, is_document) == []
