"""The one entry point of asking: a question is routed to the fast agent or the deep
orchestrator (or, with no model, answered extractively), and yields one stream of events:
`mode`, then steps and tokens as they happen, then `done` with the checked citations — or
`error`. HTTP streams it; MCP's tools collect it (`answer_once`).

The run is driven in a task of its own and its events go through a queue, so that closing the
stream (a client that disconnects) cancels the run wherever it is: in a tool call, or waiting
on the model."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any
from uuid import UUID

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from app.access.principal import Principal
from app.agents import citations, prompts
from app.agents.graph import deep_graph, react_graph
from app.agents.models import ModelError, Models, classify
from app.agents.nodes import AgentSpec
from app.agents.observed import observed_run
from app.agents.routing import route
from app.agents.run import Budget, Run
from app.asking import service as asking_service
from app.asking.limits import AnswerLimits
from app.asking.schemas import (
    AskRequest,
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
from app.errors import AppError
from app.rag import extractive
from app.rag.embeddings.base import Embedder
from app.rag.schemas import SNIPPET_CHARS, Answer, AskMode, Citation
from app.routing import service as routing_service
from app.routing.service import Routing
from app.search import service as search_service

logger = logging.getLogger(__name__)

# The turns of a chat a follow-up sees (the latest), and how much of each.
HISTORY_TURNS = 10
HISTORY_CHARS = 4000


@dataclass(frozen=True)
class Services:
    """What a run needs from the process."""

    settings: Settings
    embedder: Embedder
    models: Models
    # One short transaction per call, committed at the end of its block.
    transaction: ShortTransaction
    limits: AnswerLimits


@dataclass(frozen=True)
class Question:
    """A question checked and ready to run (`prepare`)."""

    text: str
    mode: AskMode
    workspaces: list[str] | None = None
    document_ids: list[UUID] | None = None
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


async def prepare(
    transaction: ShortTransaction,
    principal: Principal,
    settings: Settings,
    request: AskRequest,
    *,
    routing: Routing,
    in_chat: bool = True,
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
    text = search_service.checked_query(settings, request.question, name="question")
    workspaces = request.workspaces
    if request.persona and workspaces is None:
        # The persona's workspaces by the routing policy (built-in, file, admins' layers), read
        # before this call's own transaction opens: one pooled connection at a time.
        workspaces = await routing_service.persona_scope(routing, principal, request.persona)
    async with transaction() as conn:
        await documents_service.search_scope(conn, principal, workspaces)
        if request.document_ids:
            await documents_service.require_visible(conn, principal, request.document_ids)
        question = Question(
            text=text,
            mode=request.mode,
            workspaces=workspaces,
            document_ids=request.document_ids or None,
            persona=request.persona if request.workspaces is None else None,
            writes=request.writes,
        )
        if not in_chat:
            return question
        question = replace(question, in_chat=True)
        if request.chat_id is None:
            return question
        earlier = await asking_service.follow_up(
            conn, principal, request.chat_id, turns=HISTORY_TURNS, chars=HISTORY_CHARS
        )
    return replace(
        question,
        chat_id=earlier.chat_id,
        history=earlier.history,
        drawn_from=earlier.drawn_from,
    )


class RunFailed(AppError):
    """The run ended in an error event."""

    status = 502

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # the event's code, per instance


async def answer(
    services: Services, principal: Principal, question: Question, *, door: str
) -> AsyncGenerator[Event, None]:
    """The events of one run, ending with `done` or `error`. Closing the iterator cancels the
    run."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    task = asyncio.create_task(_drive(services, principal, question, door, queue.put_nowait))
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


async def answer_once(
    services: Services, principal: Principal, question: Question, *, door: str
) -> Answer:
    """The run collected into one reply (MCP, which cannot stream).

    Raises:
        AppError: the run ended in an `error` event (a provider failure, a bad question).
    """
    mode, reason, steps = "fast", "", []
    async with aclosing(answer(services, principal, question, door=door)) as events:
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
    services: Services,
    principal: Principal,
    question: Question,
    door: str,
    emit: Callable[[Event | None], None],
) -> None:
    with observed_run(door, emit) as watched:
        await _drive_watched(services, principal, question, door, watched)


