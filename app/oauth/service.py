"""The rules of our OAuth 2.1 authorization server, for MCP clients that speak only OAuth.

The MCP SDK serves the endpoints and checks the protocol (PKCE S256, redirect URIs, client
authentication); `app.mcp.provider` adapts its calls to these functions. Here live the
decisions: who may register, the consent transaction a person answers, single-use short-lived
codes, opaque tokens stored as sha256, refresh tokens rotated on use with reuse revoking the
whole family, and tokens that carry exactly the privileges of the person who consented.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit
from uuid import UUID

from pydantic import AnyHttpUrl

from app.access import capabilities
from app.access.principal import Principal
from app.db.engine import ReadConnection, WriteConnection
from app.errors import Forbidden, NotFound, ValidationFailed
from app.kit.secrets import SecretBox, sha256
from app.oauth import queries
from app.oauth.documents import ClientDocuments, DocumentRefused, verified_domain

# Re-exported for the provider, which may not import the queries (import-linter).
from app.oauth.queries import ClientMetadata as ClientMetadata
from app.oauth.queries import Code, ConsentParams, Token
from app.oauth.schemas import Connection, ConsentRequest

SCOPE = "corpus"
TRANSACTION_TTL_S = 600  # a person has ten minutes to sign in and answer
CODE_TTL_S = 300
ACCESS_TTL_S = 3600
REFRESH_TTL_S = 30 * 24 * 3600
# Registration is open to anyone: a client no person approved within a day is deleted.
UNAUTHORIZED_CLIENT_TTL_S = 24 * 3600
ACCESS_PREFIX = "cat_"  # "corpus access token": recognisable in logs and secret scanners
REFRESH_PREFIX = "crt_"
CODE_PREFIX = "cac_"
# Where /authorize sends the browser: the consent screen (the web app's route).
CONSENT_PATH = "/oauth/consent"


class InvalidGrant(Exception):
    """A code or refresh token that was used, revoked, expired or never issued."""


class InvalidRedirectUri(Exception):
    """A redirect URI that is neither https nor a loopback address."""


def check_redirect_uri(uri: str) -> None:
    """Redirect URIs must be https, or http on a loopback address (native apps, RFC 8252).

    Raises:
        InvalidRedirectUri: anything else (plain http to a real host, custom schemes).
    """
    parts = urlsplit(uri)
    if parts.fragment:
        raise InvalidRedirectUri(f"{uri}: a redirect URI may not have a fragment")
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname:
        host = parts.hostname
        if host == "localhost":
            return
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            pass
    raise InvalidRedirectUri(f"{uri}: redirect URIs must be https, or http on a loopback address")


def _loopback_ip(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uri_allowed(requested: str, registered: list[str]) -> bool:
    """Whether a redirect URI asked for at /authorize is one the client registered.

    Exactly, or (RFC 8252 §7.3) with another port on a loopback IP literal: a native app
    listens on whatever port the system gives it at the time of the request. Only the port may
    differ, and not for `localhost`, which a resolver might send elsewhere (RFC 8252 §8.3).
    """
    if requested in registered:
        return True
    asked = urlsplit(requested)
    if asked.scheme != "http" or not _loopback_ip(asked.hostname):
        return False
    for uri in registered:
        parts = urlsplit(uri)
        if (parts.scheme, parts.hostname, parts.path, parts.query) == (
            asked.scheme,
            asked.hostname,
            asked.path,
            asked.query,
        ):
            return True
    return False


# --- clients --------------------------------------------------------------------------------

# Anyone may register a client, so what one stores is bounded (RFC 7591 sets no limits). Names
# and versions are a line; URIs as long as browsers take; lists a handful.
MAX_NAME_CHARS = 200
MAX_URI_CHARS = 2000
MAX_SCOPE_CHARS = 200
MAX_CONTACT_CHARS = 320
MAX_LIST_ITEMS = 10
MAX_JWKS_CHARS = 8192
_NAME_FIELDS = ("client_name", "software_id", "software_version")
_URI_FIELDS = ("client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri")
_LIST_FIELDS = {
    "redirect_uris": MAX_URI_CHARS,
    "contacts": MAX_CONTACT_CHARS,
    "grant_types": MAX_NAME_CHARS,
    "response_types": MAX_NAME_CHARS,
}


class InvalidClientMetadata(Exception):
    """Registration metadata this server will not store; the message names the field."""


def _has_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


def _check_length(field: str, value: object, limit: int) -> None:
    if value is not None and len(str(value)) > limit:
        raise InvalidClientMetadata(f"{field}: at most {limit} characters")


def check_client_metadata(metadata: Mapping[str, Any]) -> None:
    """Refuse metadata with a NUL (PostgreSQL stores none) or over a limit.

    Raises:
        InvalidClientMetadata: naming the first field at fault.
    """
    for field, value in metadata.items():
        if _has_nul(value):
            raise InvalidClientMetadata(f"{field}: may not contain NUL characters")
    for field in _NAME_FIELDS:
        _check_length(field, metadata.get(field), MAX_NAME_CHARS)
    for field in _URI_FIELDS:
        _check_length(field, metadata.get(field), MAX_URI_CHARS)
    _check_length("scope", metadata.get("scope"), MAX_SCOPE_CHARS)
    for field, limit in _LIST_FIELDS.items():
        items = metadata.get(field) or []
        if len(items) > MAX_LIST_ITEMS:
            raise InvalidClientMetadata(f"{field}: at most {MAX_LIST_ITEMS} entries")
        for item in items:
            _check_length(field, item, limit)
    if metadata.get("jwks") is not None:
        _check_length("jwks", json.dumps(metadata["jwks"]), MAX_JWKS_CHARS)


async def register_client(
    conn: WriteConnection, box: SecretBox, metadata: ClientMetadata, client_secret: str | None
) -> None:
    """Store a dynamically registered client (RFC 7591); a confidential client's secret is
    sealed, because the SDK compares it in plain form.

    Raises:
        InvalidClientMetadata: a NUL, or a field over its limit.
        InvalidRedirectUri: a redirect URI that is neither https nor loopback.
    """
    check_client_metadata(metadata)
    for uri in metadata.get("redirect_uris") or []:
        check_redirect_uri(str(uri))
    stored = metadata.copy()
    stored.pop("client_secret", None)
    await queries.insert_client(
        conn,
        client_id=metadata["client_id"],
        client_secret_encrypted=box.seal(client_secret) if client_secret else None,
        client_name=metadata.get("client_name"),
        redirect_uris=[str(u) for u in metadata.get("redirect_uris") or []],
        metadata=stored,
    )


async def document_client(documents: ClientDocuments, client_id: str) -> ClientMetadata:
    """The metadata of a client whose `client_id` is its metadata document's URL (CIMD),
    fetched (or remembered) and held to the rules a registration is held to.

    Raises:
        DocumentRefused: the URL, the fetch or the document is refused; the message says why.
    """
    metadata = await documents.resolve(client_id)
    try:
        check_client_metadata(metadata)
        for uri in metadata.get("redirect_uris") or []:
            check_redirect_uri(uri)
    except (InvalidClientMetadata, InvalidRedirectUri) as exc:
        raise DocumentRefused(str(exc)) from None
    # This server has one scope; a registration is given it too (the SDK's default scopes).
    return {**metadata, "scope": SCOPE}


async def remember_document_client(conn: WriteConnection, metadata: ClientMetadata) -> None:
    """Store a metadata document client as its document says, so that its consent
    transactions, codes, tokens and the person's connections can name it."""
    await queries.upsert_document_client(
        conn,
        client_id=metadata["client_id"],
        client_name=metadata.get("client_name"),
        metadata=metadata,
    )


