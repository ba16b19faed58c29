"""Deep research that can outlast the call that asked for it: an MCP client's tool timeout
(read-only, as the tool is annotated: its agents get no tool that writes), or the chat page
that asked (ADR 0030). Each run is a job in PostgreSQL, owned by the caller and leased to this
process, which renews the lease while it works. Any replica answers `research_result` (and
reads a chat's runs) from the table; a job whose process died stops being renewed and is
marked failed, with the reason, by whoever reads it next (or by housekeeping, which at a
process's start also fails at once the jobs of this host's processes that are gone).

A chat's deep run is a job tied to its chat: its events go to a `Relay` that the page's stream
follows, so that closing the page leaves the run going; its turn lands in the chat when it
ends, as an attached run's does; and only its owner's cancel stops it."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator
from contextlib import ExitStack, aclosing
from dataclasses import replace
from uuid import UUID

from app.access.principal import Principal
from app.asking import records
from app.asking.answering import Asking, Question, collect, stream
from app.asking.limits import JobTicket
from app.asking.schemas import Answer, DoneEvent, ErrorEvent, Event
from app.errors import AppError
from app.observe import metrics

logger = logging.getLogger(__name__)

SHUT_DOWN = "the server running this research shut down before it finished; ask again"


class Relay:
    """A run's events so far and as they come, for whoever follows it: the page that asked,
    until it closes. Following replays the events from the first."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._ended = False
        self._changed = asyncio.Event()

    def put(self, event: Event | None) -> None:
        """One more event, or (None) the end."""
        if event is None:
            self._ended = True
        else:
            self._events.append(event)
        self._changed.set()
        self._changed = asyncio.Event()

    async def follow(self) -> AsyncIterator[Event]:
        """Every event, from the first to the last; closing this leaves the run going."""
        seen = 0
        while True:
            while seen < len(self._events):
                yield self._events[seen]
                seen += 1
            if self._ended:
                return
            await self._changed.wait()


