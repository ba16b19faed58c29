"""The login throttle and the sameness of every failure: eight failures lock an account for
fifteen minutes (in PostgreSQL), and unknown email, wrong password, locked and disabled all get
the same bytes after the same work."""

from __future__ import annotations

import statistics
import time

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.auth.service import MAX_FAILED_SIGN_INS
from tests.accounts import PASSWORD, Account, make_account


@pytest.fixture
async def person(conn: AsyncConnection) -> Account:
    return await make_account(conn, "editor")


async def _login(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post("/api/auth/login", json={"email": email, "password": password})


async def test_eight_failures_lock_the_account_even_for_the_right_password(
    client: httpx.AsyncClient, conn: AsyncConnection, person: Account
) -> None:
    email = person.user.email
    for _ in range(7):
        assert (await _login(client, email, "wrong password!")).status_code == 401
    # Seven failures: the right password still works, and starts the count again.
    assert (await _login(client, email, PASSWORD)).status_code == 200
    for _ in range(8):
        assert (await _login(client, email, "wrong password!")).status_code == 401
    locked = await _login(client, email, PASSWORD)
    assert locked.status_code == 401
    assert locked.json()["error"]["code"] == "invalid_credentials"
    until = await conn.execute(
        text("SELECT locked_until - now() FROM users WHERE email = :e"), {"e": email}
    )
    remaining = until.scalar_one().total_seconds()
    assert 14 * 60 < remaining <= 15 * 60


async def test_the_count_survives_the_failed_requests_rollback(
    client: httpx.AsyncClient, conn: AsyncConnection, person: Account
) -> None:
    await _login(client, person.user.email, "wrong password!")
    await _login(client, person.user.email, "wrong password!")
    count = await conn.execute(
        text("SELECT failed_logins FROM users WHERE id = :id"), {"id": person.user.id}
    )
    assert count.scalar_one() == 2


async def test_a_lock_runs_out_and_an_admin_can_lift_it_sooner(
    client: httpx.AsyncClient, conn: AsyncConnection, person: Account
) -> None:
    admin = await make_account(conn, "admin")
    email = person.user.email
    for _ in range(MAX_FAILED_SIGN_INS):
        await _login(client, email, "wrong password!")
    listed = await client.get("/api/people", headers=admin.bearer, params={"limit": 200})
    flags = {p["email"]: p["locked"] for p in listed.json()["items"]}
    assert flags[email] is True
    unlocked = await client.post(f"/api/people/{person.user.id}/unlock", headers=admin.bearer)
    assert unlocked.status_code == 200
    assert unlocked.json()["locked"] is False
    assert (await _login(client, email, PASSWORD)).status_code == 200

    for _ in range(MAX_FAILED_SIGN_INS):
        await _login(client, email, "wrong password!")
    assert (await _login(client, email, PASSWORD)).status_code == 401
    await conn.execute(
        text("UPDATE users SET locked_until = now() - interval '1 second' WHERE email = :e"),
        {"e": email},
    )
    assert (await _login(client, email, PASSWORD)).status_code == 200


async def test_every_failure_gets_the_same_bytes(
    client: httpx.AsyncClient, conn: AsyncConnection, person: Account
) -> None:
    locked = await make_account(conn, "viewer")
    for _ in range(MAX_FAILED_SIGN_INS):
        await _login(client, locked.user.email, "wrong password!")
    disabled = await make_account(conn, "viewer")
    await conn.execute(
        text("UPDATE users SET active = false WHERE id = :id"), {"id": disabled.user.id}
    )
    agent = await make_account(conn, "viewer", kind="agent")

    replies = {
        "unknown email": await _login(client, "nobody@example.com", PASSWORD),
        "wrong password": await _login(client, person.user.email, "wrong password!"),
        "locked": await _login(client, locked.user.email, PASSWORD),
        "disabled": await _login(client, disabled.user.email, PASSWORD),
        "agent": await _login(client, agent.user.email, PASSWORD),
        "malformed email": await _login(client, "not an email", PASSWORD),
    }
    assert {name: r.status_code for name, r in replies.items()} == dict.fromkeys(replies, 401)
    bodies = {r.content for r in replies.values()}
    assert len(bodies) == 1, bodies
    assert all("set-cookie" not in r.headers for r in replies.values())


async def test_an_unknown_email_takes_as_long_as_a_wrong_password(
    client: httpx.AsyncClient, person: Account
) -> None:
    """Equal work, not a padding sleep: both verify one Argon2 hash and run one UPDATE. The
    attempts alternate so that machine noise falls on both alike; the medians must agree
    within a quarter. (Skipping the dummy hash would make unknown emails some 50x faster.)"""

    async def timed(email: str) -> float:
        started = time.perf_counter()
        reply = await _login(client, email, "wrong password!")
        assert reply.status_code == 401
        return time.perf_counter() - started

    unknown: list[float] = []
    wrong: list[float] = []
    # Under eight wrong passwords, so the account stays unlocked throughout.
    for i in range(MAX_FAILED_SIGN_INS - 1):
        unknown.append(await timed(f"nobody-{i}@example.com"))
        wrong.append(await timed(person.user.email))
    a, b = statistics.median(unknown), statistics.median(wrong)
    assert abs(a - b) / max(a, b) < 0.25, (unknown, wrong)
