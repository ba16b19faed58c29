"""An ingest is one transaction: a failure half-way leaves the previous version intact and
searchable."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from sqlalchemy import delete

from app.config import Settings
from app.db.tables import users
from app.main import create_app
from app.rag.embeddings.hash import HashEmbedder
from app.resources import Resources
from tests.accounts import make_account
from tests.support import lifespan, make_settings


class WrongDimensionEmbedder(HashEmbedder):
    """Embeds queries well but passages with one dimension too many: pgvector refuses the
    insert, after the old chunks were already deleted in the same transaction."""

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        vectors = await super().embed_passages(texts)
        return np.hstack([vectors, np.zeros((len(texts), 1), dtype=np.float32)])


@pytest.fixture
async def committing_app(settings: Settings) -> AsyncIterator[FastAPI]:
    """An app on the real engine: each request commits or rolls back for real."""
    app = create_app(make_settings(settings.data_dir, database_url=settings.database_url))
    async with lifespan(app):
        yield app


async def test_a_failed_edit_leaves_the_previous_version_searchable(
    committing_app: FastAPI,
) -> None:
    resources: Resources = committing_app.state.resources
    async with resources.db.write() as conn:
        admin = await make_account(conn, "admin")
    transport = httpx.ASGITransport(app=committing_app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://t", headers=admin.bearer
    ) as client:
        created = await client.post(
            "/api/documents",
            json={"title": "Atomic", "content": "Flamingo migrations run at noon."},
        )
        assert created.status_code == 201
        url = f"/api/documents/{created.json()['id']}"
        chunks_before = (await client.get(f"{url}/chunks")).json()

        committing_app.state.resources = replace(resources, embedder=WrongDimensionEmbedder())
        try:
            failed = await client.patch(url, json={"content": "Pelican migrations run at dusk."})
        finally:
            committing_app.state.resources = resources
        assert failed.status_code == 500

        document = (await client.get(url)).json()
        assert document["content"] == "Flamingo migrations run at noon."
        assert document["version"] == 1
        assert (await client.get(f"{url}/chunks")).json() == chunks_before
        search = await client.post("/api/search", json={"query": "flamingo migrations"})
        assert [hit["document_id"] for hit in search.json()["hits"]] == [created.json()["id"]]
        await client.delete(url)
    async with resources.db.write() as conn:
        await conn.execute(delete(users).where(users.c.id == admin.user.id))
