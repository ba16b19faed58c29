"""The OAuth 2.1 door for MCP clients that speak only OAuth, end to end over real HTTP: the
SDK's own OAuth client goes through discovery, registration, authorization (the test answers
the consent screen as the person), tokens, a tool call, refresh and revocation; every way to
get it wrong fails with its RFC error code; and the database holds no raw token."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import text

from app import housekeeping
from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.main import create_app
from app.oauth import service as oauth
from app.people import service as people_service
from tests.accounts import HASHER, Account
from tests.mcp.browser import Browser, MemoryStorage, oauth_client, pkce, signed_in_browser
from tests.mcp.browser import query as query_of
from tests.mcp.conftest import mcp_client
from tests.running import Running, run_fresh_corpus
from tests.support import eventually, lifespan, make_settings, waiting_on_locks

REDIRECT_URI = "http://127.0.0.1:8765/callback"


# --- the SDK's OAuth client, end to end -----------------------------------------------------


async def test_an_oauth_only_client_connects_calls_refreshes_and_revokes(
    corpus: Running, browser: Browser, person: Account
) -> None:
    storage = MemoryStorage()
    auth = oauth_client(corpus, browser, storage, name="Test Agent", redirect_uri=REDIRECT_URI)
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        Client(streamable_http_client(corpus.mcp_url, http_client=http)) as client,
    ):
        me = await client.call_tool("whoami", {})
    assert me.is_error is False
    # Exactly the consenting person's privileges: their email, their role.
    assert (me.structured_content or {})["email"] == person.user.email
    assert (me.structured_content or {})["role"] == "editor"
    assert "Test Agent" in browser.seen[0]
    assert storage.tokens is not None
    assert storage.client is not None
    first = storage.tokens

    connections = (await browser.http.get("/api/me/connections")).json()["items"]
    assert [c["client_name"] for c in connections] == ["Test Agent"]

    # Refresh: both tokens rotate and the new access token works.
    token_url = f"{corpus.url}/token"
    client_auth = {"client_id": storage.client.client_id}
    if storage.client.client_secret:
        client_auth["client_secret"] = storage.client.client_secret
    async with httpx.AsyncClient() as http1:
        refreshed = await http1.post(
            token_url,
            data={
                "grant_type": "refresh_token",
                "refresh_token": first.refresh_token,
                **client_auth,
            },
        )
        assert refreshed.status_code == 200, refreshed.text
        second = refreshed.json()
        assert second["access_token"] != first.access_token
        assert second["refresh_token"] != first.refresh_token
        async with mcp_client(corpus.mcp_url, second["access_token"]) as client:
            assert (await client.call_tool("whoami", {})).is_error is False

        # Revoke (RFC 7009): the whole grant stops working at once.
        revoked = await http1.post(
            f"{corpus.url}/revoke", data={"token": second["access_token"], **client_auth}
        )
        assert revoked.status_code == 200
        refused = await _post_mcp(http1, corpus, second["access_token"])
        assert refused.status_code == 401
        again = await http1.post(
            token_url,
            data={
                "grant_type": "refresh_token",
                "refresh_token": second["refresh_token"],
                **client_auth,
            },
        )
        assert again.status_code == 400
        assert again.json()["error"] == "invalid_grant"

    # The database holds only hashes.
    raw = [first.access_token, first.refresh_token, second["access_token"], second["refresh_token"]]
    dumps: list[str] = []
    async with corpus.db.read() as conn:
        for table in ("oauth_tokens", "oauth_codes", "oauth_clients", "oauth_authorizations"):
            rows = await conn.execute(text(f"SELECT string_agg(t::text, '|') FROM {table} t"))
            dumps.append(rows.scalar() or "")
    dump = "\n".join(dumps)
    assert [token for token in raw if token in dump] == []
    if storage.client.client_secret:
        assert storage.client.client_secret not in dump


async def _post_mcp(http: httpx.AsyncClient, corpus: Running, bearer: str) -> httpx.Response:
    return await http.post(
        corpus.mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {bearer}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
    )


# --- the protocol's edges, by hand ----------------------------------------------------------


@dataclass
class Grant:
    client_id: str
    verifier: str
    code: str
    state: str


class Flow:
    """A public client (no secret) walking the authorization code flow by hand."""

    def __init__(self, corpus: Running, browser: Browser, http: httpx.AsyncClient) -> None:
        self.corpus = corpus
        self.browser = browser
        self.http = http

    async def register(self, **metadata: Any) -> httpx.Response:
        body = {
            "client_name": "Hand Client",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            **metadata,
        }
        return await self.http.post(f"{self.corpus.url}/register", json=body)

    async def client_id(self) -> str:
        reply = await self.register()
        assert reply.status_code == 201, reply.text
        client_id: str = reply.json()["client_id"]
        return client_id

    def authorize_url(self, client_id: str, challenge: str | None, **extra: str) -> str:
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "state": secrets.token_urlsafe(8),
            "resource": self.corpus.mcp_url,
            **({"code_challenge": challenge, "code_challenge_method": "S256"} if challenge else {}),
            **extra,
        }
        return str(httpx.URL(f"{self.corpus.url}/authorize", params=params))

    async def grant(self, **extra: str) -> Grant:
        client_id = await self.client_id()
        verifier, challenge = pkce()
        url = self.authorize_url(client_id, challenge, **extra)
        redirect_to = await self.browser.consent(url)
        query = query_of(redirect_to)
        assert query["iss"].rstrip("/") == self.corpus.url
        return Grant(client_id, verifier, query["code"], query["state"])

    async def token(self, grant: Grant, **overrides: str) -> httpx.Response:
        data = {
            "grant_type": "authorization_code",
            "code": grant.code,
            "redirect_uri": REDIRECT_URI,
            "client_id": grant.client_id,
            "code_verifier": grant.verifier,
            **overrides,
        }
        return await self.http.post(f"{self.corpus.url}/token", data=data)


@pytest.fixture
async def flow(corpus: Running, browser: Browser) -> AsyncIterator[Flow]:
    async with httpx.AsyncClient() as http:
        yield Flow(corpus, browser, http)


def _error_of(reply: httpx.Response) -> str:
    """The RFC 6749 error of a reply: in the JSON body, or in the redirect's query."""
    if reply.status_code in (302, 303):
        return query_of(reply.headers["location"])["error"]
    error: str = reply.json()["error"]
    return error


