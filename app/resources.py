"""What the lifespan opens once and every request shares."""

from __future__ import annotations

from dataclasses import dataclass

from app.auth.tokens import CookieSigner
from app.config import Settings
from app.db.engine import Database
from app.rag.embeddings.base import Embedder


@dataclass(frozen=True)
class Resources:
    settings: Settings
    db: Database
    head_revision: str | None
    embedder: Embedder
    signer: CookieSigner
