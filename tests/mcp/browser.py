"""A person's browser signed in to a running Corpus, answering OAuth consent screens, and what
an OAuth client keeps: shared by the tests of the OAuth door."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import httpx
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from tests.accounts import PASSWORD, Account
from tests.running import Running


@dataclass
class MemoryStorage:
    """The OAuth client's token storage (the SDK's TokenStorage protocol)."""

    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class Browser:
    """A person's browser, signed in to Corpus."""

    corpus: Running
    http: httpx.AsyncClient
    seen: list[str] = field(default_factory=list)

    async def consent(self, authorize_url: str, *, approve: bool = True) -> str:
        """Follow an /authorize URL to the consent screen and answer it; returns where the
        browser is sent next (the client's redirect URI with a code or an error)."""
        reply = await self.http.get(authorize_url)
        assert reply.status_code == 302, reply.text
        consent = urlsplit(reply.headers["location"])
        assert consent.path == "/oauth/consent", reply.headers["location"]
        tx = parse_qs(consent.query)["tx"][0]
        screen = await self.http.get(f"/api/oauth/consent/{tx}")
        assert screen.status_code == 200, screen.text
        self.seen.append(screen.text)
        answer = await self.http.post(f"/api/oauth/consent/{tx}", json={"approve": approve})
        assert answer.status_code == 200, answer.text
        redirect_to: str = answer.json()["redirect_to"]
        return redirect_to


@asynccontextmanager
async def signed_in_browser(corpus: Running, person: Account) -> AsyncIterator[Browser]:
    async with httpx.AsyncClient(base_url=corpus.url, headers={"Origin": corpus.url}) as http:
        reply = await http.post(
            "/api/auth/login", json={"email": person.user.email, "password": PASSWORD}
        )
        assert reply.status_code == 200
        yield Browser(corpus, http)


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def oauth_client(
    corpus: Running,
    browser: Browser,
    storage: MemoryStorage,
    *,
    name: str,
    redirect_uri: str,
    client_metadata_url: str | None = None,
) -> OAuthClientProvider:
    """The SDK's OAuth client for `corpus`, its browser step `browser` approving the consent
    screen; it registers, or with `client_metadata_url` uses that document's URL (CIMD)."""
    answered: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()

    async def redirect_handler(authorization_url: str) -> None:
        answer = query(await browser.consent(authorization_url))
        answered.set_result(
            AuthorizationCodeResult(code=answer["code"], state=answer["state"], iss=answer["iss"])
        )

    async def callback_handler() -> AuthorizationCodeResult:
        return await asyncio.wait_for(answered, timeout=30)

    return OAuthClientProvider(
        corpus.mcp_url,
        OAuthClientMetadata(
            client_name=name,
            redirect_uris=[AnyUrl(redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none" if client_metadata_url else None,
        ),
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )
