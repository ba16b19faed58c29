"""SQL of asking: chats and their messages, and deep research jobs with their leases."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import ColumnElement, Table, delete, func, insert, select, true, tuple_, update

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import chat_messages, chats, research_jobs


@dataclass(frozen=True, slots=True)
class ChatRow:
    id: UUID
    title: str
    workspace_scope: str | None
    persona: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class MessageRow:
    id: UUID
    role: str
    content: str
    mode: str | None
    citations: list[dict[str, Any]]
    trace: list[dict[str, Any]]
    read_chunks: list[UUID]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class JobRow:
    id: UUID
    user_id: UUID
    question: str
    workspace_scope: str | None
    persona: str | None
    status: str
    result: dict[str, Any] | None
    error: str | None
    created_at: datetime
    finished_at: datetime | None
    lease_expired: bool


_CHAT = (
    chats.c.id,
    chats.c.title,
    chats.c.workspace_scope,
    chats.c.persona,
    chats.c.created_at,
    chats.c.updated_at,
)


def _owned(table: Table, user_id: UUID, scope: str | None) -> ColumnElement[bool]:
    """The user's rows; for a caller bound to a workspace (`scope`), only those made under the
    same binding."""
    bound = table.c.workspace_scope == scope if scope is not None else true()
    return (table.c.user_id == user_id) & bound


async def insert_chat(
    conn: WriteConnection,
    *,
    user_id: UUID,
    title: str,
    workspace_scope: str | None,
    persona: str | None,
) -> ChatRow:
    values = {
        "user_id": user_id,
        "title": title,
        "workspace_scope": workspace_scope,
        "persona": persona,
    }
    row = (await conn.execute(insert(chats).values(**values).returning(*_CHAT))).one()
    return ChatRow(*row)


async def get_chat(
    conn: ReadConnection, *, chat_id: UUID, user_id: UUID, scope: str | None
) -> ChatRow | None:
    row = (
        await conn.execute(
            select(*_CHAT).where(chats.c.id == chat_id, _owned(chats, user_id, scope))
        )
    ).one_or_none()
    return ChatRow(*row) if row is not None else None


async def list_chats(
    conn: ReadConnection,
    *,
    user_id: UUID,
    scope: str | None,
    limit: int,
    after: tuple[datetime, UUID] | None,
    title_contains: str | None = None,
) -> list[ChatRow]:
    """A page of the user's chats, the latest used first (keyset on updated_at, id); with
    `title_contains`, only those whose title holds it, in any case (`%` and `_` are literal)."""
    statement = select(*_CHAT).where(_owned(chats, user_id, scope))
    if title_contains:
        statement = statement.where(chats.c.title.icontains(title_contains, autoescape=True))
    if after is not None:
        statement = statement.where(tuple_(chats.c.updated_at, chats.c.id) < tuple_(*after))
    statement = statement.order_by(chats.c.updated_at.desc(), chats.c.id.desc()).limit(limit + 1)
    return [ChatRow(*row) for row in await conn.execute(statement)]


async def rename_chat(
    conn: WriteConnection, *, chat_id: UUID, user_id: UUID, scope: str | None, title: str
) -> ChatRow | None:
    """Retitle the user's chat; its place in the list (updated_at) stays where its last turn
    put it."""
    row = (
        await conn.execute(
            update(chats)
            .where(chats.c.id == chat_id, _owned(chats, user_id, scope))
            .values(title=title)
            .returning(*_CHAT)
        )
    ).one_or_none()
    return ChatRow(*row) if row is not None else None


async def delete_chat(
    conn: WriteConnection, *, chat_id: UUID, user_id: UUID, scope: str | None
) -> bool:
    deleted = await conn.execute(
        delete(chats)
        .where(chats.c.id == chat_id, _owned(chats, user_id, scope))
        .returning(chats.c.id)
    )
    return deleted.first() is not None


_MESSAGE = (
    chat_messages.c.id,
    chat_messages.c.role,
    chat_messages.c.content,
    chat_messages.c.mode,
    chat_messages.c.citations,
    chat_messages.c.trace,
    chat_messages.c.read_chunks,
    chat_messages.c.created_at,
)


async def messages(conn: ReadConnection, *, chat_id: UUID) -> list[MessageRow]:
    statement = (
        select(*_MESSAGE)
        .where(chat_messages.c.chat_id == chat_id)
        .order_by(chat_messages.c.created_at, chat_messages.c.id)
    )
    return [MessageRow(*row) for row in await conn.execute(statement)]


async def insert_message(
    conn: WriteConnection,
    *,
    chat_id: UUID,
    role: str,
    content: str,
    mode: str | None,
    citations: list[dict[str, Any]],
    trace: list[dict[str, Any]],
    read_chunks: list[UUID] | None = None,
) -> UUID:
    # clock_timestamp, not now(): a question and its answer written in one transaction must
    # keep their order.
    inserted = await conn.execute(
        insert(chat_messages)
        .values(
            chat_id=chat_id,
            role=role,
            content=content,
            mode=mode,
            citations=citations,
            trace=trace,
            read_chunks=read_chunks or [],
            created_at=func.clock_timestamp(),
        )
        .returning(chat_messages.c.id)
    )
    await conn.execute(update(chats).where(chats.c.id == chat_id).values(updated_at=func.now()))
    return UUID(str(inserted.scalar_one()))


# --- research jobs ----------------------------------------------------------------------------

_JOB = (
    research_jobs.c.id,
    research_jobs.c.user_id,
    research_jobs.c.question,
    research_jobs.c.workspace_scope,
    research_jobs.c.persona,
    research_jobs.c.status,
    research_jobs.c.result,
    research_jobs.c.error,
    research_jobs.c.created_at,
    research_jobs.c.finished_at,
    ((research_jobs.c.status == "running") & (research_jobs.c.lease_expires_at < func.now())).label(
        "lease_expired"
    ),
)


def _lease(seconds: float) -> Any:
    return func.now() + timedelta(seconds=seconds)


async def insert_job(
    conn: WriteConnection,
    *,
    user_id: UUID,
    question: str,
    workspace_scope: str | None,
    persona: str | None,
    worker: str,
    lease_s: float,
    chat_id: UUID | None = None,
) -> UUID:
    inserted = await conn.execute(
        insert(research_jobs)
        .values(
            user_id=user_id,
            question=question,
            workspace_scope=workspace_scope,
            persona=persona,
            chat_id=chat_id,
            worker=worker,
            heartbeat_at=func.now(),
            lease_expires_at=_lease(lease_s),
        )
        .returning(research_jobs.c.id)
    )
    return UUID(str(inserted.scalar_one()))


async def renew_lease(conn: WriteConnection, *, job_id: UUID, lease_s: float) -> bool:
    """Extend a running job's lease; False when it is no longer running (marked failed)."""
    renewed = await conn.execute(
        update(research_jobs)
        .where(research_jobs.c.id == job_id, research_jobs.c.status == "running")
        .values(heartbeat_at=func.now(), lease_expires_at=_lease(lease_s))
        .returning(research_jobs.c.id)
    )
    return renewed.first() is not None


