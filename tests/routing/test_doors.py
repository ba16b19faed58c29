"""The multi-corpus doors over a running Corpus (real HTTP, a database of its own): the context
block, the cache in front of it, the Anvil-compatible searches, the policy and its admin edits,
and the rag_* MCP tools."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.types import CallToolResult, TextContent

from app.config import Settings
from app.routing import messages as routing_messages
from app.routing.context import FOOTNOTE_LEAD
from tests.accounts import Account
from tests.mcp.conftest import mcp_client
from tests.running import Running, run_corpus, run_fresh_corpus
from tests.support import eventually

HIROSHI = ["framework_nestjs", "framework_nextjs", "framework_prisma", "web_platform"]
WORD = "zqmigrate"
DOCS = {
    "framework_nestjs": f"# Modules\n\nNest modules {WORD} providers and injection.",
    "framework_nextjs": f"# Routing\n\nNext app router {WORD} layouts and pages.",
    "framework_prisma": f"# Migrations\n\nPrisma {WORD} schema migrations with migrate dev.",
}


@pytest.fixture(scope="module")
async def corpus(settings: Settings, server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    # Private addresses allowed: one test makes this Corpus a remote workspace of itself.
    async with run_fresh_corpus(
        server_url, data_dir, "corpus_routing", remote_allow_private=True
    ) as running:
        admin = await running.account("admin")
        async with _http(running, admin) as http:
            for slug, content in DOCS.items():
                made = await http.post("/api/workspaces", json={"slug": slug, "title": slug})
                assert made.status_code == 201
                added = await http.post(
                    "/api/documents",
                    json={"title": slug, "content": content, "workspace": slug},
                )
                assert added.status_code == 201
        yield running


def _http(corpus: Running, account: Account) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=corpus.url, headers=account.bearer, timeout=30)


async def _context(http: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    reply = await http.post("/api/context", json=body)
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    return data


async def test_a_persona_s_context_block_cites_its_workspaces_with_a_license_footnote(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer")
    async with _http(corpus, viewer) as http:
        body = await _context(http, query=WORD, persona="hiroshi")
    assert body["persona"] == "hiroshi"
    # The persona's workspaces that exist here, in its order; the absent one is reported.
    assert body["workspaces"] == HIROSHI[:3]
    assert body["missing_workspaces"] == ["web_platform"]
    assert body["failures"] == []
    sources = body["sources"]
    # Other tests of this module add documents: their number may grow, never their places.
    keys = [f"[{i}]" for i in range(1, len(sources) + 1)]
    assert {s["workspace"] for s in sources} == set(HIROSHI[:3])
    assert [s["key"] for s in sources] == keys
    assert [s["score"] for s in sources] == sorted((s["score"] for s in sources), reverse=True)
    licenses = {s["workspace"]: s["license"] for s in sources}
    assert licenses == {
        "framework_nestjs": "MIT",
        "framework_nextjs": "MIT",
        "framework_prisma": "Apache-2.0",
    }
    assert re.findall(r"^(\[\d+\]) ", body["block"], re.MULTILINE) == keys
    footnote = body["block"].rsplit("\n\n", 1)[1]
    assert footnote.startswith(FOOTNOTE_LEAD)
    mit = ", ".join(dict.fromkeys(s["workspace"] for s in sources if s["license"] == "MIT"))
    assert f"MIT ({mit})" in footnote
    assert "Apache-2.0 (framework_prisma)" in footnote
    assert body["tokens"] == -(-len(body["block"]) // 4) <= 2000


async def test_a_person_s_default_persona_routes_without_an_argument(corpus: Running) -> None:
    admin = await corpus.account("admin")
    person = await corpus.account("viewer")
    async with _http(corpus, admin) as http:
        changed = await http.patch(f"/api/people/{person.user.id}", json={"persona": "tom"})
        assert changed.status_code == 200
    async with _http(corpus, person) as http:
        body = await _context(http, query=WORD)
    assert body["persona"] == "tom"
    assert body["workspaces"] == ["framework_nextjs"]


async def test_a_persona_bound_to_the_key_routes_without_an_argument(corpus: Running) -> None:
    admin = await corpus.account("admin")
    agent = await corpus.account("viewer", kind="agent")
    async with _http(corpus, admin) as http:
        minted = await http.post(
            "/api/keys",
            json={"user_id": str(agent.user.id), "name": "sofia's", "persona": "sigma"},
        )
        assert minted.status_code == 201
    bound = Account(user=agent.user, key=minted.json()["key"], password=None)
    async with _http(corpus, bound) as http:
        body = await _context(http, query=f"{WORD} migrations")
        explicit = await _context(http, query=f"{WORD} migrations", persona="hiroshi")
    # sigma's workspaces do not exist here: nothing to search, nothing to cite.
    assert (body["persona"], body["workspaces"], body["block"]) == ("sigma", [], "")
    assert body["missing_workspaces"] == ["security_baseline", "engineering-standards"]
    assert explicit["persona"] == "hiroshi"


async def test_a_repeated_context_comes_from_the_cache_until_one_of_its_workspaces_changes(
    corpus: Running,
) -> None:
    editor = await corpus.account("editor")
    admin = await corpus.account("admin")
    query = {"query": f"{WORD} schema", "persona": "hiroshi", "top_k": 3}
    async with _http(corpus, editor) as http, _http(corpus, admin) as admin_http:
        before = (await admin_http.get("/api/cache/stats")).json()
        first = await _context(http, **query)
        second = await _context(http, **query)
        after = (await admin_http.get("/api/cache/stats")).json()
        assert (first["cache_hit"], second["cache_hit"]) == (False, True)
        assert second["sources"] == first["sources"]
        assert after["hits"] == before["hits"] + 1
        assert after["misses"] >= before["misses"] + 1
        assert after["size"] >= 1
        assert (after["capacity"], after["ttl_seconds"]) == (1000, 600)

        added = await http.post(
            "/api/documents",
            json={
                "title": "Baseline",
                "content": f"# Baselines\n\nPrisma {WORD} schema baselines for old databases.",
                "workspace": "framework_prisma",
            },
        )
        assert added.status_code == 201
        fresh: dict[str, Any] = {}

        async def dropped() -> bool:
            fresh.update(await _context(http, **query))
            return fresh["cache_hit"] is False

        await eventually(dropped, "the write drops the cached context", within_s=10)
    assert added.json()["id"] in {s["document_id"] for s in fresh["sources"]}


async def test_two_people_with_different_private_documents_never_share_a_cache_entry(
    corpus: Running,
) -> None:
    alice = await corpus.account("editor")
    bob = await corpus.account("editor")
    secret = f"zq{uuid.uuid4().hex[:10]}"
    query = {"query": f"{secret} rotation", "persona": "hiroshi"}
    async with _http(corpus, alice) as a, _http(corpus, bob) as b:
        for account_http, whose in ((a, "alice"), (b, "bob")):
            made = await account_http.post(
                "/api/documents",
                json={
                    "title": f"{whose} notes",
                    "content": f"# Keys\n\n{secret} rotation notes of {whose}.",
                    "workspace": "framework_nestjs",
                    "visibility": "private",
                },
            )
            assert made.status_code == 201

        async def settled() -> bool:
            # Both writes' notifications have arrived once a fresh search is a miss and then a hit.
            await _context(a, **query)
            return (await _context(a, **query))["cache_hit"] is True

        await eventually(settled, "alice's context is cached", within_s=10)
        theirs = await _context(b, **query)
        again = await _context(b, **query)
        mine = await _context(a, **query)
    assert theirs["cache_hit"] is False
    assert again["cache_hit"] is True
    assert {s["title"] for s in theirs["sources"]} == {"bob notes"}
    assert {s["title"] for s in mine["sources"]} == {"alice notes"}


async def test_a_session_s_stored_message_stands_in_for_the_query(corpus: Running) -> None:
    viewer = await corpus.account("viewer")
    other = await corpus.account("viewer")
    async with _http(corpus, viewer) as http, _http(corpus, other) as other_http:
        stored = await http.post(
            "/api/context/sessions/chat-42/message", json={"text": f"{WORD} layouts"}
        )
        assert stored.status_code == 204
        by_session = await _context(http, session_id="chat-42", persona="hiroshi")
        by_query = await _context(http, query=f"{WORD} layouts", persona="hiroshi")
        # Another caller's session of the same name is not this one's.
        missing = await other_http.post("/api/context", json={"session_id": "chat-42"})
    assert by_session["sources"] == by_query["sources"] != []
    assert by_query["cache_hit"] is True
    assert missing.status_code == 422
    assert missing.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize(
    ("capacity", "per_caller"),
    [(20, 8), (20, 1000)],
    ids=["the caller's own share", "the whole store"],
)
async def test_a_callers_flood_of_session_messages_evicts_only_its_own(
    server_url: str,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capacity: int,
    per_caller: int,
) -> None:
    # The store's bounds made small, so that a flood of 30 messages passes them.
    monkeypatch.setattr(routing_messages, "SESSION_MESSAGES", capacity)
    monkeypatch.setattr(routing_messages, "SESSION_MESSAGES_PER_CALLER", per_caller)
    async with run_fresh_corpus(server_url, data_dir, "corpus_session_flood") as running:
        victim, flooder = await running.account("viewer"), await running.account("viewer")
        longest = "x" * running.settings.max_query_chars
        async with _http(running, victim) as mine, _http(running, flooder) as theirs:
            stored = await mine.post("/api/context/sessions/kept/message", json={"text": WORD})
            assert stored.status_code == 204
            for i in range(30):
                flooded = await theirs.post(
                    f"/api/context/sessions/flood-{i}/message", json={"text": longest}
                )
                assert flooded.status_code == 204
            kept = await mine.post("/api/context", json={"session_id": "kept"})
            newest = await theirs.post("/api/context", json={"session_id": "flood-29"})
            oldest = await theirs.post("/api/context", json={"session_id": "flood-0"})
    assert kept.status_code == 200, kept.text
    assert newest.status_code == 200, newest.text
    assert oldest.status_code == 422
    assert oldest.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize("text", ["over", "   "], ids=["over the query limit", "blank"])
async def test_a_session_message_that_could_not_be_used_is_refused_and_stores_nothing(
    corpus: Running, text: str
) -> None:
    viewer = await corpus.account("viewer")
    refused_text = "x" * (corpus.settings.max_query_chars + 1) if text == "over" else text
    async with _http(corpus, viewer) as http:
        kept = await http.post("/api/context/sessions/kept/message", json={"text": WORD})
        refused = await http.post("/api/context/sessions/kept/message", json={"text": refused_text})
        new = await http.post("/api/context/sessions/new/message", json={"text": refused_text})
        by_kept = await http.post("/api/context", json={"session_id": "kept"})
        by_new = await http.post("/api/context", json={"session_id": "new"})
    assert kept.status_code == 204
    assert (refused.status_code, new.status_code) == (422, 422)
    assert refused.json()["error"]["code"] == new.json()["error"]["code"] == "validation_error"
    # The session's earlier message stands; the new session has none.
    assert by_kept.status_code == 200, by_kept.text
    assert by_new.status_code == 422
    assert by_new.json()["error"]["code"] == "validation_error"


async def _bound_to_nestjs(http: httpx.AsyncClient, agent: Account) -> Account:
    """The agent with a key bound to `framework_nestjs`, minted by the admin's `http`."""
    minted = await http.post(
        "/api/keys",
        json={"user_id": str(agent.user.id), "name": "nest", "workspace": "framework_nestjs"},
    )
    assert minted.status_code == 201
    return Account(user=agent.user, key=minted.json()["key"], password=None)


