"""The dashboard's rules: everyone sees the figures, the 30 days and the composition of what
they may read, and their own searches and questions; those who read the documentation gaps
(admins) see everyone's use, the agents' activity and the gaps, and dismiss a gap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.access.principal import Principal
from app.dashboard import queries
from app.dashboard.schemas import (
    Activity,
    Dashboard,
    Day,
    GapDismissal,
    TagShare,
    WorkspaceShare,
)
from app.db.engine import ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.rag.embeddings.base import Embedder
from app.search import service as search_service

DAYS = 30
TAGS = 20


def _everyone(principal: Principal) -> bool:
    # Everyone's questions and the agents are the gaps' readers' to see: the same people. A
    # quiet check: it narrows what the reply shows, it refuses nothing.
    return principal.shown("gaps.read")


async def dashboard(conn: ReadConnection, principal: Principal) -> Dashboard:
    """The caller's dashboard: figures, the last 30 days by day, composition and agents.

    Raises:
        Forbidden: the caller may not search.
    """
    principal.require("search", "your role may not read the corpus")
    caller, scope = principal.user_id, principal.workspace_scope
    today = datetime.now(UTC).date()
    first = today - timedelta(days=DAYS - 1)
    since = datetime(first.year, first.month, first.day, tzinfo=UTC)
    figures = await queries.figures(conn, caller_id=caller, scope=scope)
    uploads = await queries.uploads_by_day(conn, caller_id=caller, scope=scope, since=since)
    everyone = _everyone(principal)
    asked = await queries.questions_by_day(conn, asker=None if everyone else caller, since=since)
    days = [
        Day(
            day=day,
            uploads=uploads.get(day, 0),
            searches=asked.get((day, True), 0),
            questions=asked.get((day, False), 0),
        )
        for day in (first + timedelta(days=n) for n in range(DAYS))
    ]
    agents = await queries.agents(conn, since=since) if everyone else []
    agents.sort(key=lambda a: a.last_seen_at or datetime.min.replace(tzinfo=UTC), reverse=True)
    return Dashboard(
        figures=figures,
        days=days,
        by_workspace=[
            WorkspaceShare(workspace=w, documents=d, chunks=c)
            for w, d, c in await queries.by_workspace(conn, caller_id=caller, scope=scope)
        ],
        by_tag=[
            TagShare(tag=t.tag, documents=t.documents)
            for t in await documents_service.tags(conn, principal, limit=TAGS)
        ],
        agents=agents,
    )


async def activity(conn: ReadConnection, principal: Principal, *, limit: int) -> Activity:
    """The latest events the caller may see, newest first.

    Raises:
        Forbidden: the caller may not search.
    """
    principal.require("search", "your role may not read the corpus")
    items = await queries.feed(
        conn,
        caller_id=principal.user_id,
        scope=principal.workspace_scope,
        everyone=_everyone(principal),
        limit=limit,
    )
    return Activity(items=items)


async def dismiss_gap(
    conn: WriteConnection, principal: Principal, embedder: Embedder, dismissal: GapDismissal
) -> None:
    """Dismiss a documentation gap (see `search_service.dismiss_gap`).

    Raises:
        Forbidden: the caller may not read the gaps. NotFound: no open gap is named so.
    """
    await search_service.dismiss_gap(conn, principal, embedder, dismissal.question)
