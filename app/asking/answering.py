"""A run of the answering agents, from a checked question to its last event: the question is
routed to the fast agent or the deep orchestrator (or, with no model, answered extractively),
and yields one stream of events: `mode`, then steps and tokens as they happen, then `done` with
the checked citations — or `error`. The chat's turn is recorded with the `done` event.
`app.asking.service` is what the doors call; this is what it drives.

The run is driven in a task of its own and its events go through a queue, so that closing the
stream (a client that disconnects) cancels the run wherever it is: in a tool call, or waiting
on the model."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import ValidationError

from app.access.principal import Principal
from app.agents import citations, prompts
from app.agents.graph import deep_graph, react_graph
from app.agents.mode import choose_mode
from app.agents.models import ModelError, Models, classify
from app.agents.nodes import AgentSpec
from app.agents.run import Budget, Run
from app.asking import extractive, records
from app.asking.limits import AnswerLimits
from app.asking.observed import observed_run
from app.asking.schemas import (
    Answer,
    AskMode,
    DoneEvent,
    ErrorEvent,
    Event,
    ModeEvent,
    RunMode,
    Step,
    Writes,
)
from app.config import Settings
from app.db.availability import DATABASE_UNREACHABLE, unreachable
from app.db.engine import ShortTransaction, WriteConnection
from app.documents import service as documents_service
from app.errors import AppError, ValidationFailed
from app.rag.embeddings.base import Embedder
from app.routing.state import RoutingState
from app.search import service as search_service
from app.search.schemas import Door, SearchRequest
from app.sources import service as sources_service

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Asking:
    """What asking needs from the process (`Resources.asking()` builds it, for every door)."""

    settings: Settings
    embedder: Embedder
    models: Models
    # One short transaction per call, committed at the end of its block: a run holds no
    # connection while the model thinks.
    transaction: ShortTransaction
    limits: AnswerLimits
    # The persona routing policy, which gives a persona's workspaces.
    routing: RoutingState


@dataclass(frozen=True)
class Question:
    """A question checked and ready to run (`prepare`)."""

    text: str
    mode: AskMode
    workspaces: list[str] | None = None
    document_ids: list[UUID] | None = None
    # Only documents carrying every one of these tags are searched.
    tags: list[str] | None = None
    # The persona whose workspaces `workspaces` are (said in the mode's reason).
    persona: str | None = None
    # Kept in a chat (`chat_id`, or a new one when None): the web app's questions, not MCP's.
    in_chat: bool = False
    # What the agents may write, as the asker allowed for this run (MCP's ask tools promise a
    # read: always "off" there).
    writes: Writes = "off"
    chat_id: UUID | None = None
    history: list[tuple[str, str]] = field(default_factory=list)
    # The chunks the history's answers were drawn from: the run has read them too.
    drawn_from: frozenset[UUID] = frozenset()
    # A chat's deep run, kept apart from its stream: its research job (ADR 0030).
    run_id: UUID | None = None


class RunFailed(AppError):
    """The run ended in an error event."""

    status = 502

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


async def stream(
    asking: Asking, principal: Principal, question: Question, *, door: Door
) -> AsyncGenerator[Event, None]:
    """The events of one run, ending with `done` or `error`. Closing the iterator cancels the
    run."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    task = asyncio.create_task(_drive(asking, principal, question, door, queue.put_nowait))
    try:
        while True:
            event = await queue.get()
            if event is None:
                break
            yield event
    finally:
        if not task.done():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def collect(
    asking: Asking, principal: Principal, question: Question, *, door: Door
) -> Answer:
    """The run collected into one reply (MCP, which cannot stream).

    Raises:
        AppError: the run ended in an `error` event (a provider failure, a bad question).
    """
    mode, reason, steps = "fast", "", []
    async with aclosing(stream(asking, principal, question, door=door)) as events:
        async for event in events:
            if isinstance(event, ModeEvent):
                mode, reason = event.mode, event.reason
            elif isinstance(event, Step):
                steps.append(event.label)
            elif isinstance(event, DoneEvent):
                return Answer(
                    answer=event.answer,
                    citations=event.citations,
                    mode=event.mode,
                    extractive=event.extractive,
                    fell_back=event.fell_back,
                    reason=reason,
                    steps=steps,
                )
            elif isinstance(event, ErrorEvent):
                raise RunFailed(event.code, event.message)
    raise RunFailed("internal", f"the {mode} run ended without an answer")


async def _drive(
    asking: Asking,
    principal: Principal,
    question: Question,
    door: Door,
    emit: Callable[[Event | None], None],
) -> None:
    with observed_run(door, emit) as watched:
        await _drive_watched(asking, principal, question, door, watched)


