"""People administration and its audit log: roles, enable and disable, password resets,
unlocks, the last admin kept, and a record of every change with before and after values."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.access.principal import Principal
from app.config import Settings
from app.db.engine import Database
from app.errors import Conflict
from app.people import service as people_service
from app.people.schemas import UserUpdate
from tests.accounts import Account, make_account
from tests.support import migrated_database


@pytest.fixture
async def admin(conn: AsyncConnection) -> Account:
    return await make_account(conn, "admin")


async def _audit(client: httpx.AsyncClient, admin: Account, **params: str) -> list[dict[str, Any]]:
    reply = await client.get("/api/audit", params=params, headers=admin.bearer)
    assert reply.status_code == 200, reply.text
    items: list[dict[str, Any]] = reply.json()["items"]
    return items


async def test_people_are_listed_with_their_flags(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    dormant = await make_account(conn, "viewer")
    await conn.execute(
        text("UPDATE users SET last_seen_at = now() - interval '61 days' WHERE id = :id"),
        {"id": dormant.user.id},
    )
    agent = await make_account(conn, "editor", kind="agent")
    reply = await client.get("/api/people", params={"limit": 200}, headers=admin.bearer)
    people = {p["email"]: p for p in reply.json()["items"]}
    assert people[dormant.user.email]["dormant"] is True
    assert people[admin.user.email]["dormant"] is False
    assert (people[agent.user.email]["kind"], people[agent.user.email]["role"]) == (
        "agent",
        "editor",
    )
    assert {"locked", "last_seen_at", "active", "created_at"} <= set(people[admin.user.email])


async def test_the_people_list_pages(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    for _ in range(3):
        await make_account(conn, "viewer", kind="agent")
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        page = (await client.get("/api/people", params=params, headers=admin.bearer)).json()
        seen += [p["id"] for p in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    total = (await conn.execute(text("SELECT count(*) FROM users"))).scalar_one()
    assert len(seen) == len(set(seen)) == total


async def test_a_role_change_is_audited_with_before_and_after(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    person = await make_account(conn, "viewer")
    reply = await client.patch(
        f"/api/people/{person.user.id}", json={"role": "editor"}, headers=admin.bearer
    )
    assert (reply.status_code, reply.json()["role"]) == (200, "editor")
    entries = await _audit(client, admin, action="user.update", target=str(person.user.id))
    assert len(entries) == 1
    entry = entries[0]
    assert (entry["actor_id"], entry["actor_email"]) == (str(admin.user.id), admin.user.email)
    assert (entry["before"], entry["after"]) == ({"role": "viewer"}, {"role": "editor"})


async def test_the_last_admin_cannot_be_demoted_or_disabled(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    await conn.execute(
        text("UPDATE users SET role = 'viewer' WHERE role = 'admin' AND id <> :id"),
        {"id": admin.user.id},
    )
    for change in ({"role": "editor"}, {"active": False}):
        reply = await client.patch(
            f"/api/people/{admin.user.id}", json=change, headers=admin.bearer
        )
        assert reply.status_code == 409
        assert reply.json()["error"]["code"] == "conflict"
    second = await make_account(conn, "admin")
    reply = await client.patch(
        f"/api/people/{admin.user.id}", json={"role": "editor"}, headers=admin.bearer
    )
    assert reply.status_code == 200
    assert (await client.get("/api/people", headers=second.bearer)).status_code == 200


async def test_two_admins_demoting_each_other_at_once_leave_one_admin(
    settings: Settings, server_url: str
) -> None:
    url = await migrated_database(server_url, settings.data_dir, "corpus_admins")
    db = Database(url)
    try:
        async with db.write() as conn:
            first = await make_account(conn, "admin")
            second = await make_account(conn, "admin")

        async def demote(actor: Account, target: Account) -> str:
            principal = Principal(user_id=actor.user.id, email=actor.user.email, role="admin")
            try:
                async with db.write() as conn:
                    await people_service.update_person(
                        conn, principal, target.user.id, UserUpdate(role="viewer")
                    )
                return "demoted"
            except Conflict:
                return "refused"

        outcomes = await asyncio.gather(demote(first, second), demote(second, first))
        assert sorted(outcomes) == ["demoted", "refused"]
        async with db.read() as reader:
            admins = await reader.execute(text("SELECT count(*) FROM users WHERE role = 'admin'"))
            assert admins.scalar_one() == 1
    finally:
        await db.dispose()


async def test_a_password_reset_gives_a_temporary_password_and_records_no_secret(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    person = await make_account(conn, "editor")
    reply = await client.post(f"/api/people/{person.user.id}/reset-password", headers=admin.bearer)
    assert reply.status_code == 200
    temporary = reply.json()["temporary_password"]
    assert len(temporary) >= 12
    login = await client.post(
        "/api/auth/login", json={"email": person.user.email, "password": temporary}
    )
    assert login.status_code == 200
    assert (await client.get("/api/me")).json()["must_change_password"] is True
    log = (await conn.execute(text("SELECT audit_log::text FROM audit_log"))).scalars().all()
    assert not any(temporary in row for row in log)
    hashes = (await conn.execute(text("SELECT password_hash FROM users"))).scalars().all()
    assert not any(h and h in row for row in log for h in hashes)


async def test_an_agent_has_no_password_to_reset(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    agent = await make_account(conn, "viewer", kind="agent")
    reply = await client.post(f"/api/people/{agent.user.id}/reset-password", headers=admin.bearer)
    assert reply.status_code == 422


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PATCH", "/api/people/{id}", {"role": "owner"}),
        ("PATCH", "/api/people/{id}", {"active": None}),
        ("PATCH", "/api/people/{id}", {"nickname": "x"}),
        ("PATCH", "/api/people/00000000-0000-0000-0000-000000000000", {"role": "viewer"}),
        ("POST", "/api/people", {"email": "not-an-email", "role": "viewer"}),
        ("POST", "/api/people", {"email": "x@example.com", "role": "viewer", "password": "short"}),
        ("POST", "/api/people", {"email": "EXISTING", "role": "viewer"}),
        ("POST", "/api/people/00000000-0000-0000-0000-000000000000/unlock", None),
    ],
)
async def test_bad_people_requests_change_nothing(
    client: httpx.AsyncClient,
    conn: AsyncConnection,
    admin: Account,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    person = await make_account(conn, "viewer")
    path = path.replace("{id}", str(person.user.id))
    if body and body.get("email") == "EXISTING":
        body = {**body, "email": person.user.email}
    # Everything but last_seen_at, which the admin's own request touches.
    snapshot = (
        "SELECT string_agg(concat_ws(',', email, display_name, role, kind, active, password_hash,"
        " failed_logins, locked_until, must_change_password, default_persona), '|' ORDER BY id)"
        " FROM users"
    )
    before = (await conn.execute(text(snapshot))).scalar_one()
    audit_before = (await conn.execute(text("SELECT count(*) FROM audit_log"))).scalar_one()
    reply = await client.request(method, path, json=body, headers=admin.bearer)
    assert reply.status_code in {404, 409, 422}, reply.text
    assert (await conn.execute(text(snapshot))).scalar_one() == before
    audit_after = (await conn.execute(text("SELECT count(*) FROM audit_log"))).scalar_one()
    assert audit_after == audit_before


async def test_the_audit_log_filters_and_pages(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    people = [await make_account(conn, "viewer") for _ in range(3)]
    for person in people:
        await client.patch(
            f"/api/people/{person.user.id}", json={"display_name": "Renamed"}, headers=admin.bearer
        )
    by_email = await _audit(client, admin, actor=admin.user.email, action="user.update")
    by_id = await _audit(client, admin, actor=str(admin.user.id), action="user.update")
    assert by_email == by_id
    assert {e["target_id"] for e in by_email} == {str(p.user.id) for p in people}
    first = (
        await client.get(
            "/api/audit", params={"action": "user.update", "limit": 2}, headers=admin.bearer
        )
    ).json()
    assert len(first["items"]) == 2
    rest = (
        await client.get(
            "/api/audit",
            params={"action": "user.update", "limit": 2, "cursor": first["next_cursor"]},
            headers=admin.bearer,
        )
    ).json()
    ids = [e["id"] for e in first["items"] + rest["items"]]
    assert len(ids) == len(set(ids)) >= 3
    bad = await client.get("/api/audit", params={"cursor": "nonsense"}, headers=admin.bearer)
    assert bad.status_code == 422


async def test_the_audit_log_filters_by_time(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    person = await make_account(conn, "viewer")
    await client.patch(
        f"/api/people/{person.user.id}", json={"display_name": "Timed"}, headers=admin.bearer
    )
    [entry] = await _audit(client, admin, action="user.update", target=str(person.user.id))
    at = entry["at"]
    # One test is one transaction: every entry it writes carries the same time.
    target = {"action": "user.update", "target": str(person.user.id)}
    assert [e["id"] for e in await _audit(client, admin, **target, since=at)] == [entry["id"]]
    assert await _audit(client, admin, **target, until=at) == []
    assert await _audit(client, admin, since="2999-01-01T00:00:00Z") == []
    naive = await client.get(
        "/api/audit", params={"since": "2026-01-01T00:00:00"}, headers=admin.bearer
    )
    assert naive.status_code == 422
    assert naive.json()["error"]["code"] == "validation_error"


async def test_keys_and_sign_ups_are_audited_without_their_secrets(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    agent = await make_account(conn, "viewer", kind="agent")
    minted = await client.post(
        "/api/keys", json={"user_id": str(agent.user.id), "name": "bot"}, headers=admin.bearer
    )
    key = minted.json()["key"]
    await client.delete(f"/api/keys/{minted.json()['id']}", headers=admin.bearer)
    created = await _audit(client, admin, action="key.create", target=minted.json()["id"])
    revoked = await _audit(client, admin, action="key.revoke", target=minted.json()["id"])
    assert created[0]["after"]["prefix"] == key[:12]
    assert revoked[0]["after"] == {"revoked": True}
    log = (await conn.execute(text("SELECT audit_log::text FROM audit_log"))).scalars().all()
    assert not any(key in row or key[12:] in row for row in log)


async def test_a_default_persona_follows_the_person_and_a_keys_own_persona_wins(
    client: httpx.AsyncClient, conn: AsyncConnection, admin: Account
) -> None:
    person = await make_account(conn, "editor")
    reply = await client.patch(
        f"/api/people/{person.user.id}", json={"persona": "frontend"}, headers=admin.bearer
    )
    assert (reply.status_code, reply.json()["persona"]) == (200, "frontend")
    assert (await client.get("/api/me", headers=person.bearer)).json()["persona"] == "frontend"
    minted = await client.post(
        "/api/keys",
        json={"user_id": str(person.user.id), "name": "bound", "persona": "backend"},
        headers=admin.bearer,
    )
    bound = {"Authorization": f"Bearer {minted.json()['key']}"}
    assert (await client.get("/api/me", headers=bound)).json()["persona"] == "backend"
    cleared = await client.patch(
        f"/api/people/{person.user.id}", json={"persona": None}, headers=admin.bearer
    )
    assert cleared.json()["persona"] is None
