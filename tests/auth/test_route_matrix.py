"""Every `/api` route, called as anonymous, viewer, editor, admin, an agent's key and a revoked
key. The expected statuses are written out here, row by row, not derived from the capability
table they check."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncConnection

from app.access.principal import LOCAL_ADMIN
from app.auth import service as auth_service
from app.db.engine import ReadConnection, WriteConnection
from app.documents import queries as documents_queries
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from app.routing import admin as routing_admin
from app.routing.schemas import PersonaUpdate
from app.sources import service as sources_service
from app.sources.schemas import SourceCreate
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceCreate
from tests import support
from tests.accounts import PASSWORD, Account, make_account

CALLERS = ("anonymous", "viewer", "editor", "admin", "agent", "revoked")


@dataclass
class World:
    """The accounts of one test, and a way to make fresh targets for each call."""

    conn: AsyncConnection
    app: FastAPI
    accounts: dict[str, Account]

    @property
    def write(self) -> WriteConnection:
        return WriteConnection(ReadConnection(self.conn))

    async def person(self) -> str:
        return str((await make_account(self.conn, "viewer")).user.id)

    async def source(self) -> str:
        return await _source(self)

    async def key_id(self) -> str:
        account = await make_account(self.conn, "viewer", kind="agent")
        listed = await auth_service.list_keys(self.write, LOCAL_ADMIN)
        return str(next(k.id for k in listed if k.user_id == account.user.id))

    async def document(self, owner: str = "editor") -> str:
        """An `org` document of `owner` (the editor by default)."""
        account = self.accounts[owner]
        principal = await support.key_principal(self.write, account.key)
        assert principal is not None
        settings = self.app.state.resources.settings
        created = await documents_service.create(
            self.write,
            principal,
            self.app.state.resources.embedder,
            settings,
            DocumentCreate(title="Runbook", content=f"Rollback with make rollback {uuid.uuid4()}"),
        )
        return str(created.id)


Request = Callable[[World], Awaitable[tuple[str, str, Any]]]


async def _delete_persona(world: World) -> tuple[str, str, Any]:
    slug = f"p-{uuid.uuid4().hex[:8]}"
    await routing_admin.set_persona(
        world.write,
        world.app.state.resources.routing,
        LOCAL_ADMIN,
        slug,
        PersonaUpdate(workspaces=["default"]),
    )
    return "DELETE", f"/api/policy/personas/{slug}", None


def fixed(method: str, path: str, body: Any = None) -> Request:
    async def make(_world: World) -> tuple[str, str, Any]:
        return method, path, body

    return make


def _unique_email(_world: World) -> str:
    return f"new-{uuid.uuid4().hex[:8]}@example.com"


async def _create_person(world: World) -> tuple[str, str, Any]:
    return "POST", "/api/people", {"email": _unique_email(world), "role": "viewer"}


async def _update_person(world: World) -> tuple[str, str, Any]:
    return "PATCH", f"/api/people/{await world.person()}", {"display_name": "Renamed"}


async def _reset_password(world: World) -> tuple[str, str, Any]:
    return "POST", f"/api/people/{await world.person()}/reset-password", None


async def _unlock(world: World) -> tuple[str, str, Any]:
    return "POST", f"/api/people/{await world.person()}/unlock", None


async def _create_key(world: World) -> tuple[str, str, Any]:
    return "POST", "/api/keys", {"user_id": await world.person(), "name": "ci"}


async def _revoke_key(world: World) -> tuple[str, str, Any]:
    return "DELETE", f"/api/keys/{await world.key_id()}", None


async def _create_workspace(_world: World) -> tuple[str, str, Any]:
    return "POST", "/api/workspaces", {"slug": f"ws-{uuid.uuid4().hex[:8]}", "title": "W"}


async def _delete_workspace(world: World) -> tuple[str, str, Any]:
    slug = f"ws-{uuid.uuid4().hex[:8]}"
    await workspaces_service.create_workspace(
        world.write, LOCAL_ADMIN, WorkspaceCreate(slug=slug, title="Doomed")
    )
    return "DELETE", f"/api/workspaces/{slug}", None


async def _source(world: World) -> str:
    """A git source of `default` (an ssh URL: nothing is fetched until a sync)."""
    resources = world.app.state.resources
    created = await sources_service.create_source(
        world.write,
        LOCAL_ADMIN,
        "default",
        SourceCreate(kind="git", location=f"git@example.com:team/{uuid.uuid4().hex}.git"),
        settings=resources.settings,
        box=resources.box,
    )
    return str(created.id)


async def _create_source(_world: World) -> tuple[str, str, Any]:
    location = f"git@example.com:team/{uuid.uuid4().hex}.git"
    return "POST", "/api/workspaces/default/sources", {"kind": "git", "location": location}


async def _get_source(world: World) -> tuple[str, str, Any]:
    return "GET", f"/api/sources/{await world.source()}", None


async def _update_source(world: World) -> tuple[str, str, Any]:
    return "PATCH", f"/api/sources/{await world.source()}", {"paused": True}


async def _delete_source(world: World) -> tuple[str, str, Any]:
    return "DELETE", f"/api/sources/{await world.source()}", None


async def _source_runs(world: World) -> tuple[str, str, Any]:
    return "GET", f"/api/sources/{await world.source()}/runs", None


async def _provenance(world: World) -> tuple[str, str, Any]:
    return "GET", f"/api/documents/{await world.document()}/provenance", None


async def _get_document(world: World) -> tuple[str, str, Any]:
    return "GET", f"/api/documents/{await world.document()}", None


async def _update_document(world: World) -> tuple[str, str, Any]:
    return "PATCH", f"/api/documents/{await world.document()}", {"title": "Renamed"}


async def _delete_document(world: World) -> tuple[str, str, Any]:
    return "DELETE", f"/api/documents/{await world.document()}", None


async def _chunks(world: World) -> tuple[str, str, Any]:
    return "GET", f"/api/documents/{await world.document()}/chunks", None


async def _related(world: World) -> tuple[str, str, Any]:
    return "GET", f"/api/documents/{await world.document()}/related", None


async def _backlinks(world: World) -> tuple[str, str, Any]:
    return "GET", f"/api/documents/{await world.document()}/backlinks", None


async def _original(world: World) -> tuple[str, str, Any]:
    document_id = await world.document()
    await documents_queries.put_original(
        world.write,
        document_id=uuid.UUID(document_id),
        media_type="application/pdf",
        filename="runbook.pdf",
        data=b"%PDF-1.4",
    )
    return "GET", f"/api/documents/{document_id}/original", None


async def _links(world: World) -> tuple[str, str, Any]:
    return "GET", f"/api/documents/{await world.document()}/links", None


async def _chunk(world: World) -> tuple[str, str, Any]:
    document_id = uuid.UUID(await world.document())
    chunks = await documents_service.chunks(world.write, LOCAL_ADMIN, document_id)
    return "GET", f"/api/chunks/{chunks[0].id}", None


async def _login(world: World) -> tuple[str, str, Any]:
    email = world.accounts["viewer"].user.email
    return "POST", "/api/auth/login", {"email": email, "password": PASSWORD}


NEW_PASSWORD = {"current_password": PASSWORD, "new_password": "another long password"}

# (route as the app declares it, how to call it, the expected status of each caller in
# CALLERS order: anonymous, viewer, editor, admin, agent, revoked).
# The agent is an agent account with the editor role; the revoked key was an admin's.
MATRIX: list[tuple[str, Request, tuple[int, int, int, int, int, int]]] = [
    (
        "POST /api/auth/signup",
        fixed("POST", "/api/auth/signup", {"email": "late@example.com", "password": PASSWORD}),
        (403, 403, 403, 403, 403, 403),
    ),
    ("GET /api/auth/options", fixed("GET", "/api/auth/options"), (200, 200, 200, 200, 200, 200)),
    ("POST /api/auth/login", _login, (200, 200, 200, 200, 200, 200)),
    ("POST /api/auth/logout", fixed("POST", "/api/auth/logout"), (204, 204, 204, 204, 204, 204)),
    ("GET /api/me", fixed("GET", "/api/me"), (401, 200, 200, 200, 200, 401)),
    # A session is required: a key that leaked may not change its person's password.
    (
        "POST /api/me/password",
        fixed("POST", "/api/me/password", NEW_PASSWORD),
        (401, 403, 403, 403, 403, 401),
    ),
    ("GET /api/people", fixed("GET", "/api/people"), (401, 403, 403, 200, 403, 401)),
    ("POST /api/people", _create_person, (401, 403, 403, 201, 403, 401)),
    ("PATCH /api/people/{user_id}", _update_person, (401, 403, 403, 200, 403, 401)),
    ("POST /api/people/{user_id}/reset-password", _reset_password, (401, 403, 403, 200, 403, 401)),
    ("POST /api/people/{user_id}/unlock", _unlock, (401, 403, 403, 200, 403, 401)),
    ("GET /api/keys", fixed("GET", "/api/keys"), (401, 403, 403, 200, 403, 401)),
    ("POST /api/keys", _create_key, (401, 403, 403, 201, 403, 401)),
    ("DELETE /api/keys/{key_id}", _revoke_key, (401, 403, 403, 204, 403, 401)),
    ("GET /api/audit", fixed("GET", "/api/audit"), (401, 403, 403, 200, 403, 401)),
    ("GET /api/workspaces", fixed("GET", "/api/workspaces"), (401, 200, 200, 200, 200, 401)),
    ("POST /api/workspaces", _create_workspace, (401, 403, 403, 201, 403, 401)),
    (
        "PATCH /api/workspaces/{slug}",
        fixed("PATCH", "/api/workspaces/default", {"description": "D"}),
        (401, 403, 403, 200, 403, 401),
    ),
    ("DELETE /api/workspaces/{slug}", _delete_workspace, (401, 403, 403, 204, 403, 401)),
    (
        "GET /api/workspaces/{slug}/sources",
        fixed("GET", "/api/workspaces/default/sources"),
        (401, 403, 403, 200, 403, 401),
    ),
    ("POST /api/workspaces/{slug}/sources", _create_source, (401, 403, 403, 201, 403, 401)),
    ("GET /api/sources/{source_id}", _get_source, (401, 403, 403, 200, 403, 401)),
    ("PATCH /api/sources/{source_id}", _update_source, (401, 403, 403, 200, 403, 401)),
    ("DELETE /api/sources/{source_id}", _delete_source, (401, 403, 403, 204, 403, 401)),
    # A sync runs in transactions of its own, which do not see the test's rows: the admin's
    # call is a 404 here (tests/sources syncs for real).
    (
        "POST /api/sources/{source_id}/sync",
        fixed("POST", f"/api/sources/{uuid.uuid4()}/sync"),
        (401, 403, 403, 404, 403, 401),
    ),
    ("GET /api/sources/{source_id}/runs", _source_runs, (401, 403, 403, 200, 403, 401)),
    ("GET /api/sources/stale", fixed("GET", "/api/sources/stale"), (401, 200, 200, 200, 200, 401)),
    # Its signature is its credential: without one, everyone is refused alike.
    (
        "POST /api/sources/{source_id}/webhook",
        fixed("POST", f"/api/sources/{uuid.uuid4()}/webhook", {"ref": "refs/heads/main"}),
        (403, 403, 403, 403, 403, 403),
    ),
    (
        "GET /api/documents/{document_id}/provenance",
        _provenance,
        (401, 200, 200, 200, 200, 401),
    ),
    (
        "POST /api/documents",
        fixed("POST", "/api/documents", {"title": "T", "content": "Some content."}),
        (401, 403, 201, 201, 201, 401),
    ),
    ("GET /api/documents", fixed("GET", "/api/documents"), (401, 200, 200, 200, 200, 401)),
    (
        "POST /api/documents/sample",
        fixed("POST", "/api/documents/sample"),
        (401, 403, 403, 200, 403, 401),
    ),
    ("GET /api/documents/{document_id}", _get_document, (401, 200, 200, 200, 200, 401)),
    # The document is the editor's own: the admin may change any `org` document, the agent
    # (an editor too) only its own.
    ("PATCH /api/documents/{document_id}", _update_document, (401, 403, 200, 200, 403, 401)),
    ("DELETE /api/documents/{document_id}", _delete_document, (401, 403, 204, 204, 403, 401)),
    ("GET /api/documents/{document_id}/chunks", _chunks, (401, 200, 200, 200, 200, 401)),
    ("GET /api/documents/{document_id}/related", _related, (401, 200, 200, 200, 200, 401)),
    ("GET /api/documents/{document_id}/backlinks", _backlinks, (401, 200, 200, 200, 200, 401)),
    ("GET /api/documents/{document_id}/links", _links, (401, 200, 200, 200, 200, 401)),
    ("GET /api/documents/{document_id}/original", _original, (401, 200, 200, 200, 200, 401)),
    ("GET /api/chunks/{chunk_id}", _chunk, (401, 200, 200, 200, 200, 401)),
    ("GET /api/tags", fixed("GET", "/api/tags"), (401, 200, 200, 200, 200, 401)),
    (
        "POST /api/search",
        fixed("POST", "/api/search", {"query": "rollback"}),
        (401, 200, 200, 200, 200, 401),
    ),
    # With no model configured (as here), the answer is extractive: still a stream.
    (
        "POST /api/ask",
        fixed("POST", "/api/ask", {"question": "rollback"}),
        (401, 200, 200, 200, 200, 401),
    ),
    # Letting the agents write is for those who may add documents.
    (
        "POST /api/ask",
        fixed("POST", "/api/ask", {"question": "rollback", "writes": "private"}),
        (401, 403, 200, 200, 200, 401),
    ),
    ("GET /api/chats", fixed("GET", "/api/chats"), (401, 200, 200, 200, 200, 401)),
    # A chat is its owner's alone: one nobody has, or another's, does not exist.
    (
        "GET /api/chats/{chat_id}",
        fixed("GET", f"/api/chats/{uuid.uuid4()}"),
        (401, 404, 404, 404, 404, 401),
    ),
    (
        "PATCH /api/chats/{chat_id}",
        fixed("PATCH", f"/api/chats/{uuid.uuid4()}", {"title": "Renamed"}),
        (401, 404, 404, 404, 404, 401),
    ),
    (
        "DELETE /api/chats/{chat_id}",
        fixed("DELETE", f"/api/chats/{uuid.uuid4()}"),
        (401, 404, 404, 404, 404, 401),
    ),
    # A run is its owner's alone, as a chat is: one nobody has does not exist.
    (
        "POST /api/runs/{run_id}/cancel",
        fixed("POST", f"/api/runs/{uuid.uuid4()}/cancel"),
        (401, 404, 404, 404, 404, 401),
    ),
    ("GET /api/gaps", fixed("GET", "/api/gaps"), (401, 403, 403, 200, 403, 401)),
    # No open gap has this question: an admin is told so, anyone else may not dismiss.
    (
        "POST /api/gaps/dismiss",
        fixed("POST", "/api/gaps/dismiss", {"question": f"no such gap {uuid.uuid4()}"}),
        (401, 403, 403, 404, 403, 401),
    ),
    ("GET /api/dashboard", fixed("GET", "/api/dashboard"), (401, 200, 200, 200, 200, 401)),
    (
        "GET /api/dashboard/activity",
        fixed("GET", "/api/dashboard/activity"),
        (401, 200, 200, 200, 200, 401),
    ),
    ("GET /api/policy", fixed("GET", "/api/policy"), (401, 200, 200, 200, 200, 401)),
    (
        "PUT /api/policy/personas/{slug}",
        fixed("PUT", "/api/policy/personas/matrix", {"workspaces": ["default"]}),
        (401, 403, 403, 200, 403, 401),
    ),
    ("DELETE /api/policy/personas/{slug}", _delete_persona, (401, 403, 403, 204, 403, 401)),
    (
        "POST /api/context",
        fixed("POST", "/api/context", {"query": "rollback"}),
        (401, 200, 200, 200, 200, 401),
    ),
    (
        "POST /api/context/sessions/{session_id}/message",
        fixed("POST", "/api/context/sessions/s1/message", {"text": "rollback"}),
        (401, 204, 204, 204, 204, 401),
    ),
    ("GET /api/cache/stats", fixed("GET", "/api/cache/stats"), (401, 403, 403, 200, 403, 401)),
    # Consent is a person's, given in a browser: every API key is refused.
    (
        "GET /api/oauth/consent/{tx}",
        fixed("GET", "/api/oauth/consent/unknown-transaction"),
        (401, 403, 403, 403, 403, 401),
    ),
    (
        "POST /api/oauth/consent/{tx}",
        fixed("POST", "/api/oauth/consent/unknown-transaction", {"approve": True}),
        (401, 403, 403, 403, 403, 401),
    ),
    (
        "GET /api/me/connections",
        fixed("GET", "/api/me/connections"),
        (401, 200, 200, 200, 200, 401),
    ),
    # Disconnecting apps, too, is a person's in a browser.
    (
        "DELETE /api/me/connections/{client_id}",
        fixed("DELETE", "/api/me/connections/no-such-client"),
        (401, 403, 403, 403, 403, 401),
    ),
    (
        "GET /api/auth/oidc/login",
        fixed("GET", "/api/auth/oidc/login"),
        (404, 404, 404, 404, 404, 404),
    ),
    (
        "GET /api/auth/oidc/callback",
        fixed("GET", "/api/auth/oidc/callback"),
        (404, 404, 404, 404, 404, 404),
    ),
]


def _routes(app: FastAPI) -> set[str]:
    """Every route of the app's OpenAPI document, as "METHOD /path"."""
    return {
        f"{method.upper()} {path}"
        for path, operations in app.openapi()["paths"].items()
        for method in operations
    }


