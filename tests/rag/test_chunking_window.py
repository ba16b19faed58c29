"""Chunks fit the embedding model's window as the model counts: every chunk's embedding text (title
and heading path included) is at most 256 word pieces to the local model's own tokenizer, for
generated Markdown of many kinds (seeded: a failure names the document), and the chunker's
other invariants still hold."""

from __future__ import annotations

import base64
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from tokenizers import Tokenizer

from app.rag import index
from app.rag.chunking import ChunkPiece, chunk_markdown
from app.rag.embeddings.base import estimate_tokens
from app.rag.embeddings.local import MODEL_DIR, WINDOW, LocalEmbedder

_PROSE = [
    "the",
    "deploy",
    "rollback",
    "configuration",
    "of",
    "v1.2.3",
    "e.g.",
    "0x3f9a",
    "2026-12-03T19:15:00Z",
    "https://example.com/a/b?c=1&d=two",
    "naïve",
    "Straße",
    "(see",
    "above)",
    "O(n²)",
]
_CJK = "日本語のテキストを分割します。中文文本也需要处理！한국어 문장도 있습니다。"
_CODE = [
    "result[i] = fn(x_1, y_2)->z;  // 0x3f",
    "if (a && b || !c) { return {k: [1, 2, 3]}; }",
    "SELECT id, md5(body) FROM t WHERE x >= 42;",
    "",
    "    def f(self, *args, **kwargs): ...",
]


# Counting needs only the embedder's tokenizer: the model itself is never loaded here.
EMBEDDER = LocalEmbedder()


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    """The model's tokenizer, loaded here, uncut: the yardstick, independent of the code's."""
    loaded = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    loaded.no_truncation()
    loaded.no_padding()
    return loaded


def pieces(tokenizer: Any, text: str) -> int:
    """What the model makes of `text`: word pieces with [CLS] and [SEP]."""
    return len(tokenizer.encode(text).ids)


@dataclass
class Sample:
    seed: int
    title: str
    document: str
    atomic: list[tuple[int, int]] = field(default_factory=list)
    chunks: list[ChunkPiece] = field(default_factory=list)


def _generate(seed: int, embedder: LocalEmbedder) -> Sample:
    rng = random.Random(seed)
    title = rng.choice(
        [
            "Runbook",
            " ".join(rng.choice(_PROSE) for _ in range(rng.randint(20, 120))),
            "한국어 제목 " * rng.randint(10, 60),
            "x" * 500,
        ]
    )
    parts: list[str] = []
    atomic: list[tuple[int, int]] = []
    offset = 0
    for _ in range(rng.randint(1, 14)):
        kind = rng.choices(
            ["heading", "prose", "cjk", "fence", "table", "urls", "blob"], [3, 6, 2, 3, 2, 1, 1]
        )[0]
        long = rng.random() < 0.3
        if kind == "heading":
            words = rng.randint(1, 80 if long else 6)
            text = (
                "#" * rng.randint(1, 4) + " " + " ".join(rng.choice(_PROSE) for _ in range(words))
            )
        elif kind == "prose":
            sentences = [
                " ".join(rng.choice(_PROSE) for _ in range(rng.randint(3, 40))) + rng.choice(".?!")
                for _ in range(rng.randint(20, 80) if long else rng.randint(1, 5))
            ]
            text = " ".join(sentences)
        elif kind == "cjk":
            text = _CJK * (rng.randint(10, 40) if long else rng.randint(1, 3))
        elif kind == "fence":
            lines = [rng.choice(_CODE) for _ in range(rng.randint(60, 300) if long else 6)]
            if rng.random() < 0.2:
                lines.insert(1, "var m=" + ";".join(f"a{i}=b[{i}]" for i in range(400)))
            text = "```js\n" + "\n".join(lines) + "\n```"
        elif kind == "table":
            rows = rng.randint(40, 200) if long else 3
            cells = [
                f"| {rng.choice(_PROSE)} | https://example.com/{i}?q={i} |" for i in range(rows)
            ]
            text = "\n".join(["| name | url |", "| --- | --- |", *cells])
        elif kind == "urls":
            text = "\n".join(f"- https://example.org/{rng.random():.8f}/x" for _ in range(60))
        else:
            text = base64.b64encode(rng.randbytes(rng.randint(200, 6000))).decode()
        if kind in ("fence", "table"):
            atomic.append((offset, offset + len(text)))
        parts += [text, "\n\n"]
        offset += len(text) + 2
    document = "".join(parts)
    sample = Sample(seed=seed, title=title, document=document, atomic=atomic)
    sample.chunks = index.chunk(document, title=title, embedder=embedder)
    return sample


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return [_generate(seed, EMBEDDER) for seed in range(40)]