async def test_the_single_workspace_search_takes_its_workspace_from_the_key(
    corpus: Running,
) -> None:
    admin = await corpus.account("admin")
    agent = await corpus.account("viewer", kind="agent")
    async with _http(corpus, admin) as http:
        bound = await _bound_to_nestjs(http, agent)
        unbound = await http.post("/v1/knowledge/search", json={"query": WORD})
    async with _http(corpus, bound) as http:
        reply = await http.post("/v1/knowledge/search", json={"query": f"{WORD} providers"})
    assert unbound.status_code == 400
    assert unbound.json()["error"]["code"] == "bad_request"
    assert reply.status_code == 200
    body = reply.json()
    assert {r["workspace"] for r in body["results"]} == {"framework_nestjs"}
    assert set(body["results"][0]) >= {
        "workspace",
        "document_id",
        "chunk_id",
        "title",
        "text",
        "score",
        "license",
    }
    assert body["results"][0]["license"] == "MIT"
    assert (body["failures"], body["cache_hit"]) == ([], False)


async def test_the_multi_search_takes_an_allowlist_and_reports_what_it_cannot_search(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer")
    async with _http(corpus, viewer) as http:
        reply = await http.post(
            "/v1/knowledge/search-multi",
            json={
                "query": f"{WORD} migrations",
                "workspaces": ["framework_prisma", "no_such_place", "framework_nextjs"],
                "top_k": 1,
            },
        )
        empty = await http.post(
            "/v1/knowledge/search-multi", json={"query": WORD, "workspaces": []}
        )
    assert reply.status_code == 200
    body = reply.json()
    assert sorted(r["workspace"] for r in body["results"]) == [
        "framework_nextjs",
        "framework_prisma",
    ]
    assert [f["workspace"] for f in body["failures"]] == ["no_such_place"]
    assert empty.status_code == 422


async def test_a_key_bound_to_a_workspace_sees_the_policy_of_that_workspace_only(
    corpus: Running,
) -> None:
    admin = await corpus.account("admin")
    agent = await corpus.account("viewer", kind="agent")
    async with _http(corpus, admin) as http:
        bound = await _bound_to_nestjs(http, agent)
        whole = (await http.get("/api/policy")).json()
    async with _http(corpus, bound) as http:
        reply = await http.get("/api/policy")
    async with mcp_client(corpus.mcp_url, bound.key) as client:
        tool = _tool(await client.call_tool("rag_policy", {}))
        one = _tool(await client.call_tool("rag_policy", {"persona": "hiroshi"}))
        listed = _tool(await client.call_tool("rag_workspaces", {}))
    assert reply.status_code == 200
    policy = reply.json()
    # Every name the whole policy gives, but of the workspaces only the key's own.
    assert set(policy["personas"]) == set(whole["personas"])
    assert policy["personas"]["hiroshi"] == {
        "workspaces": ["framework_nestjs"],
        "source": "builtin",
    }
    assert {w for p in policy["personas"].values() for w in p["workspaces"]} == {"framework_nestjs"}
    assert set(policy["licenses"]) == {"framework_nestjs"}
    assert policy["licenses"]["framework_nestjs"] == whole["licenses"]["framework_nestjs"]
    assert policy["missing_workspaces"] == []
    # The MCP tool answers alike, and names what rag_workspaces lists, no more.
    assert tool == policy
    assert one["personas"] == {"hiroshi": policy["personas"]["hiroshi"]}
    assert set(one["licenses"]) == {"framework_nestjs"}
    assert one["missing_workspaces"] == []
    assert set(policy["licenses"]) == {w["slug"] for w in listed["items"]}


async def test_admins_override_a_persona_and_drop_the_override_both_audited(
    corpus: Running,
) -> None:
    admin = await corpus.account("admin")
    viewer = await corpus.account("viewer")
    async with _http(corpus, admin) as http, _http(corpus, viewer) as viewer_http:
        shipped = (await viewer_http.get("/api/policy")).json()
        assert shipped["routing_mode"] == "persona-routed"
        assert shipped["personas"]["hiroshi"] == {"workspaces": HIROSHI, "source": "builtin"}
        assert shipped["licenses"]["framework_prisma"] == {
            "license": "Apache-2.0",
            "source": "builtin",
        }
        assert "web_platform" in shipped["missing_workspaces"]

        refused = await viewer_http.put(
            "/api/policy/personas/hiroshi", json={"workspaces": ["framework_prisma"]}
        )
        set_ = await http.put(
            "/api/policy/personas/hiroshi", json={"workspaces": ["framework_prisma"]}
        )
        routed = await _context(viewer_http, query=f"{WORD} router", persona="hiroshi")
        dropped = await http.delete("/api/policy/personas/hiroshi")
        again = await http.delete("/api/policy/personas/hiroshi")
        restored = (await viewer_http.get("/api/policy")).json()
        audit = (await http.get("/api/audit", params={"target": "hiroshi"})).json()
    assert refused.status_code == 403
    assert set_.status_code == 200
    assert set_.json()["personas"]["hiroshi"] == {
        "workspaces": ["framework_prisma"],
        "source": "admin",
    }
    assert routed["workspaces"] == ["framework_prisma"]
    assert dropped.status_code == 204
    assert again.status_code == 404
    assert restored["personas"]["hiroshi"]["source"] == "builtin"
    actions = [(e["action"], e["before"], e["after"]) for e in audit["items"]]
    assert actions == [
        ("persona.delete", {"workspaces": ["framework_prisma"]}, None),
        ("persona.set", None, {"workspaces": ["framework_prisma"]}),
    ]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("POST", "/api/context", {"query": "   "}, 422, "validation_error"),
        ("POST", "/api/context", {"query": "x", "persona": "nobody"}, 422, "validation_error"),
        ("POST", "/api/context", {"query": "x", "token_budget": 0}, 422, "validation_error"),
        ("POST", "/api/context", {"query": "x", "colour": "red"}, 422, "validation_error"),
        ("POST", "/api/context", {}, 422, "validation_error"),
        ("PUT", "/api/policy/personas/Bad%20Name", {"workspaces": []}, 422, "validation_error"),
        ("PUT", "/api/policy/personas/ok", {"workspaces": ["NOT A SLUG"]}, 422, "validation_error"),
        ("POST", "/v1/knowledge/search-multi", {"query": "", "workspaces": ["a"]}, 422, None),
        ("GET", "/api/cache/stats", None, 403, "forbidden"),
    ],
)
async def test_bad_input_is_refused_with_its_code_and_changes_nothing(
    corpus: Running,
    method: str,
    path: str,
    body: dict[str, Any] | None,
    status: int,
    code: str | None,
) -> None:
    viewer = await corpus.account("viewer")
    admin = await corpus.account("admin")
    caller = viewer if status == 403 else admin
    async with _http(corpus, caller) as http:
        before = (await http.get("/api/policy")).json()
        reply = await http.request(method, path, json=body)
        after = (await http.get("/api/policy")).json()
    assert reply.status_code == status
    assert reply.json()["error"]["code"] == (code or "validation_error")
    assert after == before


