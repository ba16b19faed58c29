"""Asking, as every door offers it: a question checked and its chat's history read
(`prepare`), then answered as a stream of events (`ask`: the web app's `POST /api/ask`) or
collected into one reply (`ask_once`: MCP's `ask_docs`), or researched in depth as a job that
can outlast the call (`research`, `research_result`: MCP's `deep_research`); and a person's
chats read back. The runs themselves are `app.asking.answering`'s, which drives the agents'
graphs (`app.agents`); what they write is `app.asking.records`'.

A chat and a job are their owner's alone, and a key bound to a workspace sees only those made
under the same binding: anyone else is told they do not exist. What they cite is checked again,
under the caller's rights of the moment, whenever they are read."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any
from uuid import UUID

from app.access.principal import Principal
from app.agents.mode import choose_mode
from app.asking import answering, queries, records
from app.asking.answering import Asking, Question
from app.asking.jobs import Jobs
from app.asking.schemas import (
    Answer,
    AskMode,
    AskRequest,
    Chat,
    ChatMessage,
    ChatRun,
    ChatUpdate,
    ChatWithMessages,
    Event,
    ResearchJob,
)
from app.db.engine import ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.errors import NotFound
from app.kit.paging import decode_cursor, keyset_page
from app.routing import service as routing_service
from app.schemas import Page
from app.search import service as search_service
from app.search.schemas import Door
from app.workspaces import service as workspaces_service

# The turns of a chat a follow-up sees (the latest), and how much of each.
HISTORY_TURNS = 10
HISTORY_CHARS = 4000


async def prepare(
    asking: Asking, principal: Principal, request: AskRequest, *, in_chat: bool = True
) -> Question:
    """Check a question before its run starts, so that bad input is an error of the door, and
    (`in_chat`) read the history of the caller's chat `chat_id`; a new chat is made when the
    first answer is kept, so a run that fails or is cancelled leaves none behind.

    Raises:
        Forbidden: the role may not ask, or may not write and asked to. ValidationFailed: a
        blank or too long question, or an unknown workspace. NotFound: a chat or document the
        caller does not have.
    """
    principal.require("search", "your role may not ask")
    if request.writes != "off":
        principal.require("documents.write", "writes: your role may not add documents")
    text = search_service.checked_query(asking.settings, request.question, name="question")
    workspaces = request.workspaces
    if request.persona and workspaces is None:
        # The persona's workspaces by the routing policy (built-in, file, admins' layers), read
        # before this call's own transaction opens: one pooled connection at a time.
        workspaces = await routing_service.persona_scope(asking.routing, principal, request.persona)
    async with asking.transaction() as conn:
        await workspaces_service.search_scope(conn, principal, workspaces)
        if request.document_ids:
            await documents_service.require_visible(conn, principal, request.document_ids)
        question = Question(
            text=text,
            mode=request.mode,
            workspaces=workspaces,
            document_ids=request.document_ids or None,
            tags=request.tags or None,
            persona=request.persona if request.workspaces is None else None,
            writes=request.writes,
        )
        if not in_chat:
            return question
        question = replace(question, in_chat=True)
        if request.chat_id is None:
            return question
        earlier = await _follow_up(
            conn, principal, request.chat_id, turns=HISTORY_TURNS, chars=HISTORY_CHARS
        )
    return replace(
        question,
        chat_id=earlier.chat_id,
        history=earlier.history,
        drawn_from=earlier.drawn_from,
    )


def ask(
    asking: Asking, principal: Principal, question: Question, *, door: Door
) -> AsyncGenerator[Event, None]:
    """The events of the question's run, ending with `done` (the turn kept, in a chat) or
    `error`. Closing the iterator cancels the run."""
    return answering.stream(asking, principal, question, door=door)


async def ask_in_chat(
    asking: Asking, jobs: Jobs, principal: Principal, question: Question, *, held: ExitStack
) -> AsyncIterator[Event]:
    """The events of a question asked in the web app, ending with `done` or `error`. A deep
    run kept in a chat goes on apart from them (ADR 0030): a research job tied to its chat,
    which takes over the caller's run slot `held`, whose turn lands in the chat when it ends,
    and which only `cancel_run` stops; closing the events leaves it going. Any other run is
    the events' own: closing them cancels it.

    Raises:
        Forbidden: the role may not ask. NotFound: the chat is not the caller's.
    """
    mode, _reason = choose_mode(question.mode, question.text)
    if question.in_chat and mode == "deep":
        return await jobs.start_in_chat(asking, principal, question, held)
    return answering.stream(asking, principal, question, door="chat")


async def cancel_run(asking: Asking, jobs: Jobs, principal: Principal, run_id: UUID) -> None:
    """Stop one of the caller's runs kept apart from their stream (a chat's deep run, or a
    research job); one that has ended stays as it ended.

    Raises:
        NotFound: no such run of the caller's (or of the caller's binding).
    """
    await cancel_research(asking, jobs, principal, str(run_id))


async def ask_once(
    asking: Asking, principal: Principal, question: str, *, mode: AskMode, door: Door
) -> Answer:
    """A question answered outside any chat and collected into one reply, as one of the
    caller's runs (refused past the limit). The run is read-only: `writes` stays off.

    Raises:
        RateLimited: the caller has as many runs going as one person may. The errors of
        `prepare`, and `RunFailed` when the run ended in an error.
    """
    with asking.limits.run(principal.user_id):
        checked = await prepare(
            asking, principal, AskRequest(question=question, mode=mode), in_chat=False
        )
        return await answering.collect(asking, principal, checked, door=door)


async def research(
    asking: Asking, jobs: Jobs, principal: Principal, question: str, *, wait: bool = True
) -> Answer:
    """Research a question in depth as a job of the caller's (read-only): its answer if it
    lands within `RESEARCH_WAIT_S` (unless not to `wait`: an MCP task is answered at once), or
    the job to ask about later (`research_result`), queued behind the caller's other research
    or running.

    Raises:
        RateLimited: the caller has as many unfinished jobs as one person may. The errors of
        `prepare`.
    """
    checked = await prepare(
        asking, principal, AskRequest(question=question, mode="deep"), in_chat=False
    )
    job_id = await jobs.start(asking, principal, checked.text)
    ahead = asking.limits.queued_ahead(job_id)
    if ahead is not None:
        return Answer.pending(job_id, ahead)
    if not wait:
        return Answer.pending(job_id)
    done = await jobs.wait(job_id, asking.settings.research_wait_s)
    if done is not None:
        return done.model_copy(update={"job_id": str(job_id)})
    return Answer.pending(job_id)


async def research_result(asking: Asking, principal: Principal, job_id: str) -> Answer:
    """A research job's answer, from whichever process ran it; or that it is still queued here
    or running; or why it failed.

    Raises:
        NotFound: no such job of the caller's (or of the caller's binding).
    """
    found = await research_job(asking, principal, job_id)
    job = found.id
    if found.status == "running":
        # Queued here, it says how many are ahead; another replica's says running.
        return Answer.pending(job, asking.limits.queued_ahead(job))
    return finished_answer(found)


def finished_answer(job: ResearchJob) -> Answer:
    """A finished job's reply: its answer, or why it failed (`research_result`, and an MCP
    task's result)."""
    if job.status == "failed" or job.result is None:
        return Answer.failed(job.id, job.error or "the research failed")
    return job.result.model_copy(update={"job_id": str(job.id), "status": "done"})


