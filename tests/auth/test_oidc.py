"""Signing in with OpenID Connect, end to end against a small OpenID provider that the test serves
on 127.0.0.1: discovery, keys, an authorization endpoint that approves a set identity at once, and
a token endpoint that checks the client, the code, the redirect URI and the PKCE verifier before
it signs an ID token."""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from fastapi import FastAPI
from joserfc import jwt
from joserfc.jwk import RSAKey
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from app.config import SECRET_KEY_FILE, Settings
from app.db.engine import ReadConnection
from app.main import create_app
from app.people import service as people_service
from app.routers.oidc import STATE_COOKIE
from app.sessions.cookies import SESSION_COOKIE
from tests.accounts import make_account
from tests.support import (
    app_client,
    in_test_transaction,
    lifespan,
    listening_socket,
    make_settings,
    serving,
)

CLIENT_ID = "corpus-test"
CLIENT_SECRET = "a-client-secret-for-the-test-provider"
ALLOWED_DOMAIN = "example.com"
# Not the settings' default, so that a person made with it shows the setting was used.
DEFAULT_ROLE = "editor"
SCOPE = "openid email profile"


@dataclass
class Identity:
    """The person the provider vouches for at its next authorization."""

    email: str
    sub: str = field(default_factory=lambda: f"sub-{uuid.uuid4().hex}")
    email_verified: bool = True
    name: str = "Ada Lovelace"
    # Claims of the ID token to set otherwise than a well-behaved provider would.
    odd_claims: dict[str, object] = field(default_factory=dict)


def new_identity(**overrides: object) -> Identity:
    email = f"ada-{uuid.uuid4().hex[:8]}@{ALLOWED_DOMAIN}"
    identity = Identity(email=email)
    for name, value in overrides.items():
        setattr(identity, name, value)
    return identity


@dataclass
class Grant:
    identity: Identity
    redirect_uri: str
    nonce: str
    code_challenge: str


def _error(error: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error}, status_code=status)


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class Provider:
    """An OpenID provider with one client, one signing key and no consent screen."""

    def __init__(self, issuer: str, redirect_uri: str) -> None:
        self.issuer = issuer
        self.redirect_uri = redirect_uri
        self.key = RSAKey.generate_key(2048, parameters={"kid": "test-key", "use": "sig"})
        self.identity = new_identity()
        # Codes handed out and not yet redeemed.
        self.grants: dict[str, Grant] = {}
        # Every nonce, PKCE verifier and token the provider saw or issued.
        self.secrets: list[str] = []
        self.app = Starlette(
            routes=[
                Route("/.well-known/openid-configuration", self.metadata),
                Route("/jwks", self.jwks),
                Route("/authorize", self.authorize),
                Route("/token", self.token, methods=["POST"]),
            ]
        )

    async def metadata(self, _request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            }
        )

    async def jwks(self, _request: Request) -> Response:
        return JSONResponse({"keys": [self.key.as_dict(private=False)]})

    async def authorize(self, request: Request) -> Response:
        query = request.query_params
        if query.get("client_id") != CLIENT_ID or query.get("redirect_uri") != self.redirect_uri:
            return _error("invalid_client")
        if query.get("response_type") != "code" or set(SCOPE.split()) - set(
            query.get("scope", "").split()
        ):
            return _error("invalid_request")
        # The client must send a state, a nonce and an S256 challenge: this provider insists.
        state, nonce = query.get("state"), query.get("nonce")
        challenge = query.get("code_challenge")
        if not state or not nonce or not challenge or query.get("code_challenge_method") != "S256":
            return _error("invalid_request")
        code = secrets.token_urlsafe(24)
        self.grants[code] = Grant(self.identity, self.redirect_uri, nonce, challenge)
        return RedirectResponse(
            f"{self.redirect_uri}?{urlencode({'code': code, 'state': state})}", status_code=302
        )

    async def token(self, request: Request) -> Response:
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if scheme.lower() != "basic" or credentials != expected:
            return _error("invalid_client", 401)
        form = await request.form()
        if form.get("grant_type") != "authorization_code":
            return _error("unsupported_grant_type")
        grant = self.grants.pop(str(form.get("code")), None)
        if grant is None or form.get("redirect_uri") != grant.redirect_uri:
            return _error("invalid_grant")
        if _s256(str(form.get("code_verifier", ""))) != grant.code_challenge:
            return _error("invalid_grant")
        now = int(time.time())
        identity = grant.identity
        claims = {
            "iss": self.issuer,
            "aud": CLIENT_ID,
            "sub": identity.sub,
            "email": identity.email,
            "email_verified": identity.email_verified,
            "name": identity.name,
            "nonce": grant.nonce,
            "iat": now,
            "exp": now + 300,
            **identity.odd_claims,
        }
        id_token = jwt.encode({"alg": "RS256", "kid": "test-key"}, claims, self.key)
        access_token = secrets.token_urlsafe(24)
        self.secrets += [grant.nonce, str(form["code_verifier"]), id_token, access_token]
        return JSONResponse(
            {
                "access_token": access_token,
                "token_type": "Bearer",
                "expires_in": 300,
                "scope": SCOPE,
                "id_token": id_token,
            }
        )


