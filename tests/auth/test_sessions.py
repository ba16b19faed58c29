"""Sessions: a signed, HttpOnly, SameSite=Lax cookie naming a server-side row that logout,
a password change, a role change and a disable all end; cookie writes need our Origin."""

from __future__ import annotations

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.sessions.cookies import SESSION_COOKIE
from tests.accounts import OWN_ORIGIN, PASSWORD, Account, make_account, sign_in

ORIGIN = {"Origin": OWN_ORIGIN}


def _session_cookie(reply: httpx.Response) -> str:
    cookies = reply.headers.get_list("set-cookie")
    assert len(cookies) == 1, cookies
    return cookies[0]


async def _empty_database(conn: AsyncConnection) -> None:
    # Sign-up is open only while no account exists; the test's transaction makes it so.
    await conn.execute(text("DELETE FROM users"))


async def test_the_first_sign_up_is_an_admin_signed_in_with_a_safe_cookie(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await _empty_database(conn)
    reply = await client.post(
        "/api/auth/signup",
        json={"email": "First@Example.com", "password": PASSWORD, "display_name": "First"},
        headers=ORIGIN,
    )
    assert reply.status_code == 201, reply.text
    assert (reply.json()["email"], reply.json()["role"]) == ("first@example.com", "admin")
    cookie = _session_cookie(reply).lower()
    assert cookie.startswith(f"{SESSION_COOKIE}=")
    assert "httponly" in cookie
    assert "samesite=lax" in cookie
    assert "max-age=" in cookie
    assert "secure" not in cookie  # plain http here; https public URLs get Secure
    me = await client.get("/api/me")
    assert me.status_code == 200
    assert me.json()["role"] == "admin"
    assert "upload_document" in me.json()["tools"]


async def test_sign_up_is_closed_once_an_account_exists(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await make_account(conn, "admin")
    reply = await client.post(
        "/api/auth/signup", json={"email": "late@example.com", "password": PASSWORD}
    )
    assert reply.status_code == 403
    assert reply.json()["error"]["code"] == "signup_closed"
    assert "set-cookie" not in reply.headers
    count = await conn.execute(text("SELECT count(*) FROM users WHERE email = 'late@example.com'"))
    assert count.scalar_one() == 0


async def test_a_weak_password_is_refused_at_sign_up_and_creates_nothing(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await _empty_database(conn)
    reply = await client.post(
        "/api/auth/signup", json={"email": "a@example.com", "password": "short"}
    )
    assert reply.status_code == 422
    assert reply.json()["error"]["code"] == "validation_error"
    assert (await conn.execute(text("SELECT count(*) FROM users"))).scalar_one() == 0


@pytest.fixture
async def viewer(conn: AsyncConnection) -> Account:
    return await make_account(conn, "viewer")


async def test_logout_ends_the_session_on_the_server(
    client: httpx.AsyncClient, viewer: Account
) -> None:
    await sign_in(client, viewer)
    stolen = client.cookies[SESSION_COOKIE]
    assert (await client.post("/api/auth/logout")).status_code == 204
    # A copy of the cookie taken before the logout no longer works.
    client.cookies.set(SESSION_COOKIE, stolen)
    reply = await client.get("/api/me")
    assert reply.status_code == 401
    assert reply.json()["error"]["code"] == "unauthenticated"


async def test_a_forged_cookie_is_refused(client: httpx.AsyncClient, viewer: Account) -> None:
    await sign_in(client, viewer)
    value = client.cookies[SESSION_COOKIE]
    token, _, signature = value.rpartition(".")
    client.cookies.set(SESSION_COOKIE, f"{token}x.{signature}")
    assert (await client.get("/api/me")).status_code == 401


async def test_an_expired_session_is_refused(
    client: httpx.AsyncClient, conn: AsyncConnection, viewer: Account
) -> None:
    await sign_in(client, viewer)
    await conn.execute(text("UPDATE sessions SET expires_at = now() - interval '1 second'"))
    assert (await client.get("/api/me")).status_code == 401


async def test_the_database_holds_no_session_token(
    client: httpx.AsyncClient, conn: AsyncConnection, viewer: Account
) -> None:
    await sign_in(client, viewer)
    token = client.cookies[SESSION_COOKIE].rpartition(".")[0]
    rows = (await conn.execute(text("SELECT sessions::text FROM sessions"))).scalars().all()
    assert rows
    assert not any(token in row for row in rows)


async def test_a_password_change_ends_every_other_session(
    app_client_pair: tuple[httpx.AsyncClient, httpx.AsyncClient], viewer: Account
) -> None:
    laptop, phone = app_client_pair
    await sign_in(laptop, viewer)
    await sign_in(phone, viewer)
    reply = await laptop.post(
        "/api/me/password",
        json={"current_password": PASSWORD, "new_password": "a brand new passphrase"},
    )
    assert reply.status_code == 204
    assert (await laptop.get("/api/me")).status_code == 200  # given a fresh session
    assert (await phone.get("/api/me")).status_code == 401
    old = await phone.post(
        "/api/auth/login", json={"email": viewer.user.email, "password": PASSWORD}
    )
    assert old.status_code == 401


async def test_a_wrong_current_password_changes_nothing(
    client: httpx.AsyncClient, viewer: Account
) -> None:
    await sign_in(client, viewer)
    reply = await client.post(
        "/api/me/password",
        json={"current_password": "not the password", "new_password": "a brand new passphrase"},
    )
    assert reply.status_code == 401
    assert reply.json()["error"]["code"] == "invalid_credentials"
    assert (await client.get("/api/me")).status_code == 200


@pytest.mark.parametrize("change", [{"role": "editor"}, {"active": False}])
async def test_a_role_change_or_a_disable_ends_the_persons_sessions(
    app_client_pair: tuple[httpx.AsyncClient, httpx.AsyncClient],
    conn: AsyncConnection,
    viewer: Account,
    change: dict[str, object],
) -> None:
    browser, admin_client = app_client_pair
    admin = await make_account(conn, "admin")
    await sign_in(browser, viewer)
    reply = await admin_client.patch(
        f"/api/people/{viewer.user.id}", json=change, headers=admin.bearer
    )
    assert reply.status_code == 200, reply.text
    assert (await browser.get("/api/me")).status_code == 401


async def test_a_disabled_accounts_api_key_stops_working(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    admin = await make_account(conn, "admin")
    agent = await make_account(conn, "editor", kind="agent")
    assert (await client.get("/api/me", headers=agent.bearer)).status_code == 200
    reply = await client.patch(
        f"/api/people/{agent.user.id}", json={"active": False}, headers=admin.bearer
    )
    assert reply.status_code == 200
    assert (await client.get("/api/me", headers=agent.bearer)).status_code == 401


@pytest.mark.parametrize(
    "headers",
    [{}, {"Origin": "https://evil.example"}, {"Referer": "https://evil.example/page"}],
    ids=["no-origin", "foreign-origin", "foreign-referer"],
)
async def test_a_cookie_write_from_elsewhere_is_refused_and_writes_nothing(
    client: httpx.AsyncClient,
    conn: AsyncConnection,
    headers: dict[str, str],
) -> None:
    editor = await make_account(conn, "editor")
    await sign_in(client, editor)
    del client.headers["Origin"]
    reply = await client.post(
        "/api/documents", json={"title": "CSRF", "content": "Planted."}, headers=headers
    )
    assert reply.status_code == 403
    assert reply.json()["error"]["code"] == "forbidden"
    count = await conn.execute(text("SELECT count(*) FROM documents WHERE title = 'CSRF'"))
    assert count.scalar_one() == 0


async def test_a_cookie_write_with_our_referer_is_accepted(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    editor = await make_account(conn, "editor")
    await sign_in(client, editor)
    del client.headers["Origin"]
    reply = await client.post(
        "/api/documents",
        json={"title": "Ours", "content": "Written from our own page."},
        headers={"Referer": f"{OWN_ORIGIN}/documents"},
    )
    assert reply.status_code == 201


async def test_an_api_key_write_needs_no_origin(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    editor = await make_account(conn, "editor")
    reply = await client.post(
        "/api/documents",
        json={"title": "Script", "content": "From a script."},
        headers=editor.bearer,
    )
    assert reply.status_code == 201


async def test_a_temporary_password_must_be_changed_before_anything_else(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    admin = await make_account(conn, "admin")
    created = await client.post(
        "/api/people", json={"email": "new@example.com", "role": "editor"}, headers=admin.bearer
    )
    assert created.status_code == 201
    temporary = created.json()["temporary_password"]
    assert temporary
    client.headers["Origin"] = OWN_ORIGIN
    login = await client.post(
        "/api/auth/login", json={"email": "new@example.com", "password": temporary}
    )
    assert login.status_code == 200
    me = await client.get("/api/me")
    assert me.json()["must_change_password"] is True
    blocked = await client.get("/api/documents")
    assert blocked.status_code == 403
    assert blocked.json()["error"]["code"] == "forbidden"
    changed = await client.post(
        "/api/me/password",
        json={"current_password": temporary, "new_password": "my own long password"},
    )
    assert changed.status_code == 204
    assert (await client.get("/api/me")).json()["must_change_password"] is False
    assert (await client.get("/api/documents")).status_code == 200


async def test_secure_cookies_behind_an_https_public_url(
    https_client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    viewer = await make_account(conn, "viewer")
    reply = await https_client.post(
        "/api/auth/login",
        json={"email": viewer.user.email, "password": PASSWORD},
        headers={"Origin": "https://corpus.example"},
    )
    assert reply.status_code == 200, reply.text
    assert "secure" in _session_cookie(reply).lower()


async def test_a_stale_password_hash_is_upgraded_at_sign_in(
    real_hashing_client: httpx.AsyncClient, conn: AsyncConnection, viewer: Account
) -> None:
    client = real_hashing_client
    weak = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash(PASSWORD)
    await conn.execute(
        text("UPDATE users SET password_hash = :h WHERE id = :id"),
        {"h": weak, "id": viewer.user.id},
    )
    assert (
        await client.post(
            "/api/auth/login", json={"email": viewer.user.email, "password": PASSWORD}
        )
    ).status_code == 200
    stored = await conn.execute(
        text("SELECT password_hash FROM users WHERE id = :id"), {"id": viewer.user.id}
    )
    upgraded = stored.scalar_one()
    assert upgraded != weak
    assert not PasswordHasher().check_needs_rehash(upgraded)