class Jobs:
    """The research jobs this process runs (the lifespan closes it, failing what is left)."""

    def __init__(self) -> None:
        self._tasks: dict[UUID, asyncio.Task[Answer]] = {}
        # Jobs being stopped because they were cancelled, not because the server shuts down.
        self._cancelled: set[UUID] = set()
        self.worker = f"{socket.gethostname()}:{os.getpid()}"

    async def start(self, asking: Asking, principal: Principal, question: str) -> UUID:
        """Store a job for the question and start running it, or queue it behind the caller's
        running jobs (`AnswerLimits.queued_ahead`).

        Raises:
            Forbidden: the role may not ask. RateLimited: the caller has as many unfinished
            jobs as one person may.
        """
        lease = asking.settings.research_lease_s
        limits = asking.limits
        async with asking.transaction() as conn:
            job_id = await records.create_job(
                conn,
                principal,
                question,
                worker=self.worker,
                lease_s=lease,
                at_most=limits.unfinished_jobs_per_person,
            )
        ticket = limits.enqueue_job(principal.user_id, job_id)
        metrics.research_job("queued")
        task = asyncio.create_task(
            self._run(asking, job_id, principal, question, ticket),
            name=f"research job {job_id}",
        )
        self._tasks[job_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(job_id, None))
        return job_id

    async def start_in_chat(
        self, asking: Asking, principal: Principal, question: Question, held: ExitStack
    ) -> AsyncIterator[Event]:
        """Run a chat's deep question as a job tied to its chat (a new chat made now, titled by
        the question, when it has none yet); the events, for the page that asked to follow.
        `held` is the caller's run slot, which the job takes over and gives back when it ends.

        Raises:
            Forbidden: the role may not ask. NotFound: the chat is not the caller's.
        """
        async with asking.transaction() as conn:
            chat_id = question.chat_id or await records.open_chat(conn, principal, question.text)
            job_id = await records.create_job(
                conn,
                principal,
                question.text,
                worker=self.worker,
                lease_s=asking.settings.research_lease_s,
                chat_id=chat_id,
            )
        # From here the slot is the job's, not the request's.
        held = held.pop_all()
        relay = Relay()
        question = replace(question, chat_id=chat_id, run_id=job_id)
        metrics.research_job("running")
        task = asyncio.create_task(
            self._run_in_chat(asking, job_id, principal, question, relay, held),
            name=f"chat run {job_id}",
        )
        self._tasks[job_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(job_id, None))
        return relay.follow()

    async def _run_in_chat(
        self,
        asking: Asking,
        job_id: UUID,
        principal: Principal,
        question: Question,
        relay: Relay,
        held: ExitStack,
    ) -> Answer:
        heartbeat = asyncio.create_task(self._renew(asking, job_id))
        answer = Answer.failed(job_id, "the run ended without an answer")
        error: str | None = answer.answer
        try:
            with held:
                async with aclosing(stream(asking, principal, question, door="chat")) as events:
                    async for event in events:
                        relay.put(event)
                        if isinstance(event, DoneEvent):
                            # The job is done with its turn: a renewal now would find it
                            # finished and take the run for cancelled.
                            heartbeat.cancel()
                            answer = Answer(
                                answer=event.answer,
                                citations=event.citations,
                                mode=event.mode,
                                extractive=event.extractive,
                                fell_back=event.fell_back,
                            )
                            error = None
                        elif isinstance(event, ErrorEvent):
                            error = f"{event.code}: {event.message}"
        except asyncio.CancelledError:
            metrics.research_job("failed", left="running")
            if job_id in self._cancelled:
                # Its owner's cancel: the row says so already; this run ends, the server goes on.
                self._cancelled.discard(job_id)
                relay.put(ErrorEvent(code="cancelled", message="Stopped: the run was cancelled."))
                return Answer.failed(job_id, records.CANCELLED)
            relay.put(ErrorEvent(code="unavailable", message=SHUT_DOWN))
            await asyncio.shield(self._finish(asking, job_id, error=SHUT_DOWN))
            raise
        finally:
            relay.put(None)
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
        metrics.research_job("done" if error is None else "failed", left="running")
        if error is not None:
            await self._finish(asking, job_id, error=error)
            return Answer.failed(job_id, error)
        # Marked done by the transaction that kept its turn (`answering._done`).
        return answer

    async def wait(self, job_id: UUID, seconds: float) -> Answer | None:
        """The job's answer (or failure) if it finishes within `seconds` here; None while it
        runs on."""
        task = self._tasks.get(job_id)
        if task is None:
            return None
        done, _ = await asyncio.wait({task}, timeout=seconds)
        if not done:
            return None
        return task.result()

    async def settle(self, job_id: UUID, seconds: float) -> None:
        """Return when the job ends here, or after `seconds` (at once being no use to a caller
        that looks at the job's row again: one another replica runs ends unseen here)."""
        task = self._tasks.get(job_id)
        if task is None:
            await asyncio.sleep(seconds)
            return
        await asyncio.wait({task}, timeout=seconds)

    def cancel(self, job_id: UUID) -> None:
        """Stop a job if it runs here (its row is the caller's to mark: `records.cancel_job`);
        a job on another replica stops at that replica's next lease renewal."""
        task = self._tasks.get(job_id)
        if task is not None:
            self._cancelled.add(job_id)
            task.cancel()

    async def _run(
        self,
        asking: Asking,
        job_id: UUID,
        principal: Principal,
        question: str,
        ticket: JobTicket,
    ) -> Answer:
        # Renewed while it waits in line too: a queued job is unfinished, not abandoned.
        heartbeat = asyncio.create_task(self._renew(asking, job_id))
        state = "queued"
        try:
            await ticket.wait()
            metrics.research_job("running", left=state)
            state = "running"
            result = await collect(
                asking, principal, Question(text=question, mode="deep"), door="mcp"
            )
        except AppError as exc:
            metrics.research_job("failed", left=state)
            failed = Answer.failed(job_id, f"{exc.code}: {exc.message}")
            await self._finish(asking, job_id, error=failed.answer)
            return failed
        except asyncio.CancelledError:
            metrics.research_job("failed", left=state)
            if job_id in self._cancelled:
                # Its owner's cancel: the row says so already; this run ends, the server goes on.
                self._cancelled.discard(job_id)
                return Answer.failed(job_id, records.CANCELLED)
            await asyncio.shield(self._finish(asking, job_id, error=SHUT_DOWN))
            raise
        finally:
            ticket.release()
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
        metrics.research_job("done", left=state)
        await self._finish(asking, job_id, result=result)
        return result

    async def _finish(
        self,
        asking: Asking,
        job_id: UUID,
        *,
        result: Answer | None = None,
        error: str | None = None,
    ) -> None:
        try:
            async with asking.transaction() as conn:
                await records.finish_job(
                    conn,
                    job_id,
                    result=result,
                    error=error,
                )
        except Exception as exc:
            # Its lease runs out and a reader marks it failed: nothing is left running.
            logger.warning("could not store research job %s (%s)", job_id, type(exc).__name__)

    async def _renew(self, asking: Asking, job_id: UUID) -> None:
        lease = asking.settings.research_lease_s
        while True:
            await asyncio.sleep(lease / 3)
            try:
                async with asking.transaction() as conn:
                    renewed = await records.renew_job(conn, job_id, lease_s=lease)
            except Exception as exc:
                logger.warning("renewing research job %s failed (%s)", job_id, type(exc).__name__)
                continue
            if not renewed:
                # Finished elsewhere meanwhile: cancelled through another replica, or marked
                # abandoned. Nobody will read what this run would write.
                self.cancel(job_id)
                return

    async def aclose(self) -> None:
        """Cancel the jobs still running here; each is marked failed as the server shuts down."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
