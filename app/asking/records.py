"""What runs write: a chat's turns (each answer with its citations, the run's trace and every
chunk the run read), and the deep research jobs an MCP call leaves running, leased to the
process that runs them. A chat and a job are their owner's alone, marked with the binding they
were made under; `app.asking.service` reads them back under the caller's rights."""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

from app.access.principal import Principal
from app.asking import queries
from app.asking.limits import JOB_RETRY_AFTER_S
from app.asking.schemas import CHAT_TITLE_CHARS, Answer, Citation, Step
from app.db.engine import WriteConnection
from app.errors import Conflict, NotFound, RateLimited, ValidationFailed
from app.observe import metrics

# Said of a job whose process stopped renewing its lease.
ABANDONED = (
    "the server running this research stopped before it finished (its lease ran out); "
    "ask again with deep_research"
)
# Said of a job whose process is gone, found by a process started since on the same host.
DIED = (
    "the server running this research stopped before it finished (it is no longer running); "
    "ask again with deep_research"
)
# Said of a job its owner cancelled (an MCP task's `tasks/cancel`, the chat's stop button).
CANCELLED = "cancelled by its owner"


def owner_of(principal: Principal, refusal: str) -> UUID:
    """The caller's account, which owns chats and jobs.

    Raises:
        Forbidden: the role may not ask. ValidationFailed: the caller has no account (the
        command line's operator).
    """
    principal.require("search", refusal)
    if principal.user_id is None:
        raise ValidationFailed("chats and research jobs belong to an account; sign in first")
    return principal.user_id


async def record_turn(
    conn: WriteConnection,
    principal: Principal,
    chat_id: UUID | None,
    *,
    question: str,
    answer: str,
    mode: str,
    citations: list[Citation],
    trace: list[Step],
    read_chunks: list[UUID] | None = None,
) -> UUID:
    """Keep a question and its answer in the caller's chat `chat_id`, or in a new chat titled
    by the question and marked with the caller's binding (a chat exists once it has an
    answer); returns the chat's id. `read_chunks` is every chunk the run read.

    Raises:
        NotFound: the chat is not the caller's, or was deleted while the run went on.
        Forbidden: the role may not ask.
    """
    owner = owner_of(principal, "your role may not ask")
    scope = principal.workspace_scope
    if chat_id is None:
        chat_id = await open_chat(conn, principal, question)
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
        citations=[c.model_dump(mode="json") for c in citations],
        trace=[step.model_dump() for step in trace],
        read_chunks=read_chunks,
    )
    return chat_id


async def open_chat(conn: WriteConnection, principal: Principal, question: str) -> UUID:
    """A new chat of the caller's, titled by its first question and marked with the caller's
    binding.

    Raises:
        Forbidden: the role may not ask.
    """
    owner = owner_of(principal, "your role may not ask")
    title = " ".join(question.split())[:CHAT_TITLE_CHARS]
    created = await queries.insert_chat(
        conn,
        user_id=owner,
        title=title,
        workspace_scope=principal.workspace_scope,
        persona=principal.persona,
    )
    return created.id


# --- research jobs ----------------------------------------------------------------------------


async def create_job(
    conn: WriteConnection,
    principal: Principal,
    question: str,
    *,
    worker: str,
    lease_s: float,
    at_most: int | None = None,
    chat_id: UUID | None = None,
) -> UUID:
    """A running job of the caller's, marked with the caller's binding, leased to `worker`
    for `lease_s` seconds; refused when the caller has `at_most` unfinished jobs already, on
    any replica. A chat's run names its chat (`chat_id`, the caller's).

    Raises:
        Forbidden: the role may not ask. RateLimited: `at_most` unfinished jobs.
    """
    owner = owner_of(principal, "your role may not ask")
    if at_most is not None and await queries.unfinished_jobs(conn, user_id=owner) >= at_most:
        metrics.throttle_refused("research_jobs_per_person")
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
        chat_id=chat_id,
    )


async def renew_job(conn: WriteConnection, job_id: UUID, *, lease_s: float) -> bool:
    """Extend the lease of a job this process runs; False when it was marked failed meanwhile."""
    return await queries.renew_lease(conn, job_id=job_id, lease_s=lease_s)


async def finish_job(
    conn: WriteConnection,
    job_id: UUID,
    *,
    result: Answer | None = None,
    error: str | None = None,
) -> None:
    """Store a job's answer (or why it failed); a job already marked failed stays so."""
    status = "failed" if error is not None else "done"
    stored = result.model_dump(mode="json") if result is not None else None
    await queries.finish_job(conn, job_id=job_id, status=status, result=stored, error=error)


async def complete_run(conn: WriteConnection, job_id: UUID, answer: Answer) -> None:
    """Mark a chat's run done with its answer, in the transaction that keeps its turn: a
    reader of the chat sees the run under way or its turn, never both (`chat_runs` lists the
    runs not done).

    Raises:
        Conflict: the run was finished meanwhile (cancelled by its owner, or abandoned): its
            answer is not kept.
    """
    stored = answer.model_dump(mode="json")
    if not await queries.finish_job(conn, job_id=job_id, status="done", result=stored, error=None):
        raise Conflict("the run was stopped before its answer landed; its answer is not kept")


async def cancel_job(conn: WriteConnection, job_id: UUID) -> None:
    """Mark a running job cancelled (failed, `CANCELLED`): whichever process runs it stops
    it at its next lease renewal, and its answer, should one land, is not stored."""
    await queries.finish_job(conn, job_id=job_id, status="failed", result=None, error=CANCELLED)


async def fail_abandoned_jobs(conn: WriteConnection) -> int:
    """Mark failed every running job whose process stopped renewing its lease."""
    return await queries.fail_abandoned_jobs(conn, reason=ABANDONED)


async def fail_jobs_of_dead_processes(
    conn: WriteConnection, host: str, alive: Callable[[int], bool]
) -> int:
    """Mark failed the running jobs of this host's processes that are gone (killed, crashed):
    a process restarted after a kill need not wait for their leases to run out. A pid reused
    since counts as alive; its jobs' leases still run out."""
    dead = [
        worker
        for worker in await queries.running_workers(conn, host=host)
        if (pid := worker.rpartition(":")[2]).isdigit() and not alive(int(pid))
    ]
    return await queries.fail_jobs_of(conn, workers=dead, reason=DIED) if dead else 0
