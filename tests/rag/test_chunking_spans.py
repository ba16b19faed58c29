"""The local model counts a document's slices off one pass of its tokenizer (`span_counts`): the
chunks are exactly those that counting every slice's text gives, on real Markdown and on the
texts where a word-piece tokenizer is least regular, and every chunk still fits the window as
the model's own tokenizer counts it."""

from __future__ import annotations

import base64
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.bench.evaluation import BUNDLED, load_dataset, title_and_text
from app.rag import index
from app.rag.chunking import ChunkPiece, TokenCounter, chunk_markdown
from app.rag.embeddings import local
from app.rag.embeddings.base import SpanCounter, Wrapping
from app.rag.embeddings.hash import HashEmbedder
from app.rag.embeddings.local import WINDOW, LocalEmbedder
from app.rag.embeddings.timed import TimedEmbedder

ROOT = Path(__file__).resolve().parents[2]
# Counting needs only the tokenizer: the model itself is never loaded here.
EMBEDDER = LocalEmbedder()


class SliceBySlice(Wrapping):
    """The local model's counter without its span counter: every slice's text counted, as
    before span counters (and as for every provider that has none)."""

    def span_counts(self, document: str) -> SpanCounter | None:
        return None


PLAIN = SliceBySlice(EMBEDDER)


def pieces(text: str) -> int:
    """What the model makes of `text`, [CLS] and [SEP] included: the count a span counter must
    agree with."""
    return local.count_tokens([text])[0]


def _real_markdown() -> list[tuple[str, str]]:
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
    documents = [(str(path.relative_to(ROOT)), path.read_text()) for path in files]
    codedocs = load_dataset(BUNDLED[str(Path("codedocs"))])
    return documents + [title_and_text(doc) for doc in codedocs.corpus]


def test_real_markdown_is_cut_the_same_read_off_the_document_as_counted_slice_by_slice() -> None:
    documents = _real_markdown()
    assert len(documents) > 700

    for title, text in documents:
        assert index.chunk(text, title=title, embedder=EMBEDDER) == index.chunk(
            text, title=title, embedder=PLAIN
        ), title


_RNG = random.Random(33)
_BLOB = base64.b64encode(_RNG.randbytes(9_000)).decode()
_EDGES = {
    "cjk": "# 日本語\n\n" + "長い段落です。中文文本也需要处理！한국어 문장도 있습니다. " * 80,
    "cjk-without-stops": "漢字" * 700 + "\n\nひらがなとカタカナのテキスト" * 30,
    "accents": "# Café\n\n"
    + "Naïve façade, Straße, São Paulo, İstanbul, Ελληνικά ΣΊΣΥΦΟΣ, e\u0301te\u0301 "
    + "crème brûlée. " * 120,
    "long-words": "Before. "
    + " ".join(["x" * 101, "y" * 150 + ".", "supercalifragilistic" * 8])
    + " after.\n\n"
    + ("z" * 120 + " ") * 40,
    "base64-blob": f"Attachment:\n\n{_BLOB}\n\nEnd.",
    "minified-fence": "```js\nvar m="
    + ";".join(f"a{i}=b[{i}]" for i in range(600))
    + "\nreturn m;\n```\n\nAfter the fence.",
    "long-fence": "```python\n" + "result[i] = fn(x_1, y_2)  # 0x3f\n" * 300 + "```\n\nDone.",
    "long-table": "| name | url |\n| --- | --- |\n"
    + "".join(f"| row {i} | https://example.com/{i}?q={i} |\n" for i in range(200)),
    "heading-contexts": "".join(
        f"{'#' * (1 + i % 4)} {'Heading words ' * (1 + i % 9)}{i}\n\n"
        + ("Body of the section, in short sentences. " * (i % 30))
        + "\n\n"
        for i in range(40)
    ),
    "empty-sections": "# One\n\n## Two\n\n### Three\n\n## Four\n\nText at last.\n\n# Five\n\n",
    "dropped-characters": "ab\x00cd ef\x1cgh ij\ufffdkl m\u200bn " * 150,
    "odd-whitespace": "word\u3000word\xa0word\u2028word\x85word\u2009word\r\n" * 200,
    "crlf": "# Title\r\n\r\n" + "Line one of the paragraph.\r\n" * 150,
    "versions": "# Releases\n\n" + " ".join(f"v{i}.{i % 7}.{i % 3} 0x{i:04x}" for i in range(400)),
}


