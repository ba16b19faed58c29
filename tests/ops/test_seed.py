"""`corpus seed`: the project's own docs, searchable in workspace `sample`, loaded once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.support import migrated_database, run_corpus_here


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
