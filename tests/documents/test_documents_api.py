"""Documents over HTTP: create from JSON or a file, read, list, edit, delete, chunks."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.accounts import authorize


@pytest.fixture(autouse=True)
async def _as_admin(client: httpx.AsyncClient, conn: AsyncConnection) -> None:
    """These tests act as an admin with an API key."""
    await authorize(client, conn, "admin")


DOC = {
    "title": "Deploy runbook",
    "content": "# Deploy\n\nShip with `make release`.\n\n## Rollback\n\nRun `make rollback` "
    "to return to the previous release; the database migrations stay.\n",
    "tags": ["Ops", "runbook"],
}


async def _create(client: httpx.AsyncClient, **overrides: object) -> dict[str, object]:
    response = await client.post("/api/documents", json={**DOC, **overrides})
    assert response.status_code == 201, response.text
    body: dict[str, object] = response.json()
    return body


async def test_a_json_document_is_created_chunked_and_tagged(client: httpx.AsyncClient) -> None:
    body = await _create(client)
    assert body["workspace"] == "default"
    assert body["visibility"] == "org"
    assert body["tags"] == ["ops", "runbook"]
    assert body["media_type"] == "text/markdown"
    assert body["version"] == 1
    assert isinstance(body["chunk_count"], int)
    assert body["chunk_count"] >= 1
    assert body["unchanged"] is False


async def test_identical_content_is_not_added_twice(client: httpx.AsyncClient) -> None:
    first = await _create(client)
    again = await client.post("/api/documents", json=DOC)
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    assert again.json()["unchanged"] is True


async def test_chunk_offsets_reproduce_the_document(client: httpx.AsyncClient) -> None:
    created = await _create(client)
    document = (await client.get(f"/api/documents/{created['id']}")).json()
    chunks = (await client.get(f"/api/documents/{created['id']}/chunks")).json()
    assert [c["ordinal"] for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert document["content"][chunk["start"] : chunk["end"]] == chunk["text"]
    assert chunks[-1]["heading_path"] == ["Deploy", "Rollback"]


async def test_a_markdown_file_upload_is_converted_and_stored(client: httpx.AsyncClient) -> None:
    files = {"file": ("notes.md", b"# Notes\n\nPostgres tuning tips.\n", "text/markdown")}
    response = await client.post(
        "/api/documents", files=files, data={"tags": "db, tuning", "workspace": "default"}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["title"] == "Notes"
    assert body["tags"] == ["db", "tuning"]
    assert body["source"] == "notes.md"


async def test_a_file_whose_name_cannot_be_stored_is_a_422_and_writes_nothing(
    client: httpx.AsyncClient,
) -> None:
    before = (await client.get("/api/documents")).json()["items"]
    # Built by hand: httpx would percent-encode the NUL in the file name.
    body = (
        b"--b0undary\r\n"
        b'Content-Disposition: form-data; name="file"; filename="no\x00tes.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\n"
        b"Plain words.\n\r\n"
        b"--b0undary--\r\n"
    )
    response = await client.post(
        "/api/documents",
        content=body,
        headers={"content-type": "multipart/form-data; boundary=b0undary"},
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"
    assert (await client.get("/api/documents")).json()["items"] == before


async def test_an_unsupported_file_is_a_415(client: httpx.AsyncClient) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(64)
    response = await client.post("/api/documents", files={"file": ("x.png", png, "image/png")})
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


async def test_a_body_that_is_neither_json_nor_multipart_is_a_415(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/api/documents", content=b"hello", headers={"content-type": "text/plain"}
    )
    assert response.status_code == 415


@pytest.mark.parametrize(
    "body",
    [
        {"content": "no title"},
        {"title": "no content"},
        {"title": "", "content": "x"},
        {"title": "t", "content": ""},
        {"title": "t", "content": "x", "visibility": "public"},
        {"title": "t", "content": "x", "visibilty": "org"},
        {"title": "t", "content": "x", "tags": "not-a-list"},
        {"title": "t", "content": "x", "workspace": "Not A Slug"},
        {"title": "t", "content": "x", "workspace": "no-such-workspace"},
        {"title": "t", "content": "   \n  "},
        {"title": "t", "content": "a\u0000b"},
        {"title": "t\u0000", "content": "x"},
        {"title": "t", "content": "x", "tags": ["a\u0000"]},
        {"title": "t", "content": "x", "source": "a\u0000"},
    ],
)
async def test_bad_documents_are_refused_and_write_nothing(
    client: httpx.AsyncClient, body: dict[str, object]
) -> None:
    before = (await client.get("/api/documents")).json()["items"]
    response = await client.post("/api/documents", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert (await client.get("/api/documents")).json()["items"] == before


async def test_malformed_json_is_a_422(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/api/documents", content=b'{"title": ', headers={"content-type": "application/json"}
    )
    assert response.status_code == 422


async def test_a_document_over_the_length_limit_is_a_413(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/api/documents", json={"title": "huge", "content": "word " * 400_001}
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


async def test_listing_filters_and_pages(client: httpx.AsyncClient) -> None:
    for i in range(3):
        await _create(client, title=f"Paged {i}", content=f"page {i} text", tags=["paged"])
    await _create(client, title="Other", content="other text", tags=["other"])
    first = (await client.get("/api/documents", params={"tag": "paged", "limit": 2})).json()
    assert len(first["items"]) == 2
    assert first["next_cursor"]
    second = (
        await client.get(
            "/api/documents", params={"tag": "paged", "limit": 2, "cursor": first["next_cursor"]}
        )
    ).json()
    titles = {d["title"] for d in first["items"] + second["items"]}
    assert titles == {"Paged 0", "Paged 1", "Paged 2"}
    assert second["next_cursor"] is None
    by_title = (await client.get("/api/documents", params={"q": "Other"})).json()["items"]
    assert [d["title"] for d in by_title] == ["Other"]


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 201}, {"cursor": "garbage!"}])
async def test_bad_paging_is_a_422(client: httpx.AsyncClient, params: dict[str, Any]) -> None:
    response = await client.get("/api/documents", params=params)
    assert response.status_code == 422


async def test_unknown_and_malformed_ids_are_404_and_422(client: httpx.AsyncClient) -> None:
    missing = await client.get("/api/documents/00000000-0000-0000-0000-000000000000")
    malformed = await client.get("/api/documents/not-a-uuid")
    assert missing.status_code == 404
    assert malformed.status_code == 422


async def test_a_title_edit_keeps_the_chunks_and_a_content_edit_replaces_them(
    client: httpx.AsyncClient,
) -> None:
    created = await _create(client)
    url = f"/api/documents/{created['id']}"
    chunks_before = (await client.get(f"{url}/chunks")).json()

    renamed = await client.patch(url, json={"title": "Release runbook", "tags": ["ops"]})
    assert renamed.status_code == 200
    assert renamed.json()["version"] == 1
    assert renamed.json()["tags"] == ["ops"]
    assert [c["id"] for c in (await client.get(f"{url}/chunks")).json()] == [
        c["id"] for c in chunks_before
    ]

    edited = await client.patch(url, json={"content": "# Deploy\n\nNow with blue-green.\n"})
    assert edited.json()["version"] == 2
    chunks_after = (await client.get(f"{url}/chunks")).json()
    assert {c["id"] for c in chunks_after}.isdisjoint({c["id"] for c in chunks_before})
    assert "blue-green" in chunks_after[0]["text"]


@pytest.mark.parametrize(
    "body", [{"title": None}, {"content": ""}, {"visibility": "public"}, {"owner": "me"}]
)
async def test_bad_edits_are_refused(client: httpx.AsyncClient, body: dict[str, object]) -> None:
    created = await _create(client)
    response = await client.patch(f"/api/documents/{created['id']}", json=body)
    assert response.status_code == 422


async def test_a_deleted_document_and_its_chunks_are_gone(client: httpx.AsyncClient) -> None:
    created = await _create(client)
    url = f"/api/documents/{created['id']}"
    assert (await client.delete(url)).status_code == 204
    assert (await client.get(url)).status_code == 404
    assert (await client.get(f"{url}/chunks")).status_code == 404
    assert (await client.delete(url)).status_code == 404