async def get_client(conn: ReadConnection, box: SecretBox, client_id: str) -> ClientMetadata | None:
    """A client's registration, with its secret unsealed; None when unknown."""
    row = await queries.get_client(conn, client_id)
    if row is None:
        return None
    metadata = row.metadata.copy()
    sealed = row.client_secret_encrypted
    metadata["client_secret"] = box.open(sealed) if sealed else None
    return metadata


# --- consent --------------------------------------------------------------------------------


async def begin_authorization(conn: WriteConnection, client_id: str, params: ConsentParams) -> str:
    """Store a validated /authorize request until the person answers; returns its id."""
    tx = secrets.token_urlsafe(24)
    await queries.insert_authorization(
        conn, tx=tx, client_id=client_id, params=params, expires_in_s=TRANSACTION_TTL_S
    )
    return tx


def _require_person(principal: Principal) -> UUID:
    # Consent is a person's decision in a browser: an API key cannot give it for them.
    if principal.credential != "session" or principal.user_id is None:
        raise Forbidden("consent is given by a signed-in person in the browser, not an API key")
    return principal.user_id


async def consent_request(conn: ReadConnection, principal: Principal, tx: str) -> ConsentRequest:
    """What the consent screen shows: who asks, where the answer goes, and what the token will
    be able to do (the person's own role's tools: the token carries no more).

    Raises:
        Forbidden: not a browser session. NotFound: unknown, expired or answered.
    """
    _require_person(principal)
    row = await queries.open_authorization(conn, tx)
    if row is None:
        raise NotFound("this authorization request is unknown, expired or already answered")
    params = row.params
    return ConsentRequest(
        client_id=row.client_id,
        client_name=row.client_name or row.client_id,
        # Anyone may register any name: the screen says so, and leads with where the answer
        # goes, which the client cannot dress up.
        client_name_self_declared=True,
        verified_domain=verified_domain(row.client_id),
        redirect_host=urlsplit(params["redirect_uri"]).netloc,
        redirect_uri=params["redirect_uri"],
        scopes=params["scopes"],
        resource=params.get("resource"),
        role=principal.role,
        tools=capabilities.mcp_tools(principal.role),
    )