def test_the_matrix_covers_every_api_route(app: FastAPI) -> None:
    assert {route for route, _, _ in MATRIX} == {r for r in _routes(app) if " /api/" in r}


# The routes that answer without a credential. Keep it short: every other route must refuse
# an anonymous caller.
PUBLIC = {
    "GET /healthz",
    "GET /readyz",
    "GET /api/auth/options",
    "POST /api/auth/signup",
    "POST /api/auth/login",
    "POST /api/auth/logout",
    "GET /api/auth/oidc/login",
    "GET /api/auth/oidc/callback",
    # A push webhook: its signature is its credential (403 without one).
    "POST /api/sources/{source_id}/webhook",
}


async def test_only_the_public_routes_answer_without_a_credential(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    answered = set()
    for route in sorted(_routes(app)):
        method, path = route.split(" ", 1)
        path = path.replace("{slug}", "default")
        path = path.replace("{tx}", "unknown-transaction").replace("{client_id}", "unknown")
        for name in (
            "{user_id}",
            "{key_id}",
            "{document_id}",
            "{chat_id}",
            "{chunk_id}",
            "{source_id}",
        ):
            path = path.replace(name, str(uuid.uuid4()))
        reply = await client.request(method, path, json={})
        if reply.status_code != 401:
            answered.add(route)
    assert answered == PUBLIC


@pytest.fixture
async def world(app: FastAPI, conn: AsyncConnection) -> World:
    accounts = {
        "viewer": await make_account(conn, "viewer"),
        "editor": await make_account(conn, "editor"),
        "admin": await make_account(conn, "admin"),
        "agent": await make_account(conn, "editor", kind="agent"),
        "revoked": await make_account(conn, "admin"),
    }
    write = WriteConnection(ReadConnection(conn))
    revoked = next(
        k
        for k in await auth_service.list_keys(write, LOCAL_ADMIN)
        if k.user_id == accounts["revoked"].user.id
    )
    await auth_service.revoke_key(write, LOCAL_ADMIN, revoked.id)
    return World(conn=conn, app=app, accounts=accounts)


@pytest.mark.parametrize(
    ("route", "request_for", "expected"), MATRIX, ids=[route for route, _, _ in MATRIX]
)
async def test_each_caller_gets_the_expected_status(
    client: httpx.AsyncClient,
    world: World,
    route: str,
    request_for: Request,
    expected: tuple[int, ...],
) -> None:
    got: dict[str, int] = {}
    for caller in CALLERS:
        method, path, body = await request_for(world)
        headers = {} if caller == "anonymous" else world.accounts[caller].bearer
        reply = await client.request(method, path, json=body, headers=headers)
        got[caller] = reply.status_code
        if reply.status_code == 401:
            assert reply.json()["error"]["code"] == "unauthenticated"
            assert reply.headers["www-authenticate"].startswith("Bearer")
        if reply.status_code == 403 and route != "POST /api/auth/signup":
            assert reply.json()["error"]["code"] == "forbidden"
    assert got == dict(zip(CALLERS, expected, strict=True)), route


# A column of its own for an admin's key bound to another workspace than the documents'
# (`default`): every admin route is refused, the documents are out of sight (404), and what
# stays inside its workspace (reading, searching, writing there, its own account) answers.
BOUND_ADMIN: dict[str, int] = {
    "GET /api/auth/options": 200,
    "POST /api/auth/signup": 403,
    "POST /api/auth/login": 200,
    "POST /api/auth/logout": 204,
    "GET /api/me": 200,
    "POST /api/me/password": 403,  # a session, not a key
    "GET /api/people": 403,
    "POST /api/people": 403,
    "PATCH /api/people/{user_id}": 403,
    "POST /api/people/{user_id}/reset-password": 403,
    "POST /api/people/{user_id}/unlock": 403,
    "GET /api/keys": 403,
    "POST /api/keys": 403,
    "DELETE /api/keys/{key_id}": 403,
    "GET /api/audit": 403,
    "GET /api/workspaces": 200,
    "POST /api/workspaces": 403,
    "PATCH /api/workspaces/{slug}": 403,
    "DELETE /api/workspaces/{slug}": 403,
    "GET /api/workspaces/{slug}/sources": 403,
    "POST /api/workspaces/{slug}/sources": 403,
    "GET /api/sources/{source_id}": 403,
    "PATCH /api/sources/{source_id}": 403,
    "DELETE /api/sources/{source_id}": 403,
    "POST /api/sources/{source_id}/sync": 403,
    "GET /api/sources/{source_id}/runs": 403,
    "GET /api/sources/stale": 200,
    "POST /api/sources/{source_id}/webhook": 403,
    "GET /api/documents/{document_id}/provenance": 404,
    "POST /api/documents": 201,
    "GET /api/documents": 200,
    "POST /api/documents/sample": 403,
    "GET /api/documents/{document_id}": 404,
    "PATCH /api/documents/{document_id}": 404,
    "DELETE /api/documents/{document_id}": 404,
    "GET /api/documents/{document_id}/chunks": 404,
    "GET /api/documents/{document_id}/related": 404,
    "GET /api/documents/{document_id}/backlinks": 404,
    "GET /api/documents/{document_id}/links": 404,
    "GET /api/documents/{document_id}/original": 404,
    "GET /api/chunks/{chunk_id}": 404,
    "POST /api/search": 200,
    "POST /api/ask": 200,
    "GET /api/chats": 200,
    "GET /api/chats/{chat_id}": 404,
    "PATCH /api/chats/{chat_id}": 404,
    "DELETE /api/chats/{chat_id}": 404,
    "POST /api/runs/{run_id}/cancel": 404,
    "GET /api/tags": 200,
    "GET /api/gaps": 403,  # every workspace's questions
    "POST /api/gaps/dismiss": 403,
    "GET /api/dashboard": 200,
    "GET /api/dashboard/activity": 200,
    "GET /api/policy": 200,
    "PUT /api/policy/personas/{slug}": 403,
    "DELETE /api/policy/personas/{slug}": 403,
    "POST /api/context": 200,
    "POST /api/context/sessions/{session_id}/message": 204,
    "GET /api/cache/stats": 403,
    "GET /api/oauth/consent/{tx}": 403,
    "POST /api/oauth/consent/{tx}": 403,
    "GET /api/me/connections": 200,
    "DELETE /api/me/connections/{client_id}": 403,  # a session, not a key
    "GET /api/auth/oidc/login": 404,
    "GET /api/auth/oidc/callback": 404,
}


def test_the_bound_key_column_covers_every_route_of_the_matrix() -> None:
    assert set(BOUND_ADMIN) == {route for route, _, _ in MATRIX}


async def test_a_key_bound_to_another_workspace_gets_the_expected_status(
    client: httpx.AsyncClient, conn: AsyncConnection, world: World
) -> None:
    await workspaces_service.create_workspace(
        WriteConnection(ReadConnection(conn)),
        LOCAL_ADMIN,
        WorkspaceCreate(slug="elsewhere", title="Elsewhere"),
    )
    bound = await make_account(conn, "admin", workspace="elsewhere")
    got: dict[str, int] = {}
    for route, request_for, _ in MATRIX:
        method, path, body = await request_for(world)
        client.cookies.clear()  # the sign-in row's session would ride along otherwise
        reply = await client.request(method, path, json=body, headers=bound.bearer)
        got[route] = reply.status_code
        if reply.status_code == 403 and route != "POST /api/auth/signup":
            assert reply.json()["error"]["code"] == "forbidden", route
    assert got == BOUND_ADMIN


async def test_every_route_behind_a_credential_documents_its_401(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    spec = (await client.get("/openapi.json")).json()
    undocumented = set()
    for route in _routes(app) - PUBLIC:
        method, path = route.split(" ", 1)
        operation = spec["paths"].get(path, {}).get(method.lower())
        if operation is not None and "401" not in operation["responses"]:
            undocumented.add(route)
    assert undocumented == set()
    # A temporary password blocks the product's routes (403).
    assert "403" in spec["paths"]["/api/search"]["post"]["responses"]
