"""A chunk's BM25 postings live and die with it: a statement trigger on `chunks` deletes them
(migration 0021), whichever way the chunk goes."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.accounts import authorize


@pytest.fixture(autouse=True)
async def _as_admin(client: httpx.AsyncClient, conn: AsyncConnection) -> None:
    await authorize(client, conn, "admin")


async def _add(client: httpx.AsyncClient, title: str, content: str, workspace: str) -> str:
    response = await client.post(
        "/api/documents", json={"title": title, "content": content, "workspace": workspace}
    )
    assert response.status_code == 201, response.text
    document_id: str = response.json()["id"]
    return document_id


async def _postings(conn: AsyncConnection, document_id: str) -> int:
    return int(
        (
            await conn.execute(
                text(
                    "SELECT count(*) FROM chunk_terms t JOIN chunks c ON c.id = t.chunk_id "
                    "WHERE c.document_id = :d"
                ),
                {"d": document_id},
            )
        ).scalar_one()
    )


async def _orphans(conn: AsyncConnection) -> int:
    return int(
        (
            await conn.execute(
                text(
                    "SELECT count(*) FROM chunk_terms t "
                    "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = t.chunk_id)"
                )
            )
        ).scalar_one()
    )


async def test_postings_go_with_their_chunks_on_edit_delete_and_a_cascade(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    created = await client.post("/api/workspaces", json={"slug": "herons", "title": "Herons"})
    assert created.status_code == 201, created.text
    edited = await _add(client, "Grey heron", "The grey heron nests in colonies.", "default")
    deleted = await _add(client, "Night heron", "The night heron feeds at dusk.", "default")
    cascaded = await _add(client, "Purple heron", "The purple heron hides in reeds.", "herons")
    await _add(client, "Bittern", "The bittern booms from the reed bed.", "herons")
    kept = await _add(client, "Egret", "The little egret wades in shallow water.", "default")
    total = int((await conn.execute(text("SELECT count(*) FROM chunk_terms"))).scalar_one())
    assert all([await _postings(conn, d) for d in (edited, deleted, cascaded, kept)])

    response = await client.patch(
        f"/api/documents/{edited}", json={"content": "Grey herons stand still for hours."}
    )
    assert response.status_code == 200, response.text
    assert (await client.delete(f"/api/documents/{deleted}")).status_code == 204
    # Several documents in one statement (as an operator might clear a workspace), their
    # chunks by the schema's cascade.
    await conn.execute(
        text(
            "DELETE FROM documents "
            "WHERE workspace_id = (SELECT id FROM workspaces WHERE slug = 'herons')"
        )
    )

    assert await _orphans(conn) == 0
    assert await _postings(conn, edited) > 0
    assert await _postings(conn, kept) > 0
    lexemes = set(
        (
            await conn.execute(
                text(
                    "SELECT t.lexeme FROM chunk_terms t JOIN chunks c ON c.id = t.chunk_id "
                    "WHERE c.document_id = :d"
                ),
                {"d": edited},
            )
        ).scalars()
    )
    assert "hour" in lexemes
    assert "coloni" not in lexemes
    after = int((await conn.execute(text("SELECT count(*) FROM chunk_terms"))).scalar_one())
    assert after < total
