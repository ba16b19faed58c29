"""Nothing secret is logged or returned twice: passwords, temporary passwords, API keys and
session cookies appear in no log line (at DEBUG, SQL parameters included) and in no reply but
the one that hands them out."""

from __future__ import annotations

import logging

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.sessions.cookies import SESSION_COOKIE
from tests.accounts import OWN_ORIGIN

PASSWORD = "first secret passphrase"
NEW_PASSWORD = "second secret passphrase"


async def test_secrets_appear_in_no_log_and_in_no_later_reply(
    client: httpx.AsyncClient, conn: AsyncConnection, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await conn.execute(text("DELETE FROM users"))
    client.headers["Origin"] = OWN_ORIGIN
    replies: list[httpx.Response] = []

    async def call(method: str, path: str, **kwargs: object) -> httpx.Response:
        reply = await client.request(method, path, **kwargs)  # type: ignore[arg-type]
        replies.append(reply)
        return reply

    signup = await call(
        "POST", "/api/auth/signup", json={"email": "root@example.com", "password": PASSWORD}
    )
    assert signup.status_code == 201
    cookie = client.cookies[SESSION_COOKIE]
    agent = await call(
        "POST", "/api/people", json={"email": "bot@example.com", "role": "editor", "kind": "agent"}
    )
    minted = await call("POST", "/api/keys", json={"user_id": agent.json()["id"], "name": "bot"})
    key = minted.json()["key"]
    person = await call("POST", "/api/people", json={"email": "p@example.com", "role": "viewer"})
    temporary = person.json()["temporary_password"]
    reset = await call("POST", f"/api/people/{person.json()['id']}/reset-password")
    reset_password = reset.json()["temporary_password"]
    await call(
        "POST", "/api/auth/login", json={"email": "root@example.com", "password": "wrong one!"}
    )
    await call("GET", "/api/me", headers={"Authorization": f"Bearer {key}"})
    await call(
        "POST",
        "/api/me/password",
        json={"current_password": PASSWORD, "new_password": NEW_PASSWORD},
    )
    await call("GET", "/api/keys")
    await call("GET", "/api/people")
    await call("GET", "/api/audit")
    await call("GET", "/api/me")
    await call("POST", "/api/auth/logout")

    secrets = {
        "password": PASSWORD,
        "new password": NEW_PASSWORD,
        "temporary password": temporary,
        "reset password": reset_password,
        "api key": key,
        "api key secret part": key[12:],
        "session cookie": cookie,
        "session token": cookie.rpartition(".")[0],
    }
    logged = "\n".join(f"{record.getMessage()} {record.args!r}" for record in caplog.records)
    assert any("/api/keys" in r.getMessage() for r in caplog.records)  # the capture works
    assert [name for name, value in secrets.items() if value in logged] == []

    # Each secret is in exactly the one reply that hands it out (the cookie: in headers only).
    handed_out = {
        "temporary password": person,
        "reset password": reset,
        "api key": minted,
        "api key secret part": minted,
    }
    for name, value in secrets.items():
        carriers = [r for r in replies if value in r.text]
        expected = [handed_out[name]] if name in handed_out else []
        assert carriers == expected, name
