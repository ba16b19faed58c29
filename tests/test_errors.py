"""The error model: one JSON shape for every failure, and a failed commit is never a 200."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import BaseModel, Field
from sqlalchemy import text

from app.config import Settings
from app.deps import WriteConn
from app.errors import Conflict, RateLimited
from app.main import create_app
from tests.support import lifespan, make_settings


class Thing(BaseModel):
    name: str = Field(min_length=1)
    size: int


@pytest.fixture(scope="module")
async def error_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """An app on the real engine (committing for real) with a few routes that fail on purpose;
    one for the module (an app's start is half a second)."""
    app = create_app(make_settings(settings.data_dir, database_url=settings.database_url))

    @app.post("/api/_test/things")
    async def create_thing(thing: Thing) -> Thing:
        return thing

    @app.post("/api/_test/conflict")
    async def conflict() -> None:
        raise Conflict("that already exists", details={"field": "slug"})

    @app.post("/api/_test/slow-down")
    async def slow_down() -> None:
        raise RateLimited("too many attempts", retry_after_s=30)

    @app.post("/api/_test/crash")
    async def crash() -> None:
        raise RuntimeError("boom with a secret inside")

    @app.post("/api/_test/commit-fails")
    async def commit_fails(conn: WriteConn) -> dict[str, str]:
        # A deferred unique constraint is checked at COMMIT, after the endpoint has returned.
        await conn.execute(
            text(
                "CREATE TEMP TABLE commit_check (n int UNIQUE DEFERRABLE INITIALLY DEFERRED) "
                "ON COMMIT DROP"
            )
        )
        await conn.execute(text("INSERT INTO commit_check VALUES (1), (1)"))
        return {"status": "looked fine"}

    @app.post("/api/_test/commits")
    async def commits(conn: WriteConn) -> dict[str, str]:
        await conn.execute(
            text("UPDATE workspaces SET description = description WHERE slug = 'default'")
        )
        return {"status": "ok"}

    async with lifespan(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            yield client


async def test_validation_errors_use_the_error_body(error_client: httpx.AsyncClient) -> None:
    response = await error_client.post("/api/_test/things", json={"name": "", "size": "big"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert {tuple(item["loc"]) for item in error["details"]} == {
        ("body", "name"),
        ("body", "size"),
    }


async def test_validation_errors_do_not_echo_the_input(error_client: httpx.AsyncClient) -> None:
    response = await error_client.post(
        "/api/_test/things", json={"name": "hunter2-password", "size": "x"}
    )
    assert "hunter2-password" not in response.text


async def test_malformed_json_is_a_validation_error(error_client: httpx.AsyncClient) -> None:
    response = await error_client.post(
        "/api/_test/things", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


async def test_app_errors_carry_status_code_and_details(error_client: httpx.AsyncClient) -> None:
    response = await error_client.post("/api/_test/conflict")
    assert response.status_code == 409
    assert response.json() == {
        "error": {
            "code": "conflict",
            "message": "that already exists",
            "details": {"field": "slug"},
        }
    }


async def test_rate_limited_errors_say_when_to_retry(error_client: httpx.AsyncClient) -> None:
    response = await error_client.post("/api/_test/slow-down")
    assert response.status_code == 429
    assert response.headers["retry-after"] == "30"
    assert response.json()["error"]["code"] == "rate_limited"


async def test_unexpected_errors_are_a_500_without_internals(
    error_client: httpx.AsyncClient,
) -> None:
    response = await error_client.post("/api/_test/crash")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal"
    assert "secret" not in response.text


async def test_a_commit_that_fails_after_the_endpoint_returns_is_a_500(
    error_client: httpx.AsyncClient,
) -> None:
    response = await error_client.post("/api/_test/commit-fails")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal"


async def test_a_commit_that_succeeds_is_a_200(error_client: httpx.AsyncClient) -> None:
    response = await error_client.post("/api/_test/commits")
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/healthz", "GET"),
        ("GET", "/api/auth/login", "POST"),  # the web app's catch-all takes GET otherwise
        ("DELETE", "/api/search", "POST"),
        ("OPTIONS", "/api/keys", "GET, POST"),  # two routes share the path
        ("PUT", "/api/documents", "GET, POST"),
    ],
)
async def test_a_wrong_method_is_a_json_405_listing_every_allowed_method(
    error_client: httpx.AsyncClient, method: str, path: str, allowed: str
) -> None:
    response = await error_client.request(method, path)
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert response.headers["allow"] == allowed


async def test_an_unknown_api_path_is_still_a_404(error_client: httpx.AsyncClient) -> None:
    response = await error_client.get("/api/no-such-thing")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


async def test_a_body_that_is_not_utf8_is_a_validation_error(
    error_client: httpx.AsyncClient,
) -> None:
    response = await error_client.post(
        "/api/_test/things",
        content=b'{"name": "\xff\xfe"}',
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