def issuer_id(public_url: str) -> str:
    """Our issuer identifier exactly as the metadata document renders it (a URL with a path,
    "/" at least), since clients compare the `iss` of a redirect with it as strings (RFC 9207).
    """
    return str(AnyHttpUrl(public_url))


def with_query(uri: str, **params: str | None) -> str:
    """`uri` with `params` added to its query (None values left out)."""
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [(k, v) for k, v in params.items() if v is not None]
    return urlunsplit(parts._replace(query=urlencode(query)))


async def answer_consent(
    conn: WriteConnection, principal: Principal, tx: str, *, approve: bool, issuer: str
) -> str:
    """The person's yes or no; returns where the browser goes next: the client's redirect URI
    with a single-use code (yes) or `error=access_denied` (no). A transaction is answered once.

    Raises:
        Forbidden: not a browser session. NotFound: unknown, expired or answered.
    """
    user_id = _require_person(principal)
    row = await queries.open_authorization(conn, tx)
    if row is None or not await queries.answer_authorization(conn, tx, user_id):
        raise NotFound("this authorization request is unknown, expired or already answered")
    params = row.params
    if not approve:
        return with_query(
            params["redirect_uri"], error="access_denied", state=params.get("state"), iss=issuer
        )
    code = CODE_PREFIX + secrets.token_urlsafe(32)
    await queries.insert_code(
        conn,
        code_sha256=sha256(code),
        client_id=row.client_id,
        user_id=user_id,
        scopes=params["scopes"],
        code_challenge=params["code_challenge"],
        redirect_uri=params["redirect_uri"],
        redirect_uri_provided_explicitly=params["redirect_uri_provided_explicitly"],
        resource=params.get("resource"),
        expires_in_s=CODE_TTL_S,
    )
    await queries.upsert_consent(conn, user_id, row.client_id, params["scopes"])
    await queries.mark_client_authorized(conn, row.client_id)
    return with_query(params["redirect_uri"], code=code, state=params.get("state"), iss=issuer)


# --- codes and tokens -----------------------------------------------------------------------


async def load_code(conn: WriteConnection, client_id: str, code: str) -> Code | None:
    """An unused code of this client; None otherwise. Presenting a code that was redeemed
    already revokes the tokens it issued (RFC 6749 §4.1.2): the code has leaked, and whoever
    redeemed it first may not be its client."""
    row = await queries.get_code(conn, sha256(code), client_id)
    if row is None:
        return None
    if row.used_at is not None:
        if row.family_id is not None:
            await queries.revoke_family(conn, row.family_id)
        return None
    return row


@dataclass(frozen=True, slots=True)
class IssuedTokens:
    access_token: str
    refresh_token: str
    expires_in: int
    scopes: list[str]


async def _issue(
    conn: WriteConnection,
    *,
    client_id: str,
    user_id: UUID,
    scopes: list[str],
    resource: str | None,
    family_id: UUID,
) -> IssuedTokens:
    access = ACCESS_PREFIX + secrets.token_urlsafe(32)
    refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
    await queries.insert_tokens(
        conn,
        client_id=client_id,
        user_id=user_id,
        scopes=scopes,
        resource=resource,
        family_id=family_id,
        access_sha256=sha256(access),
        access_expires_in_s=ACCESS_TTL_S,
        refresh_sha256=sha256(refresh),
        refresh_expires_in_s=REFRESH_TTL_S,
    )
    return IssuedTokens(access, refresh, ACCESS_TTL_S, scopes)


