"""`GET /api/me` reports the actions the caller may take, from the capability table: the web app
offers what they allow and nothing else."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from app.access.capabilities import Role
from app.access.principal import LOCAL_ADMIN
from app.db.engine import ReadConnection, WriteConnection
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceCreate
from tests.accounts import make_account, sign_in

ADMIN_ACTIONS = [
    "search",
    "documents.write",
    "documents.manage",
    "workspaces.manage",
    "people.manage",
    "keys.manage",
    "audit.read",
    "gaps.read",
    "policy.manage",
    "cache.read",
]


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("viewer", ["search"]),
        ("editor", ["search", "documents.write"]),
        ("admin", ADMIN_ACTIONS),
    ],
)
async def test_me_lists_the_actions_the_role_allows_in_the_tables_order(
    client: httpx.AsyncClient, conn: AsyncConnection, role: Role, expected: list[str]
) -> None:
    account = await make_account(conn, role)
    with_key = await client.get("/api/me", headers=account.bearer)
    assert with_key.status_code == 200, with_key.text
    assert with_key.json()["actions"] == expected
    await sign_in(client, account)
    assert (await client.get("/api/me")).json()["actions"] == expected


async def test_a_key_bound_to_a_workspace_lists_only_the_actions_inside_it(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await workspaces_service.create_workspace(
        WriteConnection(ReadConnection(conn)),
        LOCAL_ADMIN,
        WorkspaceCreate(slug="alpha", title="Alpha"),
    )
    admin = await make_account(conn, "admin", workspace="alpha")
    viewer = await make_account(conn, "viewer", workspace="alpha")
    admin_me = (await client.get("/api/me", headers=admin.bearer)).json()
    assert admin_me["role"] == "admin"
    assert admin_me["actions"] == ["search", "documents.write", "documents.manage"]
    viewer_me = (await client.get("/api/me", headers=viewer.bearer)).json()
    assert viewer_me["actions"] == ["search"]
