"""A key bound to one workspace reads and writes only there (ADR 0005), whatever its role: over
real HTTP, a bound admin key is refused every admin route and every workspace but its own, and
cannot mint a key at all (so never one wider than itself)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from app.access import capabilities
from app.access.principal import LOCAL_ADMIN
from app.auth import service as auth_service
from app.db.engine import ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from app.rag.embeddings import make_embedder
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceCreate
from tests.accounts import Account, make_account
from tests.mcp.conftest import mcp_client
from tests.running import Running, run_fresh_corpus


@dataclass
class Bound:
    """A running Corpus with workspaces `alpha` and `beta`, a document in each, an admin key
    bound to `alpha` and an account for targets."""

    corpus: Running
    key: Account  # an admin whose key is bound to alpha
    other: Account  # a viewer, the target of people and key routes
    alpha_doc: str
    beta_doc: str
    beta_word: str

    @property
    def bearer(self) -> dict[str, str]:
        return self.key.bearer


@pytest.fixture(scope="module")
async def bound(server_url: str, data_dir: Path) -> AsyncIterator[Bound]:
    async with run_fresh_corpus(server_url, data_dir, "corpus_bound") as corpus:
        beta_word = f"zebrafish{uuid.uuid4().hex[:6]}"
        async with corpus.db.write() as raw:
            conn = WriteConnection(ReadConnection(raw))
            for slug in ("alpha", "beta"):
                await workspaces_service.create_workspace(
                    conn, LOCAL_ADMIN, WorkspaceCreate(slug=slug, title=slug.title())
                )
            embedder = make_embedder(corpus.settings)
            docs = {}
            for slug, body in (("alpha", "Alpha runbook."), ("beta", f"Beta {beta_word} notes.")):
                created = await documents_service.create(
                    conn,
                    LOCAL_ADMIN,
                    embedder,
                    corpus.settings,
                    DocumentCreate(title=f"{slug} doc", content=body, workspace=slug),
                )
                docs[slug] = str(created.id)
            key = await make_account(raw, "admin", workspace="alpha")
            other = await make_account(raw, "viewer")
        yield Bound(corpus, key, other, docs["alpha"], docs["beta"], beta_word)


async def _key_id(bound: Bound) -> str:
    async with bound.corpus.db.read() as conn:
        keys = await auth_service.list_keys(WriteConnection(ReadConnection(conn)), LOCAL_ADMIN)
    return str(next(k.id for k in keys if k.user_id == bound.other.user.id))


async def test_a_bound_admin_key_is_refused_every_admin_route(bound: Bound) -> None:
    person = bound.other.user.id
    calls: list[tuple[str, str, Any]] = [
        ("GET", "/api/people", None),
        (
            "POST",
            "/api/people",
            {"email": f"n-{uuid.uuid4().hex[:6]}@example.com", "role": "viewer"},
        ),
        ("PATCH", f"/api/people/{person}", {"display_name": "Renamed"}),
        ("POST", f"/api/people/{person}/reset-password", None),
        ("POST", f"/api/people/{person}/unlock", None),
        ("GET", "/api/keys", None),
        ("POST", "/api/keys", {"user_id": str(person), "name": "wider"}),
        ("POST", "/api/keys", {"user_id": str(person), "name": "same", "workspace": "alpha"}),
        ("DELETE", f"/api/keys/{await _key_id(bound)}", None),
        ("GET", "/api/audit", None),
        ("POST", "/api/workspaces", {"slug": f"ws-{uuid.uuid4().hex[:6]}", "title": "W"}),
        ("PATCH", "/api/workspaces/beta", {"title": "Taken over"}),
        ("PATCH", "/api/workspaces/alpha", {"title": "Renamed"}),
    ]
    async with bound.corpus.db.read() as conn:
        before = (await conn.execute(text("SELECT count(*) FROM api_keys"))).scalar_one()
    got = {}
    async with httpx.AsyncClient(base_url=bound.corpus.url, headers=bound.bearer) as http:
        for method, path, body in calls:
            reply = await http.request(method, path, json=body)
            code = reply.json()["error"]["code"] if reply.status_code >= 400 else None
            got[f"{method} {path}"] = (reply.status_code, code)
        workspaces = (await http.get("/api/workspaces")).json()["items"]
    assert set(got.values()) == {(403, "forbidden")}, got
    async with bound.corpus.db.read() as conn:
        after = (await conn.execute(text("SELECT count(*) FROM api_keys"))).scalar_one()
        rows = await conn.execute(text("SELECT slug, title FROM workspaces"))
        titles: dict[str, str] = {row.slug: row.title for row in rows}
    assert after == before
    assert (titles["alpha"], titles["beta"]) == ("Alpha", "Beta")
    assert [w["slug"] for w in workspaces] == ["alpha"]


async def test_a_bound_key_lists_sees_and_searches_only_its_workspace(bound: Bound) -> None:
    async with httpx.AsyncClient(base_url=bound.corpus.url, headers=bound.bearer) as http:
        workspaces = (await http.get("/api/workspaces")).json()["items"]
        listed = (await http.get("/api/documents")).json()["items"]
        in_beta = (await http.get("/api/documents", params={"workspace": "beta"})).json()["items"]
        beta_doc = await http.get(f"/api/documents/{bound.beta_doc}")
        alpha_doc = await http.get(f"/api/documents/{bound.alpha_doc}")
        searched = await http.post("/api/search", json={"query": bound.beta_word})
        asked_beta = await http.post(
            "/api/search", json={"query": bound.beta_word, "workspaces": ["beta"]}
        )
        write_beta = await http.post(
            "/api/documents", json={"title": "T", "content": "Body.", "workspace": "beta"}
        )
        edit_beta = await http.patch(f"/api/documents/{bound.beta_doc}", json={"title": "X"})
    assert [w["slug"] for w in workspaces] == ["alpha"]
    assert [d["id"] for d in listed] == [bound.alpha_doc]
    assert in_beta == []
    assert (beta_doc.status_code, alpha_doc.status_code) == (404, 200)
    assert searched.status_code == 200
    assert {h["workspace"] for h in searched.json()["hits"]} <= {"alpha"}
    # Naming only another workspace leaves nothing to search: refused, not an empty answer.
    assert (asked_beta.status_code, asked_beta.json()["error"]["code"]) == (422, "validation_error")
    assert (write_beta.status_code, write_beta.json()["error"]["code"]) == (403, "forbidden")
    assert edit_beta.status_code == 404
    # An unbound caller sees both: the filter is the key's, not the data's.
    async with httpx.AsyncClient(base_url=bound.corpus.url, headers=bound.other.bearer) as http:
        everything = (await http.get("/api/workspaces")).json()["items"]
    assert {"alpha", "beta"} <= {w["slug"] for w in everything}


async def test_a_bound_key_over_mcp_sees_only_its_workspace(bound: Bound) -> None:
    async with mcp_client(bound.corpus.mcp_url, bound.key.key) as client:
        listed = await client.call_tool("list_documents", {})
        read = await client.call_tool("read_document", {"document_id": bound.beta_doc})
        upload = await client.call_tool(
            "upload_document", {"title": "T", "content": "Body.", "workspace": "beta"}
        )
    ids = {d["id"] for d in (listed.structured_content or {}).get("items", [])}
    assert ids == {bound.alpha_doc}
    assert read.is_error is True
    assert upload.is_error is True


def test_a_bound_callers_agents_get_no_tool_that_spans_workspaces() -> None:
    assert "documentation_gaps" in capabilities.agent_tools("admin")
    assert "documentation_gaps" not in capabilities.agent_tools("admin", bound=True)
    assert not capabilities.allows("admin", "audit.read", bound=True)
    assert capabilities.allows("admin", "documents.manage", bound=True)
