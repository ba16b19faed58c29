"""Asking's records, as the doors and the agents use them: a person's chats (each message with
its citations and the run's trace), and the deep research jobs an MCP call leaves running. A
chat and a job are their owner's alone: anyone else is told they do not exist."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.access.principal import Principal
from app.asking import queries
from app.asking.limits import JOB_RETRY_AFTER_S
from app.asking.schemas import Chat, ChatMessage, ChatWithMessages, ResearchJob
from app.db.engine import ReadConnection, WriteConnection
from app.errors import NotFound, RateLimited, ValidationFailed
from app.kit.paging import decode_cursor, keyset_page
from app.schemas import Page

TITLE_CHARS = 120
# Said of a job whose process stopped renewing its lease.
ABANDONED = (
    "the server running this research stopped before it finished (its lease ran out); "
    "ask again with deep_research"
)


def _owner(principal: Principal, refusal: str) -> UUID:
    """The caller's account, which owns chats and jobs.

    Raises:
        Forbidden: the role may not ask. ValidationFailed: the caller has no account (the
        command line's operator).
    """
    principal.require("search", refusal)
    if principal.user_id is None:
        raise ValidationFailed("chats and research jobs belong to an account; sign in first")
    return principal.user_id


def _chat(row: queries.ChatRow) -> Chat:
    return Chat(id=row.id, title=row.title, created_at=row.created_at, updated_at=row.updated_at)


def _message(row: queries.MessageRow) -> ChatMessage:
    return ChatMessage.model_validate(
        {
            "id": row.id,
            "role": row.role,
            "content": row.content,
            "mode": row.mode,
            "citations": row.citations,
            "trace": row.trace,
            "created_at": row.created_at,
        }
    )


async def record_turn(
    conn: WriteConnection,
    principal: Principal,
    chat_id: UUID | None,
    *,
    question: str,
    answer: str,
    mode: str,
    citations: list[dict[str, Any]],
    trace: list[dict[str, Any]],
) -> UUID:
    """Keep a question and its answer in the caller's chat `chat_id`, or in a new chat titled
    by the question (a chat exists once it has an answer); returns the chat's id.

    Raises:
        NotFound: the chat is not the caller's, or was deleted while the run went on.
        Forbidden: the role may not ask.
    """
    owner = _owner(principal, "your role may not ask")
    if chat_id is None:
        title = " ".join(question.split())[:TITLE_CHARS]
        chat_id = (await queries.insert_chat(conn, user_id=owner, title=title)).id
    elif await queries.get_chat(conn, chat_id=chat_id, user_id=owner) is None:
        raise NotFound("chat not found")
    await queries.insert_message(
        conn, chat_id=chat_id, role="user", content=question, mode=None, citations=[], trace=[]
    )
    await queries.insert_message(
        conn,
        chat_id=chat_id,
        role="assistant",
        content=answer,
        mode=mode,
        citations=citations,
        trace=trace,
    )
    return chat_id


async def list_chats(
    conn: ReadConnection, principal: Principal, *, limit: int, cursor: str | None
) -> Page[Chat]:
    """A page of the caller's chats, the latest used first."""
    owner = _owner(principal, "your role may not ask")
    after = decode_cursor(cursor) if cursor else None
    rows = await queries.list_chats(conn, user_id=owner, limit=limit, after=after)
    return keyset_page([_chat(r) for r in rows], limit, lambda c: (c.updated_at, c.id))


async def get_chat(conn: ReadConnection, principal: Principal, chat_id: UUID) -> ChatWithMessages:
    """One of the caller's chats with its messages, oldest first.

    Raises:
        NotFound: no such chat of the caller's.
    """
    owner = _owner(principal, "your role may not ask")
    row = await queries.get_chat(conn, chat_id=chat_id, user_id=owner)
    if row is None:
        raise NotFound("chat not found")
    messages = [_message(m) for m in await queries.messages(conn, chat_id=chat_id)]
    return ChatWithMessages(**_chat(row).model_dump(), messages=messages)


async def delete_chat(conn: WriteConnection, principal: Principal, chat_id: UUID) -> None:
    """Delete one of the caller's chats with its messages.

    Raises:
        NotFound: no such chat of the caller's.
    """
    owner = _owner(principal, "your role may not ask")
    if not await queries.delete_chat(conn, chat_id=chat_id, user_id=owner):
        raise NotFound("chat not found")


# --- research jobs ----------------------------------------------------------------------------


async def create_job(
    conn: WriteConnection,
    principal: Principal,
    question: str,
    *,
    worker: str,
    lease_s: float,
    at_most: int | None = None,
) -> UUID:
    """A running job of the caller's, leased to `worker` for `lease_s` seconds; refused when
    the caller has `at_most` unfinished jobs already, on any replica.

    Raises:
        Forbidden: the role may not ask. RateLimited: `at_most` unfinished jobs.
    """
    owner = _owner(principal, "your role may not ask")
    if at_most is not None and await queries.unfinished_jobs(conn, user_id=owner) >= at_most:
        raise RateLimited(
            f"you have {at_most} research jobs running or queued, the most one person may "
            f"have; ask again when one has finished (in about {JOB_RETRY_AFTER_S} s)",
            retry_after_s=JOB_RETRY_AFTER_S,
        )
    return await queries.insert_job(
        conn, user_id=owner, question=question, worker=worker, lease_s=lease_s
    )


async def renew_job(conn: WriteConnection, job_id: UUID, *, lease_s: float) -> bool:
    """Extend the lease of a job this process runs; False when it was marked failed meanwhile."""
    return await queries.renew_lease(conn, job_id=job_id, lease_s=lease_s)


async def finish_job(
    conn: WriteConnection,
    job_id: UUID,
    *,
    result: dict[str, Any] | None = None,
    error: str | None = None,
) -> None:
    """Store a job's answer (or why it failed); a job already marked failed stays so."""
    status = "failed" if error is not None else "done"
    await queries.finish_job(conn, job_id=job_id, status=status, result=result, error=error)


async def get_job(conn: WriteConnection, principal: Principal, job_id: UUID) -> ResearchJob:
    """One of the caller's research jobs, from whichever process ran it. A running job whose
    lease ran out is marked failed here, with the reason.

    Raises:
        NotFound: no such job of the caller's.
    """
    owner = _owner(principal, "your role may not ask")
    row = await queries.get_job(conn, job_id=job_id, user_id=owner)
    if row is None:
        raise NotFound(f"no research job {job_id} of yours")
    if row.lease_expired:
        await queries.finish_job(conn, job_id=job_id, status="failed", result=None, error=ABANDONED)
        row = await queries.get_job(conn, job_id=job_id, user_id=owner)
        assert row is not None
    return ResearchJob(
        id=row.id,
        user_id=row.user_id,
        question=row.question,
        status=row.status,  # type: ignore[arg-type]  # the table's check constraint holds it
        result=row.result,
        error=row.error,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


async def fail_abandoned_jobs(conn: WriteConnection) -> int:
    """Mark failed every running job whose process stopped renewing its lease."""
    return await queries.fail_abandoned_jobs(conn, reason=ABANDONED)