async def test_authorization_without_pkce_or_with_plain_pkce_is_refused(
    flow: Flow, browser: Browser
) -> None:
    client_id = await flow.client_id()
    without = await browser.http.get(flow.authorize_url(client_id, None))
    assert _error_of(without) == "invalid_request"
    plain = await browser.http.get(
        flow.authorize_url(client_id, None, code_challenge="a" * 43, code_challenge_method="plain")
    )
    assert _error_of(plain) == "invalid_request"
    # RFC 9207: error responses name the issuer too, exactly as the metadata does.
    issuer = f"{flow.corpus.url}/"
    assert [query_of(r.headers["location"])["iss"] for r in (without, plain)] == [issuer, issuer]


async def test_a_wrong_verifier_a_reused_code_and_another_redirect_uri_fail(flow: Flow) -> None:
    grant = await flow.grant()
    wrong = await flow.token(grant, code_verifier=secrets.token_urlsafe(48))
    assert (wrong.status_code, _error_of(wrong)) == (400, "invalid_grant")
    elsewhere = await flow.token(grant, redirect_uri="http://127.0.0.1:8765/other")
    assert (elsewhere.status_code, _error_of(elsewhere)) == (400, "invalid_request")
    first = await flow.token(grant)
    assert first.status_code == 200, first.text
    reused = await flow.token(grant)
    assert (reused.status_code, _error_of(reused)) == (400, "invalid_grant")


async def test_an_unregistered_redirect_uri_is_refused_without_a_redirect(
    flow: Flow, browser: Browser
) -> None:
    client_id = await flow.client_id()
    _, challenge = pkce()
    reply = await browser.http.get(
        flow.authorize_url(client_id, challenge, redirect_uri="https://evil.example/cb")
    )
    assert reply.status_code == 400
    assert reply.json()["error"] == "invalid_request"


async def test_a_token_for_another_resource_is_refused(flow: Flow, browser: Browser) -> None:
    client_id = await flow.client_id()
    _, challenge = pkce()
    at_authorize = await browser.http.get(
        flow.authorize_url(client_id, challenge, resource="https://other.example/mcp")
    )
    assert _error_of(at_authorize) == "invalid_target"
    assert query_of(at_authorize.headers["location"])["iss"] == f"{flow.corpus.url}/"
    grant = await flow.grant()
    at_token = await flow.token(grant, resource="https://other.example/mcp")
    assert (at_token.status_code, _error_of(at_token)) == (400, "invalid_target")