def _embedding_text(sample: Sample, chunk: ChunkPiece) -> str:
    return index.embedding_text(sample.title, chunk.heading_path, chunk.text, EMBEDDER)


def test_every_chunk_s_embedding_text_fits_the_local_model_s_window(
    samples: list[Sample], tokenizer: Any
) -> None:
    assert WINDOW == 256
    for sample in samples:
        texts = [_embedding_text(sample, chunk) for chunk in sample.chunks]
        for chunk, encoding in zip(sample.chunks, tokenizer.encode_batch(texts), strict=True):
            assert len(encoding.ids) <= 256, (sample.seed, chunk.ordinal, len(encoding.ids))


def test_chunks_are_still_slices_that_cover_the_document(samples: list[Sample]) -> None:
    for sample in samples:
        document, chunks = sample.document, sample.chunks
        assert [c.ordinal for c in chunks] == list(range(len(chunks))), sample.seed
        covered_to = 0
        for chunk in chunks:
            assert chunk.text == document[chunk.start : chunk.end], sample.seed
            assert chunk.text == chunk.text.strip() != "", sample.seed
            assert document[covered_to : chunk.start].isspace() or chunk.start <= covered_to
            covered_to = max(covered_to, chunk.end)
        assert document[covered_to:].strip() == "", sample.seed
        for before, after in zip(chunks, chunks[1:], strict=False):
            assert before.start < after.start, sample.seed
            assert before.end < after.end, sample.seed


def test_a_fence_or_table_that_fits_is_whole_and_a_longer_one_is_cut_at_line_ends(
    samples: list[Sample], tokenizer: Any
) -> None:
    embedder = EMBEDDER
    cut = 0
    for sample in samples:
        document = sample.document
        for start, end in sample.atomic:
            holders = [c for c in sample.chunks if c.start < end and start < c.end]
            context = index.context(sample.title, holders[0].heading_path, embedder)
            if pieces(tokenizer, context + document[start:end]) <= 256:
                assert any(c.start <= start and end <= c.end for c in holders), sample.seed
                continue
            cut += 1
            for chunk in holders:
                for edge in (chunk.start, chunk.end):
                    if not start < edge < end:
                        continue
                    line_start = document.rfind("\n", 0, edge) + 1
                    line_end = document.find("\n", edge)
                    line = document[line_start:line_end]
                    at_line_end = document[line_start:edge].strip() == "" or (
                        document[edge:line_end].strip() == ""
                    )
                    # A line the window cannot hold has to be cut inside.
                    too_long = pieces(tokenizer, context + line) > 256
                    assert at_line_end or too_long, (sample.seed, edge)
    assert cut > 10  # the generator's long fences and tables really are too long


def test_prose_chunks_are_about_200_word_pieces(samples: list[Sample], tokenizer: Any) -> None:
    rng = random.Random(3)
    document = "\n\n".join(
        " ".join(rng.choice(_PROSE[:5]) for _ in range(rng.randint(20, 120))) + "."
        for _ in range(60)
    )
    embedder = EMBEDDER

    chunks = index.chunk(document, title="Notes", embedder=embedder)

    counts = [
        pieces(tokenizer, embedding_text)
        for embedding_text in (
            index.embedding_text("Notes", c.heading_path, c.text, embedder) for c in chunks
        )
    ]
    # Blocks are packed up to the target, so a chunk ends when the next paragraph would pass it.
    assert 150 <= statistics.median(counts) <= 210
    assert max(counts) <= 256


