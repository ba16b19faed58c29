"""Password attempts against a running server (issue #10): a burst of sign-ins is throttled and
hashed off the event loop while everyone else is served; a request holds one pooled connection
at a time; concurrent guesses cannot outrun the lock; a password change's guesses count like a
sign-in's and need a session; sign-up spends the same budget. Argon2 runs with its real
parameters where its cost is the point (a burst, a held connection, a race); the tests that count
attempts hash cheaply, as the rest of the suite does."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from argon2 import PasswordHasher
from fastapi.routing import APIRoute
from sqlalchemy import text

from app.auth.service import MAX_FAILED_SIGN_INS
from app.deps import CurrentPrincipal, ReadConn
from app.people.passwords import Hasher, Verdict
from app.sessions.cookies import SESSION_COOKIE
from tests.accounts import PASSWORD, Account
from tests.running import Running, run_corpus
from tests.support import migrated_database

WRONG = "not the password at all"
T = TypeVar("T")
U = TypeVar("U")


@pytest.fixture(scope="module")
async def database(server_url: str, data_dir: Path) -> str:
    return await migrated_database(server_url, data_dir, "corpus_passwords")


def _client(running: Running, **kwargs: Any) -> httpx.AsyncClient:
    # A browser on the server's own pages: its Origin goes with every write.
    return httpx.AsyncClient(
        base_url=running.url, headers={"Origin": running.url}, timeout=60, **kwargs
    )


async def _login(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post("/api/auth/login", json={"email": email, "password": password})


async def _lock_state(running: Running, account: Account) -> tuple[int, bool]:
    async with running.db.read() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT failed_logins, coalesce(locked_until > now(), false)"
                    " FROM users WHERE id = :id"
                ),
                {"id": account.user.id},
            )
        ).one()
    return row[0], row[1]


async def _unlock(running: Running, account: Account) -> None:
    async with running.db.write() as conn:
        await conn.execute(
            text("UPDATE users SET failed_logins = 0, locked_until = NULL WHERE id = :id"),
            {"id": account.user.id},
        )


async def _stored_hash(running: Running, account: Account) -> str:
    async with running.db.read() as conn:
        stored: str = (
            await conn.execute(
                text("SELECT password_hash FROM users WHERE id = :id"), {"id": account.user.id}
            )
        ).scalar_one()
    return stored


async def _while_running(
    work: Awaitable[T], probe: Callable[[], Awaitable[U]]
) -> tuple[T, list[U]]:
    """Run `work`; meanwhile, probe again and again until it is done; what the probes saw."""
    task = asyncio.ensure_future(work)
    seen: list[U] = []
    while not task.done():
        seen.append(await probe())
    return await task, seen


# --- a burst of sign-ins ----------------------------------------------------------------------


async def test_a_login_burst_gets_only_401s_and_429s_while_others_are_served(
    database: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the real defaults (10 a minute per address, 120 overall): of 40 concurrent sign-ins
    with unknown emails, 10 are checked and refused and 30 throttled; meanwhile /healthz is
    answered while passwords are being hashed, and an editor's document list completes
    normally."""
    async with (
        run_corpus(
            data_dir,
            database,
            real_hashing=True,
            signin_rate_per_address="10/minute",
            signin_rate="120/minute",
        ) as running,
        _client(running) as client,
    ):
        editor = await running.account("editor")
        # The hashes under way, counted around the hasher the sign-ins use: a probe answered
        # while one runs shows the event loop was free during it. A hash run on the loop could
        # never be seen under way (nothing else runs until it ends).
        hasher: Hasher = running.app.state.resources.hasher
        verify = hasher.verify
        hashing = 0

        async def counted(password_hash: str | None, password: str) -> Verdict:
            nonlocal hashing
            hashing += 1
            try:
                return await verify(password_hash, password)
            finally:
                hashing -= 1

        monkeypatch.setattr(hasher, "verify", counted)

        async def burst() -> list[httpx.Response]:
            listing = asyncio.ensure_future(client.get("/api/documents", headers=editor.bearer))
            replies = await asyncio.gather(
                *(_login(client, f"nobody-{i}@example.com", WRONG) for i in range(40))
            )
            listed = await listing
            assert listed.status_code == 200, listed.text
            return replies

        async def healthz() -> int:
            assert (await client.get("/healthz")).status_code == 200
            return hashing

        replies, hashes_seen = await _while_running(burst(), healthz)

    statuses = [r.status_code for r in replies]
    assert set(statuses) <= {401, 429}, statuses
    assert statuses.count(401) == 10
    for reply in replies:
        code = reply.json()["error"]["code"]
        assert code == ("invalid_credentials" if reply.status_code == 401 else "rate_limited")
        if reply.status_code == 429:
            assert int(reply.headers["retry-after"]) >= 1
    assert any(hashes_seen), f"no /healthz answered while a password was hashed: {hashes_seen}"


