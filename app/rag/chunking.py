"""Structure-aware Markdown chunking for retrieval.

A document is cut into sections at ATX headings, sections into blocks at blank lines, and blocks
are packed into chunks of about `target_tokens`. Code fences and tables are atomic: no chunk starts
or ends inside one. Every chunk is a slice of the document (`text == document[start:end]`), so a
hit can be shown in place and the chunks together cover every non-whitespace character.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

from app.kit import markdown

# The project's token estimate: good enough for budgeting, and free of a tokenizer dependency.
_CHARS_PER_TOKEN = 4

_SENTENCE_END = re.compile(r"[.?!](\s+)")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class ChunkPiece:
    """One chunk: a slice of the document and the headings it sits under."""

    ordinal: int
    heading_path: tuple[str, ...]
    text: str
    start: int
    end: int
    token_count: int


@dataclass(slots=True)
class _Block:
    start: int
    end: int
    atomic: bool


@dataclass(slots=True)
class _Section:
    heading_path: tuple[str, ...]
    blocks: list[_Block] = field(default_factory=list)


def count_tokens(text: str) -> int:
    """The project's token estimate: one token per four characters, rounded up."""
    return -(-len(text) // _CHARS_PER_TOKEN)


def chunk_markdown(
    document: str,
    *,
    target_tokens: int = 200,
    overlap_tokens: int = 30,
    max_tokens: int = 400,
) -> list[ChunkPiece]:
    """Cut a Markdown document into overlapping chunks that respect its structure.

    Raises:
        ValueError: if the sizes are inconsistent (they come from code, not from users).
    """
    if target_tokens < 1 or max_tokens < target_tokens or not 0 <= overlap_tokens < target_tokens:
        raise ValueError(
            "need 1 <= target_tokens <= max_tokens and 0 <= overlap_tokens < target_tokens"
        )
    target_chars = target_tokens * _CHARS_PER_TOKEN
    max_chars = max_tokens * _CHARS_PER_TOKEN
    overlap_chars = overlap_tokens * _CHARS_PER_TOKEN
    # A chunk with less fresh text than this is hardly worth an embedding of its own.
    tiny_chars = target_chars // 4

    sections, atomic_starts, atomic_ends = _sections(document)
    pieces: list[ChunkPiece] = []
    for section in sections:
        # [start, fresh_start, end]: fresh_start is where the text not shared with the
        # previous chunk begins.
        spans: list[list[int]] = []
        for unit_start, unit_end, atomic in _units(document, section.blocks, max_chars):
            if not spans:
                spans.append([unit_start, unit_start, unit_end])
                continue
            start, fresh_start, end = spans[-1]
            fits = unit_end - start <= target_chars
            # A heading alone is a poor chunk: let a small start take the next block with it.
            absorbs = end - fresh_start < tiny_chars and (atomic or unit_end - start <= max_chars)
            if fits or absorbs:
                spans[-1][2] = unit_end
                continue
            overlap = _overlap_start(
                document,
                previous=(start, end),
                fresh=(unit_start, unit_end),
                overlap_chars=overlap_chars,
                max_chars=max_chars,
                atomic_starts=atomic_starts,
                atomic_ends=atomic_ends,
            )
            spans.append([overlap, unit_start, unit_end])
        if len(spans) >= 2:
            previous_start = spans[-2][0]
            _, last_fresh, last_end = spans[-1]
            if last_end - last_fresh < tiny_chars and last_end - previous_start <= max_chars:
                spans[-2][2] = last_end
                spans.pop()
        for start, _, end in spans:
            text = document[start:end]
            pieces.append(
                ChunkPiece(
                    ordinal=len(pieces),
                    heading_path=section.heading_path,
                    text=text,
                    start=start,
                    end=end,
                    token_count=count_tokens(text),
                )
            )
    return pieces


def _sections(document: str) -> tuple[list[_Section], list[int], list[int]]:
    """Split the document into sections of trimmed blocks, in one pass over its lines; also
    the starts and ends of its atomic blocks, in order."""
    lines = document.split("\n")
    sections: list[_Section] = []
    section = _Section(heading_path=())
    blocks = section.blocks
    atomic_starts: list[int] = []
    atomic_ends: list[int] = []
    levels: list[int] = []
    titles: list[str] = []
    # The open paragraph, as offsets: a block object per line would dominate the run time.
    paragraph_start = paragraph_end = -1

    line_start = 0
    i = 0
    count = len(lines)
    while i < count:
        line = lines[i]
        content = line.rstrip()
        if not content:
            if paragraph_start >= 0:
                blocks.append(_Block(paragraph_start, paragraph_end, atomic=False))
                paragraph_start = -1
            line_start += len(line) + 1
            i += 1
            continue
        text = content.lstrip()
        block_start = line_start + len(content) - len(text)
        block_end = line_start + len(content)
        first = text[0]
        line_start += len(line) + 1
        i += 1

        fence = markdown.fence_opening(text) if first in "`~" else None
        heading = markdown.heading(content) if first == "#" else None
        if fence is None and heading is None and first != "|":
            if paragraph_start < 0:
                paragraph_start = block_start
            paragraph_end = block_end
            continue

        if paragraph_start >= 0:
            blocks.append(_Block(paragraph_start, paragraph_end, atomic=False))
            paragraph_start = -1
        if heading is not None:
            if blocks:
                sections.append(section)
            level, heading_text = heading
            while levels and levels[-1] >= level:
                levels.pop()
                titles.pop()
            levels.append(level)
            titles.append(heading_text)
            section = _Section(heading_path=tuple(titles))
            blocks = section.blocks
            blocks.append(_Block(block_start, block_end, atomic=False))
            continue
        if fence is not None:
            marker = fence
            # An unclosed fence runs to the end of the document, as CommonMark has it.
            while i < count:
                line = lines[i]
                tail = line.rstrip()
                if tail:
                    block_end = line_start + len(tail)
                line_start += len(line) + 1
                i += 1
                if tail and markdown.closes_fence(tail, marker):
                    break
        else:
            while i < count and lines[i].lstrip().startswith("|"):
                block_end = line_start + len(lines[i].rstrip())
                line_start += len(lines[i]) + 1
                i += 1
        blocks.append(_Block(block_start, block_end, atomic=True))
        atomic_starts.append(block_start)
        atomic_ends.append(block_end)

    if paragraph_start >= 0:
        blocks.append(_Block(paragraph_start, paragraph_end, atomic=False))
    if blocks:
        sections.append(section)
    return sections, atomic_starts, atomic_ends


def _units(document: str, blocks: list[_Block], max_chars: int) -> Iterator[tuple[int, int, bool]]:
    """The packable pieces of a section: whole blocks, or the sentences (else words) of a
    paragraph too long for one chunk."""
    for block in blocks:
        if block.atomic or block.end - block.start <= max_chars:
            yield block.start, block.end, block.atomic
            continue
        sentence_start = block.start
        for match in _SENTENCE_END.finditer(document, block.start, block.end):
            yield from _fit(document, sentence_start, match.start() + 1, max_chars)
            sentence_start = match.end()
        yield from _fit(document, sentence_start, block.end, max_chars)


def _fit(document: str, start: int, end: int, max_chars: int) -> Iterator[tuple[int, int, bool]]:
    if end - start <= max_chars:
        yield start, end, False
        return
    for word in _WORD.finditer(document, start, end):
        # A "word" longer than a chunk (a base64 blob, a minified line) has no better place to
        # be cut, and an unbounded chunk would break the embedder's input limit.
        for cut in range(word.start(), word.end(), max_chars):
            yield cut, min(cut + max_chars, word.end()), False


def _overlap_start(
    document: str,
    *,
    previous: tuple[int, int],
    fresh: tuple[int, int],
    overlap_chars: int,
    max_chars: int,
    atomic_starts: list[int],
    atomic_ends: list[int],
) -> int:
    """Where a chunk starts: up to `overlap_chars` back into the previous chunk, at a word
    boundary, never inside a fence or table, and never so far back that it outgrows
    `max_chars`."""
    previous_start, previous_end = previous
    fresh_start, fresh_end = fresh
    position = max(previous_end - overlap_chars, previous_start + 1, fresh_end - max_chars)
    if position >= fresh_start:
        return fresh_start
    k = bisect_right(atomic_starts, position) - 1
    if k >= 0 and atomic_starts[k] < position < atomic_ends[k]:
        # Half a fence or table is noise to an embedder; keep what follows it instead.
        position = atomic_ends[k]
    # Blocks start after whitespace, so walking forward reaches a block's start before its
    # inside: only the first position needed the check above.
    while position < fresh_start:
        if document[position - 1].isspace() and not document[position].isspace():
            return position
        position += 1
    return fresh_start