def test_what_the_four_characters_estimate_let_exceed_256_word_pieces_is_now_split(
    tokenizer: Any,
) -> None:
    # Version numbers and hex: about one word piece per character, four times the estimate.
    document = "# Releases\n\n" + " ".join(f"v{i}.{i % 7}.{i % 3} 0x{i:04x}" for i in range(400))
    title = "Release history"
    embedder = EMBEDDER

    def sizes(chunks: list[ChunkPiece]) -> list[int]:
        return [
            pieces(tokenizer, index.embedding_text(title, c.heading_path, c.text, embedder))
            for c in chunks
        ]

    estimated = chunk_markdown(document, target_tokens=200, overlap_tokens=30, max_tokens=400)
    counted = index.chunk(document, title=title, embedder=embedder)

    assert max(sizes(estimated)) > 256
    assert max(sizes(counted)) <= 256
    assert len(counted) > len(estimated)


def test_a_long_title_and_heading_path_take_at_most_half_the_window(tokenizer: Any) -> None:
    embedder = EMBEDDER
    title = "한국어 제목 " * 100
    document = "# " + "heading " * 300 + "\n\n" + "Body words follow. " * 300

    chunks = index.chunk(document, title=title, embedder=embedder)

    for chunk in chunks:
        context = index.context(title, chunk.heading_path, embedder)
        assert pieces(tokenizer, context) <= 128
        assert context.endswith("…\n\n")
        assert pieces(tokenizer, context + chunk.text) <= 256


def test_a_base64_blob_is_cut_into_slices_that_fit(tokenizer: Any) -> None:
    blob = base64.b64encode(random.Random(5).randbytes(12_000)).decode()
    document = f"Attachment:\n\n{blob}\n\nEnd."
    embedder = EMBEDDER

    chunks = index.chunk(document, title="Blob", embedder=embedder)

    start = document.index(blob)
    inside = [c for c in chunks if start <= c.start < start + len(blob)]
    assert len(inside) > 3
    # Contiguous slices: a word has no boundary for an overlap to start at.
    for before, after in zip(inside, inside[1:], strict=False):
        assert after.start == before.end
    for chunk in chunks:
        text = index.embedding_text("Blob", chunk.heading_path, chunk.text, embedder)
        assert pieces(tokenizer, text) <= 256


@pytest.mark.parametrize(
    ("text", "tokens"), [("", 0), ("abcd", 1), ("abcde", 2), ("日本語", 3), ("naïve", 2)]
)
def test_a_hosted_model_s_estimate_counts_ascii_by_fours_and_other_characters_one_each(
    text: str, tokens: int
) -> None:
    assert estimate_tokens([text]) == [tokens]


def test_a_context_that_fills_the_window_is_refused() -> None:
    with pytest.raises(ValueError, match="context"):
        chunk_markdown(
            "Some text.", counter=estimate_tokens, window=4, context=lambda path: "x" * 40
        )


def test_a_chunk_a_counter_finds_longer_than_its_parts_is_cut_again_to_fit() -> None:
    # Not additive: blocks joined by a blank line cost ten tokens more than they add up to.
    def counter(texts: Sequence[str]) -> list[int]:
        return [len(t) // 4 + (10 if "\n\n" in t.strip() else 0) for t in texts]

    document = "\n\n".join(f"Paragraph {i} has a few words in it." for i in range(40))

    chunks = chunk_markdown(document, counter=counter, window=60, context=lambda path: "Title\n\n")

    assert all(counter(["Title\n\n" + c.text])[0] <= 60 for c in chunks)
    assert all(c.text == document[c.start : c.end] for c in chunks)
    covered = "".join(document[c.start : c.end] for c in chunks)
    assert all(f"Paragraph {i} " in covered for i in range(40))


def test_a_long_cjk_paragraph_splits_at_ideographic_full_stops(tokenizer: Any) -> None:
    document = "長い段落です。" * 300

    chunks = index.chunk(document, title="日本語", embedder=EMBEDDER)

    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.endswith("。")
        text = index.embedding_text("日本語", chunk.heading_path, chunk.text, EMBEDDER)
        assert pieces(tokenizer, text) <= 256
