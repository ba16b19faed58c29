"""Accounts: people and agents. The first account made by sign-up becomes admin — exactly one,
however many sign up at once; there is no default admin."""

from __future__ import annotations

import secrets

from app.auth import passwords
from app.db.engine import WriteConnection
from app.errors import Conflict, SignupClosed, ValidationFailed
from app.people import queries
from app.people.schemas import User, UserCreate

TEMPORARY_PASSWORD_BYTES = 12


async def create_user(conn: WriteConnection, data: UserCreate) -> tuple[User, str | None]:
    """Create an account with the role as given (the CLI, and admins later).

    A person without a password gets a temporary one, returned once and to be changed at the
    first sign-in; an agent has no password at all (it uses API keys).

    Raises:
        ValidationFailed: a weak password, or a password for an agent. Conflict: the email is
        taken.
    """
    email = data.email.lower()
    temporary: str | None = None
    if data.kind == "agent":
        if data.password is not None:
            raise ValidationFailed("password: agents sign in with API keys, not passwords")
        password_hash = None
    else:
        password = data.password
        if password is None:
            temporary = password = secrets.token_urlsafe(TEMPORARY_PASSWORD_BYTES)
        passwords.check_rules(password, email=email)
        password_hash = passwords.hash_password(password)
    user_id = await queries.insert_user(
        conn,
        {
            "email": email,
            "display_name": data.display_name or email.split("@", 1)[0],
            "password_hash": password_hash,
            "role": data.role,
            "kind": data.kind,
            "must_change_password": temporary is not None,
        },
    )
    if user_id is None:
        raise Conflict(f"an account for {email} already exists")
    user = await queries.get_user(conn, user_id)
    assert user is not None
    return user, temporary


async def sign_up(
    conn: WriteConnection, *, email: str, password: str, display_name: str, open_signup: bool
) -> User:
    """A person joins: the very first account becomes admin; later ones join as viewers only
    when sign-up is open.

    Raises:
        SignupClosed: accounts exist and CORPUS_OPEN_SIGNUP is off. ValidationFailed,
        Conflict: as `create_user`.
    """
    await queries.serialise_first_signup(conn)
    first = await queries.count_users(conn) == 0
    if not first and not open_signup:
        raise SignupClosed("sign-up is closed: ask an admin for an account")
    user, _ = await create_user(
        conn,
        UserCreate(
            email=email,
            password=password,
            display_name=display_name,
            role="admin" if first else "viewer",
            kind="human",
        ),
    )
    return user
