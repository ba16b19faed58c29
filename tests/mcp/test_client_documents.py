"""OAuth clients known by their Client ID Metadata Document (CIMD): the client's website is an
HTTPS server in the test with a certificate authority of its own, named `agent.test` (resolved
to 127.0.0.1); the SDK's own OAuth client uses its document's URL as its client_id, completes
authorization with PKCE and calls /mcp; every document the rules refuse is refused with its
RFC error, and the fetch itself is bounded (size, time, address, no redirect) and cached."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import text
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.kit.addresses import AddressRules, system_resolve
from app.mcp.edges import OAuthEdges
from app.oauth.documents import MAX_DOCUMENT_BYTES, ClientDocuments, DocumentRefused
from tests.accounts import Account
from tests.mcp.browser import Browser, MemoryStorage, oauth_client, pkce
from tests.running import Running, run_fresh_corpus
from tests.tls import certificates, serving_tls

HOST = "agent.test"
REDIRECT_URI = "http://127.0.0.1:8766/callback"


async def resolve(host: str, port: int) -> Sequence[str]:
    return ["127.0.0.1"] if host == HOST else await system_resolve(host, port)


@dataclass
class Website:
    """The clients' website: a document (or a way to misbehave) per path, and the requests
    each path received."""

    base: str
    tls: ssl.SSLContext
    documents: dict[str, bytes] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    # Held until the test ends: what the slow path waits on.
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def serve(self, path: str, **changes: Any) -> str:
        """Serve a valid public client's document at `path`, with `changes`; its URL."""
        url = self.url(path)
        document = {
            "client_id": url,
            "client_name": "Doc Agent",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **changes,
        }
        self.documents[path] = json.dumps(document).encode()
        return url


@pytest.fixture(scope="module")
async def website(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Website]:
    ca, cert, key = certificates(tmp_path_factory.mktemp("tls"), HOST)
    site: Website | None = None

    async def document(request: Request) -> Response:
        assert site is not None
        path = request.url.path
        site.hits[path] += 1
        if path == "/slow":
            await site.release.wait()
        if path == "/moved":
            return RedirectResponse(site.url("/elsewhere"))
        body = site.documents.get(path)
        if body is None:
            return Response(status_code=404)
        return Response(body, media_type="application/json")

    app = Starlette(routes=[Route("/{path:path}", document)])
    async with serving_tls(app, cert, key) as port:
        site = Website(f"https://{HOST}:{port}", ssl.create_default_context(cafile=str(ca)))
        try:
            yield site
        finally:
            site.release.set()


@pytest.fixture(scope="module")
async def corpus(server_url: str, data_dir: Path, website: Website) -> AsyncIterator[Running]:
    # The website is on 127.0.0.1: a private address, admitted here as an on-premises
    # deployment would; the refusal of private addresses is tested on the fetcher below.
    async with run_fresh_corpus(
        server_url,
        data_dir,
        "corpus_cimd",
        resolve=resolve,
        client_tls=website.tls,
        remote_allow_private=True,
        # Every test here fetches documents from 127.0.0.1: more than the default allows.
        register_rate_per_address="10000/hour",
    ) as running:
        yield running


def authorize_url(corpus: Running, client_id: str, redirect_uri: str = REDIRECT_URI) -> str:
    _, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    return str(httpx.URL(f"{corpus.url}/authorize", params=params))


# --- end to end -----------------------------------------------------------------------------


async def test_the_metadata_advertises_documents_and_public_clients(corpus: Running) -> None:
    async with httpx.AsyncClient() as http:
        reply = await http.get(f"{corpus.url}/.well-known/oauth-authorization-server")
    metadata = reply.json()
    assert metadata["client_id_metadata_document_supported"] is True
    assert "none" in metadata["token_endpoint_auth_methods_supported"]


