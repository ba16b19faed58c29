"""Accounts: people and agents, their roles, and the audit log of every change to them.

The first account made by sign-up becomes admin — exactly one, however many sign up at once;
there is no default admin. After that, admins manage people; the last active admin cannot be
demoted or disabled.
"""

from __future__ import annotations

import secrets
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from app.access.principal import Principal
from app.audit import service as audit
from app.db.engine import ReadConnection, WriteConnection
from app.errors import Conflict, NotFound, SignupClosed, ValidationFailed
from app.kit.paging import decode_cursor, keyset_page
from app.kit.updates import changes
from app.oauth import service as oauth_service
from app.people import passwords, queries
from app.people.passwords import Hasher
from app.people.schemas import (
    Role,
    User,
    UserCreate,
    UserCreated,
    UserUpdate,
)
from app.schemas import Page
from app.sessions import service as sessions_service

TEMPORARY_PASSWORD_BYTES = 12


def _require_people_admin(principal: Principal) -> None:
    principal.require("people.manage", "only admins manage people")


# --- accounts -------------------------------------------------------------------------------


def _snapshot(user: User) -> dict[str, Any]:
    """What the audit log keeps of an account: never a password or its hash."""
    return {
        "email": user.email,
        "display_name": user.display_name,
        "role": user.role,
        "kind": user.kind,
        "active": user.active,
    }


