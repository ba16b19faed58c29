"""Signing in and the credentials behind every request: the sign-in flows (password, OpenID
Connect, sign-up), API keys, and resolving a session, key or OAuth token to the `Principal`
every service takes. Sessions are `app.sessions`'s, the guess counter and accounts
`app.people`'s, the audit log `app.audit`'s: this module calls down into them.

Every failed sign-in — unknown email, wrong password, locked, disabled, an account without a
password — gets the same error after the same work: one counting UPDATE (which matches no row
for an unknown email or a locked account) and one Argon2 verification (of a dummy hash when
there is no real one).
"""

from __future__ import annotations

from dataclasses import replace
from uuid import UUID

from app.access import capabilities
from app.access.principal import Credential, Principal
from app.audit import service as audit
from app.auth import queries
from app.auth.schemas import (
    ApiKey,
    ApiKeyCreate,
    ApiKeyCreated,
    Me,
    PasswordChange,
    SignInOptions,
)
from app.auth.tokens import KEY_PREFIX_LENGTH, new_api_key
from app.db.engine import Lookup, ReadConnection, ShortTransaction, WriteConnection
from app.errors import Forbidden, InvalidCredentials, NotFound, SignupClosed, ValidationFailed
from app.kit.secrets import sha256
from app.people import passwords
from app.people import service as people_service
from app.people.passwords import Hasher
from app.people.schemas import Role, User
from app.sessions import service as sessions_service
from app.sessions.cookies import CookieSigner
from app.workspaces import service as workspaces_service

MAX_FAILED_SIGN_INS = 8
LOCK_FOR = "15 minutes"
# One message for every failed sign-in, so the reply tells nothing about the account.
SIGN_IN_FAILED = "the email or password is wrong, or the account may not sign in now"


# --- what the sign-in screen offers -----------------------------------------------------


async def sign_in_options(conn: ReadConnection, *, open_signup: bool, oidc: bool) -> SignInOptions:
    """What the sign-in screen offers. While no account exists it says so: sign-up is open to
    anyone then, so this tells no more than a sign-up attempt would."""
    first_run = await people_service.no_account_yet(conn)
    return SignInOptions(first_run=first_run, signup_open=first_run or open_signup, oidc=oidc)


async def sign_up(
    transaction: ShortTransaction,
    hasher: Hasher,
    signer: CookieSigner,
    *,
    email: str,
    password: str,
    display_name: str,
    open_signup: bool,
) -> tuple[User, str]:
    """A person joins (people_service.sign_up has the rules) and is signed in. The password is
    hashed between two transactions, with no connection held.

    Raises:
        SignupClosed, ValidationFailed, Conflict: as people_service.sign_up.
    """
    async with transaction() as conn:
        is_open = await people_service.sign_up_is_open(conn, open_signup=open_signup)
    if not is_open:
        raise SignupClosed("sign-up is closed: ask an admin for an account")
    passwords.check_rules(password, email=email)
    password_hash = await hasher.hash(password)
    async with transaction() as conn:
        user = await people_service.sign_up(
            conn,
            email=email,
            password_hash=password_hash,
            display_name=display_name,
            open_signup=open_signup,
        )
        return user, await sessions_service.open_session(conn, signer, user.id)


async def login(
    transaction: ShortTransaction,
    hasher: Hasher,
    signer: CookieSigner,
    *,
    email: str,
    password: str,
) -> tuple[User, str]:
    """Check an email and password and open a session.

    The guess is counted before it is checked, in a transaction of its own that a failure
    does not roll back (`people_service.reserve_guess`), and a right guess then lifts the count: so
    concurrent guesses cannot outrun the lock. No connection is held while Argon2 runs.

    Raises:
        InvalidCredentials: for every kind of failure, with one message.
    """
    email = email.strip().lower()
    async with transaction() as conn:
        guess = await people_service.reserve_guess(
            conn, email, max_failures=MAX_FAILED_SIGN_INS, lock_for=LOCK_FOR
        )
    verdict = await hasher.verify(guess.password_hash if guess else None, password)
    if guess is None or not verdict.ok or not guess.active:
        raise InvalidCredentials(SIGN_IN_FAILED)
    new_hash = await hasher.hash(password) if verdict.needs_rehash else None
    async with transaction() as conn:
        if not await people_service.accept_guess(conn, guess.user_id, new_hash):
            raise InvalidCredentials(SIGN_IN_FAILED)  # disabled while the guess was checked
        user = await people_service.get_person(conn, guess.user_id)
        assert user is not None
        return user, await sessions_service.open_session(conn, signer, user.id)


async def logout(conn: WriteConnection, signer: CookieSigner, cookie: str | None) -> None:
    """End the session the cookie names, if any (signing out twice is not an error)."""
    await sessions_service.close_session(conn, signer, cookie)