def _oidc_settings(settings: Settings, issuer: str) -> Settings:
    return make_settings(
        settings.data_dir,
        database_url=settings.database_url,
        oidc_issuer=issuer,
        oidc_client_id=CLIENT_ID,
        oidc_client_secret=CLIENT_SECRET,
        oidc_allowed_domains=[ALLOWED_DOMAIN],
        oidc_default_role=DEFAULT_ROLE,
    )


@pytest.fixture(scope="module")
async def provider(settings: Settings) -> AsyncIterator[Provider]:
    """The provider, served by uvicorn in this event loop.

    The socket listens before the server starts, so a connection made at any time queues until
    the server takes it: nothing has to wait for the server to be up.
    """
    sock, issuer = listening_socket()
    redirect_uri = f"{_oidc_settings(settings, issuer).public_url}/api/auth/oidc/callback"
    provider = Provider(issuer, redirect_uri)
    async with serving(provider.app, sock, lifespan="off"):
        yield provider


@pytest.fixture(scope="module")
async def oidc_app(settings: Settings, provider: Provider) -> AsyncIterator[FastAPI]:
    """An app with OpenID Connect on, pointed at the provider."""
    app = create_app(_oidc_settings(settings, provider.issuer))
    async with lifespan(app):
        yield app


@pytest.fixture
async def browser(oidc_app: FastAPI, conn: AsyncConnection) -> AsyncIterator[httpx.AsyncClient]:
    """A browser of the OIDC app, whose requests run in the test's rolled-back transaction (as
    the `client` fixture's do)."""
    async with _browser_of(oidc_app, conn) as client:
        yield client


@asynccontextmanager
async def _browser_of(app: FastAPI, conn: AsyncConnection) -> AsyncIterator[httpx.AsyncClient]:
    """Another browser of the app, in the test's transaction (the `client` fixture's setup)."""
    with in_test_transaction(app, conn):
        async with app_client(app) as client:
            yield client


async def start(browser: httpx.AsyncClient) -> str:
    """Click "sign in with OpenID Connect"; returns where the browser is sent."""
    reply = await browser.get("/api/auth/oidc/login")
    assert reply.status_code == 302, reply.text
    assert STATE_COOKIE in browser.cookies
    return reply.headers["location"]