async def exchange_code(conn: WriteConnection, client_id: str, code: str) -> IssuedTokens:
    """Redeem a code (once) for a new token family, which the code remembers.

    Raises:
        InvalidGrant: the code was redeemed already (then what it issued is revoked, and the
            caller must commit that), or never issued to this client.
    """
    family_id = uuid.uuid4()
    row = await queries.take_code(conn, sha256(code), client_id, family_id)
    if row is None:
        # A redemption racing this one won: revoke what it issued, as a later reuse would.
        await load_code(conn, client_id, code)
        raise InvalidGrant("the authorization code was used already")
    if not await queries.lock_consent(conn, row.user_id, client_id):
        raise InvalidGrant("the person has disconnected this client")
    return await _issue(
        conn,
        client_id=client_id,
        user_id=row.user_id,
        scopes=list(row.scopes),
        resource=row.resource,
        family_id=family_id,
    )


async def load_refresh_token(conn: WriteConnection, client_id: str, token: str) -> Token | None:
    """A live refresh token of this client; None otherwise. Presenting one that was already
    used revokes its whole family: a used refresh token in the wild means a stolen one."""
    row = await queries.get_token(conn, sha256(token), "refresh", client_id)
    if row is None or row.revoked_at is not None:
        return None
    if row.used_at is not None:
        await queries.revoke_family(conn, row.family_id)
        return None
    return row


async def rotate_refresh_token(
    conn: WriteConnection, client_id: str, token: str, scopes: list[str]
) -> IssuedTokens:
    """Use a refresh token: it is spent, and a new access and refresh token of the same family
    replace it.

    Raises:
        InvalidGrant: it was spent meanwhile (then the family is revoked and the caller must
            commit that), revoked, or its client disconnected.
    """
    row = await queries.get_token(conn, sha256(token), "refresh", client_id)
    if row is None:
        raise InvalidGrant("unknown refresh token")
    if not await queries.lock_consent(conn, row.user_id, client_id):
        raise InvalidGrant("the person has disconnected this client")
    if not await queries.use_refresh_token(conn, sha256(token)):
        await queries.revoke_family(conn, row.family_id)
        raise InvalidGrant("the refresh token was used already; its grant is revoked")
    granted = list(row.scopes)
    if any(scope not in granted for scope in scopes):
        raise ValidationFailed("scope: a refresh cannot widen the grant")
    return await _issue(
        conn,
        client_id=client_id,
        user_id=row.user_id,
        scopes=scopes or granted,
        resource=row.resource,
        family_id=row.family_id,
    )


async def revoke(conn: WriteConnection, token: str) -> None:
    """RFC 7009: revoke an access or refresh token and every token of its grant. Unknown tokens
    are not an error."""
    hashed = sha256(token)
    for kind in ("access", "refresh"):
        row = await queries.get_token(conn, hashed, kind)
        if row is not None:
            await queries.revoke_family(conn, row.family_id)
            return


async def prune_expired(conn: WriteConnection) -> dict[str, int]:
    """Delete consent transactions, codes and tokens past their expiry, and clients nobody
    approved within UNAUTHORIZED_CLIENT_TTL_S of registering; counts by table."""
    counts = await queries.delete_expired(conn)
    counts["oauth_clients"] = await queries.delete_unauthorized_clients(
        conn, UNAUTHORIZED_CLIENT_TTL_S
    )
    return counts


# --- a person's connections -----------------------------------------------------------------


async def connections(conn: ReadConnection, principal: Principal) -> list[Connection]:
    """The OAuth clients this person authorised."""
    if principal.user_id is None:
        return []
    return [
        Connection(
            client_id=row.client_id,
            client_name=row.client_name or row.client_id,
            verified_domain=verified_domain(row.client_id),
            redirect_hosts=sorted({urlsplit(u).netloc for u in row.redirect_uris}),
            scopes=list(row.scopes),
            created_at=row.created_at,
            last_used_at=row.last_used_at,
        )
        for row in await queries.list_consents(conn, principal.user_id)
    ]


async def disconnect(conn: WriteConnection, principal: Principal, client_id: str) -> None:
    """Withdraw a client's access: its tokens stop working at once.

    Raises:
        NotFound: this person has no consent and no live token for the client.
    """
    if principal.user_id is None:
        raise NotFound("no connection with this client")
    consented = await queries.delete_consent(conn, principal.user_id, client_id)
    # Revoke even without a consent row: whatever the person still holds for it must stop.
    revoked = await queries.revoke_user_client(conn, principal.user_id, client_id)
    if not consented and not revoked:
        raise NotFound("no connection with this client")


async def withdraw_all(conn: WriteConnection, user_id: UUID) -> int:
    """Withdraw every client's access to an account (its password changed, or it was
    disabled): consents, pending codes and live tokens; returns how many tokens were revoked."""
    return await queries.withdraw_user(conn, user_id)
