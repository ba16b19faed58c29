"""The edge guard in front of the MCP SDK's OAuth routes: where they fall short of the RFCs or
of our bounds on input, mended on the way in and out rather than by replacing the SDK's
handlers (see `OAuthEdges`)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, parse_qsl, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.oauth import service as oauth
from app.oauth.documents import ClientDocuments, DocumentRefused, is_document_url
from app.throttle import Throttle


async def _oauth_error(
    send: Send,
    status: int,
    error: str,
    description: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """An RFC 6749 error object, never cached."""
    body = json.dumps({"error": error, "error_description": description}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"cache-control", b"no-store"),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes:
    """The request's body. app.middleware bounds it while it is read (64 KiB at the OAuth
    routes), so nobody may make the process buffer more."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the SDK's handler the body the edge has read already."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _has_nul(encoded: str) -> bool:
    """Whether a query string or form body carries a NUL, raw or percent-encoded. PostgreSQL
    stores no NUL, so a field with one would reach the database only to fail there."""
    pairs = parse_qsl(encoded, keep_blank_values=True)
    return "\x00" in encoded or any("\x00" in k or "\x00" in v for k, v in pairs)


def _unregistrable(body: bytes) -> str | None:
    """Why a registration's redirect URIs break our rule (`oauth.check_redirect_uri`) as the
    client wrote them, or None. The SDK parses them first, and its URL parser reads a missing
    host into one (`https:///cb` and `https:cb` become `https://cb/`), so the rule is checked on
    the text sent. A body that is not JSON is the SDK's to refuse."""
    try:
        metadata = json.loads(body)
    except (ValueError, RecursionError):
        return None
    uris = metadata.get("redirect_uris") if isinstance(metadata, dict) else None
    for uri in uris if isinstance(uris, list) else []:
        if isinstance(uri, str):
            try:
                oauth.check_redirect_uri(uri)
            except oauth.InvalidRedirectUri as exc:
                return str(exc)
    return None


def _hostless_redirect(encoded: str) -> bool:
    """Whether a query string or form body names a `redirect_uri` without a host: never one a
    client registered, though the SDK's parser would read it as one (see `_unregistrable`)."""
    return any(not urlsplit(uri).hostname for uri in parse_qs(encoded).get("redirect_uri", []))


METADATA_PATH = "/.well-known/oauth-authorization-server"
_FORM_PATHS = ("/token", "/revoke")


