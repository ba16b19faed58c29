"""Accounts for tests: people and agents made through the services, signed in with an API key
or a session cookie."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.access.capabilities import Role
from app.access.principal import LOCAL_ADMIN, Kind, Principal
from app.auth import service as auth_service
from app.auth.schemas import ApiKeyCreate
from app.db.engine import ReadConnection, WriteConnection
from app.people import service as people_service
from app.people.passwords import Hasher
from app.people.schemas import User, UserCreate
from tests.support import CHEAP_ARGON2

PASSWORD = "a long enough password"
# The tests' own Argon2 pool, for the accounts they make through the services (its threads
# start at the first hash).
HASHER = Hasher(workers=2, argon2=CHEAP_ARGON2)
# The origin of the tests' settings' public URL (http://127.0.0.1:8000): a browser on our own
# pages sends it with every write.
OWN_ORIGIN = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class Account:
    user: User
    key: str  # an API key of the account
    password: str | None

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def _write(conn: AsyncConnection) -> WriteConnection:
    return WriteConnection(ReadConnection(conn))


async def make_account(
    conn: AsyncConnection,
    role: Role,
    *,
    kind: Kind = "human",
    email: str | None = None,
    workspace: str | None = None,
    hasher: Hasher = HASHER,
) -> Account:
    """An account with the role, and an API key for it; its password hashed by `hasher`."""
    email = email or f"{role}-{uuid.uuid4().hex[:8]}@example.com"
    password = PASSWORD if kind == "human" else None
    user, _ = await people_service.create_user(
        _write(conn),
        hasher,
        UserCreate(email=email, role=role, kind=kind, password=password),
        actor=LOCAL_ADMIN,
    )
    created = await auth_service.create_key(
        _write(conn),
        LOCAL_ADMIN,
        ApiKeyCreate(user_id=user.id, name="tests", workspace=workspace),
    )
    return Account(user=user, key=created.key, password=password)


async def authorize(
    client: httpx.AsyncClient,
    conn: AsyncConnection,
    role: Role,
    *,
    kind: Kind = "human",
    workspace: str | None = None,
) -> Account:
    """Make an account and send its API key with every request of `client`."""
    account = await make_account(conn, role, kind=kind, workspace=workspace)
    client.headers.update(account.bearer)
    return account


async def sign_in(client: httpx.AsyncClient, account: Account) -> None:
    """Sign `client` in with the account's password (a session cookie), as a browser on our own
    pages would: it then sends our Origin with every request."""
    client.headers.pop("Authorization", None)
    client.headers["Origin"] = OWN_ORIGIN
    reply = await client.post(
        "/api/auth/login", json={"email": account.user.email, "password": account.password}
    )
    assert reply.status_code == 200, reply.text


async def person(conn: AsyncConnection, email: str, role: Role = "editor") -> Principal:
    """A person with no password or key, as the services see them (for tests that call the
    services directly)."""
    user_id = (
        await conn.execute(
            text("INSERT INTO users (email, role) VALUES (:e, :r) RETURNING id"),
            {"e": email, "r": role},
        )
    ).scalar_one()
    return Principal(user_id=user_id, email=email, role=role)
