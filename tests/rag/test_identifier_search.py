"""Identifiers are found over HTTP, by themselves and by their parts, in keyword and hybrid
search (issue #33): each passage below holds one, and the others use its parts as prose."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from app.config import Settings
from app.rag import retrieval
from tests.accounts import authorize

PASSAGES = {
    "health": (
        "Health checks",
        "Kubernetes probes two endpoints. `GET /healthz` answers 200 while the process runs; "
        "`GET /readyz` answers 200 once the database is reachable and migrated, 503 before.",
    ),
    "multi": (
        "Several collections",
        "How to serve more than one collection from a single server is described in "
        "docs/multi-corpus.md, with the routing rules for each persona.",
    ),
    "keys": (
        "Signing keys",
        "Rotate the signing key by setting KEY_ID to the new key's name; tokens signed with "
        "the old key stay valid until they expire.",
    ),
    "signup": (
        "Sign-up",
        "Anyone may create an account when CORPUS_OPEN_SIGNUP is true; otherwise an admin "
        "invites each person.",
    ),
    "queries": (
        "Where the SQL lives",
        "Every statement of retrieval is in app.rag.queries: the chunk inserts, the postings "
        "and the hybrid search statement.",
    ),
    "database": (
        "The database",
        "With no DATABASE_URL the server starts embeddedPostgres in the data folder and stops "
        "it with the last process.",
    ),
    "cli": (
        "Ingesting a folder",
        "`corpus ingest ./docs --workspace handbook` adds every Markdown file of the folder to "
        "the handbook.",
    ),
    "release": (
        "Release notes",
        "Upgrading to v2.3.0 rebuilds the vector index once; plan for a few minutes of it.",
    ),
    "lint": (
        "Line length",
        "ruff reports E501 for lines over 100 characters; the formatter wraps most of them.",
    ),
    # Prose that holds the identifiers' parts, so that a match on parts alone competes.
    "prose-1": (
        "Workspaces",
        "A workspace groups documents. Each workspace has members; a workspace admin adds "
        "people to the workspace, and a workspace key opens only that workspace.",
    ),
    "prose-2": (
        "Keys and ids",
        "Each API key has an id and a name. The key id appears in the audit log; revoke a key "
        "by its id. An open door for every key is not what we want: keys expire.",
    ),
    "prose-3": (
        "Open questions",
        "Open questions are recorded as gaps. The signup page links to the open questions of "
        "the corpus when the corpus is open for signup by invitation.",
    ),
    "prose-4": (
        "Queries",
        "Queries are logged. Slow queries of the rag pipeline are listed by the app's admin "
        "screen with the app version; rag queries over many queries are batched.",
    ),
    "prose-5": (
        "Embedded content",
        "Embedded images are kept with the document. Postgres stores them; embedded videos "
        "are links. Postgres and embedded files are backed up nightly.",
    ),
    "prose-6": (
        "Health",
        "The health of the corpus is its freshness: documents are ready for readers once "
        "reviewed, and health reports list the ones that are not ready.",
    ),
    "prose-7": (
        "Versions",
        "Version 2 and version 3 of the API differ; version 0 is gone. See the release "
        "notes of each version.",
    ),
}

# (query, the passage it must find in the top three): the identifiers, written as they
# are and as people ask about them.
QUERIES = [
    ("readyz", "health"),
    ("healthz", "health"),
    ("/readyz", "health"),
    ("multi-corpus", "multi"),
    ("docs/multi-corpus.md", "multi"),
    ("multi-corpus.md", "multi"),
    ("KEY_ID", "keys"),
    ("CORPUS_OPEN_SIGNUP", "signup"),
    ("open signup", "signup"),
    ("app.rag.queries", "queries"),
    ("rag.queries", "queries"),
    ("embeddedPostgres", "database"),
    ("embedded postgres", "database"),
    ("--workspace", "cli"),
    ("v2.3.0", "release"),
    ("2.3.0", "release"),
    ("E501", "lint"),
]


@pytest.fixture
async def passages(client: httpx.AsyncClient, conn: AsyncConnection) -> dict[str, str]:
    """The passages' document ids by their names, added over HTTP by an admin."""
    await authorize(client, conn, "admin")
    ids: dict[str, str] = {}
    for name, (title, content) in PASSAGES.items():
        response = await client.post("/api/documents", json={"title": title, "content": content})
        assert response.status_code == 201, response.text
        ids[response.json()["id"]] = name
    return ids


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
async def test_each_identifier_finds_its_passage_in_the_top_three(
    client: httpx.AsyncClient, passages: dict[str, str], mode: str
) -> None:
    missed: list[tuple[str, list[str]]] = []
    for query, wanted in QUERIES:
        response = await client.post("/api/search", json={"query": query, "mode": mode})
        assert response.status_code == 200, response.text
        top = [passages[hit["document_id"]] for hit in response.json()["hits"][:3]]
        if wanted not in top:
            missed.append((query, top))
    assert missed == []


async def test_an_exact_identifier_ranks_above_its_parts_in_prose(
    client: httpx.AsyncClient, passages: dict[str, str]
) -> None:
    response = await client.post("/api/search", json={"query": "KEY_ID", "mode": "keyword"})
    hits = response.json()["hits"]
    assert passages[hits[0]["document_id"]] == "keys"
    assert "key_id" in hits[0]["matched_terms"]


async def test_a_title_change_keeps_identifiers_found(
    client: httpx.AsyncClient, passages: dict[str, str]
) -> None:
    keys = next(id_ for id_, name in passages.items() if name == "keys")
    response = await client.patch(f"/api/documents/{keys}", json={"title": "SIGNING_KEY rotation"})
    assert response.status_code == 200, response.text
    for query in ("SIGNING_KEY", "KEY_ID"):
        response = await client.post("/api/search", json={"query": query, "mode": "keyword"})
        assert passages[response.json()["hits"][0]["document_id"]] == "keys", query


def test_a_query_naming_an_identifier_weighs_the_keyword_half_more(settings: Settings) -> None:
    def factor(query: str) -> float:
        return retrieval.search_params(
            query,
            None,
            settings,
            mode="hybrid",
            caller_id=None,
            workspace_ids=None,
            tags=None,
            limit=10,
        ).dense_factor

    named = retrieval.DEFAULT_TUNING.named_dense_factor
    assert factor("where is app.rag.queries") == named
    assert factor("set KEY_ID") == named
    assert factor("how do I rotate the signing key") == 1.0
    assert named < 1.0
