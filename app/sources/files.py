"""Which of a source's files become documents, and a folder's files as they are now."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path, PurePosixPath

from app.documents.convert import SUPPORTED_SUFFIXES


@cache
def _pattern(glob: str) -> re.Pattern[str]:
    """A glob over a relative path: `*` and `?` stay inside one segment, `**` crosses them
    (`docs/**/*.md` takes `docs/a.md` and `docs/x/y/a.md`)."""
    out, at = [], 0
    while at < len(glob):
        if glob.startswith("**/", at):
            out.append("(?:.*/)?")
            at += 3
        elif glob.startswith("**", at):
            out.append(".*")
            at += 2
        elif glob[at] == "*":
            out.append("[^/]*")
            at += 1
        elif glob[at] == "?":
            out.append("[^/]")
            at += 1
        else:
            out.append(re.escape(glob[at]))
            at += 1
    return re.compile("".join(out) + r"\Z")


def selected(path: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """A file the source takes: of a type we read, not hidden (no segment starting with a dot),
    matching an include glob when there are any, and no exclude glob."""
    pure = PurePosixPath(path)
    if pure.suffix.lower() not in SUPPORTED_SUFFIXES:
        return False
    if any(part.startswith(".") for part in pure.parts):
        return False
    if include and not any(_pattern(glob).match(path) for glob in include):
        return False
    return not any(_pattern(glob).match(path) for glob in exclude)


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def folder_snapshot(root: Path, include: Sequence[str], exclude: Sequence[str]) -> dict[str, str]:
    """Each selected file's path (relative, with `/`) and the sha256 of its bytes.

    Raises:
        OSError: the folder cannot be read.
    """
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a folder")
    found: dict[str, str] = {}
    for child in sorted(root.rglob("*")):
        relative = child.relative_to(root).as_posix()
        # A link could lead out of the folder the source was allowed to read.
        if child.is_symlink() or not child.is_file() or not selected(relative, include, exclude):
            continue
        found[relative] = file_hash(child.read_bytes())
    return found


def read_folder_file(root: Path, path: str) -> bytes:
    return (root / path).read_bytes()