async def test_a_reused_refresh_token_revokes_the_whole_grant(flow: Flow, corpus: Running) -> None:
    grant = await flow.grant()
    tokens = (await flow.token(grant)).json()
    refresh = {"grant_type": "refresh_token", "client_id": grant.client_id}
    rotated = await flow.http.post(
        f"{corpus.url}/token", data={**refresh, "refresh_token": tokens["refresh_token"]}
    )
    assert rotated.status_code == 200
    newest = rotated.json()
    assert (await _post_mcp(flow.http, corpus, newest["access_token"])).status_code == 200

    replay = await flow.http.post(
        f"{corpus.url}/token", data={**refresh, "refresh_token": tokens["refresh_token"]}
    )
    assert (replay.status_code, _error_of(replay)) == (400, "invalid_grant")
    # Someone holds a spent refresh token: every token of the grant is revoked.
    assert (await _post_mcp(flow.http, corpus, newest["access_token"])).status_code == 401
    after = await flow.http.post(
        f"{corpus.url}/token", data={**refresh, "refresh_token": newest["refresh_token"]}
    )
    assert _error_of(after) == "invalid_grant"


async def test_an_expired_access_token_is_refused(flow: Flow, corpus: Running) -> None:
    grant = await flow.grant()
    tokens = (await flow.token(grant)).json()
    assert (await _post_mcp(flow.http, corpus, tokens["access_token"])).status_code == 200
    digest = hashlib.sha256(tokens["access_token"].encode()).hexdigest()
    async with corpus.db.write() as conn:
        await conn.execute(
            text(
                "UPDATE oauth_tokens SET expires_at = now() - interval '1 second'"
                " WHERE token_sha256 = :d"
            ),
            {"d": digest},
        )
    refused = await _post_mcp(flow.http, corpus, tokens["access_token"])
    assert refused.status_code == 401
    assert "resource_metadata=" in refused.headers["www-authenticate"]


async def test_a_denied_consent_sends_access_denied_and_issues_nothing(
    flow: Flow, browser: Browser, corpus: Running
) -> None:
    client_id = await flow.client_id()
    _, challenge = pkce()
    redirect_to = await browser.consent(flow.authorize_url(client_id, challenge), approve=False)
    assert query_of(redirect_to)["error"] == "access_denied"
    async with corpus.db.read() as conn:
        codes = await conn.execute(
            text("SELECT count(*) FROM oauth_codes WHERE client_id = :c"), {"c": client_id}
        )
        assert codes.scalar_one() == 0


async def test_a_consent_is_answered_once_and_only_by_a_signed_in_person(
    flow: Flow, browser: Browser, corpus: Running, person: Account
) -> None:
    client_id = await flow.client_id()
    _, challenge = pkce()
    reply = await browser.http.get(flow.authorize_url(client_id, challenge))
    tx = query_of(reply.headers["location"])["tx"]
    async with httpx.AsyncClient(base_url=corpus.url) as stranger:
        anonymous = await stranger.get(f"/api/oauth/consent/{tx}")
        assert anonymous.status_code == 401
        with_key = await stranger.post(
            f"/api/oauth/consent/{tx}", json={"approve": True}, headers=person.bearer
        )
        assert (with_key.status_code, with_key.json()["error"]["code"]) == (403, "forbidden")
    first = await browser.http.post(f"/api/oauth/consent/{tx}", json={"approve": True})
    assert first.status_code == 200
    second = await browser.http.post(f"/api/oauth/consent/{tx}", json={"approve": True})
    assert second.status_code == 404
    unknown = await browser.http.get("/api/oauth/consent/no-such-transaction")
    assert unknown.status_code == 404


async def test_a_token_carries_exactly_the_consenting_persons_role(corpus: Running) -> None:
    viewer = await corpus.account("viewer")
    async with signed_in_browser(corpus, viewer) as browser, httpx.AsyncClient() as http:
        flow = Flow(corpus, browser, http)
        tokens = (await flow.token(await flow.grant())).json()
    async with mcp_client(corpus.mcp_url, tokens["access_token"]) as client:
        me = await client.call_tool("whoami", {})
        assert (me.structured_content or {})["role"] == "viewer"
        upload = await client.call_tool("upload_document", {"title": "T", "content": "Body."})
        assert upload.is_error is True