async def create_user(
    conn: WriteConnection, hasher: Hasher, data: UserCreate, *, actor: Principal
) -> tuple[User, str | None]:
    """Create an account with the role as given (the CLI, and admins).

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
        # Hashed with the connection held: only admins and the command line come here.
        password_hash = await hasher.hash(password)
    user = await _insert_user(
        conn,
        data,
        email=email,
        password_hash=password_hash,
        must_change=temporary is not None,
        actor=actor,
    )
    return user, temporary


async def _insert_user(
    conn: WriteConnection,
    data: UserCreate,
    *,
    email: str,
    password_hash: str | None,
    must_change: bool,
    actor: Principal | None,
) -> User:
    """Raises:
    Conflict: the email is taken.
    """
    user_id = await queries.insert_user(
        conn,
        email=email,
        display_name=data.display_name or email.split("@", 1)[0],
        password_hash=password_hash,
        role=data.role,
        kind=data.kind,
        must_change_password=must_change,
    )
    if user_id is None:
        raise Conflict("an account for this email address already exists")
    user = await queries.get_user(conn, user_id)
    assert user is not None
    await audit.record(
        conn,
        actor or _self(user),
        "user.create" if actor else "user.signup",
        target_type="user",
        target_id=user.id,
        after=_snapshot(user),
    )
    return user


def _self(user: User) -> Principal:
    return Principal(user_id=user.id, email=user.email, role=user.role, kind=user.kind)


async def add_person(
    conn: WriteConnection, hasher: Hasher, principal: Principal, data: UserCreate
) -> UserCreated:
    """An admin adds a person or an agent.

    Raises:
        Forbidden: not an admin. ValidationFailed, Conflict: as `create_user`.
    """
    _require_people_admin(principal)
    user, temporary = await create_user(conn, hasher, data, actor=principal)
    return UserCreated(**user.model_dump(), temporary_password=temporary)


async def sign_up_is_open(conn: ReadConnection, *, open_signup: bool) -> bool:
    """Whether sign-up may succeed now: while no account exists, or when it is open. Asked
    before a password is hashed, so that a closed sign-up costs no Argon2."""
    return open_signup or await no_account_yet(conn)


async def no_account_yet(conn: ReadConnection) -> bool:
    """Whether Corpus is on its first run: no account exists, so the next sign-up is the admin."""
    return await queries.count_users(conn) == 0


async def sign_up(
    conn: WriteConnection,
    *,
    email: str,
    password_hash: str,
    display_name: str,
    open_signup: bool,
) -> User:
    """A person joins with a password the caller checked (`passwords.check_rules`) and hashed:
    the very first account becomes admin; later ones join as viewers only when sign-up is open.

    Raises:
        SignupClosed: accounts exist and CORPUS_OPEN_SIGNUP is off. ValidationFailed: the
        email. Conflict: the email is taken.
    """
    await queries.serialise_first_signup(conn)
    first = await queries.count_users(conn) == 0
    if not first and not open_signup:
        raise SignupClosed("sign-up is closed: ask an admin for an account")
    try:
        data = UserCreate(
            email=email,
            display_name=display_name,
            role="admin" if first else "viewer",
            kind="human",
        )
    except ValidationError as exc:
        raise ValidationFailed.from_pydantic(exc) from None
    return await _insert_user(
        conn,
        data,
        email=data.email.lower(),
        password_hash=password_hash,
        must_change=False,
        actor=None,
    )


async def find_by_email(conn: ReadConnection, email: str) -> User | None:
    return await queries.get_user_by_email(conn, email.strip().lower())


async def get_person(conn: ReadConnection, user_id: UUID) -> User | None:
    """An account by id, for the services that act on it (no visibility: callers check)."""
    return await queries.get_user(conn, user_id)


async def list_people(
    conn: ReadConnection, principal: Principal, *, limit: int, cursor: str | None
) -> Page[User]:
    """Raises:
    Forbidden: not an admin.
    """
    _require_people_admin(principal)
    after = decode_cursor(cursor) if cursor else None
    rows = await queries.list_users(conn, limit=limit + 1, after=after)
    return keyset_page(rows, limit, lambda row: (row.created_at, row.id))


async def _target(conn: ReadConnection, user_id: UUID) -> User:
    user = await queries.get_user(conn, user_id)
    if user is None:
        raise NotFound("no such person")
    return user


async def _keep_an_admin(conn: WriteConnection, user: User, role: Role, active: bool) -> None:
    """Raises:
    Conflict: the change would leave no active admin.
    """
    if user.role != "admin" or not user.active or (role == "admin" and active):
        return
    others = [uid for uid in await queries.lock_active_admins(conn) if uid != user.id]
    if not others:
        raise Conflict("the last admin cannot be demoted or disabled; make another admin first")


async def update_person(
    conn: WriteConnection, principal: Principal, user_id: UUID, data: UserUpdate
) -> User:
    """Change a role, enable or disable, rename, or set the default persona. A new role or a
    disable ends the account's sessions, so its browsers must sign in again.

    Raises:
        Forbidden: not an admin. NotFound: no such account. Conflict: the last admin.
        ValidationFailed: null for a field that must have a value.
    """
    _require_people_admin(principal)
    edits = data.model_dump(include=set(changes(data, required=("role", "active", "display_name"))))
    user = await _target(conn, user_id)
    current = {**_snapshot(user), "persona": user.persona}
    edits = {k: v for k, v in edits.items() if current[k] != v}
    if not edits:
        return user
    await _keep_an_admin(conn, user, edits.get("role", user.role), edits.get("active", user.active))
    # Only the fields that change are written (and audited).
    await queries.update_account(conn, user_id, UserUpdate.model_validate(edits))
    if "role" in edits or edits.get("active") is False:
        await sessions_service.end_all(conn, user_id)
    await audit.record(
        conn,
        principal,
        "user.update",
        target_type="user",
        target_id=user_id,
        before={k: current[k] for k in edits},
        after=edits,
    )
    return await _target(conn, user_id)


async def set_password(
    conn: WriteConnection,
    hasher: Hasher,
    actor: Principal,
    user_id: UUID,
    password: str,
    *,
    must_change: bool,
    action: str,
) -> None:
    """Check and store a new password, as `store_password_hash` (an admin's reset; hashed with
    the connection held, which only admins come here to do).

    Raises:
        ValidationFailed: the password breaks the rules, or the account is an agent's.
        NotFound: no such account.
    """
    user = await _target(conn, user_id)
    if user.kind == "agent":
        raise ValidationFailed("agents have no password: they use API keys")
    passwords.check_rules(password, email=user.email)
    await store_password_hash(
        conn,
        actor,
        user_id,
        await hasher.hash(password),
        must_change=must_change,
        action=action,
    )


async def store_password_hash(
    conn: WriteConnection,
    actor: Principal,
    user_id: UUID,
    password_hash: str,
    *,
    must_change: bool,
    action: str,
) -> None:
    """Store a new password's hash and end every session of the account and every OAuth
    client's access to it (its other browsers, any stolen cookie, and any app approved under
    the old password stop working; API keys stay, being an admin's to revoke). The audit entry
    records that it changed, never the value.

    Raises:
        ValidationFailed: the account is an agent's. NotFound: no such account.
    """
    user = await _target(conn, user_id)
    if user.kind == "agent":
        raise ValidationFailed("agents have no password: they use API keys")
    await queries.set_password_hash(
        conn, user_id, password_hash=password_hash, must_change_password=must_change
    )
    await sessions_service.end_all(conn, user_id)
    await oauth_service.withdraw_all(conn, user_id)
    await audit.record(
        conn,
        actor,
        action,
        target_type="user",
        target_id=user_id,
        after={"must_change_password": must_change},
    )


async def reset_password(
    conn: WriteConnection, hasher: Hasher, principal: Principal, user_id: UUID
) -> str:
    """An admin gives a person a temporary password, to be changed at the next sign-in.

    Raises:
        Forbidden: not an admin. NotFound: no such account. ValidationFailed: an agent.
    """
    _require_people_admin(principal)
    temporary = secrets.token_urlsafe(TEMPORARY_PASSWORD_BYTES)
    await set_password(
        conn,
        hasher,
        principal,
        user_id,
        temporary,
        must_change=True,
        action="user.password_reset",
    )
    return temporary


async def unlock(conn: WriteConnection, principal: Principal, user_id: UUID) -> User:
    """Lift a sign-in lock before it runs out.

    Raises:
        Forbidden: not an admin. NotFound: no such account.
    """
    _require_people_admin(principal)
    user = await _target(conn, user_id)
    await queries.clear_lock(conn, user_id)
    await audit.record(
        conn,
        principal,
        "user.unlock",
        target_type="user",
        target_id=user_id,
        before={"locked": user.locked},
        after={"locked": False},
    )
    return await _target(conn, user_id)


async def sign_in_with_oidc(
    conn: WriteConnection, *, email: str, subject: str, display_name: str, default_role: Role
) -> User | None:
    """The account an OpenID Connect sign-in maps to: the one linked to this subject, else the
    one with this (verified) email, which gets linked; else a new person with the default role.
    None when that account is disabled.
    """
    user = await queries.get_user_by_oidc_subject(conn, subject)
    if user is None:
        user = await queries.get_user_by_email(conn, email)
        if user is not None:
            await queries.link_oidc_subject(conn, user.id, subject)
            await audit.record(
                conn,
                _self(user),
                "user.oidc_link",
                target_type="user",
                target_id=user.id,
                after={"oidc": True},
            )
    if user is None:
        user_id = await queries.insert_user(
            conn,
            email=email,
            display_name=display_name or email.split("@", 1)[0],
            password_hash=None,
            role=default_role,
            kind="human",
            oidc_subject=subject,
        )
        if user_id is None:  # the email was taken meanwhile, by a concurrent sign-in
            raise Conflict("this account is being created by another sign-in; try again")
        user = await _target(conn, user_id)
        await audit.record(
            conn,
            _self(user),
            "user.oidc_signup",
            target_type="user",
            target_id=user.id,
            after=_snapshot(user),
        )
    return user if user.active and user.kind == "human" else None


# --- sign-in guesses and activity -------------------------------------------------------


async def reserve_guess(
    conn: WriteConnection, account: str | UUID, *, max_failures: int, lock_for: str
) -> queries.Guess | None:
    """Count a password guess against the account (an email, or an id) before it is checked:
    what to check it against, or None when no account matches or it is locked (see
    `queries.reserve_guess` for how concurrent guesses cannot outrun the lock)."""
    return await queries.reserve_guess(conn, account, max_failures=max_failures, lock_for=lock_for)


async def accept_guess(conn: WriteConnection, user_id: UUID, new_hash: str | None) -> bool:
    """A right guess: the failure count starts again, and a stale hash is replaced. False when
    the account was disabled meanwhile."""
    return await queries.signed_in(conn, user_id, new_hash)


async def touch(conn: WriteConnection, user_id: UUID) -> None:
    """Record that the account was active (at most once a minute)."""
    await queries.touch_user(conn, user_id)