async def test_a_document_client_authorizes_with_pkce_calls_mcp_and_is_disconnected(
    corpus: Running, website: Website, browser: Browser, person: Account
) -> None:
    url = website.serve("/agent/client.json")
    storage = MemoryStorage()
    auth = oauth_client(
        corpus,
        browser,
        storage,
        name="Doc Agent",
        redirect_uri=REDIRECT_URI,
        client_metadata_url=url,
    )
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        Client(streamable_http_client(corpus.mcp_url, http_client=http)) as client,
    ):
        me = await client.call_tool("whoami", {})
        found = await client.call_tool("search_docs", {"query": "what the doc agent asked"})
    assert me.is_error is False
    assert found.is_error is False
    assert (me.structured_content or {})["email"] == person.user.email
    # No registration: the client_id is the document's URL, and the screen names its domain.
    assert storage.client is not None
    assert storage.client.client_id == url
    screen = json.loads(browser.seen[0])
    assert screen["client_id"] == url
    assert screen["verified_domain"] == website.base.removeprefix("https://")
    assert storage.tokens is not None

    # The question names the person and the client it came through.
    async with corpus.db.read() as conn:
        asked = (
            await conn.execute(
                text("SELECT user_id, agent_client_id FROM questions WHERE query = :q"),
                {"q": "what the doc agent asked"},
            )
        ).one()
    assert tuple(asked) == (person.user.id, url)

    connections = (await browser.http.get("/api/me/connections")).json()["items"]
    assert [(c["client_id"], c["verified_domain"]) for c in connections] == [
        (url, website.base.removeprefix("https://"))
    ]
    gone = await browser.http.delete(f"/api/me/connections/{quote(url, safe='')}")
    assert gone.status_code == 204
    async with httpx.AsyncClient() as plain:
        refused = await plain.post(
            corpus.mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={
                "Authorization": f"Bearer {storage.tokens.access_token}",
                "Accept": "application/json, text/event-stream",
            },
        )
    assert refused.status_code == 401
    assert (await browser.http.get("/api/me/connections")).json()["items"] == []


@pytest.mark.parametrize(
    ("path", "changes"),
    [
        ("/mismatch.json", {"client_id": "https://other.test/client.json"}),
        ("/secret.json", {"client_secret": "s3cret"}),
        ("/secret-method.json", {"token_endpoint_auth_method": "client_secret_post"}),
        ("/no-redirects.json", {"redirect_uris": []}),
        ("/oversized.json", {"client_name": "x" * MAX_DOCUMENT_BYTES}),
        ("/plain-http-redirect.json", {"redirect_uris": ["http://agent.test/cb"]}),
    ],
)
async def test_a_refused_document_is_an_invalid_client_without_a_redirect(
    corpus: Running, website: Website, browser: Browser, path: str, changes: dict[str, Any]
) -> None:
    url = website.serve(path, **changes)
    reply = await browser.http.get(authorize_url(corpus, url))
    assert reply.status_code == 400
    assert "location" not in reply.headers
    assert reply.json()["error"] == "invalid_client"


async def test_a_missing_or_moved_document_is_an_invalid_client(
    corpus: Running, website: Website, browser: Browser
) -> None:
    for path in ("/absent.json", "/moved"):
        reply = await browser.http.get(authorize_url(corpus, website.url(path)))
        assert (reply.status_code, reply.json()["error"]) == (400, "invalid_client")
    # The redirect was not followed.
    assert website.hits["/elsewhere"] == 0


async def test_a_redirect_uri_the_document_does_not_list_is_refused_without_a_redirect(
    corpus: Running, website: Website, browser: Browser
) -> None:
    url = website.serve("/listed.json")
    reply = await browser.http.get(
        authorize_url(corpus, url, redirect_uri="https://attacker.test/cb")
    )
    assert reply.status_code == 400
    assert "location" not in reply.headers
    assert reply.json()["error"] == "invalid_request"
    # The listed one is accepted: on to the consent screen.
    listed = await browser.http.get(authorize_url(corpus, url))
    assert listed.status_code == 302
    assert "/oauth/consent?tx=" in listed.headers["location"]


async def test_a_token_request_from_a_refused_document_client_is_an_invalid_client(
    corpus: Running, website: Website
) -> None:
    url = website.serve("/token-mismatch.json", client_id="https://other.test/x.json")
    async with httpx.AsyncClient() as http:
        reply = await http.post(
            f"{corpus.url}/token",
            data={
                "grant_type": "authorization_code",
                "code": "cac_unknown",
                "redirect_uri": REDIRECT_URI,
                "client_id": url,
                "code_verifier": "v" * 43,
            },
        )
    assert reply.status_code == 401
    assert reply.json()["error"] == "invalid_client"


# --- the fetch ------------------------------------------------------------------------------


async def test_a_slow_document_is_refused_when_its_time_is_up(website: Website) -> None:
    documents = ClientDocuments(
        AddressRules(allow_private=True, resolve=resolve), verify=website.tls, timeout_s=0.5
    )
    with pytest.raises(DocumentRefused, match="within"):
        await documents.resolve(website.url("/slow"))


