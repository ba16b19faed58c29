"""An embedding cache for measurement runs: vectors kept in SQLite in the data folder, keyed by
model and text hash, so a second `corpus eval` does not embed the corpus again."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from app.rag.embeddings.base import Embedder, Wrapping


class CachingEmbedder(Wrapping):
    """Wraps an embedder; passages already embedded by the same model come from the cache."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        super().__init__(inner)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB)")

    def _key(self, text: str) -> str:
        digest = hashlib.sha256(text.encode()).hexdigest()
        # `alone`: the local model's vectors before it ran each text alone (ADR 0028) followed
        # their batch, and a cache of them would score the old vectors.
        return f"{self.provider}:{self.model}:{self.dim}:alone:{digest}"

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(text) for text in texts]
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            for key, blob in self._db.execute(
                f"SELECT key, vec FROM vectors WHERE key IN ({marks})", batch
            ):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            vectors = await self.inner.embed_passages([texts[i] for i in missing])
            rows = []
            for i, vector in zip(missing, vectors, strict=True):
                found[keys[i]] = np.asarray(vector, dtype=np.float32)
                rows.append((keys[i], found[keys[i]].tobytes()))
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self._db.commit()
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[key] for key in keys])

    async def aclose(self) -> None:
        self._db.close()
        await self.inner.aclose()
