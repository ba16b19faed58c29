"""Identifiers in text, as the keyword half reads them (docs/adr/0028).

PostgreSQL's `english` parser keeps some identifiers whole and splits others: `/readyz` is one
`file` token (so `readyz` does not match it), `app.rag.queries` one `host` token (so
`rag.queries` does not), `KEY_ID` two words (so nothing tells `KEY_ID` from "key" and "id" a page
apart), `--workspace` the word "workspace". This module rewrites a text before the parser sees
it, the same way at index time and at query time:

- `words`: the text with each identifier replaced by its parts (`app rag queries`, `KEY ID`,
  `readyz`, `embedded Postgres`), which the parser stems like prose: an identifier is found by
  its parts, and by the words a person would use for it. These are the query's words that a hit
  is asked to cover.
- `joined`: camel-case words as written (`embeddedPostgres`), which the parser keeps as one
  word: `embeddedpostgres` typed in lower case still finds them.
- `wholes`: identifiers as written, in lower case, and every run of two or more of their
  components (`app.rag.queries`, `app.rag`, `rag.queries`; `key_id`; `--workspace`;
  `docs/multi-corpus.md`), stored as lexemes as they are: an exact match ranks above a page that
  only has the parts. At query time they add to a hit's score and never count towards its
  coverage, so a query for an identifier the corpus never saw whole is still judged by its parts.

Prose is left to the parser: hyphenated words (`multi-corpus`, `IL-6`), numbers and versions
(`3.5`, `2.3.0`), abbreviations (`e.g.`), and words of one case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A run of characters an identifier may hold; what surrounds it (spaces, brackets, quotes,
# commas, backticks) ends it.
_SPAN = re.compile(r"[\w./:~\-]+")
# Trailing punctuation that ends a sentence or a list, not the identifier.
_TRAILING = ".:-~"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
# Separators, outermost first: a path's segments may be dotted names, whose components may be
# snake case.
_SEPARATORS = ("/", "::", ":", ".", "_")
_FLAG = re.compile(r"^--?[A-Za-z][\w\-]*$")
_VERSION = re.compile(r"^[vV]\d+(?:\.\d+)+[\w\-]*$")
# Camel case: a lower-case letter before an upper-case one (`embeddedPostgres`), or an
# upper-case run before a capitalised word (`HTTPServer`; not a plural acronym, `RNAs`).
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})")
# Parts of fewer letters make a word of science or a name, not an identifier: `miRNA`,
# `HeLa`, `MeCP2`, `McLuhan`, `GTPase` stay whole for the parser.
_CAMEL_PART = 3
# A flag starts a word: `-dependent` in `Ca2+-dependent` is prose.
_BEFORE_FLAG = " \t\n\r([{<=,;|"
# A long path or name gives its runs of up to this many components (and itself): its pairs
# and triples are what people type, and every run of a 12-segment path would be 66 lexemes.
_LONGEST_RUN = 4
# Longer strings are not names anyone types (a hash, a minified line): no whole lexeme.
_LONGEST_WHOLE = 120


@dataclass(frozen=True, slots=True)
class Lexable:
    """A text rewritten for PostgreSQL's parser (see the module's docstring)."""

    words: str
    joined: str
    wholes: tuple[str, ...]


def lexable(text: str) -> Lexable:
    """`text` as the keyword half reads it, at index and query time alike."""
    words: list[str] = []
    joined: list[str] = []
    wholes: list[str] = []
    last = 0
    for match in _SPAN.finditer(text):
        span = match.group()
        if span.isalpha() and span[1:].islower():
            # A word of prose (`the`, `Heron`): no separator, no camel case, so never an
            # identifier. Most spans are such words, and the checks below cost a walk most of
            # its lexing time.
            continue
        if span.startswith("-") and not _starts_word(text, match.start()):
            span = span.lstrip("-")
        parsed = _identifier(span)
        if parsed is None:
            continue
        parts, camel, names = parsed
        words.append(text[last : match.start()])
        words.append(f" {' '.join(parts)} ")
        joined.extend(camel)
        wholes.extend(names)
        last = match.end()
    words.append(text[last:])
    kept = tuple(name for name in wholes if len(name) <= _LONGEST_WHOLE)
    return Lexable(words="".join(words), joined=" ".join(joined), wholes=kept)


def _starts_word(text: str, at: int) -> bool:
    """Whether `text[at]` starts a word: after a space, a bracket or `=`, or a quote that
    itself starts one (`'--workspace'`, not `5'-nucleotidase`)."""
    while at > 0 and text[at - 1] in "'\"`":
        at -= 1
    return at == 0 or text[at - 1] in _BEFORE_FLAG


def _identifier(span: str) -> tuple[list[str], list[str], list[str]] | None:
    """The parts, the camel-case words and the whole names of `span`, or None when it is prose
    for the parser."""
    span = span.rstrip(_TRAILING) if not _FLAG.match(span) else span
    if not span:
        return None
    if _VERSION.match(span):
        # `v2.3.0`: the parser's version lexeme `2.3.0`, so `2.3.0` finds it, and the name.
        return [span[1:]], [], [span.lower()]
    if _FLAG.match(span):
        rest = span.lstrip("-")
        parts, camel, names = _split(rest)
        return parts, camel, [span.lower(), *names]
    body = _SCHEME.sub("", span)
    if body == span and not _is_identifier(body):
        return None
    return _split(body)


def _is_identifier(span: str) -> bool:
    stripped = span.strip("/._:~")
    if not stripped:
        return False
    if "::" in stripped:
        return any(c.isalpha() for c in stripped)
    if "/" in span:
        return _is_path(span, stripped)
    if "_" in stripped.strip("_") or span.startswith("__"):
        return any(c.isalpha() for c in stripped)
    for separator in (":", "."):
        components = [c for c in stripped.split(separator) if c]
        if len(components) > 1:
            # Names start with a letter (`app.rag`, `localhost:8000` is a name and a port);
            # `3.5`, `10:30`, `Fig.2`, `e.g` and `E.coli` are the parser's.
            return (
                len(components[0]) > 1
                and components[0][0].isalpha()
                and any(len(c) > 1 and c[0].isalpha() for c in components[1:])
            )
    return _camel_parts(stripped) is not None


def _is_path(span: str, stripped: str) -> bool:
    """A route (`/readyz`), a path (`docs/multi-corpus.md`, `app/rag/queries`), not a pair
    of words (`and/or`, `mg/kg`, `recall/precision`: the parser's, as before)."""
    if not any(c.isalpha() for c in stripped):
        return False
    segments = [s for s in stripped.split("/") if s]
    return (
        span[0] in "/~."
        or span.endswith("/")
        or len(segments) > 2
        or any(("." in s or "_" in s or _camel_parts(s)) for s in segments)
    )


def _camel_parts(word: str) -> list[str] | None:
    """A camel-case word's parts, when it has two or more of at least `_CAMEL_PART`
    characters (`embeddedPostgres`, `HTTPServer`; not `mRNA`, `toString` or `iPhone`)."""
    if "-" in word:
        return None
    parts = [p for p in _CAMEL.split(word) if p]
    if len(parts) < 2 or any(len(p) < _CAMEL_PART for p in parts):
        return None
    return parts


def _split(span: str) -> tuple[list[str], list[str], list[str]]:
    """Parts, camel-case words and whole names of an identifier, separator by separator."""
    for separator in _SEPARATORS:
        components = [c for c in span.split(separator) if any(ch.isalnum() for ch in c)]
        if len(components) > 1 or (len(components) == 1 and components[0] != span):
            parts: list[str] = []
            camel: list[str] = []
            names = _runs([c.lower() for c in components], separator)
            for component in components:
                sub_parts, sub_camel, sub_names = _split(component)
                parts.extend(sub_parts)
                camel.extend(sub_camel)
                names.extend(sub_names)
            return parts, camel, names
    pieces = _camel_parts(span)
    if pieces is not None:
        return pieces, [span], []
    return [span], [], []


def _runs(components: list[str], separator: str) -> list[str]:
    """Every run of two or more consecutive components, joined as written (and the whole)."""
    n = len(components)
    runs = [
        separator.join(components[start : start + length])
        for length in range(2, min(n, _LONGEST_RUN) + 1)
        for start in range(n - length + 1)
    ]
    if n > _LONGEST_RUN:
        runs.append(separator.join(components))
    return runs


def tsvector_literal(wholes: tuple[str, ...] | list[str]) -> str:
    """`wholes` as a tsvector's text, each occurrence a position of its own (so a name said
    twice counts twice, as a word does), for `CAST(:wholes AS tsvector)`."""
    positions: dict[str, list[int]] = {}
    for position, name in enumerate(wholes[:16383], start=1):
        positions.setdefault(name, []).append(position)
    return " ".join(
        "'{}':{}".format(name.replace("\\", "\\\\").replace("'", "''"), ",".join(map(str, found)))
        for name, found in positions.items()
    )
