"""Accounts: Argon2id passwords, the role as given, agents without passwords, and exactly one
first admin however many sign up at once."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.db.engine import Database, ReadConnection, WriteConnection
from app.errors import Conflict, SignupClosed, ValidationFailed
from app.people import passwords
from app.people import service as people_service
from app.people.schemas import UserCreate
from tests.accounts import HASHER
from tests.support import CHEAP_ARGON2, migrated_database, run_corpus, run_corpus_here

# Sign-up takes a password its caller checked and hashed.
HASH = CHEAP_ARGON2.hash("a long passphrase")


def _write(conn: AsyncConnection) -> WriteConnection:
    return WriteConnection(ReadConnection(conn))


async def _stored_hash(conn: AsyncConnection, email: str) -> tuple[str | None, bool]:
    row = (
        await conn.execute(
            text("SELECT password_hash, must_change_password FROM users WHERE email = :e"),
            {"e": email},
        )
    ).one()
    return row[0], row[1]


async def test_a_person_is_stored_with_an_argon2id_hash_and_the_role_given(
    conn: AsyncConnection,
) -> None:
    user, temporary = await people_service.create_user(
        _write(conn),
        HASHER,
        UserCreate(email="Ada@Example.com", role="editor", password="correct horse battery"),
        actor=LOCAL_ADMIN,
    )
    assert (user.email, user.role, user.kind, user.active) == (
        "ada@example.com",
        "editor",
        "human",
        True,
    )
    assert temporary is None
    stored, must_change = await _stored_hash(conn, "ada@example.com")
    assert stored is not None
    assert stored.startswith("$argon2id$")
    assert "correct horse battery" not in stored
    assert must_change is False
    assert (await HASHER.verify(stored, "correct horse battery")).ok


async def test_a_person_without_a_password_gets_a_temporary_one_to_change(
    conn: AsyncConnection,
) -> None:
    _, temporary = await people_service.create_user(
        _write(conn), HASHER, UserCreate(email="temp@example.com", role="viewer"), actor=LOCAL_ADMIN
    )
    assert temporary is not None
    stored, must_change = await _stored_hash(conn, "temp@example.com")
    assert must_change is True
    assert (await HASHER.verify(stored, temporary)).ok


async def test_agents_have_no_password(conn: AsyncConnection) -> None:
    user, temporary = await people_service.create_user(
        _write(conn),
        HASHER,
        UserCreate(email="bot@example.com", role="viewer", kind="agent"),
        actor=LOCAL_ADMIN,
    )
    assert (user.kind, temporary) == ("agent", None)
    assert (await _stored_hash(conn, "bot@example.com"))[0] is None
    with pytest.raises(ValidationFailed):
        await people_service.create_user(
            _write(conn),
            HASHER,
            UserCreate(email="bot2@example.com", role="viewer", kind="agent", password="x" * 12),
            actor=LOCAL_ADMIN,
        )


async def test_an_email_is_taken_whatever_its_case(conn: AsyncConnection) -> None:
    await people_service.create_user(
        _write(conn),
        HASHER,
        UserCreate(email="same@example.com", role="viewer", password="a fine passphrase"),
        actor=LOCAL_ADMIN,
    )
    with pytest.raises(Conflict):
        await people_service.create_user(
            _write(conn),
            HASHER,
            UserCreate(email="SAME@example.com", role="admin", password="another one!"),
            actor=LOCAL_ADMIN,
        )


@pytest.mark.parametrize(
    "password", ["short", "aaaaaaaaaaaa", "weak@example.com", "weak", "x" * 257]
)
async def test_weak_passwords_are_refused(conn: AsyncConnection, password: str) -> None:
    with pytest.raises(ValidationFailed):
        await people_service.create_user(
            _write(conn),
            HASHER,
            UserCreate(email="weak@example.com", role="viewer", password=password),
            actor=LOCAL_ADMIN,
        )
    assert (
        await conn.execute(text("SELECT count(*) FROM users WHERE email = 'weak@example.com'"))
    ).scalar() == 0


async def test_an_unknown_account_costs_a_real_verification_and_fails() -> None:
    assert (await HASHER.verify(None, "anything at all")).ok is False


async def test_a_hash_made_with_weaker_parameters_asks_to_be_rehashed() -> None:
    old = PasswordHasher(time_cost=1, memory_cost=8192).hash("correct horse battery")
    real = passwords.Hasher(workers=1)  # the default parameters, which new hashes get
    try:
        verdict = await real.verify(old, "correct horse battery")
    finally:
        real.close()
    assert verdict.ok
    assert verdict.needs_rehash


async def test_the_first_sign_up_is_admin_and_later_ones_need_open_sign_up(
    conn: AsyncConnection,
) -> None:
    await conn.execute(text("DELETE FROM users"))
    first = await people_service.sign_up(
        _write(conn),
        email="first@example.com",
        password_hash=HASH,
        display_name="",
        open_signup=False,
    )
    assert first.role == "admin"
    with pytest.raises(SignupClosed):
        await people_service.sign_up(
            _write(conn),
            email="second@example.com",
            password_hash=HASH,
            display_name="",
            open_signup=False,
        )
    second = await people_service.sign_up(
        _write(conn),
        email="second@example.com",
        password_hash=HASH,
        display_name="",
        open_signup=True,
    )
    assert second.role == "viewer"


async def test_simultaneous_first_sign_ups_make_exactly_one_admin(
    server_url: str, data_dir: Path
) -> None:
    url = await migrated_database(server_url, data_dir, "corpus_signup")
    db = Database(url)

    async def join(i: int) -> str:
        async with db.write() as conn:
            user = await people_service.sign_up(
                conn,
                email=f"racer{i}@example.com",
                password_hash=HASH,
                display_name="",
                open_signup=True,
            )
        return user.role

    try:
        roles = await asyncio.gather(*(join(i) for i in range(6)))
    finally:
        await db.dispose()
    assert sorted(roles) == ["admin"] + ["viewer"] * 5


def test_users_create_sets_the_role_given_and_prints_a_temporary_password_last(
    data_dir: Path,
) -> None:
    email = f"cli-{uuid.uuid4().hex[:6]}@example.com"
    made = run_corpus(["users", "create", "--email", email, "--role", "editor"], data_dir)
    assert made.returncode == 0, made.stderr
    lines = made.stdout.strip().splitlines()
    assert f"human {email} (editor)" in lines[0]
    assert len(lines[-1]) >= 16
    again = run_corpus(["users", "create", "--email", email, "--role", "admin"], data_dir)
    assert again.returncode == 1
    assert "already exists" in again.stderr
    agent = run_corpus(
        ["users", "create", "--email", f"bot-{email}", "--role", "viewer", "--agent"], data_dir
    )
    assert agent.returncode == 0
    assert "temporary password" not in agent.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--email", "not-an-email", "--role", "viewer"],
        ["--email", "x@example.com", "--role", "owner"],
        ["--email", "y@example.com", "--role", "viewer", "--password", "short"],
    ],
)
def test_users_create_refuses_bad_input(args: list[str], settings: Settings) -> None:
    result = run_corpus_here(["users", "create", *args], settings.database_url)
    assert result.returncode == 2
    assert "corpus: " in result.stderr or "usage:" in result.stderr