async def test_a_document_on_a_private_address_is_refused_without_a_connection(
    website: Website,
) -> None:
    url = website.serve("/private.json")
    documents = ClientDocuments(AddressRules(resolve=resolve), verify=website.tls)
    with pytest.raises(DocumentRefused, match="loopback"):
        await documents.resolve(url)
    assert website.hits["/private.json"] == 0


async def test_a_document_and_a_refusal_are_each_fetched_once_while_cached(
    website: Website,
) -> None:
    documents = ClientDocuments(
        AddressRules(allow_private=True, resolve=resolve), verify=website.tls
    )
    url = website.serve("/cached.json")
    assert (await documents.resolve(url))["client_id"] == url
    assert (await documents.resolve(url))["client_id"] == url
    assert website.hits["/cached.json"] == 1

    wrong = website.serve("/cached-refusal.json", client_secret="s")
    for _ in range(2):
        with pytest.raises(DocumentRefused):
            await documents.resolve(wrong)
    website.serve("/cached-refusal.json")  # mended, but the refusal is kept for a while
    with pytest.raises(DocumentRefused):
        await documents.resolve(wrong)
    assert website.hits["/cached-refusal.json"] == 1


@pytest.mark.parametrize(
    "client_id",
    [
        "https://agent.test",
        "https://agent.test/",
        "https://agent.test/a/../b.json",
        "https://agent.test/c.json#frag",
        "https://user:pw@agent.test/c.json",
    ],
)
async def test_a_client_id_url_against_the_rules_is_refused_unfetched(
    website: Website, client_id: str
) -> None:
    documents = ClientDocuments(
        AddressRules(allow_private=True, resolve=resolve), verify=website.tls
    )
    with pytest.raises(DocumentRefused, match="client_id"):
        await documents.resolve(client_id)


async def test_fetching_new_documents_is_throttled_per_address_but_a_kept_answer_is_not() -> None:
    async def unresolvable(host: str, port: int) -> Sequence[str]:
        raise OSError("no such host")

    async def behind(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("a refused request reached the SDK's handler")

    edges = OAuthEdges(
        behind,
        resource="http://corpus.test/mcp",
        issuer="http://corpus.test/",
        public_url="http://corpus.test",
        register_rate="1/hour",
        documents=ClientDocuments(AddressRules(resolve=unresolvable)),
    )
    transport = httpx.ASGITransport(app=edges)
    async with httpx.AsyncClient(transport=transport, base_url="http://corpus.test") as http:

        async def authorize(client_id: str) -> httpx.Response:
            return await http.get("/authorize", params={"client_id": client_id})

        first = await authorize("https://one.test/client.json")
        assert (first.status_code, first.json()["error"]) == (400, "invalid_client")
        # The refusal is kept: asking again fetches nothing and counts nothing.
        again = await authorize("https://one.test/client.json")
        assert (again.status_code, again.json()["error"]) == (400, "invalid_client")
        other = await authorize("https://two.test/client.json")
    assert (other.status_code, other.json()["error"]) == (429, "rate_limited")
    assert int(other.headers["retry-after"]) >= 1


async def test_a_slow_document_and_one_on_a_private_address_are_invalid_clients_at_authorize(
    website: Website,
) -> None:
    # What a client meets at /authorize (not only the fetch's own refusal): the RFC's error,
    # answered without a redirect, and nothing asked of a private address.
    async def behind(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("a refused request reached the SDK's handler")

    private = website.serve("/private-at-authorize.json")
    public_only = ClientDocuments(AddressRules(resolve=resolve), verify=website.tls)
    impatient = ClientDocuments(
        AddressRules(allow_private=True, resolve=resolve), verify=website.tls, timeout_s=0.5
    )
    for documents, client_id in ((public_only, private), (impatient, website.url("/slow"))):
        edges = OAuthEdges(
            behind,
            resource="http://corpus.test/mcp",
            issuer="http://corpus.test/",
            public_url="http://corpus.test",
            register_rate="100/hour",
            documents=documents,
        )
        transport = httpx.ASGITransport(app=edges)
        async with httpx.AsyncClient(transport=transport, base_url="http://corpus.test") as http:
            reply = await http.get("/authorize", params={"client_id": client_id})
        assert (reply.status_code, reply.json()["error"]) == (400, "invalid_client"), client_id
        assert "location" not in reply.headers
    assert website.hits["/private-at-authorize.json"] == 0
