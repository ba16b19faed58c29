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


def test_a_commit_flags_a_document_only_through_code_it_names() -> None:
    def is_document(path: str) -> bool:
        return path.endswith(".md")

    commit = Commit(
        sha="c2",
        date=datetime(2026, 1, 2, tzinfo=UTC),
        changes={
            "app/cli.py": ["def load_config(path, strict):"],
            "docs/other.md": ["mentions ingest_paths in a doc"],
        },
    )
    assert stale.finding(commit, ["cli.py"], is_document) == {
        "commit": "c2",
        "date": "2026-01-02T00:00:00+00:00",
        "paths": ["app/cli.py"],
        "identifiers": [],
    }
    assert stale.finding(commit, ["load_config"], is_document) is not None
    # A change to another document is not a change to code.
    assert stale.finding(commit, ["ingest_paths"], is_document) is None
    older = Commit(sha="c1", date=datetime(2026, 1, 1, tzinfo=UTC), changes=commit.changes)
    # Newest first: only what comes before the document's own commit is after it.
    history = [commit, older]
    assert stale.findings(history, ["cli.py"], "c1", older.date, is_document)[0]["commit"] == "c2"
    assert stale.findings(history, ["cli.py"], "c2", commit.date, is_document) == []