async def test_the_throttle_counts_per_address_and_overall(database: str, data_dir: Path) -> None:
    """Addresses come from the trusted proxy's X-Forwarded-For (uvicorn trusts 127.0.0.1)."""
    async with (
        run_corpus(
            data_dir,
            database,
            signin_rate_per_address="2/minute",
            signin_rate="5/minute",
        ) as running,
        _client(running) as client,
    ):

        async def from_address(address: str) -> int:
            reply = await client.post(
                "/api/auth/login",
                json={"email": "nobody@example.com", "password": WRONG},
                headers={"X-Forwarded-For": address},
            )
            return reply.status_code

        first = [await from_address("192.0.2.1") for _ in range(3)]
        assert first == [401, 401, 429]
        # Another address has a budget of its own, until the process's is spent (5 checked).
        second = [await from_address("192.0.2.2") for _ in range(2)]
        third = [await from_address("192.0.2.3") for _ in range(2)]
        assert second + third == [401, 401, 401, 429]


# --- one connection at a time -----------------------------------------------------------------


async def test_a_request_holds_one_connection_at_a_time(database: str, data_dir: Path) -> None:
    """With a pool of one connection, a request that wanted two would wait for itself until the
    pool times out (a 500). Every kind of request still succeeds, concurrently, including a
    route that lists its connection before its principal."""

    async def reversed_order(conn: ReadConn, principal: CurrentPrincipal) -> dict[str, str]:
        await conn.execute(text("SELECT 1"))
        return {"email": principal.email}

    async with (
        run_corpus(data_dir, database, real_hashing=True, db_max_connections=1) as running,
        _client(running) as client,
        _client(running) as browser,
    ):
        running.app.router.routes.insert(
            0, APIRoute("/api/test-reversed-order", reversed_order, methods=["GET"])
        )
        editor = await running.account("editor")
        person = await running.account("viewer")
        assert (await _login(browser, person.user.email, PASSWORD)).status_code == 200

        calls: list[Awaitable[httpx.Response]] = []
        for i in range(4):
            calls.append(_login(client, f"nobody-{i}@example.com", WRONG))
            calls.append(_login(client, editor.user.email, WRONG))
            calls.append(client.get("/api/documents", headers=editor.bearer))
            calls.append(client.get("/api/test-reversed-order", headers=editor.bearer))
            calls.append(browser.get("/api/test-reversed-order"))
            calls.append(browser.get("/api/me"))
            calls.append(
                client.post(
                    "/api/documents",
                    json={"title": f"Note {i}", "content": f"Some content {i}."},
                    headers=editor.bearer,
                )
            )
        calls.append(_login(client, person.user.email, PASSWORD))
        replies = await asyncio.gather(*calls)

    statuses = sorted({r.status_code for r in replies})
    assert statuses == [200, 201, 401], [(r.request.url.path, r.status_code) for r in replies]


# --- the lockout cannot be raced --------------------------------------------------------------


