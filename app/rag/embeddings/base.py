"""The embedder interface every provider implements, its error, and the helpers they share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from app.errors import Unavailable

Vectors = npt.NDArray[np.float32]
SpanCounter = Callable[[int, int], int | None]
"""The chunker's `SpanCounter` (app.rag.chunking, which this package does not import): one
document's slices counted as `Embedder.count_tokens` counts their texts, less special tokens."""


class EmbeddingError(Unavailable):
    """The embedding provider failed (network, quota, a bad reply); the message names no key."""


class QueryEmbedder(Protocol):
    """What ranking needs of an embedder: a search query's vector. Retrieval, search and
    routing take this, so that whatever answers a query's vector (the bench's precomputed
    vectors, routing's once-per-request wrapper) needs no other member; every `Embedder` is
    one."""

    async def embed_query(self, text: str) -> Vectors:
        """The vector of one search query, shape (dim,).

        Raises:
            EmbeddingError: the provider failed.
        """
        ...


class Embedder(QueryEmbedder, Protocol):
    """Turns text into unit vectors for cosine similarity.

    Passages and queries go through different methods because some models embed them
    differently (e5 prefixes, Gemini task types, Voyage input types); each provider hides that.
    Rows are L2-normalised float32, except the zero vector for a text that a provider has nothing
    to embed from (the `hash` provider, for a text without a word): it matches nothing.
    """

    provider: str
    model: str
    dim: int
    default_floor: float
    window: int | None
    """The most tokens the model reads of one input, special tokens included: the rest is never
    embedded, so chunks are cut to fit (`count_tokens`). None: no practical limit."""

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """How many tokens each text is to the model, special tokens included: exact where the
        tokenizer is at hand (the local model), else `estimate_tokens`. Cheap and synchronous,
        for the chunker; never downloads anything."""
        ...

    def span_counts(self, document: str) -> SpanCounter | None:
        """What `count_tokens` gives any slice [start, end) of `document`, less the special
        tokens, read off one count of the whole (None for a slice the tokenizer may read
        differently alone): the chunker's `SpanCounter`, where the model's counts add up over
        texts joined at whitespace (a word-piece model). None where they do not, or where the
        count is an estimate that is already cheap: the chunker counts each slice then."""
        ...

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Vectors of `texts`, shape (len(texts), dim).

        Raises:
            EmbeddingError: the provider failed.
        """
        ...

    @property
    def ready(self) -> bool:
        """Whether a call now pays no start-up cost (a local model is loaded)."""
        ...

    async def warm(self) -> None:
        """Load now what the first call would otherwise load (the local model; a provider over
        an API has nothing to load).

        Raises:
            EmbeddingError: the model cannot be loaded.
        """
        ...

    async def aclose(self) -> None:
        """Release the provider's clients or model."""
        ...


class Wrapping:
    """An embedder around another (a cache, a timer): it is the inner one in everything but the
    calls it overrides."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.dim = inner.dim
        self.default_floor = inner.default_floor
        self.window = inner.window

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_tokens(texts)

    def span_counts(self, document: str) -> SpanCounter | None:
        return self.inner.span_counts(document)

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return await self.inner.embed_passages(texts)

    async def embed_query(self, text: str) -> Vectors:
        return await self.inner.embed_query(text)

    @property
    def ready(self) -> bool:
        return self.inner.ready

    async def warm(self) -> None:
        await self.inner.warm()

    async def aclose(self) -> None:
        await self.inner.aclose()


def estimate_tokens(texts: Sequence[str]) -> list[int]:
    """A hosted model's count without its tokenizer: a token per four ASCII characters (the
    project's estimate, about right for English with OpenAI's, Voyage's and Gemini's tokenizers)
    and one per other character (a CJK ideograph is one or two). Dense code can run a quarter
    over it: their windows are ten times a chunk, so only a fence or table near the window can
    be cut a little late (ADR 0013)."""
    counts: list[int] = []
    for text in texts:
        ascii_chars = len(text.encode("ascii", "ignore"))
        counts.append(-(-ascii_chars // 4) + len(text) - ascii_chars)
    return counts


def empty(dim: int) -> Vectors:
    """The (0, dim) result of embedding no text."""
    return np.zeros((0, dim), dtype=np.float32)


def normalise(vectors: npt.ArrayLike) -> Vectors:
    """Rows scaled to unit length as float32; zero rows stay zero (no division by zero)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    unit = np.zeros_like(matrix)
    np.divide(matrix, norms, out=unit, where=norms > 0)
    return unit


def only_row(vectors: Vectors) -> Vectors:
    """The one row of a (1, dim) result, as a (dim,) vector."""
    return vectors.reshape(vectors.shape[-1])


async def in_batches(
    texts: Sequence[str],
    size: int,
    dim: int,
    embed: Callable[[Sequence[str]], Awaitable[Vectors]],
) -> Vectors:
    """`texts` embedded by `embed` at most `size` at a time, rows in the order of `texts`."""
    if not texts:
        return empty(dim)
    return np.concatenate(
        [await embed(texts[start : start + size]) for start in range(0, len(texts), size)]
    )


def unit_rows(rows: object, count: int, dim: int, provider: str) -> Vectors:
    """A provider's reply as `count` unit rows of `dim` float32 numbers.

    Raises:
        EmbeddingError: the reply is not `count` vectors of `dim` finite numbers (a model or
            dimension mismatch, or a malformed reply).
    """
    try:
        matrix = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{provider} returned malformed embeddings") from exc
    if matrix.ndim != 2 or matrix.shape[0] != count:
        got = matrix.shape[0] if matrix.ndim else 0
        raise EmbeddingError(f"{provider} returned {got} embeddings for {count} texts")
    if matrix.shape[1] != dim:
        raise EmbeddingError(
            f"{provider} returned {matrix.shape[1]}-dimensional embeddings, "
            f"but EMBEDDINGS_DIM is {dim}"
        )
    if not np.isfinite(matrix).all():
        raise EmbeddingError(f"{provider} returned embeddings with non-finite values")
    return normalise(matrix)