async def test_disconnecting_a_client_stops_its_tokens_at_once(
    flow: Flow, browser: Browser, corpus: Running
) -> None:
    grant = await flow.grant()
    tokens = (await flow.token(grant)).json()
    assert (await _post_mcp(flow.http, corpus, tokens["access_token"])).status_code == 200
    listed = (await browser.http.get("/api/me/connections")).json()["items"]
    assert grant.client_id in {c["client_id"] for c in listed}
    gone = await browser.http.delete(f"/api/me/connections/{grant.client_id}")
    assert gone.status_code == 204
    assert (await _post_mcp(flow.http, corpus, tokens["access_token"])).status_code == 401
    refresh = await flow.http.post(
        f"{corpus.url}/token",
        data={
            "grant_type": "refresh_token",
            "client_id": grant.client_id,
            "refresh_token": tokens["refresh_token"],
        },
    )
    assert _error_of(refresh) == "invalid_grant"
    again = await browser.http.delete(f"/api/me/connections/{grant.client_id}")
    assert again.status_code == 404


@pytest.mark.parametrize(
    ("redirect_uri", "accepted"),
    [
        ("https://agent.example/callback", True),
        ("http://127.0.0.1:9999/callback", True),
        ("http://localhost/callback", True),
        ("http://[::1]:7000/cb", True),
        ("http://agent.example/callback", False),
        ("myapp://callback", False),
        # No host: a URL parser would read the path's first segment as one (https://cb/).
        ("https:///cb", False),
        ("https:////cb", False),
        ("https:/cb", False),
        ("https:cb", False),
        ("http:///127.0.0.1:9999/callback", False),
    ],
)
async def test_registration_takes_https_or_loopback_redirect_uris_only(
    flow: Flow, redirect_uri: str, accepted: bool
) -> None:
    reply = await flow.register(redirect_uris=[redirect_uri])
    if accepted:
        assert reply.status_code == 201, reply.text
    else:
        assert (reply.status_code, reply.json()["error"]) == (400, "invalid_redirect_uri")


async def test_a_redirect_uri_without_a_host_is_refused_at_registration_and_authorization(
    flow: Flow, browser: Browser
) -> None:
    registered = await flow.register(redirect_uris=["https:///cb"])
    client_id = await flow.client_id()  # registered with REDIRECT_URI, a loopback URI
    _, challenge = pkce()
    # The registered URI without its host (the SDK's parser reads it back as the registered one).
    hostless = REDIRECT_URI.replace("http://", "http:///", 1)
    url = flow.authorize_url(client_id, challenge, redirect_uri=hostless)
    asked = await browser.http.get(url)
    posted = await browser.http.post(f"{flow.corpus.url}/authorize", data=query_of(url))
    grant = await flow.grant()
    exchanged = await flow.token(grant, redirect_uri=hostless)
    assert (registered.status_code, registered.json()["error"]) == (400, "invalid_redirect_uri")
    # Refused, and never redirected: the URI is not one the client registered.
    for reply in (asked, posted, exchanged):
        assert (reply.status_code, reply.json()["error"]) == (400, "invalid_request")
        assert "location" not in reply.headers
    # The refused exchange did not spend the code.
    assert (await flow.token(grant)).status_code == 200


async def test_the_metadata_documents_point_at_each_other(corpus: Running) -> None:
    async with httpx.AsyncClient(base_url=corpus.url) as http:
        resource = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        server = (await http.get("/.well-known/oauth-authorization-server")).json()
    assert resource["resource"] == corpus.mcp_url
    assert [s.rstrip("/") for s in resource["authorization_servers"]] == [corpus.url]
    assert server["issuer"].rstrip("/") == corpus.url
    assert server["code_challenge_methods_supported"] == ["S256"]
    # Clients may rely on `iss` in every authorization response (RFC 9207).
    assert server["authorization_response_iss_parameter_supported"] is True
    # Public clients (PKCE, no secret) are served, and the document says so.
    assert "none" in server["token_endpoint_auth_methods_supported"]
    assert {"registration_endpoint", "revocation_endpoint", "token_endpoint"} <= set(server)


