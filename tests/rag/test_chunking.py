"""Markdown chunking: the invariants retrieval relies on, checked on hand-written documents and on
a few hundred generated ones (seeded, so a failure names the document that broke)."""

from __future__ import annotations

import random
import re
from bisect import bisect_right
from dataclasses import dataclass, field

import pytest

from app.rag.chunking import ChunkPiece, chunk_markdown, count_tokens

_WORDS = [
    "alpha",
    "beta",
    "rollback",
    "deploy",
    "configuration",
    "x",
    "naïve",
    "日本語",
    "end-to-end",
    "v1.2.3",
    "e.g.",
    "(see",
    "above)",
]


@dataclass
class Sample:
    """A generated document and what its generator knows about it."""

    seed: int
    document: str
    target_tokens: int
    overlap_tokens: int
    max_tokens: int
    atomic: list[tuple[int, int]] = field(default_factory=list)
    heading_starts: list[int] = field(default_factory=list)
    heading_paths: list[tuple[str, ...]] = field(default_factory=list)
    chunks: list[ChunkPiece] = field(default_factory=list)

    def section_of(self, offset: int) -> int:
        """The index of the heading above `offset`, -1 before the first one."""
        return bisect_right(self.heading_starts, offset) - 1


def _sentence(rng: random.Random) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 20)))
    return words + rng.choice(".?!")


def _paragraph(rng: random.Random, *, long: bool) -> list[str]:
    sentences = [_sentence(rng) for _ in range(rng.randint(60, 200) if long else rng.randint(1, 6))]
    lines: list[str] = []
    for sentence in sentences:
        if lines and rng.random() < 0.7:
            lines[-1] += " " + sentence
        else:
            lines.append(sentence + rng.choice(["", "", "  "]))
    return lines


def _fence(rng: random.Random, *, long: bool) -> tuple[list[str], int]:
    """The lines of a fence whose body is full of near-misses, and its opener's indentation."""
    char = rng.choice("`~")
    size = rng.randint(3, 5)
    other = "~" if char == "`" else "`"
    indent = rng.choice(["", "", "  "])
    body_choices = [
        "code = 1",
        "",
        "   ",
        "# a shell comment, not a heading",
        "## another one",
        other * 3,
        char * (size - 1),
        char * size + " followed by text",
        "| not | a table |",
        "    indented.  Sentence. Another!",
    ]
    body = [rng.choice(body_choices) for _ in range(rng.randint(80, 250) if long else 5)]
    opener = indent + char * size + rng.choice(["", "python", " sh"])
    closer = indent + char * rng.randint(size, size + 2) + rng.choice(["", "  "])
    return [opener, *body, closer], len(indent)


def _table(rng: random.Random, *, long: bool) -> list[str]:
    rows = ["| name | value |", "| --- | --- |"]
    for _ in range(rng.randint(60, 150) if long else rng.randint(1, 4)):
        rows.append(f"| {rng.choice(_WORDS)} | {rng.choice(_WORDS)} {rng.choice(_WORDS)} |")
    return rows


def _generate(seed: int) -> Sample:
    rng = random.Random(seed)
    newline = rng.choice(["\n", "\n", "\r\n"])
    target = rng.randint(20, 200)
    sample = Sample(
        seed=seed,
        document="",
        target_tokens=target,
        overlap_tokens=rng.randint(0, target // 2),
        max_tokens=int(target * rng.uniform(1.0, 3.0)),
    )
    parts: list[str] = [rng.choice(["", newline, "  " + newline])]
    offset = len(parts[0])
    stack: list[tuple[int, str]] = []
    for _ in range(rng.randint(1, 25)):
        kind = rng.choices(["heading", "paragraph", "fence", "table", "list"], [2, 6, 2, 1, 1])[0]
        long = rng.random() < 0.15
        indent = 0
        if kind == "heading":
            level = rng.randint(1, 4)
            title = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
            lines = ["#" * level + " " + title + rng.choice(["", " ##"])]
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            sample.heading_starts.append(offset)
            sample.heading_paths.append(tuple(text for _, text in stack))
        elif kind == "paragraph":
            lines = _paragraph(rng, long=long)
        elif kind == "fence":
            lines, indent = _fence(rng, long=long)
        elif kind == "table":
            lines = _table(rng, long=long)
        else:
            lines = [f"- {_sentence(rng)}" for _ in range(rng.randint(1, 5))]
        text = newline.join(lines)
        if kind in ("fence", "table"):
            sample.atomic.append((offset + indent, offset + len(text.rstrip())))
        separator = rng.choice([newline * 2, newline * 2, newline * 3, newline + " \t" + newline])
        parts += [text, separator]
        offset += len(text) + len(separator)
    sample.document = "".join(parts)
    sample.chunks = chunk_markdown(
        sample.document,
        target_tokens=sample.target_tokens,
        overlap_tokens=sample.overlap_tokens,
        max_tokens=sample.max_tokens,
    )
    return sample


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return [_generate(seed) for seed in range(300)]


def _holds_atomic(sample: Sample, chunk: ChunkPiece) -> bool:
    return any(start < chunk.end and chunk.start < end for start, end in sample.atomic)


def test_every_chunk_s_offsets_reproduce_its_text(samples: list[Sample]) -> None:
    for sample in samples:
        chunks = sample.chunks
        assert chunks, sample.seed
        assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks))), sample.seed
        for chunk in chunks:
            assert chunk.text == sample.document[chunk.start : chunk.end], sample.seed
            assert chunk.text == chunk.text.strip() != "", sample.seed
            assert chunk.token_count == count_tokens(chunk.text), sample.seed
        for before, after in zip(chunks, chunks[1:], strict=False):
            assert before.start < after.start, sample.seed
            assert before.end < after.end, sample.seed