async def _drive_watched(
    asking: Asking,
    principal: Principal,
    question: Question,
    door: Door,
    emit: Callable[[Event | None], None],
) -> None:
    try:
        emit(await _run(asking, principal, question, door, emit))
    except ModelError as exc:
        emit(ErrorEvent(code=exc.code, message=exc.message))
    except AppError as exc:
        emit(ErrorEvent(code=exc.code, message=exc.message))
    except Exception as exc:
        failure = classify(exc)
        if failure is not None:
            emit(ErrorEvent(code=failure.code, message=failure.message))
        elif unreachable(exc):
            # PostgreSQL restarting under a run (a tool's search, the answer's record): the
            # stream's own 503, which the caller may retry shortly.
            emit(ErrorEvent(code="unavailable", message=DATABASE_UNREACHABLE))
        else:
            logger.exception("an answering run failed", exc_info=exc)
            emit(ErrorEvent(code="internal", message="the run failed; the server log has why"))
    finally:
        emit(None)


def _budget(settings: Settings, mode: RunMode) -> Budget:
    deadline = settings.deep_deadline_s if mode == "deep" else settings.fast_deadline_s
    return Budget(
        deadline=time.monotonic() + deadline,
        max_model_calls=settings.answer_max_model_calls,
        max_tool_calls=settings.answer_max_tool_calls,
        max_context_chars=settings.answer_max_context_chars,
    )


async def _run(
    asking: Asking,
    principal: Principal,
    question: Question,
    door: Door,
    emit: Callable[[Event | None], None],
) -> DoneEvent:
    mode, reason = choose_mode(question.mode, question.text)
    if question.persona:
        reason += f"; persona {question.persona!r}: {', '.join(question.workspaces or [])}"
    if question.tags:
        reason += f"; tagged {', '.join(question.tags)}"
    emit(ModeEvent(mode=mode, reason=reason, run_id=question.run_id, chat_id=question.chat_id))
    run = Run(
        question=question.text,
        principal=principal,
        settings=asking.settings,
        embedder=asking.embedder,
        models=asking.models,
        transaction=asking.transaction,
        emit=emit,
        budget=_budget(asking.settings, mode),
        model_calls=asking.limits.model_calls,
        door=door,
        writes=question.writes,
        workspaces=question.workspaces,
        document_ids=question.document_ids,
        tags=question.tags,
        history=question.history,
        drawn_from=question.drawn_from,
        react=react_graph(),
    )
    if asking.models.chat(mode) is None:
        return await _extractive(asking, principal, question, run, mode, door)
    fell_back = False
    text: str | None = None
    if mode == "deep":
        try:
            async with asyncio.timeout(run.budget.seconds_left()):
                text = await _deep(run)
        except Exception as exc:
            failure = classify(exc) if not isinstance(exc, TimeoutError) else None
            if failure is not None:
                raise failure from exc
            why = (
                "deadline reached"
                if isinstance(exc, TimeoutError)
                else str(exc) or type(exc).__name__
            )
            logger.info("deep run failed (%s); falling back to fast", type(exc).__name__)
            run.step("fallback", "deep run failed: answering in fast mode instead", why)
            fell_back, mode = True, "fast"
            run.budget = _budget(asking.settings, "fast")
            run.stopped = None
    if mode == "fast":
        try:
            async with asyncio.timeout(run.budget.seconds_left()):
                text = await _fast(run)
        except TimeoutError:
            run.budget_hit("deadline")
            text = ""
    return await _finish(asking, principal, question, run, mode, door, text or "", fell_back)


def _history_messages(run: Run) -> list[BaseMessage]:
    return [HumanMessage(text) if role == "user" else AIMessage(text) for role, text in run.history]


async def _fast(run: Run) -> str:
    spec = AgentSpec(
        name="fast",
        prompt=prompts.FAST,
        tools=None,
        max_searches=run.settings.fast_max_searches,
        stream=True,
    )
    result = await run.react.ainvoke(
        {"messages": [*_history_messages(run), HumanMessage(run.question)], "searches": 0},
        config={
            "configurable": {"run": run, "agent": spec},
            "recursion_limit": 4 * run.settings.answer_max_model_calls,
        },
    )
    text = str(result.get("answer") or "")
    if text and result.get("capped") and "cap" not in text.lower():
        # The prompt asks the model to say so; this says it for a model that did not.
        text += (
            f"\n\n_The search cap ({spec.max_searches} searches) was reached: this answer rests "
            "on what those searches found._"
        )
    return text


async def _deep(run: Run) -> str:
    result: dict[str, Any] = await deep_graph().ainvoke(
        {"question": run.question, "revisions": 0},
        config={
            "configurable": {"run": run},
            "recursion_limit": 4 * run.settings.answer_max_model_calls,
        },
    )
    return str(result.get("draft") or "")


