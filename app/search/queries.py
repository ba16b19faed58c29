"""SQL of searching: the questions people and agents ask, kept for the documentation gaps, and
the gaps read back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from sqlalchemy import insert, text

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import questions
from app.search.schemas import Door


async def record_question(
    conn: WriteConnection,
    *,
    user_id: UUID | None,
    door: Door,
    query: str,
    mode: str,
    best_similarity: float | None,
    hit_count: int,
    agent_key_id: UUID | None = None,
    agent_client_id: str | None = None,
) -> None:
    """Keep the question, with the agent it came through; one that found nothing is a
    documentation gap."""
    await conn.execute(
        insert(questions).values(
            user_id=user_id,
            door=door,
            query=query,
            mode=mode,
            best_similarity=best_similarity,
            hit_count=hit_count,
            answered=hit_count > 0,
            agent_key_id=agent_key_id,
            agent_client_id=agent_client_id,
        )
    )


# A question's wording as the gaps compare them: case and runs of spaces aside.
_WORDING = "lower(regexp_replace(btrim(query), '\\s+', ' ', 'g'))"


@dataclass(frozen=True, slots=True)
class UnansweredWording:
    """One wording of questions that found nothing: who asked it, how often, when last."""

    query: str
    count: int
    user_ids: list[UUID]
    # The API keys and OAuth clients it came through (ids as text).
    agents: list[str]
    last_asked_at: datetime


async def unanswered_questions(
    conn: ReadConnection, *, since: datetime, limit: int
) -> list[UnansweredWording]:
    """The wordings (compared case- and space-insensitively) of the questions that found
    nothing since `since`, the most asked first."""
    rows = await conn.execute(
        text(
            "SELECT min(query) AS query, count(*) AS asked, "
            "       coalesce(array_agg(DISTINCT user_id) FILTER (WHERE user_id IS NOT NULL), "
            "                '{}') AS user_ids, "
            "       coalesce(array_agg(DISTINCT coalesce(agent_key_id::text, agent_client_id)) "
            "                FILTER (WHERE coalesce(agent_key_id::text, agent_client_id) "
            "                        IS NOT NULL), '{}') AS agents, "
            "       max(created_at) AS last_asked_at "
            "FROM questions q "
            "WHERE NOT answered AND created_at >= :since "
            # A dismissed wording's questions count again only when asked after the dismissal.
            "  AND NOT EXISTS (SELECT 1 FROM gap_dismissals d "
            f"   WHERE d.wording = {_WORDING} AND q.created_at <= d.dismissed_at) "
            f"GROUP BY {_WORDING} "
            "ORDER BY count(*) DESC, max(created_at) DESC "
            "LIMIT :limit"
        ),
        {"since": since, "limit": limit},
    )
    return [
        UnansweredWording(
            query=row.query,
            count=row.asked,
            user_ids=list(row.user_ids),
            agents=list(row.agents),
            last_asked_at=row.last_asked_at,
        )
        for row in rows
    ]


async def dismiss_wordings(
    conn: WriteConnection, *, wordings: list[str], dismissed_by: UUID | None
) -> None:
    """Dismiss the wordings (as asked: they are compared as the gaps compare them) from now."""
    await conn.execute(
        text(
            "INSERT INTO gap_dismissals (wording, dismissed_by) "
            "SELECT DISTINCT lower(regexp_replace(btrim(w), '\\s+', ' ', 'g')), CAST(:by AS uuid) "
            "FROM unnest(CAST(:wordings AS text[])) AS w "
            "ON CONFLICT (wording) DO UPDATE "
            "SET dismissed_at = now(), dismissed_by = excluded.dismissed_by"
        ),
        {"wordings": wordings, "by": dismissed_by},
    )