async def approve(provider: Provider, authorize_url: str) -> str:
    """The provider approves; returns the path and query of our callback it sends the browser to."""
    assert authorize_url.startswith(f"{provider.issuer}/authorize?")
    async with httpx.AsyncClient() as http:
        reply = await http.get(authorize_url)
    assert reply.status_code == 302, reply.text
    back = urlsplit(reply.headers["location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == provider.redirect_uri
    return f"{back.path}?{back.query}"


async def sign_in(
    browser: httpx.AsyncClient, provider: Provider, identity: Identity
) -> httpx.Response:
    """The whole flow for `identity`; returns the callback's reply."""
    provider.identity = identity
    return await browser.get(await approve(provider, await start(browser)))


def assert_sent_back(reply: httpx.Response, error: str) -> None:
    assert reply.status_code == 303
    assert reply.headers["location"] == f"/login?error={error}"
    assert reply.json()["error"]["code"] == error
    assert SESSION_COOKIE not in reply.cookies


async def no_account(conn: AsyncConnection, email: str) -> bool:
    return await people_service.find_by_email(ReadConnection(conn), email) is None


async def test_first_sign_in_creates_the_person_with_the_default_role(
    browser: httpx.AsyncClient, provider: Provider
) -> None:
    identity = new_identity(name="Ada Lovelace")

    reply = await sign_in(browser, provider, identity)

    assert reply.status_code == 303, reply.text
    assert reply.headers["location"] == "/"
    assert SESSION_COOKIE in reply.cookies
    me = await browser.get("/api/me")
    assert me.status_code == 200
    body = me.json()
    assert (body["email"], body["role"], body["kind"]) == (identity.email, DEFAULT_ROLE, "human")
    assert body["display_name"] == "Ada Lovelace"


async def test_a_second_sign_in_maps_to_the_same_account(
    oidc_app: FastAPI, conn: AsyncConnection, provider: Provider
) -> None:
    identity = new_identity()
    ids = []
    for _ in range(2):
        async with _browser_of(oidc_app, conn) as browser:
            assert (await sign_in(browser, provider, identity)).status_code == 303
            ids.append((await browser.get("/api/me")).json()["id"])

    assert ids[0] == ids[1]


async def test_an_existing_account_with_the_verified_email_is_linked_and_keeps_its_role(
    browser: httpx.AsyncClient, conn: AsyncConnection, provider: Provider
) -> None:
    identity = new_identity()
    account = await make_account(conn, "viewer", email=identity.email)

    reply = await sign_in(browser, provider, identity)

    assert reply.status_code == 303, reply.text
    me = (await browser.get("/api/me")).json()
    assert (me["id"], me["role"]) == (str(account.user.id), "viewer")


async def test_an_email_outside_the_allowed_domains_is_refused_and_creates_no_account(
    browser: httpx.AsyncClient, conn: AsyncConnection, provider: Provider
) -> None:
    identity = new_identity(email=f"mallory-{uuid.uuid4().hex[:8]}@elsewhere.test")

    reply = await sign_in(browser, provider, identity)

    assert_sent_back(reply, "oidc_forbidden")
    assert await no_account(conn, identity.email)


async def test_an_unverified_email_is_refused(
    browser: httpx.AsyncClient, conn: AsyncConnection, provider: Provider
) -> None:
    identity = new_identity(email_verified=False)

    reply = await sign_in(browser, provider, identity)

    assert_sent_back(reply, "oidc_forbidden")
    assert await no_account(conn, identity.email)


async def test_an_id_token_issued_to_another_client_is_refused(
    browser: httpx.AsyncClient, conn: AsyncConnection, provider: Provider
) -> None:
    # authlib alone would take it: it checks `aud` only through `azp`.
    identity = new_identity(odd_claims={"aud": "another-client", "azp": CLIENT_ID})

    reply = await sign_in(browser, provider, identity)

    assert_sent_back(reply, "oidc")
    assert await no_account(conn, identity.email)


async def test_a_callback_with_a_forged_state_is_refused_and_creates_nothing(
    browser: httpx.AsyncClient, conn: AsyncConnection, provider: Provider
) -> None:
    identity = new_identity()
    provider.identity = identity
    callback = urlsplit(await approve(provider, await start(browser)))
    code = parse_qs(callback.query)["code"][0]

    forged = {"code": code, "state": secrets.token_urlsafe(16)}
    reply = await browser.get(f"{callback.path}?{urlencode(forged)}")

    assert_sent_back(reply, "oidc")
    assert code in provider.grants  # never redeemed
    assert await no_account(conn, identity.email)


async def test_a_callback_in_a_browser_that_did_not_start_the_sign_in_is_refused(
    oidc_app: FastAPI, browser: httpx.AsyncClient, conn: AsyncConnection, provider: Provider
) -> None:
    identity = new_identity()
    provider.identity = identity
    callback = await approve(provider, await start(browser))

    # The state matches what the provider sent, but this browser holds no state cookie: a
    # callback URL planted on someone else (login CSRF).
    async with _browser_of(oidc_app, conn) as victim:
        reply = await victim.get(callback)

    assert_sent_back(reply, "oidc")
    assert await no_account(conn, identity.email)


async def test_an_error_from_the_provider_sends_the_browser_back_to_the_sign_in_page(
    browser: httpx.AsyncClient, provider: Provider
) -> None:
    authorize = urlsplit(await start(browser))
    state = parse_qs(authorize.query)["state"][0]

    reply = await browser.get(
        "/api/auth/oidc/callback?" + urlencode({"error": "access_denied", "state": state})
    )

    assert_sent_back(reply, "oidc")


async def test_sign_ins_log_no_code_state_token_or_email(
    browser: httpx.AsyncClient, provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    refused, accepted = new_identity(email_verified=False), new_identity()
    provider.identity = refused
    callback = await approve(provider, await start(browser))
    assert_sent_back(await browser.get(callback), "oidc_forbidden")
    assert (await sign_in(browser, provider, accepted)).status_code == 303

    # The test's own HTTP clients and provider log the URLs they see; the app's loggers and
    # authlib's must not.
    logged = "\n".join(
        record.getMessage()
        for record in caplog.records
        if record.name.split(".")[0] in {"app", "corpus", "authlib"}
    )
    sent = [value for values in parse_qs(urlsplit(callback).query).values() for value in values]
    secrets_ = [*sent, *provider.secrets, refused.email, accepted.email]
    assert [secret for secret in secrets_ if secret in logged] == []


@pytest.mark.parametrize("path", ["/api/auth/oidc/login", "/api/auth/oidc/callback"])
async def test_without_oidc_settings_both_routes_are_not_found(
    client: httpx.AsyncClient, path: str
) -> None:
    reply = await client.get(path)

    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("error", ["oidc", "oidc_forbidden"])
async def test_the_sign_in_screen_a_failed_sso_returns_to_is_served_and_offers_sso_again(
    browser: httpx.AsyncClient, error: str
) -> None:
    # The web app's screen explains the code (login-form.test.tsx); the server serves it and
    # says single sign-on is on offer.
    page = await browser.get(f"/login?error={error}")
    options = await browser.get("/api/auth/options")

    assert page.status_code == 200
    assert '<div id="root">' in page.text
    assert options.json()["oidc"] is True


async def test_without_oidc_the_sign_in_screen_offers_no_sso_and_echoes_no_unknown_error(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/login", params={"error": "<b>forged</b>"})
    options = await client.get("/api/auth/options")

    assert page.status_code == 200
    assert "forged" not in page.text
    assert options.json()["oidc"] is False


async def test_building_the_app_writes_no_secret_and_a_sign_in_uses_the_one_its_start_made(
    settings: Settings, provider: Provider, conn: AsyncConnection, tmp_path: Path
) -> None:
    # No SECRET_KEY: the key is generated into the data folder, by the lifespan, not by
    # create_app (which tools and tests call without serving).
    unset = make_settings(
        tmp_path,
        database_url=settings.database_url,
        secret_key=None,
        oidc_issuer=provider.issuer,
        oidc_client_id=CLIENT_ID,
        oidc_client_secret=CLIENT_SECRET,
        oidc_allowed_domains=[ALLOWED_DOMAIN],
        oidc_default_role=DEFAULT_ROLE,
    )
    app = create_app(unset)
    assert not (tmp_path / SECRET_KEY_FILE).exists()
    async with lifespan(app):
        assert (tmp_path / SECRET_KEY_FILE).exists()
        async with _browser_of(app, conn) as browser:
            reply = await sign_in(browser, provider, new_identity())
    assert reply.status_code == 303, reply.text
    assert reply.headers["location"] == "/"