async def test_registration_can_be_closed_by_setting(settings: Settings) -> None:
    closed = create_app(
        make_settings(
            settings.data_dir, database_url=settings.database_url, oauth_registration="closed"
        )
    )
    transport = httpx.ASGITransport(app=closed)
    async with (
        lifespan(closed),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
    ):
        reply = await http.post("/register", json={"redirect_uris": [REDIRECT_URI]})
        assert (reply.status_code, reply.json()["error"]) == (403, "access_denied")
        metadata = (await http.get("/.well-known/oauth-authorization-server")).json()
        assert "registration_endpoint" not in metadata


async def _refresh(flow: Flow, client_id: str, refresh_token: str) -> httpx.Response:
    return await flow.http.post(
        f"{flow.corpus.url}/token",
        data={
            "grant_type": "refresh_token",
            "client_id": client_id,
            "refresh_token": refresh_token,
        },
    )


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def _until_waiting_on_locks(corpus: Running, count: int, what: str) -> None:
    async def waiting() -> bool:
        async with corpus.db.read() as conn:
            return await waiting_on_locks(conn) >= count

    await eventually(waiting, what)


async def test_two_refreshes_racing_with_one_token_leave_no_working_token(
    flow: Flow, corpus: Running
) -> None:
    grant = await flow.grant()
    tokens = (await flow.token(grant)).json()
    # Hold the refresh token's row, so that both refreshes pass the first check and then queue
    # on spending it: one spends it, the other finds it spent and revokes the grant.
    async with corpus.db.write() as conn:
        await conn.execute(
            text("SELECT 1 FROM oauth_tokens WHERE token_sha256 = :d FOR UPDATE"),
            {"d": _sha256(tokens["refresh_token"])},
        )
        racing = [
            asyncio.create_task(_refresh(flow, grant.client_id, tokens["refresh_token"]))
            for _ in range(2)
        ]
        await _until_waiting_on_locks(corpus, 2, "both refreshes queue on the token's row")
    replies = await asyncio.gather(*racing)

    assert sorted(reply.status_code for reply in replies) == [200, 400]
    [won] = [reply.json() for reply in replies if reply.status_code == 200]
    [lost] = [reply for reply in replies if reply.status_code == 400]
    assert _error_of(lost) == "invalid_grant"
    # The revocation the loser made was kept although its reply was an error.
    assert (await _post_mcp(flow.http, corpus, won["access_token"])).status_code == 401
    assert _error_of(await _refresh(flow, grant.client_id, won["refresh_token"])) == "invalid_grant"


async def test_a_disconnect_during_a_refresh_also_stops_the_tokens_that_refresh_made(
    flow: Flow, browser: Browser, corpus: Running
) -> None:
    grant = await flow.grant()
    tokens = (await flow.token(grant)).json()
    # A refresh in flight: its transaction has issued new tokens but not committed yet.
    async with corpus.db.write() as conn:
        issued = await oauth.rotate_refresh_token(
            conn, grant.client_id, tokens["refresh_token"], []
        )
        disconnecting = asyncio.create_task(
            browser.http.delete(f"/api/me/connections/{grant.client_id}")
        )
        # The disconnect waits for the refresh rather than revoking around it.
        await _until_waiting_on_locks(corpus, 1, "the disconnect waits for the refresh")
        assert not disconnecting.done()
    assert (await disconnecting).status_code == 204

    assert (await _post_mcp(flow.http, corpus, issued.access_token)).status_code == 401
    assert _error_of(await _refresh(flow, grant.client_id, issued.refresh_token)) == "invalid_grant"
    listed = (await browser.http.get("/api/me/connections")).json()["items"]
    assert grant.client_id not in {c["client_id"] for c in listed}


async def test_a_refresh_after_a_disconnect_is_refused(
    flow: Flow, browser: Browser, corpus: Running
) -> None:
    grant = await flow.grant()
    tokens = (await flow.token(grant)).json()
    async with corpus.db.write() as conn:
        # The disconnect as it lands first: the consent is gone, the tokens not yet revoked.
        await conn.execute(
            text("DELETE FROM oauth_consents WHERE client_id = :c"), {"c": grant.client_id}
        )
    refused = await _refresh(flow, grant.client_id, tokens["refresh_token"])
    assert _error_of(refused) == "invalid_grant"
    # Disconnecting again still revokes what is left, then has nothing more to do.
    assert (await browser.http.delete(f"/api/me/connections/{grant.client_id}")).status_code == 204
    assert (await _post_mcp(flow.http, corpus, tokens["access_token"])).status_code == 401
    assert (await browser.http.delete(f"/api/me/connections/{grant.client_id}")).status_code == 404


