"""Links between documents, read from a document's Markdown when it is written.

A link is kept as where it points, not as the document it found then: `deploy.md` in a README
uploaded before `deploy.md` itself still finds it once it arrives, in whatever order a folder's
files were sent. Where it points is one of:

- a document's address in the web app (`/documents/<id>`): that document;
- a path relative to the linking document's own (`../ops/deploy.md#rollback` from
  `guides/setup.md` is `ops/deploy.md`): the document uploaded from that path in the same
  workspace, or, when none was, the one whose file has that name (a flat upload of
  `setup.md` and `deploy.md` keeps no folders).

Addresses with a scheme (`https:`, `mailto:`), anchors within the document and images are not
links between documents. Nothing here reads the database; the queries store and resolve."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote
from uuid import UUID

# `[text](href "title")` and `[text](<href with spaces>)`, not `![image](...)`.
_INLINE = re.compile(r"(?<!!)\[(?:[^\[\]\\]|\\.)*\]\(\s*(?:<([^<>\n]*)>|([^\s()<>]+))")
# `[label]: href` reference definitions.
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(?:<([^<>\n]*)>|(\S+))", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[^\n]*$|\Z)", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)[^`].*?\1", re.S)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_DOCUMENT_ADDRESS = re.compile(
    r"^/documents/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
    r"(?:[/?#]|$)"
)
# A link's href is stored as written, in the table's primary key: a btree entry holds about
# 2,700 bytes, and 500 characters of UTF-8 stay under it. A longer one is no link a person wrote.
MAX_HREF = 500


@dataclass(frozen=True, slots=True)
class Link:
    """One link as written (`href`), and where it points: a document by id, or a path within
    the workspace with the file's name (the fallback when no document has that path)."""

    href: str
    target_id: UUID | None = None
    target_path: str | None = None
    target_name: str | None = None


def path_of(source: str | None) -> str | None:
    """A document's path within its workspace, as links are compared with it: the source it
    was uploaded from, normalised, without a leading `/` (`corpus ingest` records absolute
    paths, the web app a file's name or its path in a chosen folder). The queries strip the
    same way (`queries.source_path`)."""
    if not source or _SCHEME.match(source):
        return None
    path = posixpath.normpath(source.replace("\\", "/")).lstrip("/")
    return path if path and path != "." else None


def _without_code(markdown: str) -> str:
    """The Markdown with fenced blocks and code spans blanked: a link shown as code is not one."""
    blank = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), markdown)
    return _CODE_SPAN.sub(" ", blank)


def _target(href: str, base: str | None) -> Link | None:
    address = _DOCUMENT_ADDRESS.match(href)
    if address:
        return Link(href=href, target_id=UUID(address.group(1)))
    if href.startswith(("#", "//")) or _SCHEME.match(href):
        return None
    relative = unquote(re.split(r"[?#]", href, maxsplit=1)[0]).replace("\\", "/")
    if not relative or relative.endswith("/"):
        return None
    if relative.startswith("/"):
        joined = relative
    else:
        joined = posixpath.join(posixpath.dirname(base or ""), relative)
    path = posixpath.normpath(joined).lstrip("/")
    if not path or path == ".":
        return None
    return Link(href=href, target_path=path, target_name=posixpath.basename(path))


def extract(markdown: str, source: str | None) -> list[Link]:
    """The links to other documents in `markdown`, each href once, in order of appearance.
    `source` is where the document came from: relative paths are resolved from its folder."""
    text = _without_code(markdown)
    base = path_of(source)
    found: dict[str, Link] = {}
    matches = [*_INLINE.finditer(text), *_REFERENCE.finditer(text)]
    for match in sorted(matches, key=lambda m: m.start()):
        href = (match.group(1) or match.group(2) or "").strip()
        if not href or len(href) > MAX_HREF or href in found:
            continue
        link = _target(href, base)
        if link is not None:
            found[href] = link
    return list(found.values())