@pytest.fixture
def verified(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The hashes Argon2 verifies a guess against, in this process (the server's included)."""
    hashes: list[str] = []
    verify = PasswordHasher.verify

    def counting(self: PasswordHasher, hash: str | bytes, password: str | bytes) -> bool:
        hashes.append(hash if isinstance(hash, str) else hash.decode())
        return verify(self, hash, password)

    monkeypatch.setattr(PasswordHasher, "verify", counting)
    return hashes


async def test_concurrent_guesses_cannot_outrun_the_lock(
    database: str, data_dir: Path, verified: list[str]
) -> None:
    """20 wrong passwords and the right one at the same moment, twice: at most eight
    guesses are checked against the account's hash per window, and the right one signs in only
    as one of those eight (a right guess then lifts the count, so eight more may follow)."""
    async with (
        run_corpus(data_dir, database, real_hashing=True) as running,
        _client(running) as client,
    ):
        person = await running.account("viewer")
        stored = await _stored_hash(running, person)
        email = person.user.email
        for _ in range(2):
            await _unlock(running, person)
            verified.clear()
            guesses = [WRONG + str(i) for i in range(10)] + [PASSWORD]
            guesses += [WRONG + str(i) for i in range(10, 20)]
            replies = await asyncio.gather(*(_login(client, email, g) for g in guesses))
            right = replies[10].status_code
            wrong = {r.status_code for i, r in enumerate(replies) if i != 10}
            checked = verified.count(stored)
            failures, locked = await _lock_state(running, person)

            assert wrong == {401}
            if right == 200:
                # The right one was among the first eight checked; the guesses after it are
                # the ones counted now, at most eight again.
                assert checked - failures <= MAX_FAILED_SIGN_INS, (checked, failures)
                assert checked <= 2 * MAX_FAILED_SIGN_INS, checked
            else:
                assert right == 401
                assert checked == MAX_FAILED_SIGN_INS, checked
                assert (failures, locked) == (MAX_FAILED_SIGN_INS, True)
            if locked:
                assert (await _login(client, email, PASSWORD)).status_code == 401


# --- password changes -------------------------------------------------------------------------


@pytest.fixture
async def corpus(database: str, data_dir: Path) -> AsyncIterator[Running]:
    async with run_corpus(data_dir, database) as running:
        yield running


async def test_wrong_current_passwords_count_as_failed_sign_ins_and_lock(
    corpus: Running,
) -> None:
    person = await corpus.account("viewer")
    async with _client(corpus) as browser, _client(corpus) as other:
        assert (await _login(browser, person.user.email, PASSWORD)).status_code == 200
        for _ in range(MAX_FAILED_SIGN_INS + 2):
            reply = await browser.post(
                "/api/me/password",
                json={"current_password": WRONG, "new_password": "a brand new passphrase"},
            )
            assert reply.status_code == 401
            assert reply.json()["error"]["code"] == "invalid_credentials"
        assert await _lock_state(corpus, person) == (MAX_FAILED_SIGN_INS, True)
        # Locked: the right current password is refused too, and so is signing in.
        right = await browser.post(
            "/api/me/password",
            json={"current_password": PASSWORD, "new_password": "a brand new passphrase"},
        )
        assert right.status_code == 401
        assert (await _login(other, person.user.email, PASSWORD)).status_code == 401
        await _unlock(corpus, person)
        changed = await browser.post(
            "/api/me/password",
            json={"current_password": PASSWORD, "new_password": "a brand new passphrase"},
        )
        assert changed.status_code == 204
        assert await _lock_state(corpus, person) == (0, False)
        assert SESSION_COOKIE in changed.cookies
        assert (await browser.get("/api/me")).status_code == 200


async def test_a_key_may_not_change_its_persons_password_or_disconnect_their_apps(
    corpus: Running,
) -> None:
    person = await corpus.account("editor")
    async with _client(corpus) as client:
        change = await client.post(
            "/api/me/password",
            json={"current_password": PASSWORD, "new_password": "a brand new passphrase"},
            headers=person.bearer,
        )
        assert change.status_code == 403
        assert change.json()["error"]["code"] == "forbidden"
        assert (await _login(client, person.user.email, PASSWORD)).status_code == 200
        client.cookies.clear()
        disconnect = await client.delete("/api/me/connections/some-client", headers=person.bearer)
        assert disconnect.status_code == 403
        assert disconnect.json()["error"]["code"] == "forbidden"


# --- sign-up ----------------------------------------------------------------------------------


async def test_sign_up_spends_the_password_attempt_budget(database: str, data_dir: Path) -> None:
    """Open sign-up necessarily tells whether an email was free (the new account is signed
    in); what it can tell is bounded by the address's budget, shared with sign-in."""
    async with (
        run_corpus(
            data_dir,
            database,
            open_signup=True,
            signin_rate_per_address="3/minute",
            signin_rate="100/minute",
        ) as running,
        _client(running) as client,
    ):
        taken = await running.account("viewer")
        free = f"new-{uuid.uuid4().hex[:8]}@example.com"

        async def sign_up(email: str) -> httpx.Response:
            client.cookies.clear()
            return await client.post(
                "/api/auth/signup", json={"email": email, "password": "a long passphrase"}
            )

        replies = [
            await sign_up(free),
            await sign_up(taken.user.email),
            await _login(client, taken.user.email, WRONG),
            await sign_up(f"other-{uuid.uuid4().hex[:8]}@example.com"),
        ]
        assert [r.status_code for r in replies] == [201, 409, 401, 429]
        assert replies[1].json()["error"]["code"] == "conflict"
        assert taken.user.email not in replies[1].text
        assert int(replies[3].headers["retry-after"]) >= 1


async def test_closed_sign_up_answers_a_taken_and_a_free_email_alike(corpus: Running) -> None:
    """Closed (the default once an account exists), sign-up looks no email up, and hashes no
    password: the reply cannot tell who has an account."""
    taken = await corpus.account("viewer")
    async with _client(corpus) as client:
        replies = [
            await client.post(
                "/api/auth/signup", json={"email": email, "password": "a long passphrase"}
            )
            for email in (taken.user.email, f"free-{uuid.uuid4().hex[:8]}@example.com")
        ]
    assert [r.status_code for r in replies] == [403, 403]
    assert replies[0].json()["error"]["code"] == "signup_closed"
    assert replies[0].content == replies[1].content