async def research_job(asking: Asking, principal: Principal, job_id: str) -> ResearchJob:
    """One of the caller's research jobs as it stands (an MCP task's state).

    Raises:
        NotFound: no such job of the caller's (or of the caller's binding).
    """
    try:
        job = UUID(job_id)
    except ValueError:
        raise NotFound(f"no research job {job_id!r} of yours") from None
    async with asking.transaction() as conn:
        return await get_job(conn, principal, job)


async def cancel_research(asking: Asking, jobs: Jobs, principal: Principal, job_id: str) -> None:
    """Cancel one of the caller's research jobs: marked so, and its run stopped (here at once,
    on another replica at its next lease renewal). A finished job stays as it ended.

    Raises:
        NotFound: no such job of the caller's (or of the caller's binding).
    """
    found = await research_job(asking, principal, job_id)
    if found.status != "running":
        return
    async with asking.transaction() as conn:
        await records.cancel_job(conn, found.id)
    jobs.cancel(found.id)


# --- chats and jobs, read back under the caller's rights -------------------------------------


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
    owner = records.owner_of(principal, "your role may not ask")
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
    owner = records.owner_of(principal, "your role may not ask")
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
    runs = [_run(r) for r in await queries.chat_runs(conn, chat_id=chat_id)]
    return ChatWithMessages(**_chat(row).model_dump(), messages=messages, runs=runs)


# Said of a chat's run whose process stopped renewing its lease (marked so when next read as
# a job, or by housekeeping).
RUN_ABANDONED = "the server running this question stopped before it finished; ask again"


def _run(row: queries.ChatRunRow) -> ChatRun:
    failed = row.status == "failed" or row.lease_expired
    return ChatRun(
        id=row.id,
        question=row.question,
        status="failed" if failed else "running",
        # Housekeeping words an abandoned job for MCP's callers; the chat says it its way.
        error=RUN_ABANDONED if row.lease_expired or row.error == records.ABANDONED else row.error,
        created_at=row.created_at,
    )


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


async def _follow_up(
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
    owner = records.owner_of(principal, "your role may not ask")
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
    owner = records.owner_of(principal, "your role may not ask")
    deleted = await queries.delete_chat(
        conn, chat_id=chat_id, user_id=owner, scope=principal.workspace_scope
    )
    if not deleted:
        raise NotFound("chat not found")


async def get_job(conn: WriteConnection, principal: Principal, job_id: UUID) -> ResearchJob:
    """One of the caller's research jobs, from whichever process ran it. A running job whose
    lease ran out is marked failed here, with the reason. A citation of a chunk the caller may
    no longer read is left out of the result.

    Raises:
        NotFound: no such job of the caller's (or of the caller's binding).
    """
    owner = records.owner_of(principal, "your role may not ask")
    scope = principal.workspace_scope
    row = await queries.get_job(conn, job_id=job_id, user_id=owner, scope=scope)
    if row is None:
        raise NotFound(f"no research job {job_id} of yours")
    if row.lease_expired:
        await queries.finish_job(
            conn, job_id=job_id, status="failed", result=None, error=records.ABANDONED
        )
        row = await queries.get_job(conn, job_id=job_id, user_id=owner, scope=scope)
        assert row is not None
    result = row.result
    if result is not None and isinstance(result.get("citations"), list):
        cited = result["citations"]
        readable = await _readable(conn, principal, _cited_chunks(cited))
        result = {**result, "citations": _readable_citations(cited, readable)}
    return ResearchJob.model_validate(
        {
            "id": row.id,
            "user_id": row.user_id,
            "question": row.question,
            "workspace_scope": row.workspace_scope,
            "persona": row.persona,
            # The table's check constraint holds the status to JobStatus's values.
            "status": row.status,
            "result": result,
            "error": row.error,
            "created_at": row.created_at,
            "finished_at": row.finished_at,
        }
    )
