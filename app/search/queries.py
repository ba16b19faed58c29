"""SQL of searching: the questions people and agents ask, kept for the documentation gaps."""

from __future__ import annotations

from uuid import UUID

from sqlalchemy import insert

from app.db.engine import WriteConnection
from app.db.tables import questions


async def record_question(
    conn: WriteConnection,
    *,
    user_id: UUID | None,
    door: str,
    query: str,
    mode: str,
    best_similarity: float | None,
    hit_count: int,
) -> None:
    """Keep the question; one that found nothing is a documentation gap."""
    await conn.execute(
        insert(questions).values(
            user_id=user_id,
            door=door,
            query=query,
            mode=mode,
            best_similarity=best_similarity,
            hit_count=hit_count,
            answered=hit_count > 0,
        )
    )
