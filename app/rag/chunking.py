"""Structure-aware Markdown chunking for retrieval.

A document is cut into sections at ATX headings, sections into blocks at blank lines, and blocks
are packed into chunks of about `target_tokens`. Code fences and tables are atomic: no chunk starts
or ends inside one that the embedding model's window can hold. Every chunk is a slice of the
document (`text == document[start:end]`), so a hit can be shown in place and the chunks together
cover every non-whitespace character.

Sizes are counted as the embedding model counts (a `TokenCounter`, passed in: the chunker stays
a pure function), and no chunk's embedding text — its context (title and heading path) and its
text — exceeds the model's window: the model would never read the tail (ADR 0013). A model that
can count the whole document once and then any slice of it (a `SpanCounter`) spares the
chunker its recounts: the chunks are the same, at about a third of the tokenizer's work.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from app.kit import markdown

# The project's token estimate: good enough for budgeting, and free of a tokenizer dependency.
_CHARS_PER_TOKEN = 4

# A full stop ends a sentence before whitespace; an ideographic one ends it anyway.
_SENTENCE_END = re.compile(r"[.?!]\s+|[。！？]\s*")
_WORD = re.compile(r"\S+")
_LINE = re.compile(r"[^\n]+")
# What ends a context so that no word runs from it into the chunk's text.
_SEPARATORS = " \t\n\r"

TokenCounter = Callable[[Sequence[str]], Sequence[int]]
"""How many tokens each text is to a model, special tokens included (so `[""]` counts them)."""

SpanCounter = Callable[[int, int], int | None]
"""The tokens the slice [start, end) of one document is to a model, special tokens left out, read
off the whole document's tokens: exactly what the `TokenCounter` gives the slice's text less its
special tokens. None where a slice's own count may differ (an end inside a word, whose pieces
depend on all of it): the chunker then counts the slice's text. Its model's counts add up over
texts joined at whitespace (a word-piece model's do), which lets a chunk be measured with its
context without a count of the two together."""


@dataclass(frozen=True, slots=True)
class ChunkPiece:
    """One chunk: a slice of the document and the headings it sits under. `token_count` is the
    project's estimate (`count_tokens`), which LLM context budgets use, not the embedding
    model's count."""

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


def estimate_tokens(texts: Sequence[str]) -> list[int]:
    """`count_tokens` as a `TokenCounter` (no special tokens)."""
    return [-(-len(text) // _CHARS_PER_TOKEN) for text in texts]


def _no_context(heading_path: tuple[str, ...]) -> str:
    return ""


def chunk_markdown(
    document: str,
    *,
    target_tokens: int = 200,
    overlap_tokens: int = 30,
    max_tokens: int = 400,
    counter: TokenCounter = estimate_tokens,
    window: int | None = None,
    context: Callable[[tuple[str, ...]], str] = _no_context,
    span_counter: SpanCounter | None = None,
) -> list[ChunkPiece]:
    """Cut a Markdown document into overlapping chunks that respect its structure.

    Sizes are in `counter`'s tokens. `context(heading_path)` is what the model reads before a
    chunk's text; `window`, when set, is the most tokens the model reads of one input (special
    tokens included): no chunk's `context + text` exceeds it, and the context's share is taken
    from the target and the maximum. A fence or table longer than the window is cut at line
    ends, a line or word longer than it where it must be. `span_counter`, when given, counts
    slices of this document as `counter` would count their texts: the same chunks, faster.

    Raises:
        ValueError: if the sizes are inconsistent, or a context leaves no room in the window
            (they come from code, not from users).
    """
    if target_tokens < 1 or max_tokens < target_tokens or not 0 <= overlap_tokens < target_tokens:
        raise ValueError(
            "need 1 <= target_tokens <= max_tokens and 0 <= overlap_tokens < target_tokens"
        )
    sections, atomic_starts, atomic_ends = _sections(document)
    if not sections:
        return []
    cutter = _Cutter(document, counter, span_counter)
    contexts = [context(section.heading_path) for section in sections]
    distinct = list(dict.fromkeys(contexts))
    context_tokens = dict(zip(distinct, cutter.cost(distinct), strict=True))
    # Every block measured in one call: a tokenizer is much faster on a batch than text by text.
    # A block's cost includes the blank lines before it, so that a sum over blocks is never
    # below the count of the text they span (the estimate counts whitespace).
    bounds: list[tuple[int, int]] = []
    for section in sections:
        previous = -1
        for block in section.blocks:
            bounds.append((block.start if previous < 0 else previous, block.end))
            previous = block.end
    costs = iter(cutter.span_costs(bounds))

    pieces: list[ChunkPiece] = []
    planned: list[tuple[str, tuple[str, ...], list[tuple[int, int]]]] = []
    for section, section_context in zip(sections, contexts, strict=True):
        block_costs = [next(costs) for _ in section.blocks]
        room: int | None = None
        if window is not None:
            # What the text may add: the window less the context and the special tokens.
            room = window - context_tokens[section_context] - cutter.specials
            if room < 1:
                raise ValueError(
                    f"a context of {context_tokens[section_context]} tokens fills the window"
                )
        maximum = max_tokens if room is None else min(max_tokens, room)
        packer = _Packer(
            cutter,
            target=min(target_tokens, maximum),
            overlap=overlap_tokens,
            maximum=maximum,
            hard=room,
            atomic_starts=atomic_starts,
            atomic_ends=atomic_ends,
        )
        spans = packer.pack(section.blocks, block_costs)
        planned.append((section_context, section.heading_path, spans))

    if window is not None:
        planned = _verified(cutter, planned, window, context_tokens)
    for _, heading_path, spans in planned:
        for start, end in spans:
            text = document[start:end]
            pieces.append(
                ChunkPiece(
                    ordinal=len(pieces),
                    heading_path=heading_path,
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


class _Cutter:
    """Measures slices of the document with the counter (or the span counter, where it knows),
    and cuts what is too long."""

    def __init__(self, document: str, counter: TokenCounter, spans: SpanCounter | None) -> None:
        self.document = document
        self.counter = counter
        self.spans = spans
        self.specials = counter([""])[0]

    def cost(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text without the special tokens: what it adds to an input."""
        if not texts:
            return []
        specials = self.specials
        return [count - specials for count in self.counter(texts)]

    def span_costs(self, bounds: Sequence[tuple[int, int]]) -> list[int]:
        """`cost` of each slice [start, end) of the document: read off the span counter where
        it can tell, the rest counted in one call."""
        document = self.document
        spans = self.spans
        if spans is None:
            return self.cost([document[s:e] for s, e in bounds])
        known = [spans(s, e) for s, e in bounds]
        unknown = [bounds[i] for i, cost in enumerate(known) if cost is None]
        counted = iter(self.cost([document[s:e] for s, e in unknown]))
        return [next(counted) if cost is None else cost for cost in known]

    def span_cost(self, start: int, end: int) -> int:
        if self.spans is not None:
            cost = self.spans(start, end)
            if cost is not None:
                return cost
        return self.cost([self.document[start:end]])[0]

    def split(
        self, start: int, end: int, limit: int, pattern: re.Pattern[str] | None, atomic: bool
    ) -> Iterator[tuple[int, int, bool, int]]:
        """[start, end) as units of at most `limit` tokens: its lines (`pattern`) or else its
        sentences; a longer one as words; a longer word as slices (a base64 blob or a minified
        line has no better place to be cut, and the model never reads past its window)."""
        document = self.document
        if pattern is None:
            bounds: list[tuple[int, int]] = []
            sentence_start = start
            for match in _SENTENCE_END.finditer(document, start, end):
                bounds.append((sentence_start, match.start() + 1))
                sentence_start = match.end()
            if sentence_start < end:  # an ideographic full stop may end the block
                bounds.append((sentence_start, end))
        else:
            bounds = [
                (
                    m.start() + len(m.group()) - len(m.group().lstrip()),
                    m.start() + len(m.group().rstrip()),
                )
                for m in pattern.finditer(document, start, end)
                if not m.group().isspace()
            ]
        yield from self._within(bounds, limit, atomic, words=pattern is not _WORD)

    def _within(
        self, bounds: list[tuple[int, int]], limit: int, atomic: bool, *, words: bool
    ) -> Iterator[tuple[int, int, bool, int]]:
        measured = [((bounds[i - 1][1] if i else s), e) for i, (s, e) in enumerate(bounds)]
        for (s, e), cost in zip(bounds, self.span_costs(measured), strict=True):
            if cost <= limit:
                yield s, e, atomic, cost
            elif words:
                yield from self.split(s, e, limit, _WORD, atomic)
            else:
                yield from self._slices(s, e, limit, atomic)

    def _slices(
        self, start: int, end: int, limit: int, atomic: bool
    ) -> Iterator[tuple[int, int, bool, int]]:
        """A word cut into the longest slices that fit, each measured (a tokenizer need not be
        additive inside a word, nor monotonic: BERT reads a word of over 100 characters as one
        unknown token)."""
        while start < end:
            # [fits, over): the slice's end lies in between. Each guess scales the last
            # measured slice to the limit, a little long, so that the bracket closes from both
            # sides in a few measurements; halving takes over if it does not. The text measured
            # stays about a slice long (measuring all that is left would be quadratic).
            fits, fits_cost, over = start, 0, end + 1
            guess, tries = start + max(limit, 1), 0
            while over - fits > 1:
                probe = min(max(guess, fits + 1), over - 1)
                cost = self.span_cost(start, probe)
                if cost <= limit:
                    fits, fits_cost = probe, cost
                    if probe == end or cost == limit:
                        break
                else:
                    over = probe
                tries += 1
                scaled = start + (probe - start) * limit // max(cost, 1)
                if tries <= 4:
                    guess = scaled + 2 if cost <= limit else scaled
                elif over > end:
                    guess = fits + max(1, fits - start)
                else:
                    guess = (fits + over) // 2
            if fits == start:  # not even one character fits: it goes alone
                fits = start + 1
                fits_cost = self.span_cost(start, fits)
            yield start, fits, atomic, fits_cost
            start = fits


class _Packer:
    """Packs one section's units into chunks: [start, fresh_start, end, tokens, fresh_tokens],
    where the fresh part is the text not shared with the previous chunk."""

    def __init__(
        self,
        cutter: _Cutter,
        *,
        target: int,
        overlap: int,
        maximum: int,
        hard: int | None,
        atomic_starts: list[int],
        atomic_ends: list[int],
    ) -> None:
        self.cutter = cutter
        self.target = target
        self.overlap = min(overlap, target - 1)
        self.maximum = maximum
        self.hard = hard
        # A chunk with less fresh text than this is hardly worth an embedding of its own.
        self.tiny = target // 4
        self.atomic_starts = atomic_starts
        self.atomic_ends = atomic_ends

    def units(self, blocks: list[_Block], costs: list[int]) -> Iterator[tuple[int, int, bool, int]]:
        """The packable pieces of a section: whole blocks, or the sentences (else words) of a
        paragraph too long for one chunk, or the lines of a fence or table too long for the
        window."""
        for block, cost in zip(blocks, costs, strict=True):
            if block.atomic:
                if self.hard is None or cost <= self.hard:
                    yield block.start, block.end, True, cost
                else:
                    yield from self.cutter.split(block.start, block.end, self.hard, _LINE, True)
            elif cost <= self.maximum:
                yield block.start, block.end, False, cost
            else:
                yield from self.cutter.split(block.start, block.end, self.maximum, None, False)

    def pack(self, blocks: list[_Block], costs: list[int]) -> list[tuple[int, int]]:
        spans: list[list[int]] = []
        for unit_start, unit_end, atomic, cost in self.units(blocks, costs):
            if not spans:
                spans.append([unit_start, unit_start, unit_end, cost, cost])
                continue
            span = spans[-1]
            total = span[3] + cost
            fits = total <= self.target
            # A heading alone is a poor chunk: let a small start take the next block with it.
            absorbs = (
                span[4] < self.tiny
                and (atomic or total <= self.maximum)
                and (self.hard is None or total <= self.hard)
            )
            if fits or absorbs:
                span[2], span[3], span[4] = unit_end, total, span[4] + cost
                continue
            start, shared = self._overlap(span, unit_start, cost)
            spans.append([start, unit_start, unit_end, shared + cost, cost])
        if len(spans) >= 2:
            previous, last = spans[-2], spans[-1]
            if last[4] < self.tiny and previous[3] + last[4] <= self.maximum:
                previous[2], previous[3] = last[2], previous[3] + last[4]
                spans.pop()
        return [(span[0], span[2]) for span in spans]

    def _overlap(self, previous: list[int], fresh_start: int, fresh_cost: int) -> tuple[int, int]:
        """Where a chunk starts, and the tokens it shares: up to `overlap` tokens back into the
        previous chunk, at a word boundary, never inside a fence or table, and never so far back
        that it outgrows the maximum."""
        budget = min(self.overlap, self.maximum - fresh_cost)
        if budget <= 0:
            return fresh_start, 0
        previous_start, previous_end, previous_tokens = previous[0], previous[2], previous[3]
        # Characters per token as the previous chunk has them: a first guess, then measured.
        chars = budget * (previous_end - previous_start) // max(previous_tokens, 1)
        for _ in range(3):
            position = _overlap_start(
                self.cutter.document,
                previous=(previous_start, previous_end),
                fresh_start=fresh_start,
                overlap_chars=chars,
                atomic_starts=self.atomic_starts,
                atomic_ends=self.atomic_ends,
            )
            if position >= fresh_start:
                break
            shared = self.cutter.span_cost(position, fresh_start)
            if shared <= budget:
                return position, shared
            chars = chars * budget // shared - 1
        return fresh_start, 0


def _verified(
    cutter: _Cutter,
    planned: list[tuple[str, tuple[str, ...], list[tuple[int, int]]]],
    window: int,
    context_tokens: dict[str, int],
) -> list[tuple[str, tuple[str, ...], list[tuple[int, int]]]]:
    """The plan with every chunk's embedding text measured whole. The packing adds up the
    counts of its parts, which is exact for a word-piece model cut at whitespace; a chunk that
    still exceeds the window (a tokenizer that merges across the cut, or parts cut inside a
    word) is cut again, at words where it can be, each piece measured. With a span counter a
    chunk is read off the document's count where its context ends in whitespace (so that the
    two cannot merge into one word) and its ends lie between words; the rest are counted."""
    document = cutter.document
    flat = [(context, s, e) for context, _, spans in planned for s, e in spans]
    known: list[int | None] = []
    for context, s, e in flat:
        cost = None
        if cutter.spans is not None and (not context or context[-1] in _SEPARATORS):
            cost = cutter.spans(s, e)
        known.append(None if cost is None else context_tokens[context] + cutter.specials + cost)
    unknown = [
        context + document[s:e]
        for (context, s, e), cost in zip(flat, known, strict=True)
        if cost is None
    ]
    counted = iter(cutter.counter(unknown) if unknown else [])
    counts = iter([next(counted) if cost is None else cost for cost in known])
    result: list[tuple[str, tuple[str, ...], list[tuple[int, int]]]] = []
    for context, heading_path, spans in planned:
        kept: list[tuple[int, int]] = []
        for start, end in spans:
            if next(counts) <= window:
                kept.append((start, end))
                continue
            kept += _refit(cutter, context, start, end, window)
        result.append((context, heading_path, kept))
    return result


def _refit(
    cutter: _Cutter, context: str, start: int, end: int, window: int
) -> list[tuple[int, int]]:
    document = cutter.document

    def fits(s: int, e: int) -> bool:
        return cutter.counter([context + document[s:e]])[0] <= window

    words = [(m.start(), m.end()) for m in _WORD.finditer(document, start, end)]
    pieces: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        first = words[i][0]
        if not fits(first, words[i][1]):
            # One word alone is too long: cut it into slices that fit.
            s = first
            while s < words[i][1]:
                e = words[i][1]
                while e - s > 1 and not fits(s, e):
                    e = s + (e - s) // 2
                pieces.append((s, e))
                s = e
            i += 1
            continue
        # The most words from the i-th on that fit: words[i:low] do.
        low, high = i + 1, len(words)
        while high > low:
            middle = (low + high + 1) // 2
            if fits(first, words[middle - 1][1]):
                low = middle
            else:
                high = middle - 1
        pieces.append((first, words[low - 1][1]))
        i = low
    return pieces


def _overlap_start(
    document: str,
    *,
    previous: tuple[int, int],
    fresh_start: int,
    overlap_chars: int,
    atomic_starts: list[int],
    atomic_ends: list[int],
) -> int:
    """Where a chunk starts: about `overlap_chars` back into the previous chunk, at a word
    boundary, never inside a fence or table."""
    previous_start, previous_end = previous
    position = max(previous_end - overlap_chars, previous_start + 1)
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
