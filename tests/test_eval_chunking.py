"""`corpus eval` embeds its corpus ahead of the ingest, for the cache: the texts it prepares must
be exactly those the ingest then embeds, window and title cut included, and in the same calls (a
document's chunks together): the local model's vectors follow their batch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.bench.evaluation import ingest_corpus, prepare_embeddings, throwaway_database
from app.config import Settings
from app.rag.embeddings import local
from app.rag.embeddings.hash import HashEmbedder


class RecordingEmbedder(HashEmbedder):
    """Hash vectors with the local model's window and tokenizer, remembering every call."""

    def __init__(self) -> None:
        super().__init__()
        self.window = local.WINDOW
        self.calls: list[list[str]] = []

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return local.count_tokens(texts)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return await super().embed_passages(texts)


async def test_eval_prepares_exactly_the_texts_its_ingest_embeds(settings: Settings) -> None:
    corpus = [
        {"_id": "1", "title": "Short", "text": "Plain words. " * 200},
        {
            "_id": "2",
            "title": "릴리스 " * 200,
            "text": " ".join(f"v{i}.{i % 7}" for i in range(900)),
        },
        {"_id": "3", "title": "", "text": "# Heading\n\n```\n" + "x = 1\n" * 400 + "```"},
    ]
    embedder = RecordingEmbedder()

    await prepare_embeddings(embedder, corpus, lambda *_: None)
    prepared, embedder.calls = embedder.calls, []
    async with throwaway_database(settings, "corpus_evalchunks") as db:
        await ingest_corpus(db, embedder, settings, corpus, lambda *_: None)

    assert len(prepared) == len(corpus)
    assert sum(len(call) for call in prepared) > 10
    assert prepared == embedder.calls
