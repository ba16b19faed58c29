"""Whether a document may have fallen behind the code it names (docs/adr/0035, "Stale docs").

A document names code in its code spans and code blocks: file paths (`app/cli.py`, `cli.py`)
and distinctive identifiers (`ingest_paths`, `SecretBox`, `KEY_ID`: snake case, camel case or
upper case with an underscore, four characters or more; a plain word such as `run` is too
common to say which code it means). A commit after the document's own last change is evidence
that the document may be stale when, in a file that is not one of the source's documents, it
deletes or moves away a file at a named path, or adds or removes a line that defines a named
identifier (a `def`, `class`, `const`..., an assignment, an upper-case constant or setting).
The flag names the commit and the files to read. Names are kept in lower case.

Measured on this project's history (docs/BENCHMARKS.md, "Stale docs"): flagging every change
to a named file, or every changed line that merely uses a named identifier, flagged most
versions of most pages, because busy files change in nearly every commit."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from app.sources.git import Commit

_FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(r"[\w.\-]+(?:/[\w.\-]+)+|[\w\-]+\.[A-Za-z][A-Za-z0-9]{0,5}\b")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
# A file name's suffix that is a language's or a config's, not a dotted name's last part
# (`app.rag.queries` is a module, `cli.py` a file).
_SUFFIX_WORDS = (
    "py pyi js mjs cjs ts tsx jsx go rs java kt rb php c h cc cpp hpp cs swift scala sh bash sql "
    "toml yaml yml json ini cfg conf md rst txt html css scss vue svelte lock mod sum dockerfile "
    "makefile gradle xml proto tf"
)
_FILE_SUFFIXES = frozenset(_SUFFIX_WORDS.split())
MIN_IDENTIFIER = 4
# Where a changed line defines a name, rather than only uses it: a definition (`def`, `class`,
# `function`, `const`, ...), an assignment or a keyword argument's name, or an upper-case
# constant or setting anywhere (`CORPUS_SOURCE_ROOTS`). A call site that changed says little
# about what the called code does.
_DEFINITION = re.compile(
    r"\b(?:def|class|function|func|fn|const|let|var|type|interface|struct|enum|trait|module)"
    r"\s+([A-Za-z_][A-Za-z0-9_]*)"
    r"|^\s*(?:self\.|this\.)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=(?!=)"
    r"|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b"
)


def distinctive(word: str) -> bool:
    """An identifier that names code rather than a concept: long enough, and snake, camel or
    upper case with an underscore."""
    if len(word) < MIN_IDENTIFIER:
        return False
    if "_" in word.strip("_"):
        return True
    return bool(_CAMEL.search(word))


def code_of(markdown: str) -> list[str]:
    """The text of the document's code blocks and code spans."""
    pieces = [match.group(2) for match in _FENCE.finditer(markdown)]
    prose = _FENCE.sub("", markdown)
    pieces.extend(match.group(1) for match in _SPAN.finditer(prose))
    return pieces


def _paths(code: str) -> set[str]:
    found = set()
    for match in _PATHLIKE.finditer(code):
        candidate = match.group(0).strip("./")
        if "://" in code[max(0, match.start() - 3) : match.start() + 3]:
            continue
        last = candidate.rsplit("/", 1)[-1]
        suffix = last.rsplit(".", 1)[-1].lower() if "." in last else ""
        if "/" in candidate or suffix in _FILE_SUFFIXES:
            found.add(candidate.lower())
    return found


def names(markdown: str) -> list[str]:
    """The paths and identifiers a document names in its code, lower case, sorted."""
    found: set[str] = set()
    for code in code_of(markdown):
        found |= _paths(code)
        found |= {word.lower() for word in _WORD.findall(code) if distinctive(word)}
    return sorted(found)


def path_names(path: str) -> list[str]:
    """A changed file's path and every tail of it a document may name (`app/cli.py`,
    `cli.py`)."""
    parts = path.lower().split("/")
    return ["/".join(parts[at:]) for at in range(len(parts))]


def defined(line: str) -> set[str]:
    """The distinctive names a line of code defines (lower case)."""
    found = set()
    for match in _DEFINITION.finditer(line):
        word = next(group for group in match.groups() if group)
        if distinctive(word):
            found.add(word.lower())
    return found


def commit_names(commit: Commit, is_document: Callable[[str], bool]) -> tuple[set[str], set[str]]:
    """The names a commit touched, in code only (the source's documents left out): the tails of
    the paths it deleted or moved away, and the distinctive identifiers its changed lines
    define. A file that changed in place is judged by what it defines: a busy file (`cli.py`)
    changes in nearly every commit, and a path alone would flag every page that names it."""
    paths: set[str] = set()
    identifiers: set[str] = set()
    for path, lines in commit.changes.items():
        if is_document(path):
            continue
        if path in commit.deleted:
            paths.update(path_names(path))
        for line in lines:
            identifiers |= defined(line)
    return paths, identifiers


def finding(
    commit: Commit, named: Iterable[str], is_document: Callable[[str], bool]
) -> dict[str, Any] | None:
    """What the commit changed of the names, as a stale flag records it; None when nothing."""
    wanted = set(named)
    if not wanted:
        return None
    hit_paths: set[str] = set()
    hit_identifiers: set[str] = set()
    for path, lines in commit.changes.items():
        if is_document(path):
            continue
        if path in commit.deleted and wanted.intersection(path_names(path)):
            hit_paths.add(path)
        for line in lines:
            found = defined(line) & wanted
            if found:
                # The file where a named identifier's definition changed is the path to read.
                hit_paths.add(path)
                hit_identifiers |= found
    if not hit_paths and not hit_identifiers:
        return None
    return {
        "commit": commit.sha,
        "date": commit.date.isoformat(),
        "paths": sorted(hit_paths),
        "identifiers": sorted(hit_identifiers),
    }


def findings(
    commits: Sequence[Commit],
    named: Sequence[str],
    own_commit: str | None,
    own_date: datetime | None,
    is_document: Callable[[str], bool],
) -> list[dict[str, Any]]:
    """Every commit after the document's own last change that changed code it names, oldest
    first. `commits` are newest first in topological order, so a commit listed before the
    document's own comes after it (commits of one second apart too); a document whose commit is
    not listed is judged by date."""
    if own_commit is None or own_date is None:
        return []
    shas = [commit.sha for commit in commits]
    later = (
        commits[: shas.index(own_commit)]
        if own_commit in shas
        else [commit for commit in commits if commit.date > own_date]
    )
    out = []
    for commit in reversed(later):
        found = finding(commit, named, is_document)
        if found is not None:
            out.append(found)
    return out
