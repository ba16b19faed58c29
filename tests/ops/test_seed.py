"""`corpus seed` and the first-run screen's "load sample documents" (`POST
/api/documents/sample`): the project's own docs, searchable in workspace `sample`, loaded once
whichever door loads them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from app.documents.files import sample_files
from app.main import create_app
from tests.accounts import authorize, make_account
from tests.support import (
    CHEAP_ARGON2,
    app_client,
    lifespan,
    make_settings,
    migrated_database,
    run_corpus_here,
)


async def _sample_documents(url: str) -> list[str]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT d.title FROM documents d JOIN workspaces w ON w.id = d.workspace_id "
                    "WHERE w.slug = 'sample' ORDER BY d.title"
                )
            )
            return [row[0] for row in rows]
    finally:
        await engine.dispose()


async def test_seed_loads_the_docs_into_the_sample_workspace_once(
    server_url: str, data_dir: Path
) -> None:
    url = await migrated_database(server_url, data_dir, "seed")
    first = await asyncio.to_thread(run_corpus_here, ["seed"], url)
    assert first.returncode == 0, first.stderr
    titles = await _sample_documents(url)
    assert "Deploying Corpus" in titles
    assert len(titles) > 10

    again = await asyncio.to_thread(run_corpus_here, ["seed"], url)
    assert again.returncode == 0, again.stderr
    assert f"0 added, 0 updated, {len(titles)} unchanged" in again.stdout
    assert await _sample_documents(url) == titles

    # The web app's button finds what the command loaded: nothing to add.
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        admin = await make_account(conn, "admin")
    await engine.dispose()
    app = create_app(make_settings(data_dir, database_url=url), argon2=CHEAP_ARGON2)
    async with lifespan(app), app_client(app) as http:
        loaded = await http.post("/api/documents/sample", headers=admin.bearer)
    assert loaded.status_code == 200, loaded.text
    assert loaded.json() == {
        "workspace": "sample",
        "created_workspace": False,
        "added": 0,
        "updated": 0,
        "unchanged": len(titles),
        "chunks": 0,
    }
    assert await _sample_documents(url) == titles


async def _in_sample(conn: AsyncConnection) -> int:
    found = await conn.execute(
        text(
            "SELECT count(*) FROM documents d JOIN workspaces w ON w.id = d.workspace_id "
            "WHERE w.slug = 'sample'"
        )
    )
    count: int = found.scalar_one()
    return count


async def test_admins_load_the_sample_documents_once_and_others_may_not(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    files = sample_files()
    assert files
    await authorize(client, conn, "editor")
    refused = await client.post("/api/documents/sample")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    assert await _in_sample(conn) == 0

    await authorize(client, conn, "admin")
    first = await client.post("/api/documents/sample")
    assert first.status_code == 200, first.text
    loaded = first.json()
    assert loaded["created_workspace"] is True
    assert (loaded["added"], loaded["updated"], loaded["unchanged"]) == (len(files), 0, 0)
    assert loaded["chunks"] > len(files)
    assert await _in_sample(conn) == len(files)
    found = await client.post(
        "/api/search", json={"query": "rotate SECRET_KEY", "workspaces": ["sample"]}
    )
    assert found.json()["hits"]

    again = (await client.post("/api/documents/sample")).json()
    assert again == {
        **loaded,
        "created_workspace": False,
        "added": 0,
        "unchanged": len(files),
        "chunks": 0,
    }
    assert await _in_sample(conn) == len(files)