async def change_password(
    transaction: ShortTransaction,
    hasher: Hasher,
    signer: CookieSigner,
    principal: Principal,
    data: PasswordChange,
) -> str:
    """Change one's own password, signed in with a session. Every session of the account ends
    and the browser gets a new one (the returned cookie value), so only the others must sign
    in again. The current password is a guess like a sign-in's: counted first, locking the
    account at MAX_FAILED_SIGN_INS, and checked with no connection held.

    Raises:
        Forbidden: an API key or OAuth token (a session is required), an agent or the
        operator. ValidationFailed: the new password breaks the rules, or equals the current
        one. InvalidCredentials: the current password is wrong, or the account is locked.
    """
    if principal.user_id is None or principal.kind != "human":
        raise Forbidden("only people have passwords")
    if principal.credential != "session":
        raise Forbidden("sign in with your password to change it: a key or token may not")
    if data.new_password == data.current_password:
        raise ValidationFailed("new_password: choose a password different from the current one")
    passwords.check_rules(data.new_password, email=principal.email)
    async with transaction() as conn:
        guess = await people_service.reserve_guess(
            conn, principal.user_id, max_failures=MAX_FAILED_SIGN_INS, lock_for=LOCK_FOR
        )
    verdict = await hasher.verify(guess.password_hash if guess else None, data.current_password)
    if guess is None or not verdict.ok:
        raise InvalidCredentials("the current password is wrong, or the account is locked")
    new_hash = await hasher.hash(data.new_password)
    async with transaction() as conn:
        if not await people_service.accept_guess(conn, principal.user_id, None):
            raise InvalidCredentials("the current password is wrong, or the account is locked")
        await people_service.store_password_hash(
            conn,
            principal,
            principal.user_id,
            new_hash,
            must_change=False,
            action="user.password_change",
        )
        return await sessions_service.open_session(conn, signer, principal.user_id)


# --- who is calling -------------------------------------------------------------------------


def _principal(
    account: queries.Account, credential: Credential, *, persona: str | None, workspace: str | None
) -> Principal:
    return Principal(
        user_id=account.user_id,
        email=account.email,
        role=account.role,
        kind=account.kind,
        credential=credential,
        persona=persona,
        workspace_scope=workspace,
        must_change_password=account.must_change_password,
        display_name=account.display_name,
    )


# A credential is resolved in two steps: a lookup (one statement, no transaction) that also says
# which last-use times are due to be written (at most once a minute), and, only when one is due,
# a short transaction that writes them. A request in the same minute as the credential's last
# one sends that one statement (the door's cost, issue #33, docs/BENCHMARKS.md).


async def principal_from_session(
    lookup: Lookup, transaction: ShortTransaction, signer: CookieSigner, cookie: str
) -> Principal | None:
    """The account behind a session cookie; None when it is forged, expired or ended, or the
    account is disabled."""
    token = signer.unsign(cookie)
    if token is None:
        return None
    async with lookup() as conn:
        found = await queries.session_account(conn, sha256(token))
    if found is None:
        return None
    account = found.account
    if found.session_stale or found.account_stale:
        async with transaction() as conn:
            if found.session_stale:
                await sessions_service.touch(conn, found.session_id)
            if found.account_stale:
                await people_service.touch(conn, account.user_id)
    return _principal(account, "session", persona=account.default_persona, workspace=None)


async def principal_from_api_key(
    lookup: Lookup, transaction: ShortTransaction, key: str
) -> Principal | None:
    """The account behind an API key; None when it is unknown or revoked, or the account is
    disabled. The key's persona and workspace scope come with it."""
    async with lookup() as conn:
        found = await queries.key_account(conn, sha256(key))
    if found is None:
        return None
    account = found.account
    if found.key_stale or found.account_stale:
        async with transaction() as conn:
            if found.key_stale:
                await queries.touch_key(conn, found.key_id)
            if found.account_stale:
                await people_service.touch(conn, account.user_id)
    principal = _principal(
        account,
        "api_key",
        persona=found.key_persona or account.default_persona,
        workspace=found.workspace,
    )
    return replace(principal, key_id=found.key_id)


async def principal_from_access_token(
    lookup: Lookup, transaction: ShortTransaction, token: str, *, resource: str
) -> Principal | None:
    """The person behind an OAuth access token: exactly their privileges, no more (the token
    carries no role of its own). Accepted for `resource` (the /mcp URL) only; None when the
    token is unknown, expired, revoked or for another resource, or the account is disabled."""
    async with lookup() as conn:
        found = await queries.access_token_account(conn, sha256(token), resource)
    if found is None:
        return None
    account = found.account
    if found.account_stale:
        async with transaction() as conn:
            await people_service.touch(conn, account.user_id)
    principal = _principal(account, "oauth", persona=account.default_persona, workspace=None)
    return replace(principal, client_id=found.client_id)