async def _drive_watched(
    services: Services,
    principal: Principal,
    question: Question,
    door: str,
    emit: Callable[[Event | None], None],
) -> None:
    try:
        emit(await _run(services, principal, question, door, emit))
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
    services: Services,
    principal: Principal,
    question: Question,
    door: str,
    emit: Callable[[Event | None], None],
) -> DoneEvent:
    mode, reason = route(question.mode, question.text)
    if question.persona:
        reason += f"; persona {question.persona!r}: {', '.join(question.workspaces or [])}"
    emit(ModeEvent(mode=mode, reason=reason))
    run = Run(
        question=question.text,
        principal=principal,
        settings=services.settings,
        embedder=services.embedder,
        models=services.models,
        transaction=services.transaction,
        emit=emit,
        budget=_budget(services.settings, mode),
        limits=services.limits,
        door=door,
        writes=question.writes,
        workspaces=question.workspaces,
        document_ids=question.document_ids,
        history=question.history,
        drawn_from=question.drawn_from,
        react=react_graph(),
    )
    if services.models.chat(mode) is None:
        return await _extractive(services, principal, question, run, mode, door)
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
            run.budget = _budget(services.settings, "fast")
            run.stopped = None
    if mode == "fast":
        try:
            async with asyncio.timeout(run.budget.seconds_left()):
                text = await _fast(run)
        except TimeoutError:
            run.budget_hit("deadline")
            text = ""
    return await _finish(services, principal, question, run, mode, door, text or "", fell_back)


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
    passages = "\n\n".join(f"[{e.key}] {e.title}: {e.text[:SNIPPET_CHARS]}" for e in found)
    return f"{note} These are the passages found so far, cited.\n\n{passages}"


async def _finish(
    services: Services,
    principal: Principal,
    question: Question,
    run: Run,
    mode: RunMode,
    door: str,
    text: str,
    fell_back: bool,
) -> DoneEvent:
    if not text.strip():
        text = _stopped_text(run)
    elif run.stopped:
        text += f"\n\n_Stopped early: {run.stopped}._"
    retrieved = run.ledger.by_key()
    async with services.transaction() as conn:
        readable = await documents_service.readable_chunks(
            conn, principal, [e.chunk_id for e in retrieved.values()]
        )
    checked = citations.check(text, retrieved, readable)
    for removed in checked.removed:
        run.step("citation", f"citation removed: {removed}")
    async with services.transaction() as conn:
        await search_service.record_question(
            conn,
            principal,
            question.text,
            door=door,
            mode=mode,
            best_similarity=run.ledger.best_similarity,
            hit_count=len(retrieved),
        )
        return await _done(
            conn,
            principal,
            question,
            run,
            mode,
            checked.text,
            checked.citations,
            fell_back=fell_back,
            extractive=False,
        )


async def _extractive(
    services: Services,
    principal: Principal,
    question: Question,
    run: Run,
    mode: RunMode,
    door: str,
) -> DoneEvent:
    run.step("search", f'search: "{question.text[:200]}"')
    async with services.transaction() as conn:
        result = await search_service.ask(
            conn,
            principal,
            services.embedder,
            services.settings,
            question.text,
            mode=mode,
            door=door,
            workspaces=question.workspaces,
            document_ids=question.document_ids,
        )
        return await _done(
            conn,
            principal,
            question,
            run,
            mode,
            result.answer,
            result.citations,
            fell_back=False,
            extractive=True,
        )


async def _done(
    conn: WriteConnection,
    principal: Principal,
    question: Question,
    run: Run,
    mode: RunMode,
    text: str,
    cited: list[Citation],
    *,
    fell_back: bool,
    extractive: bool,
) -> DoneEvent:
    """The run's last event; in a chat, the turn is kept in the same transaction."""
    chat_id = question.chat_id
    if question.in_chat:
        chat_id = await asking_service.record_turn(
            conn,
            principal,
            question.chat_id,
            question=question.text,
            answer=text,
            mode=mode,
            citations=[c.model_dump(mode="json") for c in cited],
            trace=run.trace_json(),
            read_chunks=list(run.ledger.by_chunk),
        )
    return DoneEvent(
        answer=text,
        citations=cited,
        mode=mode,
        fell_back=fell_back,
        extractive=extractive,
        chat_id=chat_id,
        trace_id=run.trace_id,
    )
