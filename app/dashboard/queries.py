"""SQL of the dashboard: counts over documents, questions, accounts, keys and OAuth apps, read
only. What documents a caller may see is the documents' own rule (`visible_to`), not a copy."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from uuid import UUID

from sqlalchemy import ColumnElement, Date, cast, distinct, func, select

from app.dashboard.schemas import ActivityItem, AgentActivity, Figures
from app.db.engine import ReadConnection
from app.db.tables import (
    api_keys,
    audit_log,
    chunks,
    documents,
    oauth_clients,
    oauth_tokens,
    questions,
    sessions,
    users,
    workspaces,
)
from app.documents.queries import visible_to

# A question's mode says which door of asking it came through: a search has a search mode.
SEARCH_MODES = ("hybrid", "dense", "keyword")


def _day(column: Any) -> Any:
    return cast(func.timezone("UTC", column), Date)


def _asked_by(asker: UUID | None) -> ColumnElement[bool]:
    """Everyone's questions (asker None), or one account's."""
    return questions.c.user_id == asker if asker is not None else questions.c.id.is_not(None)


async def figures(conn: ReadConnection, *, caller_id: UUID | None, scope: str | None) -> Figures:
    visible = visible_to(caller_id, scope)
    seen = documents.join(workspaces, workspaces.c.id == documents.c.workspace_id)
    document_count = await conn.scalar(select(func.count()).select_from(seen).where(visible))
    chunk_count = await conn.scalar(
        select(func.count())
        .select_from(chunks.join(seen, documents.c.id == chunks.c.document_id))
        .where(visible)
    )
    shown = workspaces.c.slug == scope if scope is not None else workspaces.c.id.is_not(None)
    workspace_count = await conn.scalar(select(func.count()).select_from(workspaces).where(shown))
    accounts: dict[str, int] = dict(
        (
            await conn.execute(
                select(users.c.kind, func.count()).where(users.c.active).group_by(users.c.kind)
            )
        ).all()
    )
    return Figures(
        documents=document_count or 0,
        chunks=chunk_count or 0,
        workspaces=workspace_count or 0,
        people=int(accounts.get("human", 0)),
        agents=int(accounts.get("agent", 0)),
    )


async def uploads_by_day(
    conn: ReadConnection, *, caller_id: UUID | None, scope: str | None, since: datetime
) -> dict[date, int]:
    day = _day(documents.c.created_at)
    rows = await conn.execute(
        select(day, func.count())
        .select_from(documents.join(workspaces, workspaces.c.id == documents.c.workspace_id))
        .where(visible_to(caller_id, scope), documents.c.created_at >= since)
        .group_by(day)
    )
    return {row[0]: row[1] for row in rows}


async def questions_by_day(
    conn: ReadConnection, *, asker: UUID | None, since: datetime
) -> dict[tuple[date, bool], int]:
    """(day, is a search) -> how many."""
    day = _day(questions.c.created_at)
    search = questions.c.mode.in_(SEARCH_MODES)
    rows = await conn.execute(
        select(day, search, func.count())
        .where(questions.c.created_at >= since, _asked_by(asker))
        .group_by(day, search)
    )
    return {(row[0], bool(row[1])): row[2] for row in rows}


async def by_workspace(
    conn: ReadConnection, *, caller_id: UUID | None, scope: str | None
) -> list[tuple[str, int, int]]:
    """(workspace, documents, chunks) of what the caller may see, the largest first."""
    chunk_counts = (
        select(chunks.c.document_id, func.count().label("n"))
        .group_by(chunks.c.document_id)
        .subquery()
    )
    rows = await conn.execute(
        select(
            workspaces.c.slug,
            func.count(documents.c.id),
            func.coalesce(func.sum(chunk_counts.c.n), 0),
        )
        .select_from(
            documents.join(workspaces, workspaces.c.id == documents.c.workspace_id).outerjoin(
                chunk_counts, chunk_counts.c.document_id == documents.c.id
            )
        )
        .where(visible_to(caller_id, scope))
        .group_by(workspaces.c.slug)
        .order_by(func.count(documents.c.id).desc(), workspaces.c.slug)
    )
    return [(row[0], row[1], int(row[2])) for row in rows]


def _asked_through(agent: ColumnElement[Any], since: datetime) -> Any:
    """(agent, searches, questions) since `since`, for each value of `agent` (a column of
    `questions` naming who asked through what)."""
    return (
        select(
            agent.label("agent"),
            func.count().filter(questions.c.mode.in_(SEARCH_MODES)).label("searches"),
            func.count().filter(questions.c.mode.not_in(SEARCH_MODES)).label("questions"),
        )
        .where(questions.c.created_at >= since, agent.is_not(None))
        .group_by(agent)
        .subquery()
    )


def _changed_through(agent: ColumnElement[Any], since: datetime) -> Any:
    """(agent, changes) since `since`: the audited writes (uploads, edits, deletions, admin
    acts) for each value of `agent` (a column of `audit_log`)."""
    return (
        select(agent.label("agent"), func.count().label("changes"))
        .where(audit_log.c.at >= since, agent.is_not(None))
        .group_by(agent)
        .subquery()
    )


async def agents(conn: ReadConnection, *, since: datetime) -> list[AgentActivity]:
    """Agent accounts with their live keys, and the OAuth apps people connected with how many
    people; for each, its calls since `since` (searches, questions and audited changes made
    through it: an account's keys, an app's tokens) and when it was last seen."""
    live_keys = (
        select(
            api_keys.c.user_id,
            func.count().label("live"),
            func.max(api_keys.c.last_used_at).label("used"),
        )
        .where(api_keys.c.revoked_at.is_(None))
        .group_by(api_keys.c.user_id)
        .subquery()
    )
    asked = _asked_through(questions.c.user_id, since)
    changed = _changed_through(audit_log.c.actor_id, since)
    searches = func.coalesce(asked.c.searches, 0)
    questions_asked = func.coalesce(asked.c.questions, 0)
    changes = func.coalesce(changed.c.changes, 0)
    accounts = await conn.execute(
        select(
            users.c.id,
            func.coalesce(func.nullif(users.c.display_name, ""), users.c.email),
            func.coalesce(live_keys.c.live, 0),
            searches,
            questions_asked,
            searches + questions_asked + changes,
            func.greatest(users.c.last_seen_at, live_keys.c.used),
        )
        .select_from(
            users.outerjoin(live_keys, live_keys.c.user_id == users.c.id)
            .outerjoin(asked, asked.c.agent == users.c.id)
            .outerjoin(changed, changed.c.agent == users.c.id)
        )
        .where(users.c.kind == "agent", users.c.active)
    )
    found = [
        AgentActivity(
            id=str(row[0]),
            kind="account",
            name=row[1],
            keys=row[2],
            people=1,
            searches=row[3],
            questions=row[4],
            calls=row[5],
            last_seen_at=row[6],
        )
        for row in accounts
    ]
    connected = (
        select(
            oauth_tokens.c.client_id,
            func.count(distinct(oauth_tokens.c.user_id)).label("people"),
            func.max(oauth_tokens.c.created_at).label("issued"),
        )
        .group_by(oauth_tokens.c.client_id)
        .subquery()
    )
    app_asked = _asked_through(questions.c.agent_client_id, since)
    app_changed = _changed_through(audit_log.c.agent_client_id, since)
    app_searches = func.coalesce(app_asked.c.searches, 0)
    app_questions = func.coalesce(app_asked.c.questions, 0)
    apps = await conn.execute(
        select(
            oauth_clients.c.client_id,
            func.coalesce(oauth_clients.c.client_name, oauth_clients.c.client_id),
            connected.c.people,
            app_searches,
            app_questions,
            app_searches + app_questions + func.coalesce(app_changed.c.changes, 0),
            connected.c.issued,
        ).select_from(
            oauth_clients.join(connected, connected.c.client_id == oauth_clients.c.client_id)
            .outerjoin(app_asked, app_asked.c.agent == oauth_clients.c.client_id)
            .outerjoin(app_changed, app_changed.c.agent == oauth_clients.c.client_id)
        )
    )
    found += [
        AgentActivity(
            id=row[0],
            kind="oauth_app",
            name=row[1],
            keys=0,
            people=row[2],
            searches=row[3],
            questions=row[4],
            calls=row[5],
            last_seen_at=row[6],
        )
        for row in apps
    ]
    return found


def _item(**values: Any) -> ActivityItem:
    # The kinds are the database's words (users.kind), checked here against the schema's.
    return ActivityItem.model_validate(values)


async def feed(
    conn: ReadConnection,
    *,
    caller_id: UUID | None,
    scope: str | None,
    everyone: bool,
    limit: int,
) -> list[ActivityItem]:
    """The latest events the caller may see, newest first: documents added and edited (those
    it may see); questions, searches and sign-ins (everyone's when `everyone`, else its own);
    keys minted (only when `everyone`)."""
    owner = users.alias("owner")
    seen = documents.join(workspaces, workspaces.c.id == documents.c.workspace_id).outerjoin(
        owner, owner.c.id == documents.c.owner_id
    )
    rows: list[ActivityItem] = []
    for kind, at, extra in (
        ("upload", documents.c.created_at, None),
        ("edit", documents.c.updated_at, documents.c.version > 1),
    ):
        statement = (
            select(at, owner.c.email, owner.c.kind, documents.c.title, documents.c.id)
            .select_from(seen)
            .where(visible_to(caller_id, scope))
            .order_by(at.desc())
            .limit(limit)
        )
        if extra is not None:
            statement = statement.where(extra)
        rows += [
            _item(at=r[0], kind=kind, actor=r[1], actor_kind=r[2], subject=r[3], document_id=r[4])
            for r in await conn.execute(statement)
        ]
    mine = None if everyone else caller_id
    if everyone or caller_id is not None:
        asked = await conn.execute(
            select(
                questions.c.created_at,
                questions.c.mode.in_(SEARCH_MODES),
                users.c.email,
                users.c.kind,
                questions.c.query,
            )
            .select_from(questions.outerjoin(users, users.c.id == questions.c.user_id))
            .where(_asked_by(mine))
            .order_by(questions.c.created_at.desc())
            .limit(limit)
        )
        rows += [
            _item(
                at=r[0],
                kind="search" if r[1] else "question",
                actor=r[2],
                actor_kind=r[3],
                subject=r[4],
            )
            for r in asked
        ]
        signed_in = await conn.execute(
            select(sessions.c.created_at, users.c.email, users.c.kind)
            .select_from(sessions.join(users, users.c.id == sessions.c.user_id))
            .where(sessions.c.user_id == mine if mine is not None else sessions.c.id.is_not(None))
            .order_by(sessions.c.created_at.desc())
            .limit(limit)
        )
        rows += [
            _item(at=r[0], kind="sign_in", actor=r[1], actor_kind=r[2], subject="signed in")
            for r in signed_in
        ]
    if everyone:
        minted = await conn.execute(
            select(api_keys.c.created_at, users.c.email, users.c.kind, api_keys.c.name)
            .select_from(api_keys.join(users, users.c.id == api_keys.c.user_id))
            .order_by(api_keys.c.created_at.desc())
            .limit(limit)
        )
        rows += [
            _item(at=r[0], kind="key_minted", actor=r[1], actor_kind=r[2], subject=r[3])
            for r in minted
        ]
    rows.sort(key=lambda row: row.at, reverse=True)
    return rows[:limit]