def test_the_chunks_cover_every_non_whitespace_character(samples: list[Sample]) -> None:
    for sample in samples:
        covered_to = 0
        for chunk in sample.chunks:
            assert sample.document[covered_to : chunk.start].isspace() or (
                chunk.start <= covered_to
            ), sample.seed
            covered_to = max(covered_to, chunk.end)
        assert sample.document[covered_to:].strip() == "", sample.seed


def test_a_code_fence_or_table_is_never_cut(samples: list[Sample]) -> None:
    for sample in samples:
        for start, end in sample.atomic:
            assert any(c.start <= start and end <= c.end for c in sample.chunks), sample.seed
            for chunk in sample.chunks:
                assert not start < chunk.start < end, (sample.seed, start, end)
                assert not start < chunk.end < end, (sample.seed, start, end)
    # The generator's long fences and tables really are longer than a chunk may be.
    assert (
        sum(
            count_tokens(sample.document[start:end]) > sample.max_tokens
            for sample in samples
            for start, end in sample.atomic
        )
        > 20
    )


def test_prose_chunks_never_exceed_max_tokens(samples: list[Sample]) -> None:
    for sample in samples:
        for chunk in sample.chunks:
            if not _holds_atomic(sample, chunk):
                assert chunk.token_count <= sample.max_tokens, (sample.seed, chunk.ordinal)


def test_chunks_never_cross_a_heading_and_carry_its_path(samples: list[Sample]) -> None:
    for sample in samples:
        starts = {chunk.start for chunk in sample.chunks}
        for heading in sample.heading_starts:
            assert heading in starts, (sample.seed, heading)
            assert not any(c.start < heading < c.end for c in sample.chunks), sample.seed
        for chunk in sample.chunks:
            section = sample.section_of(chunk.start)
            expected = sample.heading_paths[section] if section >= 0 else ()
            assert chunk.heading_path == expected, (sample.seed, chunk.ordinal)


def test_overlap_stays_in_its_section_within_budget_and_on_word_boundaries(
    samples: list[Sample],
) -> None:
    overlapping = 0
    for sample in samples:
        document = sample.document
        for before, after in zip(sample.chunks, sample.chunks[1:], strict=False):
            if after.start >= before.end:
                continue
            overlapping += 1
            assert sample.section_of(after.start) == sample.section_of(before.start), sample.seed
            assert before.end - after.start <= sample.overlap_tokens * 4, sample.seed
            assert document[after.start - 1].isspace(), (sample.seed, after.ordinal)
    assert overlapping > 100


def test_an_empty_or_blank_document_gives_no_chunks() -> None:
    for document in ["", "   ", "\n\n\t\n", "\r\n \r\n"]:
        assert chunk_markdown(document) == []


def test_a_document_without_headings_has_an_empty_heading_path() -> None:
    chunks = chunk_markdown("Just a note.\n\nAnd another line.")

    assert [(c.heading_path, c.text) for c in chunks] == [
        ((), "Just a note.\n\nAnd another line."),
    ]