def me(principal: Principal) -> Me:
    """The caller's own account, with the MCP tools its role allows and the actions it may take.

    Raises:
        Forbidden: the operator stand-in, which has no account.
    """
    if principal.user_id is None:
        raise Forbidden("the command-line operator has no account")
    return Me(
        id=principal.user_id,
        email=principal.email,
        display_name=principal.display_name,
        role=principal.role,
        kind=principal.kind,
        persona=principal.persona,
        tools=capabilities.mcp_tools(principal.role),
        must_change_password=principal.must_change_password,
        actions=principal.actions(),
    )


# --- API keys -------------------------------------------------------------------------------


def _require_key_admin(principal: Principal) -> None:
    principal.require("keys.manage", "only admins manage API keys")


async def create_key(
    conn: WriteConnection, principal: Principal, data: ApiKeyCreate
) -> ApiKeyCreated:
    """Mint a key for an account. The key is returned this once; only its sha256 is stored.

    Raises:
        Forbidden: not an admin. ValidationFailed: no such account or workspace.
    """
    _require_key_admin(principal)
    owner = await people_service.get_person(conn, data.user_id)
    if owner is None:
        raise ValidationFailed("user_id: no such account", details=[{"loc": ["body", "user_id"]}])
    workspace_id = None
    if data.workspace is not None:
        workspace_id = await workspaces_service.workspace_id(conn, data.workspace)
        if workspace_id is None:
            raise ValidationFailed(
                f"workspace: no workspace named {data.workspace!r}",
                details=[{"loc": ["body", "workspace"]}],
            )
    key = new_api_key()
    key_id = await queries.insert_key(
        conn,
        user_id=owner.id,
        name=data.name,
        prefix=key[:KEY_PREFIX_LENGTH],
        secret_sha256=sha256(key),
        workspace_id=workspace_id,
        persona=data.persona,
    )
    created = await _key(conn, key_id)
    await audit.record(
        conn,
        principal,
        "key.create",
        target_type="api_key",
        target_id=key_id,
        after=created.model_dump(
            mode="json", include={"name", "prefix", "email", "workspace", "persona"}
        ),
    )
    return ApiKeyCreated(**created.model_dump(), key=key)


async def _key(conn: ReadConnection, key_id: UUID) -> ApiKey:
    key = await queries.get_key(conn, key_id)
    if key is None:
        raise NotFound("no such API key")
    return key


async def list_keys(conn: ReadConnection, principal: Principal) -> list[ApiKey]:
    """Every key, newest first, revoked ones included (with when).

    Raises:
        Forbidden: not an admin.
    """
    _require_key_admin(principal)
    return await queries.list_keys(conn)


async def revoke_key(conn: WriteConnection, principal: Principal, key_id: UUID) -> None:
    """Revoke a key: its next request is refused. Revoking a revoked key changes nothing.

    Raises:
        Forbidden: not an admin. NotFound: no such key.
    """
    _require_key_admin(principal)
    key = await _key(conn, key_id)
    if await queries.revoke_key(conn, key_id):
        await audit.record(
            conn,
            principal,
            "key.revoke",
            target_type="api_key",
            target_id=key_id,
            before={"revoked": False, "name": key.name, "prefix": key.prefix},
            after={"revoked": True},
        )


# --- OpenID Connect -------------------------------------------------------------------------


async def oidc_sign_in(
    conn: WriteConnection,
    signer: CookieSigner,
    *,
    email: str,
    email_verified: bool,
    subject: str,
    display_name: str,
    allowed_domains: list[str],
    default_role: Role,
) -> tuple[User, str]:
    """Sign in a person the identity provider vouched for, creating the account at the first
    sign-in (with the default role) and mapping later ones to it by subject or verified email.

    Raises:
        Forbidden: the email is unverified or outside the allowed domains, or the account is
        disabled or an agent's.
    """
    email = email.strip().lower()
    if not email_verified or "@" not in email:
        raise Forbidden("the identity provider did not vouch for this email address")
    domain = email.rsplit("@", 1)[1]
    if allowed_domains and domain not in {d.lower() for d in allowed_domains}:
        raise Forbidden(f"people from {domain} may not sign in here")
    user = await people_service.sign_in_with_oidc(
        conn, email=email, subject=subject, display_name=display_name, default_role=default_role
    )
    if user is None:
        raise Forbidden("this account is disabled")
    return user, await sessions_service.open_session(conn, signer, user.id)
