"""The limiter's turns, where HTTP cannot time them: which waiting person a freed model slot
goes to, a waiter cancelled in the instant it was served, and a research job leaving its line.
The doors' limits are tested over HTTP and MCP in test_limits."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from app.agents.gate import ModelGate, Person
from app.asking.limits import AnswerLimits

ONE, TWO, THREE = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()


@asynccontextmanager
async def _holding(gate: ModelGate, person: Person) -> AsyncIterator[asyncio.Event]:
    """A model call of `person` that holds its slot until the event is set."""
    done = asyncio.Event()
    holding = asyncio.Event()

    async def call() -> None:
        async with gate.call(person):
            holding.set()
            await done.wait()

    task = asyncio.create_task(call())
    await asyncio.wait_for(holding.wait(), timeout=5)
    try:
        yield done
    finally:
        done.set()
        await task


async def _waiter(gate: ModelGate, person: Person, served: list[Person]) -> asyncio.Task[None]:
    """A call of `person` that waits for a slot, notes when it is served, and ends at once."""
    before = gate.waiting(person)

    async def call() -> None:
        async with gate.call(person):
            served.append(person)

    task = asyncio.create_task(call())
    await asyncio.sleep(0)  # not a wait: one turn of the loop, in which the call reaches the gate
    assert gate.waiting(person) == before + 1
    return task


async def test_a_freed_slot_goes_to_the_waiting_person_holding_fewest_then_round_robin() -> None:
    gate = ModelGate(2)
    served: list[Person] = []
    async with AsyncExitStack() as held:
        first = await held.enter_async_context(_holding(gate, ONE))
        await held.enter_async_context(_holding(gate, ONE))
        waiting = [await _waiter(gate, ONE, served) for _ in range(3)]
        waiting.append(await _waiter(gate, TWO, served))
        waiting.append(await _waiter(gate, THREE, served))
        waiting.append(await _waiter(gate, TWO, served))
        first.set()
        await asyncio.gather(*waiting)
    # TWO and THREE held nothing, ONE held two: they go first, then turns alternate.
    assert served == [TWO, THREE, TWO, ONE, ONE, ONE]
    assert (gate.held(ONE), gate.waiting(ONE), gate.held(TWO)) == (0, 0, 0)


async def test_a_waiter_cancelled_as_it_is_served_hands_its_slot_on() -> None:
    gate = ModelGate(1)
    served: list[Person] = []
    async with _holding(gate, ONE) as release:
        cancelled = await _waiter(gate, TWO, served)
        after = await _waiter(gate, THREE, served)
        release.set()
        # One turn of the loop: the holder ends and hands its slot to TWO, which has not run yet.
        await asyncio.sleep(0)
        assert (gate.held(TWO), served) == (1, [])
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        await after
    assert cancelled.cancelled()
    assert THREE in served
    assert (gate.held(TWO), gate.held(THREE), gate.waiting(TWO)) == (0, 0, 0)


async def test_a_queued_job_that_leaves_its_line_moves_the_others_up() -> None:
    limits = AnswerLimits(
        runs_per_person=4, jobs_per_person=1, queued_jobs_per_person=3, model_calls=1
    )
    running, second, third = (limits.enqueue_job(ONE, uuid.uuid4()) for _ in range(3))
    assert [t.ahead for t in (running, second, third)] == [None, 0, 1]
    second.release()
    assert limits.queued_ahead(third.job_id) == 0
    running.release()
    await asyncio.wait_for(third.wait(), timeout=5)
    assert (third.ahead, limits.runs(ONE)) == (None, 1)
    third.release()
    third.release()  # a second release gives back nothing
    assert limits.runs(ONE) == 0


async def test_a_waiter_cancelled_before_it_is_served_is_passed_over() -> None:
    gate = ModelGate(1)
    served: list[Person] = []
    holding = gate.call(ONE)
    await holding.__aenter__()
    cancelled = await _waiter(gate, TWO, served)
    after = await _waiter(gate, THREE, served)
    # Cancelled, and the slot freed, before the cancelled call has run again to leave the line.
    cancelled.cancel()
    await holding.__aexit__(None, None, None)
    await asyncio.gather(cancelled, return_exceptions=True)
    await after
    assert served == [THREE]
    assert (gate.held(TWO), gate.waiting(TWO), gate.held(THREE)) == (0, 0, 0)