def test_heading_paths_nest_by_level_and_a_new_top_level_heading_resets_them() -> None:
    document = (
        "Preamble.\n\n# Deploy\n\nSteps.\n\n## Rollback ##\n\nUndo.\n\n### Database\n\nRestore.\n\n"
        "## Canary\n\nSlowly.\n\n# Operate\n\nWatch.\n\n#hashtag is not a heading\n"
    )

    chunks = chunk_markdown(document)

    assert [(c.heading_path, c.text) for c in chunks] == [
        ((), "Preamble."),
        (("Deploy",), "# Deploy\n\nSteps."),
        (("Deploy", "Rollback"), "## Rollback ##\n\nUndo."),
        (("Deploy", "Rollback", "Database"), "### Database\n\nRestore."),
        (("Deploy", "Canary"), "## Canary\n\nSlowly."),
        (("Operate",), "# Operate\n\nWatch.\n\n#hashtag is not a heading"),
    ]


def test_hashes_inside_a_code_fence_are_not_headings() -> None:
    document = "# Setup\n\n```sh\n# install\nmake\n\n# run\nmake run\n```\n"

    chunks = chunk_markdown(document)

    assert [(c.heading_path, c.text) for c in chunks] == [(("Setup",), document.strip())]


def test_a_code_fence_is_never_cut_in_half() -> None:
    fence = "```python\n" + "\n\n".join(f"value_{i} = {i}" for i in range(300)) + "\n```"
    document = f"# Code\n\nBefore.\n\n{fence}\n\nAfter the fence."

    chunks = chunk_markdown(document, target_tokens=50, overlap_tokens=10, max_tokens=100)

    holders = [c for c in chunks if fence in c.text]
    assert len(holders) == 1
    assert holders[0].token_count > 100
    assert not any("value_" in c.text for c in chunks if c is not holders[0])


def test_a_fence_closes_only_on_its_own_character_at_its_own_length() -> None:
    fence = "````md\n```\nnot closed\n\n~~~~~\n\n````` with text\n\n# inner\n`````"
    document = f"{fence}\n\ntail"

    chunks = chunk_markdown(document, target_tokens=5, overlap_tokens=0, max_tokens=5)

    assert [c.text for c in chunks] == [fence, "tail"]


def test_an_unclosed_fence_runs_to_the_end_of_the_document() -> None:
    document = "Intro.\n\n~~~\ncode\n\n# not a heading\n\nmore code\n"

    chunks = chunk_markdown(document, target_tokens=2, overlap_tokens=0, max_tokens=2)

    assert [(c.heading_path, c.text) for c in chunks] == [
        ((), "Intro."),
        ((), "~~~\ncode\n\n# not a heading\n\nmore code"),
    ]


def test_a_table_is_never_cut_in_half() -> None:
    table = "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | row number {i} |" for i in range(200))
    document = f"Before the table.\n{table}\nAfter the table."

    chunks = chunk_markdown(document, target_tokens=30, overlap_tokens=10, max_tokens=60)

    assert [c.text for c in chunks if "| a | b |" in c.text] == [
        c.text for c in chunks if "row number" in c.text
    ]
    assert sum(table in c.text for c in chunks) == 1


def test_consecutive_chunks_overlap_at_word_boundaries() -> None:
    document = "\n\n".join(" ".join(f"word{i}x{j}" for j in range(12)) + "." for i in range(40))

    chunks = chunk_markdown(document, target_tokens=60, overlap_tokens=15, max_tokens=120)

    assert len(chunks) > 5
    for before, after in zip(chunks, chunks[1:], strict=False):
        shared = before.end - after.start
        assert 0 < shared <= 15 * 4
        assert document[after.start - 1].isspace()


def test_overlap_does_not_reach_into_a_fence() -> None:
    fence = "```\n" + "x = 1\n" * 30 + "```"
    document = f"{fence}\n\n" + "Plain words follow here. " * 30

    chunks = chunk_markdown(document, target_tokens=40, overlap_tokens=20, max_tokens=80)

    assert chunks[0].text == fence
    assert all("x = 1" not in c.text for c in chunks[1:])


def test_a_huge_single_paragraph_splits_at_sentence_ends() -> None:
    sentences = [
        f"Sentence {i} says something {'long ' * (i % 7)}and ends here." for i in range(400)
    ]
    sentences[10] = sentences[10].replace(".", "?")
    sentences[20] = sentences[20].replace(".", "!")
    document = " ".join(sentences)

    chunks = chunk_markdown(document, target_tokens=100, overlap_tokens=20, max_tokens=150)

    assert len(chunks) > 10
    for chunk in chunks:
        assert chunk.token_count <= 150
        assert chunk.text[-1] in ".?!"
        assert chunk.end == len(document) or document[chunk.end].isspace()