async def finish_job(
    conn: WriteConnection,
    *,
    job_id: UUID,
    status: str,
    result: dict[str, Any] | None,
    error: str | None,
) -> bool:
    """Finish a running job; False when it had finished already (cancelled, or abandoned)."""
    finished = await conn.execute(
        update(research_jobs)
        .where(research_jobs.c.id == job_id, research_jobs.c.status == "running")
        .values(status=status, result=result, error=error, finished_at=func.now())
        .returning(research_jobs.c.id)
    )
    return finished.first() is not None


async def get_job(
    conn: ReadConnection, *, job_id: UUID, user_id: UUID, scope: str | None
) -> JobRow | None:
    row = (
        await conn.execute(
            select(*_JOB).where(research_jobs.c.id == job_id, _owned(research_jobs, user_id, scope))
        )
    ).one_or_none()
    return JobRow(*row) if row is not None else None


@dataclass(frozen=True, slots=True)
class ChatRunRow:
    id: UUID
    question: str
    status: str
    error: str | None
    created_at: datetime
    lease_expired: bool


async def chat_runs(conn: ReadConnection, *, chat_id: UUID) -> list[ChatRunRow]:
    """The chat's runs that left no turn in it: running, or failed (a done one's turn is its
    record), oldest first."""
    statement = (
        select(
            research_jobs.c.id,
            research_jobs.c.question,
            research_jobs.c.status,
            research_jobs.c.error,
            research_jobs.c.created_at,
            _JOB[-1],
        )
        .where(research_jobs.c.chat_id == chat_id, research_jobs.c.status != "done")
        .order_by(research_jobs.c.created_at, research_jobs.c.id)
    )
    return [ChatRunRow(*row) for row in await conn.execute(statement)]


async def fail_abandoned_jobs(conn: WriteConnection, *, reason: str) -> int:
    """Mark failed every running job whose lease ran out: its process died."""
    failed = await conn.execute(
        update(research_jobs)
        .where(research_jobs.c.status == "running", research_jobs.c.lease_expires_at < func.now())
        .values(status="failed", error=reason, finished_at=func.now())
        .returning(research_jobs.c.id)
    )
    return len(failed.all())


async def running_workers(conn: WriteConnection, *, host: str) -> list[str]:
    """The workers (`host:pid`) of `host` that hold running jobs."""
    rows = await conn.execute(
        select(research_jobs.c.worker)
        .where(
            research_jobs.c.status == "running",
            research_jobs.c.worker.startswith(f"{host}:", autoescape=True),
        )
        .distinct()
    )
    return [worker for (worker,) in rows if worker is not None]


async def fail_jobs_of(conn: WriteConnection, *, workers: list[str], reason: str) -> int:
    """Mark failed every running job of these workers."""
    failed = await conn.execute(
        update(research_jobs)
        .where(research_jobs.c.status == "running", research_jobs.c.worker.in_(workers))
        .values(status="failed", error=reason, finished_at=func.now())
        .returning(research_jobs.c.id)
    )
    return len(failed.all())


# Any constant: with a hash of the account's id, the key of the advisory lock that makes
# counting a person's unfinished jobs and adding one a single step (the two-key space).
_JOBS_LOCK = 0x6A6F6273


async def unfinished_jobs(conn: WriteConnection, *, user_id: UUID) -> int:
    """The account's jobs running or queued on any replica (a lease that ran out is a dead
    process's), counted under a lock held until the transaction ends, so that concurrent
    callers count one after the other."""
    await conn.execute(select(func.pg_advisory_xact_lock(_JOBS_LOCK, func.hashtext(str(user_id)))))
    count = await conn.execute(
        select(func.count()).where(
            research_jobs.c.user_id == user_id,
            research_jobs.c.status == "running",
            research_jobs.c.lease_expires_at >= func.now(),
        )
    )
    return int(count.scalar_one())
