"""Every MCP call names its agent beside its person: a question asked through the agents' door
records the API key it came through, a document an agent writes carries the key, and the
audit log names the key and the person for each write (an OAuth client is named the same way:
tests/mcp/test_client_documents.py)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from mcp.types import CallToolResult
from sqlalchemy import text

from tests.mcp.conftest import mcp_client
from tests.running import Running


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.content
    data: dict[str, Any] | None = result.structured_content
    assert data is not None
    return data


async def test_an_agents_question_note_and_deletion_name_its_key_and_its_person(
    corpus: Running,
) -> None:
    editor = await corpus.account("editor")
    word = f"zq{uuid.uuid4().hex[:12]}"
    async with corpus.db.read() as conn:
        key_id = (
            await conn.execute(
                text("SELECT id FROM api_keys WHERE user_id = :u"), {"u": editor.user.id}
            )
        ).scalar_one()
    async with mcp_client(corpus.mcp_url, editor.key) as client:
        created = _ok(
            await client.call_tool(
                "upload_document", {"title": f"Note {word}", "content": f"# {word}\n\nText."}
            )
        )
        _ok(await client.call_tool("search_docs", {"query": f"where is {word}"}))
        _ok(await client.call_tool("delete_document", {"document_id": created["id"]}))

    async with corpus.db.read() as conn:
        question = (
            await conn.execute(
                text(
                    "SELECT user_id, door, agent_key_id, agent_client_id FROM questions"
                    " WHERE query = :q"
                ),
                {"q": f"where is {word}"},
            )
        ).one()
        audit = (
            await conn.execute(
                text(
                    "SELECT action, actor_id, agent_key_id, agent_client_id FROM audit_log"
                    " WHERE target_id = :d ORDER BY at, action"
                ),
                {"d": created["id"]},
            )
        ).all()
    assert tuple(question) == (editor.user.id, "mcp", key_id, None)
    assert [tuple(row) for row in audit] == [
        ("document.create", editor.user.id, key_id, None),
        ("document.delete", editor.user.id, key_id, None),
    ]


async def test_a_note_an_agent_writes_carries_its_key(corpus: Running) -> None:
    editor = await corpus.account("editor")
    word = f"zq{uuid.uuid4().hex[:12]}"
    async with mcp_client(corpus.mcp_url, editor.key) as client:
        created = _ok(
            await client.call_tool(
                "upload_document", {"title": f"Kept {word}", "content": f"# {word}\n\nText."}
            )
        )
    async with corpus.db.read() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT d.owner_id, d.agent_key_id = k.id, d.agent_client_id"
                    " FROM documents d JOIN api_keys k ON k.user_id = d.owner_id"
                    " WHERE d.id = :d"
                ),
                {"d": created["id"]},
            )
        ).one()
    assert tuple(row) == (editor.user.id, True, None)


async def test_a_documentation_gap_counts_the_agents_its_question_came_through(
    corpus: Running,
) -> None:
    editor, admin = await corpus.account("editor"), await corpus.account("admin")
    word = f"zq{uuid.uuid4().hex[:12]}"
    async with mcp_client(corpus.mcp_url, editor.key) as client:
        found = _ok(
            await client.call_tool("search_docs", {"query": f"{word} runbook", "mode": "keyword"})
        )
    assert found["hits"] == []
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        gaps = (await http.get("/api/gaps")).json()["items"]
    [gap] = [g for g in gaps if word in g["question"]]
    assert (gap["count"], gap["people"], gap["agents"]) == (1, 1, 1)
