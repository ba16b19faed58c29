"""Liveness and readiness."""

from __future__ import annotations

import asyncio
import threading
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.main import create_app
from app.rag.embeddings import local
from app.resources import Resources
from app.system.service import EmbeddingModelMismatch
from tests.running import run_corpus
from tests.support import eventually, lifespan, make_settings, new_database


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
        "embedder": True,
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


async def test_the_local_model_warms_at_start_and_the_first_search_after_ready_loads_nothing(
    server_url: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = await new_database(server_url, f"corpus_warm_{uuid.uuid4().hex[:8]}")
    local_settings = make_settings(data_dir, database_url=url, embeddings_provider="local")
    await asyncio.to_thread(migrate.upgrade, local_settings, url)
    loads: list[int] = []
    release = threading.Event()
    real_load = local.load_model

    def held_load() -> Any:
        loads.append(1)
        release.wait(30)  # the test looks at /readyz while the model is still loading
        return real_load()

    monkeypatch.setattr(local, "load_model", held_load)
    async with (
        run_corpus(data_dir, url, embeddings_provider="local") as corpus,
        httpx.AsyncClient(base_url=corpus.url) as http,
    ):
        warming = await http.get("/readyz")
        release.set()

        async def ready() -> bool:
            return (await http.get("/readyz")).status_code == 200

        await eventually(ready, "/readyz says ready once the model is loaded")
        viewer = await corpus.account("viewer")
        search = await http.post(
            "/api/search", json={"query": "how do I roll back?"}, headers=viewer.bearer
        )

    assert warming.status_code == 503
    assert warming.json()["error"]["details"]["embedder"]["ok"] is False
    assert search.status_code == 200
    assert loads == [1]  # loaded at start-up, once; the search found it loaded
