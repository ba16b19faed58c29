"""SQL of people and agent accounts: the only module that writes `users`, including the
sign-in guess counter and the last-seen time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import ColumnElement, and_, case, func, or_, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.db.engine import ReadConnection, WriteConnection
from app.db.sql import interval, stale
from app.db.tables import users
from app.people.schemas import Kind, Role, User, UserUpdate

# No activity for this long makes an account "dormant" in the people list.
DORMANT_AFTER = "60 days"
# Any constant: the key of the advisory lock that serialises first sign-ups.
_FIRST_SIGNUP_LOCK = 0x636F72707573  # "corpus"


def _user_columns() -> list[Any]:
    now = func.now()
    locked = func.coalesce(users.c.locked_until > now, False).label("locked")
    dormant = (
        func.coalesce(users.c.last_seen_at, users.c.created_at)
        < now - text(f"interval '{DORMANT_AFTER}'")
    ).label("dormant")
    return [
        users.c.id,
        users.c.email,
        users.c.display_name,
        users.c.role,
        users.c.kind,
        users.c.active,
        locked,
        dormant,
        users.c.last_seen_at,
        users.c.created_at,
        users.c.default_persona.label("persona"),
    ]


async def insert_user(
    conn: WriteConnection,
    *,
    email: str,
    display_name: str,
    password_hash: str | None,
    role: Role,
    kind: Kind,
    must_change_password: bool = False,
    oidc_subject: str | None = None,
) -> UUID | None:
    """Insert an account; None when the email is taken (nothing written)."""
    result = await conn.execute(
        pg_insert(users)
        .values(
            email=email,
            display_name=display_name,
            password_hash=password_hash,
            role=role,
            kind=kind,
            must_change_password=must_change_password,
            oidc_subject=oidc_subject,
        )
        .on_conflict_do_nothing(index_elements=["email"])
        .returning(users.c.id)
    )
    user_id: UUID | None = result.scalar()
    return user_id


async def _one_user(conn: ReadConnection, condition: ColumnElement[bool]) -> User | None:
    row = (await conn.execute(select(*_user_columns()).where(condition))).mappings().first()
    return User.model_validate(dict(row)) if row else None


async def get_user(conn: ReadConnection, user_id: UUID) -> User | None:
    return await _one_user(conn, users.c.id == user_id)


async def get_user_by_email(conn: ReadConnection, email: str) -> User | None:
    return await _one_user(conn, users.c.email == email)


async def get_user_by_oidc_subject(conn: ReadConnection, subject: str) -> User | None:
    return await _one_user(conn, users.c.oidc_subject == subject)


async def list_users(
    conn: ReadConnection, *, limit: int, after: tuple[datetime, UUID] | None
) -> list[User]:
    """A page of accounts, oldest first (the first admin heads the list)."""
    statement = select(*_user_columns())
    if after is not None:
        statement = statement.where(tuple_(users.c.created_at, users.c.id) > tuple_(*after))
    statement = statement.order_by(users.c.created_at, users.c.id).limit(limit)
    return [User.model_validate(dict(row)) for row in (await conn.execute(statement)).mappings()]


async def count_users(conn: ReadConnection) -> int:
    return int((await conn.execute(select(func.count()).select_from(users))).scalar_one())


async def serialise_first_signup(conn: WriteConnection) -> None:
    """Until this transaction ends, no other sign-up can decide who is first."""
    await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _FIRST_SIGNUP_LOCK})


async def lock_active_admins(conn: WriteConnection) -> list[UUID]:
    """The active admins' ids, their rows locked until the transaction ends, so that two
    admins demoting each other at once cannot leave none."""
    statement = (
        select(users.c.id)
        .where(users.c.role == "admin", users.c.active)
        .order_by(users.c.id)
        .with_for_update()
    )
    return list((await conn.execute(statement)).scalars())


async def _update_user(conn: WriteConnection, user_id: UUID, **values: object) -> None:
    await conn.execute(
        update(users).where(users.c.id == user_id).values(**values, updated_at=func.now())
    )


async def update_account(conn: WriteConnection, user_id: UUID, data: UserUpdate) -> None:
    """Write the fields the caller set (an explicit `persona: null` clears the default)."""
    values = data.model_dump(exclude_unset=True)
    if "persona" in values:
        values["default_persona"] = values.pop("persona")
    await _update_user(conn, user_id, **values)


async def set_password_hash(
    conn: WriteConnection, user_id: UUID, *, password_hash: str, must_change_password: bool
) -> None:
    await _update_user(
        conn, user_id, password_hash=password_hash, must_change_password=must_change_password
    )


async def clear_lock(conn: WriteConnection, user_id: UUID) -> None:
    """Forget failed sign-ins and lift any lock."""
    await _update_user(conn, user_id, failed_logins=0, locked_until=None)


async def link_oidc_subject(conn: WriteConnection, user_id: UUID, subject: str) -> None:
    await _update_user(conn, user_id, oidc_subject=subject)


# --- sign-in guesses and activity -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Guess:
    """A guess counted against an account: what to check it against."""

    user_id: UUID
    password_hash: str | None
    active: bool


async def reserve_guess(
    conn: WriteConnection,
    account: str | UUID,
    *,
    max_failures: int,
    lock_for: str,
) -> Guess | None:
    """Count a password guess against the account (an email, or an id) before it is checked,
    in one conditional UPDATE: concurrent guesses queue on the row lock, each sees the count
    the last one left, and none is let through once the account is locked. Returns the hash
    to check the guess against, or None when no account matches or it is locked (then nothing
    is counted).

    The guess that reaches `max_failures` locks the account at once; `signed_in` lifts the
    lock and the count when that guess is right, so at most `max_failures` guesses are checked
    per lock window. A lock that has run out starts the count again; a locked account counts
    no further, so hammering it does not extend the lock.
    """
    expired_lock = and_(users.c.locked_until.is_not(None), users.c.locked_until <= func.now())
    count = case((expired_lock, 1), else_=users.c.failed_logins + 1)
    statement = (
        update(users)
        .where(
            users.c.id == account if isinstance(account, UUID) else users.c.email == account,
            or_(users.c.locked_until.is_(None), users.c.locked_until <= func.now()),
        )
        .values(
            failed_logins=count,
            locked_until=case((count >= max_failures, func.now() + interval(lock_for)), else_=None),
        )
        .returning(users.c.id, users.c.password_hash, users.c.active)
    )
    row = (await conn.execute(statement)).mappings().first()
    return None if row is None else Guess(row["id"], row["password_hash"], row["active"])


async def signed_in(conn: WriteConnection, user_id: UUID, new_hash: str | None) -> bool:
    """A right guess: the failure count starts again, and a stale hash is replaced. False when
    the account was disabled meanwhile."""
    values: dict[str, Any] = {"failed_logins": 0, "locked_until": None, "last_seen_at": func.now()}
    if new_hash is not None:
        values["password_hash"] = new_hash
    result = await conn.execute(
        update(users).where(users.c.id == user_id, users.c.active).values(**values)
    )
    return result.rowcount == 1


async def touch_user(conn: WriteConnection, user_id: UUID) -> None:
    await conn.execute(
        update(users)
        .where(users.c.id == user_id, stale(users.c.last_seen_at))
        .values(last_seen_at=func.now())
    )
