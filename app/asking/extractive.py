"""The extractive answer: with no answer model configured (or when a run must stop before the
model can answer), a question is answered with the passages that answer it best, cited, and the
reply says so, once.

Each passage is quoted in whole sentences around the words it matched, not cut at a fixed
length: a chunk may begin or end mid-sentence (its cut fell there), so a fragment at either end
is left out unless it is all there is. The reply is Markdown (the web app renders it, an agent
reads it as text): the notice, then per passage its key, title and heading path, and the quote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.asking.schemas import Answer, Citation
from app.rag.schemas import SearchHit

NOTE = (
    "> **Extractive answer:** no answer model is configured on this server, so these are the "
    "passages that match the question best, quoted. To have answers written from them, set "
    "`ANSWER_PROVIDER` and its API key (the README's “Asking” and “Configuration” sections)."
)
NOTHING = (
    "The corpus has nothing that answers this question; it was recorded as a documentation gap."
)
# How many passages an answer cites.
PASSAGES = 5
# About how long each quote may grow around its best sentence, in characters.
QUOTE_CHARS = 420

# A fenced code block is one unit, never split.
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?^[ \t]*\1[^\n]*$", re.MULTILINE | re.DOTALL)
# Where a unit ends: after a sentence's stop, at a blank line, before a list item or a heading.
_BREAK = re.compile(r"(?<=[.!?:])[ \t]+(?=\S)|\n[ \t]*\n|\n(?=[ \t]*(?:[-*+]|\d+[.)]|#{1,6})\s)")
_HEADING = re.compile(r"^#{1,6}\s")
_WORD = re.compile(r"\w+")
# Words too common to say what a sentence is about.
_COMMON = frozenset(
    _WORD.findall(
        "the and for are was were with that this what which who how why when where does did "
        "can could should would will from into about there their them they you your our has "
        "have had not but any all its"
    )
)


def _units(text: str) -> list[tuple[int, int]]:
    """The spans of `text`'s sentences, list items, headings and code blocks, in order."""
    spans: list[tuple[int, int]] = []

    def prose(start: int, end: int) -> None:
        at = start
        for cut in _BREAK.finditer(text, start, end):
            spans.append((at, cut.start()))
            at = cut.end()
        spans.append((at, end))

    at = 0
    for fence in _FENCE.finditer(text):
        prose(at, fence.start())
        spans.append((fence.start(), fence.end()))
        at = fence.end()
    prose(at, len(text))
    trimmed = []
    for start, end in spans:
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            trimmed.append((start + lead, start + len(piece.rstrip())))
    return trimmed


def terms(question: str, matched: Sequence[str] = ()) -> set[str]:
    """The words a quote is centred on: the question's own (not the commonest) and those the
    search matched."""
    words = {w.lower() for w in _WORD.findall(question) if len(w) > 2}
    return (words - _COMMON) | {t.lower() for t in matched if t}


def quote(text: str, terms: set[str], *, budget: int = QUOTE_CHARS) -> str:
    """The whole sentences of `text` around those that hold most of `terms`, up to about
    `budget` characters, with a fragment at either end of the chunk left out."""
    units = _units(text)
    if not units:
        return ""
    last = len(units) - 1

    def fragment(i: int) -> bool:
        piece = text[units[i][0] : units[i][1]]
        if i == 0 and piece[:1].islower():
            return True
        # A chunk cut mid-sentence ends without a stop; a code block ends with its fence.
        return i == last and i > 0 and not re.search(r"[.!?:;)`\"”*_]$", piece)

    def score(i: int) -> int:
        piece = text[units[i][0] : units[i][1]].lower()
        if _HEADING.match(piece) or fragment(i):
            return -1
        return sum(1 for term in terms if term in piece)

    candidates = [i for i in range(len(units)) if score(i) >= 0]
    if not candidates:
        candidates = list(range(len(units)))
    best = max(candidates, key=lambda i: (score(i), -i))
    first = final = best

    def size(a: int, b: int) -> int:
        return units[b][1] - units[a][0]

    # Grow forwards first (what follows explains), then backwards, whole units at a time.
    while True:
        grown = False
        for candidate in (final + 1, first - 1):
            if not 0 <= candidate <= last or candidate not in candidates:
                continue
            a, b = min(first, candidate), max(final, candidate)
            if size(a, b) <= budget:
                first, final = a, b
                grown = True
                break
        if not grown:
            break
    body = text[units[first][0] : units[final][1]]
    # Headings are said by the heading path above the quote.
    lines = [line for line in body.splitlines() if not _HEADING.match(line)]
    return "\n".join(lines).strip()


def passage(key: str, title: str, heading_path: Sequence[str], text: str, words: set[str]) -> str:
    """A cited passage as an answer shows it: its key, title and place, then its quote."""
    # A document's top heading is usually its title: said once.
    path = list(heading_path[1:] if list(heading_path[:1]) == [title] else heading_path)
    where = f" — {' › '.join(path)}" if path else ""
    quoted = "\n".join(f"> {line}" if line else ">" for line in quote(text, words).splitlines())
    return f"{key} **{title}**{where}\n\n{quoted}"


def answer(hits: Sequence[SearchHit], *, mode: str, question: str = "") -> Answer:
    """The answer the hits make, best first, each cited by its `[n]` key and quoted around the
    words of `question` it matched."""
    citations = [
        Citation.of(
            i,
            document_id=hit.document_id,
            chunk_id=hit.chunk_id,
            title=hit.title,
            heading_path=hit.heading_path,
            text=hit.text,
            workspace=hit.workspace,
            page=hit.page,
        )
        for i, hit in enumerate(hits, start=1)
    ]
    if citations:
        passages = "\n\n".join(
            passage(
                c.key, hit.title, hit.heading_path, hit.text, terms(question, hit.matched_terms)
            )
            for c, hit in zip(citations, hits, strict=True)
        )
        text = f"{NOTE}\n\n{passages}"
    else:
        text = NOTHING
    return Answer(answer=text, citations=citations, mode=mode, extractive=True)
