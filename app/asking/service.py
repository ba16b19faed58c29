"""Asking's records, as the doors and the agents use them: a person's chats (each message with
its citations, the run's trace and every chunk the run read), and the deep research jobs an MCP
call leaves running. A chat and a job are their owner's alone, and a key bound to a workspace
sees only those made under the same binding: anyone else is told they do not exist. What they
cite is checked again, under the caller's rights of the moment, whenever they are read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from app.access.principal import Principal
from app.asking import queries
from app.asking.limits import JOB_RETRY_AFTER_S
from app.asking.schemas import (
    CHAT_TITLE_CHARS,
    Chat,
    ChatMessage,
    ChatUpdate,
    ChatWithMessages,
    ResearchJob,
)
from app.db.engine import ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.errors import NotFound, RateLimited, ValidationFailed
from app.kit.paging import decode_cursor, keyset_page
from app.schemas import Page

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
    return Chat(
        id=row.id,
        title=row.title,
        workspace_scope=row.workspace_scope,
        persona=row.persona,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _cited_chunks(citations: Iterable[dict[str, Any]]) -> set[UUID]:
    found = set()
    for citation in citations:
        try:
            found.add(UUID(str(citation.get("chunk_id"))))
        except ValueError:
            continue
    return found


def _drawn_from(row: queries.MessageRow) -> set[UUID]:
    """Every chunk an answer rests on: what its run read (cited or not), and what it cites
    (older messages recorded only that)."""
    return {*row.read_chunks, *_cited_chunks(row.citations)}


def _readable_citations(
    citations: list[dict[str, Any]], readable: set[UUID]
) -> list[dict[str, Any]]:
    """The citations of chunks in `readable` (one without a chunk is left out too)."""
    kept = []
    for citation in citations:
        chunk = _cited_chunks([citation])
        if chunk and chunk <= readable:
            kept.append(citation)
    return kept


async def _readable(
    conn: ReadConnection, principal: Principal, chunk_ids: Iterable[UUID]
) -> set[UUID]:
    return await documents_service.readable_chunks(conn, principal, list(set(chunk_ids)))


def _message(row: queries.MessageRow, readable: set[UUID]) -> ChatMessage:
    return ChatMessage.model_validate(
        {
            "id": row.id,
            "role": row.role,
            "content": row.content,
            "mode": row.mode,
            "citations": _readable_citations(row.citations, readable),
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
    read_chunks: list[UUID] | None = None,
) -> UUID:
    """Keep a question and its answer in the caller's chat `chat_id`, or in a new chat titled
    by the question and marked with the caller's binding (a chat exists once it has an
    answer); returns the chat's id. `read_chunks` is every chunk the run read.

    Raises:
        NotFound: the chat is not the caller's, or was deleted while the run went on.
        Forbidden: the role may not ask.
    """
    owner = _owner(principal, "your role may not ask")
    scope = principal.workspace_scope
    if chat_id is None:
        title = " ".join(question.split())[:CHAT_TITLE_CHARS]
        created = await queries.insert_chat(
            conn, user_id=owner, title=title, workspace_scope=scope, persona=principal.persona
        )
        chat_id = created.id
    elif await queries.get_chat(conn, chat_id=chat_id, user_id=owner, scope=scope) is None:
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
        read_chunks=read_chunks,
    )
    return chat_id


async def list_chats(
    conn: ReadConnection,
    principal: Principal,
    *,
    limit: int,
    cursor: str | None,
    q: str | None = None,
) -> Page[Chat]:
    """A page of the caller's chats, the latest used first; with `q`, those whose title
    contains it (ignoring case)."""
    owner = _owner(principal, "your role may not ask")
    after = decode_cursor(cursor) if cursor else None
    rows = await queries.list_chats(
        conn,
        user_id=owner,
        scope=principal.workspace_scope,
        limit=limit,
        after=after,
        title_contains=q.strip() if q else None,
    )
    return keyset_page([_chat(r) for r in rows], limit, lambda c: (c.updated_at, c.id))


async def _chat_row(
    conn: ReadConnection, principal: Principal, chat_id: UUID
) -> tuple[queries.ChatRow, list[queries.MessageRow]]:
    owner = _owner(principal, "your role may not ask")
    row = await queries.get_chat(
        conn, chat_id=chat_id, user_id=owner, scope=principal.workspace_scope
    )
    if row is None:
        raise NotFound("chat not found")
    return row, await queries.messages(conn, chat_id=chat_id)


async def get_chat(conn: ReadConnection, principal: Principal, chat_id: UUID) -> ChatWithMessages:
    """One of the caller's chats with its messages, oldest first; a citation of a chunk the
    caller may no longer read is left out (with its snippet).

    Raises:
        NotFound: no such chat of the caller's (or of the caller's binding).
    """
    row, rows = await _chat_row(conn, principal, chat_id)
    readable = await _readable(conn, principal, (c for m in rows for c in _drawn_from(m)))
    messages = [_message(m, readable) for m in rows]
    return ChatWithMessages(**_chat(row).model_dump(), messages=messages)


@dataclass(frozen=True)
class FollowUp:
    """What a follow-up question of a chat carries: the earlier turns it may still see."""

    chat_id: UUID
    # (role, text), oldest first.
    history: list[tuple[str, str]] = field(default_factory=list)
    # Every chunk those turns were drawn from: they count as read by the new run.
    drawn_from: frozenset[UUID] = frozenset()
    # Turns left out because they rest on something the caller may no longer read.
    dropped: int = 0


async def follow_up(
    conn: ReadConnection, principal: Principal, chat_id: UUID, *, turns: int, chars: int
) -> FollowUp:
    """The latest `turns` turns of the caller's chat, each clipped to `chars`, re-checked under
    the caller's rights now: a turn whose answer rests on a chunk the caller may no longer read
    (deleted, made private, or outside the caller's binding) is left out whole.

    Raises:
        NotFound: no such chat of the caller's (or of the caller's binding).
    """
    _row, rows = await _chat_row(conn, principal, chat_id)
    readable = await _readable(conn, principal, (c for m in rows for c in _drawn_from(m)))
    history: list[tuple[str, str]] = []
    drawn: set[UUID] = set()
    dropped = 0
    pending: queries.MessageRow | None = None
    for message in rows:
        if message.role == "user":
            pending = message
            continue
        rests_on = _drawn_from(message)
        if not rests_on <= readable:
            dropped += 1
        else:
            if pending is not None:
                history.append(("user", pending.content[:chars]))
            history.append(("assistant", message.content[:chars]))
            drawn |= rests_on
        pending = None
    latest = history[-2 * turns :]
    return FollowUp(chat_id=chat_id, history=latest, drawn_from=frozenset(drawn), dropped=dropped)


async def rename_chat(
    conn: WriteConnection, principal: Principal, chat_id: UUID, update: ChatUpdate
) -> Chat:
    """Give one of the caller's chats a new title.

    Raises:
        NotFound: no such chat of the caller's (or of the caller's binding).
    """
    owner = _owner(principal, "your role may not ask")
    row = await queries.rename_chat(
        conn, chat_id=chat_id, user_id=owner, scope=principal.workspace_scope, title=update.title
    )
    if row is None:
        raise NotFound("chat not found")
    return _chat(row)


async def delete_chat(conn: WriteConnection, principal: Principal, chat_id: UUID) -> None:
    """Delete one of the caller's chats with its messages.

    Raises:
        NotFound: no such chat of the caller's.
    """
    owner = _owner(principal, "your role may not ask")
    deleted = await queries.delete_chat(
        conn, chat_id=chat_id, user_id=owner, scope=principal.workspace_scope
    )
    if not deleted:
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
    """A running job of the caller's, marked with the caller's binding, leased to `worker`
    for `lease_s` seconds; refused when the caller has `at_most` unfinished jobs already, on
    any replica.

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
        conn,
        user_id=owner,
        question=question,
        workspace_scope=principal.workspace_scope,
        persona=principal.persona,
        worker=worker,
        lease_s=lease_s,
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
    lease ran out is marked failed here, with the reason. A citation of a chunk the caller may
    no longer read is left out of the result.

    Raises:
        NotFound: no such job of the caller's (or of the caller's binding).
    """
    owner = _owner(principal, "your role may not ask")
    scope = principal.workspace_scope
    row = await queries.get_job(conn, job_id=job_id, user_id=owner, scope=scope)
    if row is None:
        raise NotFound(f"no research job {job_id} of yours")
    if row.lease_expired:
        await queries.finish_job(conn, job_id=job_id, status="failed", result=None, error=ABANDONED)
        row = await queries.get_job(conn, job_id=job_id, user_id=owner, scope=scope)
        assert row is not None
    result = row.result
    if result is not None and isinstance(result.get("citations"), list):
        cited = result["citations"]
        readable = await _readable(conn, principal, _cited_chunks(cited))
        result = {**result, "citations": _readable_citations(cited, readable)}
    return ResearchJob(
        id=row.id,
        user_id=row.user_id,
        question=row.question,
        workspace_scope=row.workspace_scope,
        persona=row.persona,
        status=row.status,  # type: ignore[arg-type]  # the table's check constraint holds it
        result=result,
        error=row.error,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


async def fail_abandoned_jobs(conn: WriteConnection) -> int:
    """Mark failed every running job whose process stopped renewing its lease."""
    return await queries.fail_abandoned_jobs(conn, reason=ABANDONED)
