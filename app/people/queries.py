"""SQL of people and agent accounts."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from sqlalchemy import func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import users
from app.people.schemas import User

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
    ]


async def insert_user(conn: WriteConnection, values: dict[str, Any]) -> UUID | None:
    """Insert an account; None when the email is taken (nothing written)."""
    result = await conn.execute(
        pg_insert(users)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["email"])
        .returning(users.c.id)
    )
    user_id: UUID | None = result.scalar()
    return user_id


async def get_user(conn: ReadConnection, user_id: UUID) -> User | None:
    row = (
        (await conn.execute(select(*_user_columns()).where(users.c.id == user_id)))
        .mappings()
        .first()
    )
    return User.model_validate(dict(row)) if row else None


async def count_users(conn: ReadConnection) -> int:
    return int((await conn.execute(select(func.count()).select_from(users))).scalar_one())


async def serialise_first_signup(conn: WriteConnection) -> None:
    """Until this transaction ends, no other sign-up can decide who is first."""
    await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _FIRST_SIGNUP_LOCK})