def _stopped_text(run: Run) -> str:
    """What a run stopped by a budget before the model answered says: the passages it found."""
    found = sorted(run.ledger.by_chunk.values(), key=lambda e: e.key)[: extractive.PASSAGES]
    note = f"Stopped early ({run.stopped or 'no answer from the model'})."
    if not found:
        return f"{note} {extractive.NOTHING}"
    words = extractive.terms(run.question)
    passages = "\n\n".join(
        extractive.passage(f"[{e.key}]", e.title, e.heading_path, e.text, words) for e in found
    )
    return f"{note} These are the passages found so far, cited.\n\n{passages}"


async def _finish(
    asking: Asking,
    principal: Principal,
    question: Question,
    run: Run,
    mode: RunMode,
    door: Door,
    text: str,
    fell_back: bool,
) -> DoneEvent:
    if not text.strip():
        text = _stopped_text(run)
    elif run.stopped:
        text += f"\n\n_Stopped early: {run.stopped}._"
    retrieved = run.ledger.by_key()
    async with asking.transaction() as conn:
        readable = await documents_service.readable_chunks(
            conn, principal, [e.chunk_id for e in retrieved.values()]
        )
    checked = citations.check(text, retrieved, readable)
    for removed in checked.removed:
        run.step("citation", f"citation removed: {removed}")
    async with asking.transaction() as conn:
        found = len(retrieved)
        if not found and (question.workspaces or question.tags or question.document_ids):
            # As a search's: a question its scope emptied is no gap when the whole corpus the
            # caller may read answers it.
            found = await search_service.unfiltered_hits(
                conn,
                principal,
                asking.embedder,
                asking.settings,
                SearchRequest(query=question.text),
            )
        await search_service.record_question(
            conn,
            principal,
            question.text,
            door=door,
            mode=mode,
            best_similarity=run.ledger.best_similarity,
            hit_count=found,
        )
        answer = Answer(
            answer=checked.text,
            citations=checked.citations,
            mode=mode,
            extractive=False,
            fell_back=fell_back,
        )
        return await _done(conn, question, run, mode, answer)


async def _extractive(
    asking: Asking,
    principal: Principal,
    question: Question,
    run: Run,
    mode: RunMode,
    door: Door,
) -> DoneEvent:
    run.step("search", f'search: "{question.text[:200]}"')
    try:
        request = SearchRequest(
            query=question.text,
            workspaces=question.workspaces,
            tags=question.tags,
            top_k=extractive.PASSAGES,
        )
    except ValidationError as exc:
        raise ValidationFailed.from_pydantic(exc) from None
    async with asking.transaction() as conn:
        # Recorded as a search: a question that finds nothing is a documentation gap.
        found = await search_service.search(
            conn,
            principal,
            asking.embedder,
            asking.settings,
            request,
            door=door,
            document_ids=question.document_ids,
        )
        return await _done(
            conn,
            question,
            run,
            mode,
            extractive.answer(found.hits, mode=mode, question=question.text),
        )


async def _with_provenance(conn: WriteConnection, principal: Principal, answer: Answer) -> Answer:
    """Citations of synced documents carry where they came from and whether they may be
    stale: a reader weighs an answer by its sources' age."""
    known = await sources_service.provenances(
        conn, principal, list({citation.document_id for citation in answer.citations})
    )
    if not known:
        return answer
    cited = [
        citation
        if citation.document_id not in known
        else citation.model_copy(
            update={
                "source_path": known[citation.document_id].path,
                "commit": known[citation.document_id].commit,
                "commit_date": known[citation.document_id].commit_date,
                "source_url": known[citation.document_id].url,
                "stale": known[citation.document_id].stale,
            }
        )
        for citation in answer.citations
    ]
    return answer.model_copy(update={"citations": cited})


async def _done(
    conn: WriteConnection, question: Question, run: Run, mode: RunMode, answer: Answer
) -> DoneEvent:
    """The run's last event, carrying `answer`; in a chat, the turn is kept (and a chat's run
    marked done) in the same transaction."""
    answer = await _with_provenance(conn, run.principal, answer)
    chat_id = question.chat_id
    if question.run_id is not None:
        # A chat's run (a job, ADR 0030) ends with its turn: one commit, so a reader of the
        # chat never finds the turn beside a run still under way.
        await records.complete_run(conn, question.run_id, answer)
    if question.in_chat:
        chat_id = await records.record_turn(
            conn,
            run.principal,
            question.chat_id,
            question=question.text,
            answer=answer.answer,
            mode=mode,
            citations=answer.citations,
            trace=run.trace,
            read_chunks=list(run.ledger.by_chunk),
        )
    return DoneEvent(
        answer=answer.answer,
        citations=answer.citations,
        mode=mode,
        fell_back=answer.fell_back,
        extractive=answer.extractive,
        chat_id=chat_id,
        trace_id=run.trace_id,
    )