async def test_a_fan_out_holds_at_most_one_connection_at_a_time_per_request(
    corpus: Running,
) -> None:
    """With a pool of one connection, a request that held its own while fanning out would wait
    for itself until the deadline. Several context requests over three workspaces at once all
    answer in full."""
    async with run_corpus(
        corpus.settings.data_dir, corpus.settings.database_url, db_max_connections=1
    ) as narrow:
        viewer = await narrow.account("viewer")
        async with _http(narrow, viewer) as http:
            replies = await asyncio.gather(
                *(
                    http.post(
                        "/api/context",
                        json={"query": f"{WORD} {word}", "persona": "hiroshi"},
                    )
                    for word in ("modules", "layouts", "migrations", "injection")
                )
            )
    assert [r.status_code for r in replies] == [200] * 4
    assert all(r.json()["failures"] == [] for r in replies)
    assert all(len(r.json()["workspaces"]) == 3 for r in replies)


def _tool(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.content
    data: dict[str, Any] | None = result.structured_content
    assert data is not None
    return data


def _tool_error(result: CallToolResult) -> str:
    assert result.is_error is True
    [reply] = result.content
    assert isinstance(reply, TextContent)
    return reply.text.partition(": ")[2].split(":", 1)[0]


async def test_the_rag_tools_answer_over_mcp_as_the_http_doors_do(corpus: Running) -> None:
    viewer = await corpus.account("viewer", kind="agent")
    admin = await corpus.account("admin", kind="agent")
    async with mcp_client(corpus.mcp_url, viewer.key) as client:
        policy = _tool(await client.call_tool("rag_policy", {"persona": "hiroshi"}))
        unknown = await client.call_tool("rag_policy", {"persona": "nobody"})
        workspaces = _tool(await client.call_tool("rag_workspaces", {}))
        searched = _tool(
            await client.call_tool(
                "rag_search",
                {"query": f"{WORD} migrations", "persona": "hiroshi", "workspaces": HIROSHI[2:]},
            )
        )
        block = _tool(
            await client.call_tool(
                "rag_context", {"query": f"{WORD} migrations", "persona": "hiroshi"}
            )
        )
        stats = await client.call_tool("rag_cache_stats", {})
    async with mcp_client(corpus.mcp_url, admin.key) as client:
        admin_stats = _tool(await client.call_tool("rag_cache_stats", {}))
    assert list(policy["personas"]) == ["hiroshi"]
    assert policy["missing_workspaces"] == ["web_platform"]
    assert _tool_error(unknown) == "not_found"
    listed = {w["slug"]: w for w in workspaces["items"]}
    assert listed["framework_prisma"]["license"] == "Apache-2.0"
    assert listed["framework_prisma"]["license_source"] == "builtin"
    assert listed["default"]["license"] == "PROPRIETARY"
    assert searched["workspaces"] == ["framework_prisma"]
    assert {r["workspace"] for r in searched["results"]} == {"framework_prisma"}
    # The persona names a workspace this server lacks: the reply says so, not only nothing.
    assert [(f["workspace"], f["reason"].split(":")[0]) for f in searched["failures"]] == [
        ("web_platform", "not_found")
    ]
    assert block["persona"] == "hiroshi"
    assert block["block"].rsplit("\n\n", 1)[1].startswith(FOOTNOTE_LEAD)
    assert _tool_error(stats) == "forbidden"
    assert set(admin_stats) == {"size", "capacity", "hits", "misses", "hit_rate", "ttl_seconds"}


async def test_a_corpus_is_a_remote_workspace_of_another_through_the_anvil_contract(
    corpus: Running,
) -> None:
    """The fan-out's remote client is a client of the Anvil contract; pointed at a Corpus (here
    this one) with a key bound to a workspace, it reads that workspace over HTTP unchanged, but
    for the ids: the remote's name nothing here."""
    admin = await corpus.account("admin")
    agent = await corpus.account("viewer", kind="agent")
    async with _http(corpus, admin) as http:
        minted = await http.post(
            "/api/keys",
            json={"user_id": str(agent.user.id), "name": "mirror", "workspace": "framework_prisma"},
        )
        assert minted.status_code == 201
        created = await http.post(
            "/api/workspaces",
            json={
                "slug": "mirror_prisma",
                "title": "Prisma, over HTTP",
                "license": "Apache-2.0",
                "remote_url": corpus.url,
                "remote_token": minted.json()["key"],
            },
        )
        assert created.status_code == 201
        query = {"query": f"{WORD} migrations", "top_k": 3}
        local = await http.post(
            "/v1/knowledge/search-multi", json={**query, "workspaces": ["framework_prisma"]}
        )
        remote = await http.post(
            "/v1/knowledge/search-multi", json={**query, "workspaces": ["mirror_prisma"]}
        )
    assert remote.status_code == 200
    body = remote.json()
    assert body["failures"] == []
    assert {r["workspace"] for r in body["results"]} == {"mirror_prisma"}
    assert [(r["title"], r["text"], r["score"]) for r in body["results"]] == [
        (r["title"], r["text"], r["score"]) for r in local.json()["results"]
    ]
    assert all(r["score"] is not None for r in body["results"])
    assert all(r["document_id"] is None and r["chunk_id"] is None for r in body["results"])
