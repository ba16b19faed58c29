"""OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client
whose `client_id` is an HTTPS URL has no registration here; its metadata is the JSON document
at that URL, fetched and checked by `ClientDocuments.resolve`.

Anyone may send any URL as a `client_id`, so the fetch is the server connecting where a
stranger says: it goes through the remote workspaces' address rules (`app.kit.outbound`: no
address inside this machine's network unless CORPUS_REMOTE_ALLOW_PRIVATE), follows no redirect,
reads at most MAX_DOCUMENT_BYTES within FETCH_TIMEOUT_S, and its answer, a refusal too, is kept
for a while so that a flood of requests naming one URL makes one fetch.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.kit import outbound
from app.kit.addresses import AddressRefused, AddressRules
from app.oauth.schemas import ClientMetadata

# The draft suggests 5 kilobytes; a real client's document is a few hundred bytes.
MAX_DOCUMENT_BYTES = 5 * 1024
# The whole fetch (lookup, connection, TLS, headers and body): a person waits on it.
FETCH_TIMEOUT_S = 5.0
# A document is kept this long; a refusal (a slow, absent or invalid document) a minute, so a
# client that fixes its document is not locked out for long, and a stranger cannot make the
# server fetch the same URL at every request.
DOCUMENT_TTL_S = 300.0
REFUSAL_TTL_S = 60.0
MAX_CACHED = 1000
# Methods that use a shared secret: a document is public, so it can hold none (draft §4.1).
_SECRET_METHODS = frozenset({"client_secret_basic", "client_secret_post", "client_secret_jwt"})
_GRANTS = frozenset({"authorization_code", "refresh_token"})


class DocumentRefused(Exception):
    """A `client_id` URL whose document this server will not use; the message says why, for
    the `error_description` of an `invalid_client` answer."""


def is_document_url(client_id: str) -> bool:
    """Whether a `client_id` names a metadata document rather than a registered client (ours
    are UUIDs: they never start with a scheme)."""
    return client_id.startswith("https://")


def check_url(client_id: str) -> None:
    """The draft's rules for a client identifier URL (§3).

    Raises:
        DocumentRefused: not https, no path, dot segments, a fragment or credentials.
    """
    try:
        parts = urlsplit(client_id)
        _ = parts.port
    except ValueError:
        raise DocumentRefused("client_id: not a valid URL") from None
    if parts.scheme != "https" or not parts.hostname:
        raise DocumentRefused("client_id: a metadata document's URL must be https with a host")
    if parts.path in ("", "/"):
        raise DocumentRefused("client_id: a metadata document's URL must have a path")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise DocumentRefused("client_id: the URL may not have . or .. segments")
    if parts.fragment or "#" in client_id:
        raise DocumentRefused("client_id: the URL may not have a fragment")
    if "@" in parts.netloc:
        raise DocumentRefused("client_id: the URL may not carry credentials")


def check_document(client_id: str, document: Any) -> ClientMetadata:
    """The document as a public client's metadata, checked against its URL (draft §4).

    Raises:
        DocumentRefused: not an object; its `client_id` is not the URL it was served from; it
            declares a secret or a secret-based authentication; it lists no redirect URI; or
            it asks for a grant other than the authorization code and refresh.
    """
    if not isinstance(document, dict):
        raise DocumentRefused("the client metadata document is not a JSON object")
    # A plain string comparison, as the draft says: a document elsewhere cannot speak for it.
    if document.get("client_id") != client_id:
        raise DocumentRefused("the document's client_id is not the URL it was fetched from")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise DocumentRefused("a metadata document may not declare a client secret")
    method = document.get("token_endpoint_auth_method", "none")
    if method in _SECRET_METHODS:
        raise DocumentRefused(f"token_endpoint_auth_method {method!r} needs a shared secret")
    if method != "none":
        raise DocumentRefused("token_endpoint_auth_method: only 'none' (a public client)")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise DocumentRefused("redirect_uris: a list of at least one URI is required")
    grants = document.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or not set(grants) <= _GRANTS:
        raise DocumentRefused("grant_types: only authorization_code and refresh_token")
    if document.get("response_types", ["code"]) != ["code"]:
        raise DocumentRefused("response_types: only code")
    metadata: ClientMetadata = {
        "client_id": client_id,
        "redirect_uris": uris,
        "token_endpoint_auth_method": "none",
        "grant_types": grants,
        "response_types": ["code"],
    }
    for name in ("client_name", "client_uri", "logo_uri", "tos_uri", "policy_uri"):
        value = document.get(name)
        if isinstance(value, str):
            metadata[name] = value
    return metadata


def verified_domain(client_id: str) -> str | None:
    """The host a metadata document client is served from: who the client is, as far as
    anyone can tell (its name is whatever the document says). None for a registered client."""
    return urlsplit(client_id).netloc if is_document_url(client_id) else None


@dataclass
class _Entry:
    expires: float
    metadata: ClientMetadata | None
    refusal: str | None


@dataclass
class ClientDocuments:
    """Fetches and checks metadata documents, keeping each answer for a while. `verify` is the
    TLS context (the system's certificate authorities unless given: tests give theirs)."""

    rules: AddressRules
    verify: ssl.SSLContext | None = None
    timeout_s: float = FETCH_TIMEOUT_S
    _cache: OrderedDict[str, _Entry] = field(default_factory=OrderedDict)

    def known(self, client_id: str) -> bool:
        """Whether an answer for `client_id` (a document or a refusal) is kept: resolving it
        fetches nothing."""
        entry = self._cache.get(client_id)
        return entry is not None and entry.expires > time.monotonic()

    async def resolve(self, client_id: str) -> ClientMetadata:
        """The checked metadata of a `client_id` URL, from the cache or fetched now.

        Raises:
            DocumentRefused: the URL, its address, the fetch or the document is refused.
        """
        now = time.monotonic()
        entry = self._cache.get(client_id)
        if entry is None or entry.expires <= now:
            try:
                metadata = check_document(client_id, await self._fetch(client_id))
            except DocumentRefused as exc:
                entry = _Entry(now + REFUSAL_TTL_S, None, str(exc))
            else:
                entry = _Entry(now + DOCUMENT_TTL_S, metadata, None)
            self._cache[client_id] = entry
            while len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        self._cache.move_to_end(client_id)
        if entry.metadata is None:
            raise DocumentRefused(entry.refusal or "the client metadata document is refused")
        return entry.metadata

    def _context(self) -> ssl.SSLContext:
        if self.verify is None:
            # Read once: loading the system's authorities takes a while.
            self.verify = httpx.create_ssl_context(trust_env=False)
        return self.verify

    async def _fetch(self, client_id: str) -> Any:
        check_url(client_id)
        try:
            async with asyncio.timeout(self.timeout_s):
                async with outbound.client(self.rules, verify=self._context()) as http:
                    body = await _read(http, client_id)
        except TimeoutError:
            raise DocumentRefused(
                f"the client metadata document did not arrive within {self.timeout_s:g} s"
            ) from None
        except AddressRefused as exc:
            message = f"the client metadata document's host is refused: {exc}"
            raise DocumentRefused(message) from None
        except httpx.HTTPError as exc:
            name = type(exc).__name__
            message = f"the client metadata document could not be fetched ({name})"
            raise DocumentRefused(message) from None
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise DocumentRefused("the client metadata document is not JSON") from None


async def _read(http: httpx.AsyncClient, url: str) -> bytes:
    async with http.stream("GET", url, headers={"Accept": "application/json"}) as response:
        # A redirect is refused, not followed: the document must be at the client_id itself.
        if response.status_code != 200:
            raise DocumentRefused(
                f"the client metadata document answered HTTP {response.status_code}, not 200"
            )
        too_large = f"the client metadata document is over {MAX_DOCUMENT_BYTES} bytes"
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_DOCUMENT_BYTES:
            raise DocumentRefused(too_large)
        body = bytearray()
        async for piece in response.aiter_bytes():
            body += piece
            if len(body) > MAX_DOCUMENT_BYTES:
                raise DocumentRefused(too_large)
        return bytes(body)