class OAuthEdges:
    """Where the SDK's OAuth routes fall short of the RFCs, mended at the edge rather than by
    replacing its handlers:

    - RFC 8707 at /token: a request naming a resource other than ours gets `invalid_target`
      (the SDK binds the resource given at /authorize into the code, but does not compare the
      one sent to /token).
    - RFC 9207: every redirect from /authorize back to the client carries `iss` (the SDK's
      error redirects do not; our consent answers do), and the metadata says so, so that
      clients enforce it. The metadata also lists `none` among the token endpoint's auth
      methods: public clients register and redeem codes without a secret here.
    - Bounded input: /register is throttled per client address (anyone may call it, and each
      call stores a row), and so is /authorize with a metadata document's URL not yet fetched;
      every body is read here first, at most 64 KiB; a NUL in any field of
      /authorize, /token or /revoke is `invalid_request` here, before the SDK's handlers send
      it to the database (an error redirect from /authorize would need a redirect URI we can
      trust, so the answer is a 400 in every case).
    - Client ID Metadata Documents: the metadata advertises them, and at /authorize a
      `client_id` that is a document's URL is fetched and checked first, so that a refusal is
      an `invalid_client` naming its reason (the SDK would only say the client is unknown),
      answered without a redirect: none of the document's redirect URIs is trusted yet.
    - Redirect URIs as sent: the SDK normalises them before anyone sees them, and reads a URI
      without a host (`https:///cb`) as one with a host (`https://cb/`). Registration checks our
      rule on the text (`invalid_redirect_uri`, RFC 7591); /authorize and /token refuse a
      `redirect_uri` without a host as `invalid_request`, without a redirect.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        resource: str,
        issuer: str,
        public_url: str,
        register_rate: str,
        documents: ClientDocuments,
    ) -> None:
        self.app = app
        self.documents = documents
        self.resource = resource
        self.issuer = issuer  # as the metadata renders it, compared as a string by clients
        self.consent_url = f"{public_url}{oauth.CONSENT_PATH}?"
        self.register_throttle = Throttle(register_rate)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope["path"] in _FORM_PATHS and scope["method"] == "POST":
            await self._form(scope, receive, send)
        elif scope["path"] == "/register" and scope["method"] == "POST":
            await self._register(scope, receive, send)
        elif scope["path"] == "/authorize":
            await self._authorize(scope, receive, send)
        elif scope["path"] == METADATA_PATH and scope["method"] == "GET":
            await self.app(scope, receive, self._advertising_iss(send))
        else:
            await self.app(scope, receive, send)

    async def _form(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read_body(receive)
        form = body.decode("latin-1")
        if _has_nul(form):
            await _oauth_error(send, 400, "invalid_request", "a field contains a NUL character")
            return
        if _hostless_redirect(form):
            await _oauth_error(send, 400, "invalid_request", "redirect_uri: it has no host")
            return
        asked = parse_qs(form).get("resource", []) if scope["path"] == "/token" else []
        if any(r.rstrip("/") != self.resource for r in asked):
            await _oauth_error(
                send, 400, "invalid_target", f"this server issues tokens for {self.resource}"
            )
            return
        await self.app(scope, _replaying(body, receive), send)

    async def _throttled(self, scope: Scope, send: Send) -> bool:
        """Count a registration (or a metadata document's fetch) from the client's address;
        True when it is over the limit, and the 429 has been sent."""
        client = scope.get("client")
        wait = self.register_throttle.hit("register", client[0] if client else "unknown")
        if wait is None:
            return False
        await _oauth_error(
            send,
            429,
            "rate_limited",
            "too many client registrations from this address; try again later",
            [(b"retry-after", str(wait).encode())],
        )
        return True

    async def _register(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await self._throttled(scope, send):
            return
        body = await _read_body(receive)
        refusal = _unregistrable(body)
        if refusal is not None:
            await _oauth_error(send, 400, "invalid_redirect_uri", refusal)
            return
        await self.app(scope, _replaying(body, receive), send)

    async def _authorize(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "POST":
            body = await _read_body(receive)
            receive = _replaying(body, receive)
            fields = body.decode("latin-1")
        else:
            fields = scope["query_string"].decode("latin-1")
        if _has_nul(fields):
            await _oauth_error(send, 400, "invalid_request", "a field contains a NUL character")
            return
        if _hostless_redirect(fields):
            await _oauth_error(send, 400, "invalid_request", "redirect_uri: it has no host")
            return
        client_id = parse_qs(fields).get("client_id", [""])[0]
        if is_document_url(client_id):
            # Each new URL is a fetch for whoever sent it: bounded per address as registration
            # is, since a metadata document stands in for one.
            if not self.documents.known(client_id) and await self._throttled(scope, send):
                return
            try:
                await oauth.document_client(self.documents, client_id)
            except DocumentRefused as exc:
                await _oauth_error(send, 400, "invalid_client", str(exc))
                return
        await self.app(scope, receive, self._with_iss(send))

    def _with_iss(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = []
                for name, value in message.get("headers", []):
                    if name.lower() == b"location":
                        value = self._stamped(value.decode("latin-1")).encode("latin-1")
                    headers.append((name, value))
                message = {**message, "headers": headers}
            await send(message)

        return sending

    def _stamped(self, location: str) -> str:
        if location.startswith(self.consent_url):
            return location  # our own consent screen, not yet the client
        if "iss" in parse_qs(urlsplit(location).query):
            return location
        return oauth.with_query(location, iss=self.issuer)

    def _advertising_iss(self, send: Send) -> Send:
        # The document is small and sent whole: hold the start until the body is known, to
        # give it the right length.
        start: Message | None = None
        chunks: list[bytes] = []

        async def sending(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            if start["status"] == 200:
                document = json.loads(body)
                document["authorization_response_iss_parameter_supported"] = True
                # Clients (Claude Code, Codex, VS Code, opencode) then skip registration.
                document["client_id_metadata_document_supported"] = True
                # Public clients (PKCE, no secret) register with `none` and use it at /token;
                # the SDK lists only the secret-bearing methods.
                methods = document.get("token_endpoint_auth_methods_supported") or []
                if "none" not in methods:
                    document["token_endpoint_auth_methods_supported"] = [*methods, "none"]
                body = json.dumps(document).encode()
            headers = [
                (name, str(len(body)).encode() if name.lower() == b"content-length" else value)
                for name, value in start.get("headers", [])
            ]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        return sending
