"""The login throttle and the sameness of every failure: eight failures lock an account for
fifteen minutes (in PostgreSQL), and unknown email, wrong password, locked and disabled all get
the same bytes after the same work. Argon2 runs with its real parameters where the work is
compared; the tests that count failures hash cheaply, as the rest of the suite does."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from argon2 import PasswordHasher, extract_parameters
from fastapi import FastAPI
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.auth.service import MAX_FAILED_SIGN_INS
from app.config import Settings
from app.main import create_app
from app.people.passwords import Hasher
from tests.accounts import HASHER, PASSWORD, Account, make_account
from tests.support import app_client, in_test_transaction, lifespan


@pytest.fixture(scope="module")
async def real_app(settings: Settings) -> AsyncIterator[FastAPI]:
    """The session's app, but hashing with Argon2's real parameters."""
    app = create_app(settings)
    async with lifespan(app):
        yield app


@pytest.fixture
async def real_client(real_app: FastAPI, conn: AsyncConnection) -> AsyncIterator[httpx.AsyncClient]:
    with in_test_transaction(real_app, conn):
        async with app_client(real_app) as client:
            yield client


@pytest.fixture
def real_hasher(real_app: FastAPI) -> Hasher:
    resources_hasher: Hasher = real_app.state.resources.hasher
    return resources_hasher


@pytest.fixture
async def person(conn: AsyncConnection) -> Account:
    """An editor, for the session's app (`client`), which hashes cheaply."""
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


async def _every_failure(
    client: httpx.AsyncClient, conn: AsyncConnection, person: Account, hasher: Hasher = HASHER
) -> dict[str, tuple[str, str]]:
    """An email and password for each kind of failure (a locked account locked by now)."""
    locked = await make_account(conn, "viewer", hasher=hasher)
    for _ in range(MAX_FAILED_SIGN_INS):
        await _login(client, locked.user.email, "wrong password!")
    disabled = await make_account(conn, "viewer", hasher=hasher)
    await conn.execute(
        text("UPDATE users SET active = false WHERE id = :id"), {"id": disabled.user.id}
    )
    agent = await make_account(conn, "viewer", kind="agent", hasher=hasher)
    return {
        "unknown email": ("nobody@example.com", PASSWORD),
        "wrong password": (person.user.email, "wrong password!"),
        "locked": (locked.user.email, PASSWORD),
        "disabled": (disabled.user.email, PASSWORD),
        "agent": (agent.user.email, PASSWORD),
        "malformed email": ("not an email", PASSWORD),
    }


async def test_every_failure_gets_the_same_bytes(
    client: httpx.AsyncClient, conn: AsyncConnection, person: Account
) -> None:
    failures = await _every_failure(client, conn, person)
    replies = {
        name: await _login(client, email, password) for name, (email, password) in failures.items()
    }
    assert {name: r.status_code for name, r in replies.items()} == dict.fromkeys(replies, 401)
    bodies = {r.content for r in replies.values()}
    assert len(bodies) == 1, bodies
    assert all("set-cookie" not in r.headers for r in replies.values())


@pytest.fixture
def verified(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Argon2 parameters of every hash verified in this process (the app's included)."""
    parameters: list[str] = []
    verify = PasswordHasher.verify

    def spy(self: PasswordHasher, hash: str | bytes, password: str | bytes) -> bool:
        parameters.append(
            repr(extract_parameters(hash if isinstance(hash, str) else hash.decode()))
        )
        return verify(self, hash, password)

    monkeypatch.setattr(PasswordHasher, "verify", spy)
    return parameters


@pytest.fixture
def statements(conn: AsyncConnection) -> Iterator[list[str]]:
    """The SQL the app runs on the test's connection (every request's, here), savepoints
    unnumbered."""
    seen: list[str] = []

    def record(*args: object) -> None:
        statement = args[2]
        assert isinstance(statement, str)
        seen.append(re.sub(r"sa_savepoint_\d+", "sa_savepoint", statement))

    event.listen(conn.sync_connection, "before_cursor_execute", record)
    yield seen
    event.remove(conn.sync_connection, "before_cursor_execute", record)


async def test_every_failure_verifies_one_hash_and_runs_the_same_statements(
    real_client: httpx.AsyncClient,
    conn: AsyncConnection,
    real_hasher: Hasher,
    verified: list[str],
    statements: list[str],
) -> None:
    """Equal work, not a padding sleep: an unknown email (or an agent, or no password) verifies
    the dummy hash, made with the same parameters as a real one, and every failure runs the
    same statements; so no failure answers sooner than another."""
    person = await make_account(conn, "editor", hasher=real_hasher)
    failures = await _every_failure(real_client, conn, person, real_hasher)
    work: dict[str, tuple[list[str], list[str]]] = {}
    for name, (email, password) in failures.items():
        verified.clear()
        statements.clear()
        assert (await _login(real_client, email, password)).status_code == 401
        work[name] = (verified[:], statements[:])
    assert {name: len(hashes) for name, (hashes, _) in work.items()} == dict.fromkeys(work, 1)
    assert work["unknown email"][0] == [repr(extract_parameters(PasswordHasher().hash("x")))]
    assert all(done == work["unknown email"] for done in work.values()), work
