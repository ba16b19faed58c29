"""Malformed input is a 4xx in API.md's error shape, never a 500: paging cursors that decode to
dates PostgreSQL cannot hold, and NUL bytes in paths, which no resource's name contains."""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.accounts import Account
from tests.rawhttp import send_head
from tests.running import Running, run_fresh_corpus


@pytest.fixture(scope="module")
async def corpus(server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    async with run_fresh_corpus(server_url, data_dir, "corpus_malformed") as running:
        yield running


@pytest.fixture(scope="module")
async def admin(corpus: Running) -> Account:
    return await corpus.account("admin")


def _cursor(raw: str) -> str:
    return base64.urlsafe_b64encode(f"{raw}|{uuid.uuid4()}".encode()).decode().rstrip("=")


# Dates Python parses but PostgreSQL's timestamptz (or UTC itself) cannot hold, and a date with
# no zone.
OUT_OF_RANGE = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "2026-01-01T00:00:00",
]


@pytest.mark.parametrize("path", ["/api/documents", "/api/people", "/api/audit"])
@pytest.mark.parametrize("raw", OUT_OF_RANGE)
async def test_a_cursor_with_an_out_of_range_date_is_a_422(
    corpus: Running, admin: Account, path: str, raw: str
) -> None:
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        reply = await http.get(path, params={"cursor": _cursor(raw)})
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"]["code"] == "validation_error"


async def _session(corpus: Running, account: Account) -> dict[str, str]:
    """Headers of a browser signed in on our own pages."""
    async with httpx.AsyncClient(base_url=corpus.url) as http:
        reply = await http.post(
            "/api/auth/login", json={"email": account.user.email, "password": account.password}
        )
    assert reply.status_code == 200, reply.text
    cookie = "; ".join(f"{name}={value}" for name, value in reply.cookies.items())
    return {"Cookie": cookie, "Origin": corpus.url}


@pytest.mark.parametrize(
    ("method", "target", "credential"),
    [
        ("PATCH", "/api/workspaces/al%00pha", "key"),
        ("GET", "/api/documents/%00", "key"),
        ("GET", "/api/oauth/consent/abc%00def", "session"),
        ("DELETE", "/api/me/connections/abc%00def", "session"),
        ("GET", "/index.html%00.js", None),
        ("GET", "/assets/%00", None),
    ],
)
async def test_a_nul_in_a_path_is_a_4xx_in_the_error_shape(
    corpus: Running, admin: Account, method: str, target: str, credential: str | None
) -> None:
    headers = {"Content-Type": "application/json", "Content-Length": "2"}
    if credential == "key":
        headers.update(admin.bearer)
    elif credential == "session":
        headers.update(await _session(corpus, admin))
    answer = await send_head(corpus.url, method, target, headers, body=b"{}")
    assert 400 <= answer.status < 500, answer.body
    assert answer.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "target",
    [
        "/api/documents?q=a%00b",
        "/api/documents?tag=a%00b",
        "/api/documents?workspace=a%00b",
        "/api/audit?actor=a%00b",
        "/api/audit?action=a%00b",
    ],
)
async def test_a_nul_in_a_query_parameter_is_not_a_500(
    corpus: Running, admin: Account, target: str
) -> None:
    answer = await send_head(corpus.url, "GET", target, admin.bearer)
    assert answer.status < 500, answer.body