@pytest.mark.parametrize("name", sorted(_EDGES))
def test_an_irregular_text_is_cut_the_same_and_every_chunk_fits_the_window(
    name: str,
) -> None:
    document, title = _EDGES[name], "Édition 日本 " * (3 if name == "heading-contexts" else 1)

    chunks = index.chunk(document, title=title, embedder=EMBEDDER)

    assert chunks == index.chunk(document, title=title, embedder=PLAIN)
    assert chunks or not document.strip(" #\n")
    for chunk in chunks:
        text = index.embedding_text(title, chunk.heading_path, chunk.text, EMBEDDER)
        assert pieces(text) <= WINDOW, (name, chunk.ordinal)


@pytest.mark.parametrize("name", sorted(_EDGES))
def test_a_slice_s_count_is_its_text_s_or_none_and_between_words_its_text_s(
    name: str,
) -> None:
    document = _EDGES[name]
    spans = local.span_counts(document)
    rng = random.Random(name)
    # Where the chunker cuts: at spaces and line ends (so between words, and runs of
    # ideographs a character apart), and anywhere at all (the slices of a long word).
    between = sorted(
        {0, len(document)}
        | {
            i + side
            for i, character in enumerate(document)
            if character in " \n"
            for side in (0, 1)
        }
    )
    anywhere = [rng.randrange(len(document) + 1) for _ in range(60)]
    cuts = [tuple(sorted(rng.sample(between, 2))) for _ in range(100)]
    cuts += [tuple(sorted(rng.sample(between + anywhere, 2))) for _ in range(200)]
    cuts += [(i, i + 1) for i in range(0, len(document), max(1, len(document) // 100))]

    read = [spans(start, end) for start, end in cuts]

    known = [(cut, count) for cut, count in zip(cuts, read, strict=True) if count is not None]
    texts = [document[start:end] for (start, end), _ in known]
    assert [count + 2 for _, count in known] == local.count_tokens(texts)
    assert all(count is not None for count in read[:100])


def test_a_cut_where_the_tokenizer_joins_two_words_is_not_read_off() -> None:
    # The tokenizer drops the separator character: "ef\x1cgh" is one word to it, in three
    # pieces (e, ##f, ##gh), while "ef" and "gh" alone are a piece each.
    spans = local.span_counts("ef\x1cgh and more")

    assert spans(0, 2) is None
    assert spans(3, 5) is None
    assert spans(0, 5) == local.count_tokens(["ef\x1cgh"])[0] - 2 == 3
    assert spans(6, 14) == 2


def _recording(texts: list[str]) -> TokenCounter:
    def counter(batch: Sequence[str]) -> list[int]:
        texts.extend(batch)
        return local.count_tokens(batch)

    return counter


def _prose(seed: int) -> str:
    rng = random.Random(seed)
    words = ["the", "deploy", "rollback", "configuration", "of", "v1.2.3", "naïve", "日本"]
    return "\n\n".join(
        " ".join(
            " ".join(rng.choice(words) for _ in range(rng.randint(3, 30))) + "."
            for _ in range(rng.randint(1, 40))
        )
        for _ in range(12)
    )


def test_a_document_cut_between_words_is_measured_off_its_one_count() -> None:
    document = _prose(1)
    measured: list[str] = []

    chunks = chunk_markdown(
        document,
        counter=_recording(measured),
        window=WINDOW,
        context=lambda path: "Title\n\n",
        span_counter=local.span_counts(document),
    )

    assert len(chunks) > 5
    assert set(measured) == {"", "Title\n\n"}


def test_a_context_that_runs_into_the_text_has_every_chunk_counted_with_it() -> None:
    document = _prose(2)
    measured: list[str] = []

    def cut(span_counter: SpanCounter | None) -> list[ChunkPiece]:
        return chunk_markdown(
            document,
            counter=_recording(measured),
            window=WINDOW,
            context=lambda path: "Title",
            span_counter=span_counter,
        )

    chunks = cut(local.span_counts(document))

    assert chunks == cut(None)
    assert sum(text.startswith("Title") and len(text) > 5 for text in measured) >= 2 * len(chunks)
    assert all(pieces("Title" + chunk.text) <= WINDOW for chunk in chunks)


def test_only_the_local_model_reads_slices_off_one_count_and_wrappers_pass_it_on() -> None:
    assert HashEmbedder().span_counts("Some words.") is None
    counted = TimedEmbedder(EMBEDDER).span_counts("Some words.")
    assert counted is not None
    assert counted(0, 4) == 1
