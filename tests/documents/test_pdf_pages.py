"""An uploaded PDF over real HTTP: each chunk knows its page (a search hit and a citation name
it), and the original file downloads byte for byte, to those who may read the document only."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.bench.ingest import ingest_paths
from app.config import Settings
from app.db.engine import Database
from app.db.tables import chunks, document_originals
from app.documents.worker import Converter
from app.rag.embeddings.hash import HashEmbedder
from tests.accounts import make_account
from tests.documents.pdfs import pdf, text
from tests.support import make_settings, migrated_database


def _page(word: str) -> bytes:
    """A page long enough to be chunks of its own, `word` in each line."""
    return text(
        *(f"Line {n} of the {word} section explains the {word} procedure." for n in range(24))
    )


async def test_a_pdfs_chunks_know_their_page_and_its_original_downloads_to_its_readers_only(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    owner = await make_account(conn, "editor")
    other = await make_account(conn, "editor")
    word = f"zq{uuid.uuid4().hex[:8]}"
    original = pdf(_page("intake"), _page(word), _page("closing"), title="Manual")
    sent = await client.post(
        "/api/documents",
        files={"file": ("Manuel d’équipe.pdf", original, "application/pdf")},
        data={"visibility": "private"},
        headers=owner.bearer,
    )
    assert sent.status_code == 201, sent.text
    document_id = sent.json()["id"]

    found = await client.post(
        "/api/search", json={"query": word, "mode": "keyword"}, headers=owner.bearer
    )
    assert found.status_code == 200
    hits = [hit for hit in found.json()["hits"] if hit["document_id"] == document_id]
    assert hits
    assert hits[0]["page"] == 2
    # A chunk of page 3 may begin with the end of page 2 (its overlap): it is still page 3's.
    assert [hit["page"] for hit in hits] == [3 if "closing" in hit["text"] else 2 for hit in hits]
    listed = await client.get(f"/api/documents/{document_id}/chunks", headers=owner.bearer)
    pages = [chunk["page"] for chunk in listed.json()]
    assert pages == sorted(pages)
    assert pages[0] == 1
    assert pages[-1] == 3

    read = await client.get(f"/api/documents/{document_id}", headers=owner.bearer)
    assert read.json()["has_original"] is True
    download = await client.get(f"/api/documents/{document_id}/original", headers=owner.bearer)
    assert download.status_code == 200
    assert download.content == original
    assert download.headers["content-type"] == "application/pdf"
    disposition = download.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="Manuel d_équipe.pdf"'.replace("é", "_"))
    assert "filename*=UTF-8''Manuel%20d%E2%80%99%C3%A9quipe.pdf" in disposition

    # Someone who may not read the private document learns nothing of it, nor of its file.
    hidden = await client.get(f"/api/documents/{document_id}/original", headers=other.bearer)
    assert hidden.status_code == 404
    assert hidden.json()["error"]["code"] == "not_found"

    # A document written as Markdown has no original, and its chunks no page.
    markdown = await client.post(
        "/api/documents",
        json={"title": f"Notes {word}", "content": f"# Notes\n\nThe {word} notes."},
        headers=owner.bearer,
    )
    assert markdown.status_code == 201, markdown.text
    notes = markdown.json()["id"]
    none = await client.get(f"/api/documents/{notes}/original", headers=owner.bearer)
    assert none.status_code == 404
    chunks = await client.get(f"/api/documents/{notes}/chunks", headers=owner.bearer)
    assert [chunk["page"] for chunk in chunks.json()] == [None]


async def test_corpus_ingest_keeps_a_pdfs_pages_and_its_original(
    settings: Settings, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    original = pdf(_page("intake"), _page("valve"), title="Manual")
    path = tmp_path / "manual.pdf"
    path.write_bytes(original)
    url = await migrated_database(server_url, data_dir, "corpus_ingest_pdf")
    db = Database(url)
    ingest_settings = make_settings(settings.data_dir, database_url=url)
    converter = Converter(ingest_settings)
    try:
        report = await ingest_paths(
            db,
            HashEmbedder(),
            ingest_settings,
            converter,
            [path],
            workspace="default",
            visibility="org",
            tags=[],
            advance=lambda _label: None,
        )
        async with db.read() as conn:
            pages = [row.page for row in await conn.execute(select(chunks.c.page))]
            kept = await conn.scalar(select(document_originals.c.data))
    finally:
        await converter.aclose()
        await db.dispose()

    assert report.counts["added"] == 1
    assert sorted(pages)[0] == 1
    assert sorted(pages)[-1] == 2
    assert kept == original