def test_a_sentence_longer_than_max_tokens_splits_at_whitespace() -> None:
    document = " ".join(f"w{i}" for i in range(3000))

    chunks = chunk_markdown(document, target_tokens=50, overlap_tokens=10, max_tokens=80)

    assert len(chunks) > 10
    for chunk in chunks:
        assert chunk.token_count <= 80
        assert chunk.start == 0 or document[chunk.start - 1] == " "
        assert chunk.end == len(document) or document[chunk.end] == " "


def test_a_word_longer_than_max_tokens_is_cut_to_fit() -> None:
    document = "short words then " + "z" * 1000

    chunks = chunk_markdown(document, target_tokens=20, overlap_tokens=5, max_tokens=40)

    assert all(c.token_count <= 40 for c in chunks)
    assert "".join(c.text for c in chunks[1:]) == "z" * 1000


def test_small_paragraphs_are_packed_up_to_the_target() -> None:
    document = "\n\n".join(f"Paragraph {i} is short." for i in range(100))

    chunks = chunk_markdown(document, target_tokens=50, overlap_tokens=0, max_tokens=100)

    assert len(chunks) < 20
    assert all(c.token_count <= 50 for c in chunks[:-1])
    assert all(c.text.count("Paragraph") > 1 for c in chunks)


def test_a_heading_takes_the_following_block_into_its_chunk() -> None:
    paragraph = "A long paragraph of prose. " * 40
    document = f"## Notes\n\n{paragraph.strip()}"

    chunks = chunk_markdown(document, target_tokens=200, overlap_tokens=30, max_tokens=400)

    assert [c.text for c in chunks] == [document]


def test_a_tiny_trailing_piece_joins_the_previous_chunk() -> None:
    body = "\n\n".join(f"Paragraph number {i} has a handful of words in it." for i in range(4))
    document = f"{body}\n\nThe end."

    chunks = chunk_markdown(document, target_tokens=50, overlap_tokens=0, max_tokens=100)

    assert chunks[-1].text.endswith("The end.")
    assert chunks[-1].text != "The end."
    assert chunks[-1].token_count <= 100


def test_crlf_input_keeps_offsets_into_the_original_string() -> None:
    document = "# Deploy\r\n\r\nRun it.\r\n\r\n## Rollback\r\n\r\n```sh\r\nundo\r\n\r\n```\r\n"

    chunks = chunk_markdown(document)

    assert [(c.heading_path, c.text) for c in chunks] == [
        (("Deploy",), "# Deploy\r\n\r\nRun it."),
        (("Deploy", "Rollback"), "## Rollback\r\n\r\n```sh\r\nundo\r\n\r\n```"),
    ]
    assert all(c.text == document[c.start : c.end] for c in chunks)


@pytest.mark.parametrize(
    ("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("é" * 8, 2)]
)
def test_count_tokens_is_a_quarter_of_the_length_rounded_up(text: str, tokens: int) -> None:
    assert count_tokens(text) == tokens


@pytest.mark.parametrize(
    ("target", "overlap", "maximum"), [(0, 0, 10), (100, 0, 50), (100, 100, 200), (100, -1, 200)]
)
def test_inconsistent_sizes_are_rejected(target: int, overlap: int, maximum: int) -> None:
    with pytest.raises(ValueError, match="target_tokens"):
        chunk_markdown("text", target_tokens=target, overlap_tokens=overlap, max_tokens=maximum)


def test_a_megabyte_of_markdown_keeps_every_invariant() -> None:
    # Speed is measured by `corpus bench` (ingest chunks per second), not by a timed test.
    rng = random.Random(7)
    parts: list[str] = []
    size = 0
    while size < 1_000_000:
        parts.append(f"## Part {len(parts)}")
        parts.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(10, 600))) + ".")
        parts.append("```\n" + "code line\n" * rng.randint(1, 80) + "```")
        parts.append("\n".join(f"| {i} | cell |" for i in range(rng.randint(2, 40))))
        size += sum(len(part) + 2 for part in parts[-4:])
    documents = ["\n\n".join(parts), "word " * 200_000, "a line of text\n" * 70_000]

    for document in documents:
        chunks = chunk_markdown(document)
        assert chunks
        assert all(document[c.start : c.end] == c.text for c in chunks)
        assert [c.start for c in chunks] == sorted({c.start for c in chunks})


def test_the_generator_makes_the_documents_the_invariants_need(samples: list[Sample]) -> None:
    # Guards the property tests against a generator that silently stops exercising a case.
    assert sum("\r\n" in s.document for s in samples) > 30
    assert sum(bool(s.heading_starts) for s in samples) > 100
    assert sum(any(c.token_count > s.max_tokens for c in s.chunks) for s in samples) > 10
    assert sum(re.search(r"[.?!] ", s.document) is not None for s in samples) > 100