async def test_a_password_reset_withdraws_every_app_the_person_approved(
    corpus: Running,
) -> None:
    person = await corpus.account("editor")
    async with signed_in_browser(corpus, person) as browser, httpx.AsyncClient() as http:
        flow = Flow(corpus, browser, http)
        grant = await flow.grant()
        tokens = (await flow.token(grant)).json()
        assert (await _post_mcp(http, corpus, tokens["access_token"])).status_code == 200
        async with corpus.db.write() as conn:
            await people_service.reset_password(conn, HASHER, LOCAL_ADMIN, person.user.id)

        assert (await _post_mcp(http, corpus, tokens["access_token"])).status_code == 401
        assert _error_of(await _refresh(flow, grant.client_id, tokens["refresh_token"])) == (
            "invalid_grant"
        )
    async with corpus.db.read() as conn:
        consents = await conn.execute(
            text("SELECT count(*) FROM oauth_consents WHERE user_id = :u"), {"u": person.user.id}
        )
        assert consents.scalar_one() == 0


async def test_an_oversized_token_request_is_refused_before_it_is_read(corpus: Running) -> None:
    form = {"grant_type": "authorization_code", "code": "x" * (100 * 1024)}

    async def streamed() -> AsyncIterator[bytes]:
        # No Content-Length: chunked, so only counting what arrives can stop it.
        yield b"grant_type=authorization_code&code="
        for _ in range(100):
            yield b"x" * 1024

    async with httpx.AsyncClient(base_url=corpus.url) as http:
        declared = await http.post("/token", data=form)
        chunked = await http.post(
            "/token",
            content=streamed(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        small = await http.post("/token", data={"grant_type": "authorization_code"})
    for reply in (declared, chunked):
        assert (reply.status_code, reply.json()["error"]) == (413, "invalid_request")
    # An ordinary (if wrong) request still reaches the SDK's handler.
    assert (small.status_code, small.json()["error"]) == (401, "invalid_client")


# --- issue 10: registration bounded, NUL refused, loopback ports, reused codes ----------------


async def test_reusing_a_code_revokes_the_tokens_it_issued(flow: Flow, corpus: Running) -> None:
    grant = await flow.grant()
    first = (await flow.token(grant)).json()
    rotated = (await _refresh(flow, grant.client_id, first["refresh_token"])).json()
    assert (await _post_mcp(flow.http, corpus, rotated["access_token"])).status_code == 200

    reused = await flow.token(grant)
    assert (reused.status_code, _error_of(reused)) == (400, "invalid_grant")
    # RFC 6749 §4.1.2: a code presented twice was stolen; what it issued stops at once,
    # including what refreshing those tokens issued.
    for access in (first["access_token"], rotated["access_token"]):
        assert (await _post_mcp(flow.http, corpus, access)).status_code == 401
    refused = await _refresh(flow, grant.client_id, rotated["refresh_token"])
    assert _error_of(refused) == "invalid_grant"


@pytest.mark.parametrize(
    ("registered", "used"),
    [
        ("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback"),
        ("http://127.0.0.1:8765/callback", "http://127.0.0.1:40001/callback"),
        ("http://[::1]/cb", "http://[::1]:6000/cb"),
    ],
)
async def test_a_loopback_redirect_uri_may_use_any_port(
    flow: Flow, browser: Browser, registered: str, used: str
) -> None:
    registration = await flow.register(redirect_uris=[registered])
    assert registration.status_code == 201, registration.text
    client_id = registration.json()["client_id"]
    verifier, challenge = pkce()
    redirect_to = await browser.consent(flow.authorize_url(client_id, challenge, redirect_uri=used))
    assert redirect_to.startswith(f"{used}?")
    grant = Grant(client_id, verifier, query_of(redirect_to)["code"], "")
    tokens = await flow.token(grant, redirect_uri=used)
    assert tokens.status_code == 200, tokens.text


@pytest.mark.parametrize(
    ("registered", "used"),
    [
        ("http://127.0.0.1/callback", "http://127.0.0.1:5000/other"),
        ("http://127.0.0.1/callback", "http://[::1]:5000/callback"),
        ("http://localhost/callback", "http://localhost:5000/callback"),
        ("https://agent.example/cb", "https://agent.example:8443/cb"),
    ],
)
async def test_only_the_port_of_a_loopback_ip_redirect_uri_may_vary(
    flow: Flow, browser: Browser, registered: str, used: str
) -> None:
    registration = await flow.register(redirect_uris=[registered])
    client_id = registration.json()["client_id"]
    _, challenge = pkce()
    reply = await browser.http.get(flow.authorize_url(client_id, challenge, redirect_uri=used))
    assert (reply.status_code, reply.json()["error"]) == (400, "invalid_request")


NUL = "a\x00b"


async def test_a_nul_in_registration_metadata_is_invalid_client_metadata(flow: Flow) -> None:
    # (URIs are not listed: the SDK's URL parser drops a NUL, as browsers do.)
    values: dict[str, Any] = {
        "client_name": NUL,
        "scope": NUL,
        "software_id": NUL,
        "software_version": NUL,
        "contacts": [NUL],
        "jwks": {"keys": [{"kid": NUL}]},
    }
    got = {}
    for name, value in values.items():
        reply = await flow.register(**{name: value})
        got[name] = (reply.status_code, reply.json()["error"])
    assert set(got.values()) == {(400, "invalid_client_metadata")}, got


AUTHORIZE_FIELDS = (
    "client_id",
    "redirect_uri",
    "state",
    "code_challenge",
    "scope",
    "resource",
    "response_type",
)


async def test_a_nul_in_an_authorization_request_is_invalid_request_without_a_redirect(
    flow: Flow, browser: Browser
) -> None:
    client_id = await flow.client_id()
    _, challenge = pkce()
    url = httpx.URL(flow.authorize_url(client_id, challenge))
    got = {}
    for name in AUTHORIZE_FIELDS:
        with_nul = url.copy_set_param(name, NUL)
        reply = await browser.http.get(str(with_nul))
        posted = await browser.http.post(
            f"{flow.corpus.url}/authorize", data={**query_of(str(with_nul))}
        )
        got[name] = {(r.status_code, r.json()["error"]) for r in (reply, posted)}
    assert got == {name: {(400, "invalid_request")} for name in AUTHORIZE_FIELDS}


TOKEN_FIELDS = ("grant_type", "code", "client_id", "code_verifier", "redirect_uri")


async def test_a_nul_in_a_token_or_revocation_request_is_invalid_request(flow: Flow) -> None:
    grant = await flow.grant()
    got = {}
    for name in TOKEN_FIELDS:
        reply = await flow.token(grant, **{name: NUL})
        got[f"token {name}"] = (reply.status_code, reply.json()["error"])
    # The refused requests did not spend the code.
    tokens = await flow.token(grant)
    assert tokens.status_code == 200
    refresh = await _refresh(flow, grant.client_id, NUL)
    got["token refresh_token"] = (refresh.status_code, refresh.json()["error"])
    for name in ("token", "client_id", "token_type_hint"):
        data = {"token": tokens.json()["access_token"], "client_id": grant.client_id, name: NUL}
        reply = await flow.http.post(f"{flow.corpus.url}/revoke", data=data)
        got[f"revoke {name}"] = (reply.status_code, reply.json()["error"])
    assert set(got.values()) == {(400, "invalid_request")}, got
    # Nor did they revoke anything.
    assert (
        await _post_mcp(flow.http, flow.corpus, tokens.json()["access_token"])
    ).status_code == 200


OVERSIZED: list[tuple[str, Any]] = [
    ("client_name", "x" * 201),
    ("client_uri", "https://agent.example/" + "x" * 2100),
    ("logo_uri", "https://agent.example/" + "x" * 2100),
    ("tos_uri", "https://agent.example/" + "x" * 2100),
    ("policy_uri", "https://agent.example/" + "x" * 2100),
    ("jwks_uri", "https://agent.example/" + "x" * 2100),
    ("scope", "corpus " * 200),
    ("software_id", "x" * 201),
    ("software_version", "x" * 201),
    ("contacts", [f"c{i}@agent.example" for i in range(11)]),
    ("contacts", ["x" * 321]),
    ("jwks", {"keys": [{"k": "x" * 9000}]}),
    ("redirect_uris", [f"http://127.0.0.1/cb{i}" for i in range(11)]),
    ("redirect_uris", ["https://agent.example/" + "x" * 2100]),
    ("grant_types", ["authorization_code", *(f"g{i}" for i in range(10))]),
    ("response_types", ["code", *(f"r{i}" for i in range(10))]),
]


async def test_oversized_registration_metadata_is_refused_naming_the_field(
    flow: Flow, corpus: Running
) -> None:
    async with corpus.db.read() as conn:
        before = (await conn.execute(text("SELECT count(*) FROM oauth_clients"))).scalar_one()
    refused = []
    for name, value in OVERSIZED:
        reply = await flow.register(**{name: value})
        body = reply.json()
        if (
            reply.status_code == 400
            and body["error"] in ("invalid_client_metadata", "invalid_redirect_uri")
            and name in body["error_description"]
        ):
            refused.append(name)
    assert refused == [name for name, _ in OVERSIZED]
    async with corpus.db.read() as conn:
        after = (await conn.execute(text("SELECT count(*) FROM oauth_clients"))).scalar_one()
    assert after == before
    # At the limits, a registration is taken.
    fits = await flow.register(client_name="x" * 200, contacts=["x" * 320] * 10)
    assert fits.status_code == 201, fits.text


async def test_registration_is_rate_limited_per_client_address(
    server_url: str, data_dir: Path
) -> None:
    async with (
        run_fresh_corpus(
            server_url, data_dir, "corpus_register_rate", register_rate_per_address="3/hour"
        ) as corpus,
        httpx.AsyncClient(base_url=corpus.url) as http,
    ):
        body = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
        first = [(await http.post("/register", json=body)).status_code for _ in range(3)]
        # Counted before the body is read: a malformed one is refused alike.
        refused = await http.post("/register", json=body)
        junk = await http.post("/register", content=b"{")
        # Another address (through the proxy uvicorn trusts on loopback) has its own budget.
        elsewhere = await http.post(
            "/register", json=body, headers={"X-Forwarded-For": "192.0.2.7"}
        )
        async with corpus.db.read() as conn:
            clients = (await conn.execute(text("SELECT count(*) FROM oauth_clients"))).scalar_one()
    assert first == [201, 201, 201]
    for reply in (refused, junk):
        assert reply.status_code == 429
        assert int(reply.headers["retry-after"]) >= 1
        assert reply.json()["error"] == "rate_limited"
        assert reply.json()["error_description"]
    assert elsewhere.status_code == 201
    assert clients == 4


async def test_clients_never_authorised_are_deleted_by_housekeeping_after_a_day(
    flow: Flow, browser: Browser, corpus: Running
) -> None:
    unused_old = await flow.client_id()
    unused_new = await flow.client_id()
    authorised = (await flow.grant()).client_id
    disconnected = (await flow.grant()).client_id
    assert (await browser.http.delete(f"/api/me/connections/{disconnected}")).status_code == 204
    mine = [unused_old, unused_new, authorised, disconnected]
    async with corpus.db.write() as conn:
        await conn.execute(
            text(
                "UPDATE oauth_clients SET created_at = now() - interval '25 hours'"
                " WHERE client_id = ANY(:ids)"
            ),
            {"ids": [unused_old, authorised, disconnected]},
        )
    counts = await housekeeping.prune_expired(corpus.db)
    assert counts["oauth_clients"] >= 1
    async with corpus.db.read() as conn:
        rows = await conn.execute(
            text("SELECT client_id FROM oauth_clients WHERE client_id = ANY(:ids)"), {"ids": mine}
        )
        left = {row.client_id for row in rows}
    assert left == {unused_new, authorised, disconnected}


async def test_the_consent_screen_shows_the_redirect_host_and_a_self_declared_name(
    flow: Flow, browser: Browser
) -> None:
    registration = await flow.register(
        client_name="Corpus Official", redirect_uris=["https://evil.example/cb"]
    )
    client_id = registration.json()["client_id"]
    _, challenge = pkce()
    reply = await browser.http.get(
        flow.authorize_url(client_id, challenge, redirect_uri="https://evil.example/cb")
    )
    tx = query_of(reply.headers["location"])["tx"]
    screen = (await browser.http.get(f"/api/oauth/consent/{tx}")).json()
    assert screen["redirect_host"] == "evil.example"
    assert screen["redirect_uri"] == "https://evil.example/cb"
    assert screen["client_name"] == "Corpus Official"
    assert screen["client_name_self_declared"] is True
    # The web app's consent screen leads with the host and marks the name as the client's own
    # claim (frontend/src/features/auth/components/consent-screen.test.tsx); here, that the
    # screen is served at the address /authorize sends the browser to, unframeable.
    page = await browser.http.get(f"/oauth/consent?tx={tx}")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
