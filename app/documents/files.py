"""Which files a folder walk ingests (`corpus ingest`), and the sample corpus's files (`corpus
seed` and the first-run screen's "load sample documents")."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from app.db.migrate import PROJECT_ROOT
from app.documents.convert import SUPPORTED_SUFFIXES

# The sample corpus: the project's own documentation, installed with the code (the checkout, the
# image and deploy.sh's copy all have it), in a workspace of its own.
SAMPLE_WORKSPACE = "sample"
SAMPLE_TAGS = ["sample"]
SAMPLE_NAMES = ("README.md", "docs")


def walk(paths: Sequence[Path]) -> Iterator[Path]:
    """The files to ingest: named files as given, folders walked for supported suffixes
    (hidden files and folders skipped)."""
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                hidden = any(part.startswith(".") for part in child.relative_to(path).parts)
                if child.is_file() and not hidden and child.suffix.lower() in SUPPORTED_SUFFIXES:
                    yield child
        else:
            yield path


def sample_sources() -> list[Path] | None:
    """Where the sample corpus is: beside the `app` package in a checkout, else in the working
    folder (the image installs the package into site-packages and runs in /srv/corpus, which
    holds README.md and docs/, as migrations find alembic.ini there); None when in neither."""
    for root in (PROJECT_ROOT, Path.cwd()):
        sources = [root / name for name in SAMPLE_NAMES]
        if all(source.exists() for source in sources):
            return sources
    return None


def sample_files() -> list[Path] | None:
    """The sample corpus's files; None when it is not installed."""
    sources = sample_sources()
    return list(walk(sources)) if sources is not None else None
