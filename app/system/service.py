"""Readiness: is the database reachable, migrated to head, and were its vectors made with the
configured embedding model?"""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError

from app.config import Settings
from app.db.engine import Database
from app.errors import Unavailable
from app.system import queries
from app.system.schemas import Check, EmbeddingModel, Readiness

logger = logging.getLogger(__name__)


class EmbeddingModelMismatch(Unavailable):
    """The stored vectors were made with another embedding model than the configured one."""


def configured_model(settings: Settings) -> EmbeddingModel:
    return EmbeddingModel(
        provider=settings.embeddings_provider,
        model=settings.embeddings_model,
        dim=settings.embeddings_dim,
    )


def embedding_mismatch(stored: EmbeddingModel | None, settings: Settings) -> str | None:
    """Why the stored vectors cannot serve the configured model, or None when they can."""
    wanted = configured_model(settings)
    if stored is None:
        return "no embedding model is recorded; run `corpus migrate`"
    if stored == wanted:
        return None
    return (
        f"the stored vectors were made with {stored.provider}:{stored.model} ({stored.dim}-d) but "
        f"the settings select {wanted.provider}:{wanted.model} ({wanted.dim}-d); run "
        "`corpus reembed` to re-embed every chunk, or restore the previous EMBEDDINGS_* settings"
    )


async def ensure_embedding_model(db: Database, settings: Settings) -> None:
    """Refuse to start on vectors of another model: searching them would return nonsense.

    Raises:
        EmbeddingModelMismatch: the stored model differs from the configured one.
    """
    async with db.read_primary() as conn:
        if await queries.database_revision(conn) is None:
            return  # not migrated yet; readiness reports that
        problem = embedding_mismatch(await queries.stored_embedding_model(conn), settings)
    if problem is not None:
        raise EmbeddingModelMismatch(problem)


async def readiness(
    db: Database, settings: Settings, head: str | None, *, model_loaded: bool = True
) -> Readiness:
    """Check the database, its migrations and its embedding model, stored and loaded (a local
    model warms at start-up: until it is loaded, a search would wait for it); never raises."""
    checks: dict[str, Check] = {}
    try:
        # The primary: without it nothing can be written, whatever a replica answers.
        async with db.read_primary() as conn:
            await queries.ping(conn)
            checks["database"] = Check(ok=True, detail="reachable")
            revision = await queries.database_revision(conn)
            stored = await queries.stored_embedding_model(conn) if revision else None
    except (OSError, SQLAlchemyError) as exc:
        logger.warning("readiness: database unreachable: %s", exc)
        checks["database"] = Check(ok=False, detail=f"unreachable ({type(exc).__name__})")
        return Readiness(status="not_ready", checks=checks)

    at_head = revision is not None and revision == head
    checks["migrations"] = Check(
        ok=at_head,
        detail=f"at {revision}"
        if at_head
        else f"at {revision}, head is {head}; run `corpus migrate`",
    )
    if revision is None:
        checks["embeddings"] = Check(ok=False, detail="not migrated")
    else:
        problem = embedding_mismatch(stored, settings)
        model = configured_model(settings)
        checks["embeddings"] = Check(
            ok=problem is None, detail=problem or f"{model.provider}:{model.model} ({model.dim}-d)"
        )
    checks["embedder"] = Check(
        ok=model_loaded, detail="loaded" if model_loaded else "warming: the model is loading"
    )
    ready = all(check.ok for check in checks.values())
    return Readiness(status="ready" if ready else "not_ready", checks=checks)
