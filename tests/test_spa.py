"""The web app at `/`: build files, history fallback, and JSON errors under the API prefixes."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.main import create_app
from tests.running import run_fresh_corpus
from tests.support import lifespan, make_settings

INDEX = "<!doctype html><title>Corpus</title><div id=root></div>"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("spa")
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text(INDEX)
    (dist / "assets" / "app-1234.js").write_text("console.log('corpus')")
    (dist / "favicon.svg").write_text("<svg/>")
    (tmp_path / "secret.txt").write_text("outside the build")
    return dist


async def _client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            yield client


@pytest.fixture(scope="module")
async def spa_client(settings: Settings, dist: Path) -> AsyncIterator[httpx.AsyncClient]:
    """One app for the module's requests, which only read (an app's start is half a second)."""
    app = create_app(
        make_settings(settings.data_dir, database_url=settings.database_url, static_dir=dist)
    )
    async for client in _client(app):
        yield client


@pytest.mark.parametrize("path", ["/", "/documents/123", "/chat/abc/def", "/connect?x=1"])
async def test_app_paths_get_the_index_page(spa_client: httpx.AsyncClient, path: str) -> None:
    response = await spa_client.get(path)
    assert response.status_code == 200
    assert response.text == INDEX
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-cache"


async def test_build_files_are_served_and_assets_cached_for_good(
    spa_client: httpx.AsyncClient,
) -> None:
    asset = await spa_client.get("/assets/app-1234.js")
    favicon = await spa_client.get("/favicon.svg")
    assert asset.text == "console.log('corpus')"
    assert "immutable" in asset.headers["cache-control"]
    assert favicon.text == "<svg/>"
    assert favicon.headers["cache-control"] == "no-cache"


@pytest.mark.parametrize("path", ["/api/nothing-here", "/api", "/v1/unknown", "/.well-known/x"])
async def test_unknown_api_paths_get_a_json_404(spa_client: httpx.AsyncClient, path: str) -> None:
    response = await spa_client.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


async def test_paths_cannot_escape_the_build_folder(spa_client: httpx.AsyncClient) -> None:
    response = await spa_client.get("/..%2Fsecret.txt")
    assert "outside the build" not in response.text


async def test_a_missing_build_is_a_clear_503(settings: Settings, tmp_path: Path) -> None:
    app = create_app(
        make_settings(
            settings.data_dir, database_url=settings.database_url, static_dir=tmp_path / "none"
        )
    )
    async for client in _client(app):
        response = await client.get("/documents")
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "unavailable"


@pytest.mark.parametrize(
    "path", ["/", "/documents/123", "/login?next=/", "/setup", "/oauth/consent?tx=abc"]
)
async def test_the_web_apps_page_and_its_sign_in_and_consent_screens_cannot_be_framed(
    spa_client: httpx.AsyncClient, path: str
) -> None:
    response = await spa_client.get(path)
    page = await spa_client.get("/")
    assert response.status_code == 200
    assert response.text == INDEX
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert "script-src 'self';" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    # Every screen is the web app's page, under the very same policy.
    assert response.headers["content-security-policy"] == page.headers["content-security-policy"]


@pytest.mark.parametrize("method", ["GET", "HEAD"])
async def test_every_file_of_the_web_app_carries_the_pages_protections_over_http(
    server_url: str, data_dir: Path, dist: Path, method: str
) -> None:
    # Served for real: the headers are what a browser gets, whichever file it is sent to.
    async with (
        run_fresh_corpus(server_url, data_dir, "corpus_spa_headers", static_dir=dist) as running,
        httpx.AsyncClient(base_url=running.url) as http,
    ):
        page = await http.request(method, "/")
        for path in ("/index.html", "/favicon.svg", "/assets/app-1234.js", "/", "/documents/1"):
            response = await http.request(method, path)
            assert response.status_code == 200, path
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"], path
            assert (
                response.headers["content-security-policy"]
                == page.headers["content-security-policy"]
            ), path
            assert response.headers["x-frame-options"] == "DENY", path
            assert response.headers["x-content-type-options"] == "nosniff", path
        asset = await http.request(method, "/assets/app-1234.js")
        assert "immutable" in asset.headers["cache-control"]


async def test_the_api_reference_loads_everything_from_this_server(
    spa_client: httpx.AsyncClient,
) -> None:
    page = await spa_client.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    # The policy forbids any other origin and inline script; the page names only our paths.
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self';" in policy
    addresses = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert addresses
    assert all(address.startswith("/") and not address.startswith("//") for address in addresses)
    assert "<script>" not in page.text
    assert (await spa_client.get("/redoc")).text == INDEX
