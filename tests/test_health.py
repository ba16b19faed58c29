"""Liveness and readiness."""

from __future__ import annotations

import uuid
from dataclasses import replace

import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.db.engine import Database
from app.main import create_app
from app.resources import Resources
from app.system.service import EmbeddingModelMismatch
from tests.support import lifespan, make_settings, new_database


async def test_healthz_answers_while_the_process_is_up(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_readyz_is_ready_on_a_migrated_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert {name: check["ok"] for name, check in body["checks"].items()} == {
        "database": True,
        "migrations": True,
        "embeddings": True,
    }


async def test_readyz_reports_an_unmigrated_database(server_url: str, settings: Settings) -> None:
    empty = await new_database(server_url, f"corpus_empty_{uuid.uuid4().hex[:8]}")
    app = create_app(make_settings(settings.data_dir, database_url=empty))
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["error"]["code"] == "unavailable"
    assert body["error"]["details"]["database"]["ok"] is True
    assert body["error"]["details"]["migrations"]["ok"] is False


async def test_readyz_reports_an_unreachable_database(app: FastAPI) -> None:
    resources: Resources = app.state.resources
    # A database that does not exist on the same server: connecting fails.
    missing = resources.settings.database_url.replace("corpus_test_", "missing_")
    broken = Database(missing)
    app.state.resources = replace(resources, db=broken)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.get("/readyz")
    finally:
        app.state.resources = resources
        await broken.dispose()
    assert response.status_code == 503
    assert response.json()["error"]["details"]["database"]["ok"] is False


async def test_start_up_refuses_vectors_of_another_embedding_model(settings: Settings) -> None:
    other = make_settings(
        settings.data_dir, database_url=settings.database_url, embeddings_provider="openai"
    )
    app = create_app(other)
    with pytest.raises(EmbeddingModelMismatch, match="corpus reembed"):
        async with lifespan(app):
            pass
