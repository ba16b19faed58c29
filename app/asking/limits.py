"""Limits on answering (docs/SECURITY.md, "Limits on answering"): how many runs each person has
at once, how many of their research jobs run and wait, and how many model calls the process
makes at once, shared fairly between people.

A person is an account (`Principal.user_id`); callers with no account (the command line's
operator) share one bucket of their own, `None`. The counts live in the process's memory, so
each replica enforces its own; research jobs are also counted in PostgreSQL when they are
created (`asking.records.create_job`), which bounds a person's unfinished jobs across replicas.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from uuid import UUID

from app.agents.gate import ModelGate, Person
from app.config import Settings
from app.errors import RateLimited
from app.observe import metrics

# What Retry-After says: when a run or a research job may have ended is unknown, so these are
# the usual lengths of each (a fast answer takes seconds, a deep one minutes).
RUN_RETRY_AFTER_S = 10
JOB_RETRY_AFTER_S = 60


@dataclass(eq=False)
class JobTicket:
    """A research job's place: waiting in its person's line, then running (holding one of the
    person's runs and one of their job slots) until `release`."""

    limits: AnswerLimits
    person: Person
    job_id: UUID
    started: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    released: bool = False

    @property
    def ahead(self) -> int | None:
        """How many of the person's queued jobs are ahead of this one; None once it runs."""
        line = self.limits._line(self.person)
        return line.index(self) if self in line else None

    async def wait(self) -> None:
        """Return once the job may run."""
        await asyncio.shield(self.started)

    def release(self) -> None:
        """Give back what the job holds, or its place in line (again: nothing)."""
        if self.released:
            return
        self.released = True
        self.limits._leave(self)


@dataclass
class _Person:
    runs: int = 0
    jobs: int = 0
    line: deque[JobTicket] = field(default_factory=deque)


class AnswerLimits:
    """Each person's runs at once (at every door: `POST /api/ask`, `ask_docs`, and research
    jobs while they run), their research jobs running and queued, and the process's model
    calls at once (`model_calls`)."""

    def __init__(
        self,
        *,
        runs_per_person: int,
        jobs_per_person: int,
        queued_jobs_per_person: int,
        model_calls: int,
    ) -> None:
        self.runs_per_person = runs_per_person
        self.jobs_per_person = jobs_per_person
        self.queued_jobs_per_person = queued_jobs_per_person
        self.model_calls = ModelGate(model_calls)
        self._people: dict[Person, _Person] = {}
        self._queued: dict[UUID, JobTicket] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> AnswerLimits:
        return cls(
            runs_per_person=settings.max_runs_per_person,
            jobs_per_person=settings.max_jobs_per_person,
            queued_jobs_per_person=settings.max_queued_jobs_per_person,
            model_calls=settings.max_concurrent_model_calls,
        )

    @property
    def unfinished_jobs_per_person(self) -> int:
        """A person's research jobs running and queued together: past it, a new one is refused."""
        return self.jobs_per_person + self.queued_jobs_per_person

    def runs(self, person: Person) -> int:
        """The person's runs under way (research jobs included)."""
        state = self._people.get(person)
        return state.runs if state is not None else 0

    @contextmanager
    def run(self, person: Person) -> Iterator[None]:
        """Hold one of the person's runs for the block.

        Raises:
            RateLimited: the person has `runs_per_person` runs under way.
        """
        state = self._people.setdefault(person, _Person())
        if state.runs >= self.runs_per_person:
            metrics.throttle_refused("runs_per_person")
            raise RateLimited(
                f"you have {self.runs_per_person} answers under way, the most one person may "
                f"have at once; ask again when one has finished (in about {RUN_RETRY_AFTER_S} s)",
                retry_after_s=RUN_RETRY_AFTER_S,
            )
        state.runs += 1
        try:
            yield
        finally:
            state.runs -= 1
            self._start_jobs(person)

    def enqueue_job(self, person: Person, job_id: UUID) -> JobTicket:
        """A research job's ticket: running at once when the person has a run and a job slot
        free, else waiting in their line (`JobTicket.ahead`). The caller releases it."""
        ticket = JobTicket(self, person, job_id)
        state = self._people.setdefault(person, _Person())
        state.line.append(ticket)
        self._queued[job_id] = ticket
        self._start_jobs(person)
        return ticket

    def queued_ahead(self, job_id: UUID) -> int | None:
        """How many jobs are ahead of a job queued in this process; None when it is not queued
        here (it runs, it has ended, or another replica has it)."""
        ticket = self._queued.get(job_id)
        return ticket.ahead if ticket is not None else None

    def _line(self, person: Person) -> deque[JobTicket]:
        state = self._people.get(person)
        return state.line if state is not None else deque()

    def _start_jobs(self, person: Person) -> None:
        state = self._people.get(person)
        if state is None:
            return
        while (
            state.line and state.runs < self.runs_per_person and state.jobs < self.jobs_per_person
        ):
            ticket = state.line.popleft()
            del self._queued[ticket.job_id]
            state.runs += 1
            state.jobs += 1
            ticket.started.set_result(None)
        self._tidy(person)

    def _leave(self, ticket: JobTicket) -> None:
        state = self._people[ticket.person]
        if ticket in state.line:
            state.line.remove(ticket)
            del self._queued[ticket.job_id]
        else:
            state.runs -= 1
            state.jobs -= 1
        self._start_jobs(ticket.person)

    def _tidy(self, person: Person) -> None:
        """Forget a person with nothing under way, so the table holds only active people."""
        state = self._people.get(person)
        if state is not None and not (state.runs or state.jobs or state.line):
            del self._people[person]
