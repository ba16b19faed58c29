"""The agents' door end to end over real HTTP with API keys: every tool with the SDK's own
client, what each role may do, private documents, bad arguments, and the refusals that come
before any tool runs (no credential, a revoked key, a foreign Host)."""

from __future__ import annotations

import base64
import re
import uuid
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, TextContent
from sqlalchemy import text

from app.access.principal import LOCAL_ADMIN
from app.auth import service as auth_service
from app.main import create_app
from app.people import service as people_service
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceCreate
from tests.accounts import HASHER, Account
from tests.mcp.conftest import mcp_client
from tests.running import Running
from tests.support import lifespan, make_settings

TOOLS = {
    "whoami",
    "search_docs",
    "upload_document",
    "list_documents",
    "read_document",
    "delete_document",
    "ask_docs",
    "deep_research",
    "research_result",
    "rag_search",
    "rag_workspaces",
    "rag_policy",
    "rag_cache_stats",
    "rag_context",
}
WRITE_TOOLS = {"upload_document", "delete_document"}
ADMIN_TOOLS = {"rag_cache_stats"}
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"


# --- helpers --------------------------------------------------------------------------------


def _word() -> str:
    """A word no other document has, so that searches and filters find only ours."""
    return f"zq{uuid.uuid4().hex[:12]}"


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.content
    data: dict[str, Any] | None = result.structured_content
    assert data is not None
    return data


def _error_text(result: CallToolResult) -> str:
    assert result.is_error is True, result.structured_content
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def _code(result: CallToolResult) -> str:
    """The code of a tool error. Ours read `<code>: <message>`; the SDK puts
    `Error executing tool <name>: ` in front."""
    prefix, _, ours = _error_text(result).partition(": ")
    assert prefix.startswith("Error executing tool "), prefix
    return ours.split(":", 1)[0]


def _schema_error(result: CallToolResult) -> str:
    """The pydantic error type of arguments the SDK refused against the tool's input schema:
    the tool never ran, so there is no code of ours, but the type names the broken rule."""
    match = re.search(r"\[type=(\w+)", _error_text(result))
    assert match is not None, _error_text(result)
    return match.group(1)


async def _owned_documents(corpus: Running, account: Account) -> int:
    async with corpus.db.read() as conn:
        rows = await conn.execute(
            text("SELECT count(*) FROM documents WHERE owner_id = :u"), {"u": account.user.id}
        )
        return int(rows.scalar_one())


async def _questions(corpus: Running, account: Account) -> list[str]:
    """The doors the account's recorded questions came through."""
    async with corpus.db.read() as conn:
        rows = await conn.execute(
            text("SELECT door FROM questions WHERE user_id = :u ORDER BY created_at"),
            {"u": account.user.id},
        )
        return [str(door) for door in rows.scalars()]


async def _workspace(corpus: Running) -> str:
    slug = f"ws-{uuid.uuid4().hex[:8]}"
    async with corpus.db.write() as conn:
        await workspaces_service.create_workspace(
            conn, LOCAL_ADMIN, WorkspaceCreate(slug=slug, title="MCP tests")
        )
    return slug


async def _post_mcp(url: str, headers: dict[str, str]) -> httpx.Response:
    """A bare MCP request, as any client sends it first."""
    async with httpx.AsyncClient() as http:
        return await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"Accept": "application/json, text/event-stream", **headers},
        )


def _runbook(word: str) -> str:
    return (
        f"# Runbook {word}\n\n"
        f"Restart the {word} ingest worker with make restart-ingest when the queue stalls.\n\n"
        "## Rollback\n\n"
        f"Roll back the {word} release by running make rollback, then watch the dashboards.\n\n"
        "## Contacts\n\n"
        f"Page the platform team for {word} incidents after hours.\n"
    )


# --- every tool -------------------------------------------------------------------------------


async def test_a_key_lists_exactly_every_tool_each_with_an_input_schema(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer", kind="agent")
    async with mcp_client(corpus.mcp_url, viewer.key) as client:
        listed = (await client.list_tools()).tools
    assert sorted(tool.name for tool in listed) == sorted(TOOLS)
    schemas = {tool.name: tool.input_schema for tool in listed}
    assert all(schema["type"] == "object" for schema in schemas.values())
    assert schemas["upload_document"]["required"] == ["title"]
    assert set(schemas["upload_document"]["properties"]) >= {"content", "content_base64"}
    assert schemas["read_document"]["required"] == ["document_id"]
    assert schemas["search_docs"]["required"] == ["query"]


async def test_the_tools_are_listed_in_the_order_whoami_and_the_account_page_report_them(
    corpus: Running,
) -> None:
    admin = await corpus.account("admin")
    async with mcp_client(corpus.mcp_url, admin.key) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        me = _ok(await client.call_tool("whoami", {}))
    async with httpx.AsyncClient(base_url=corpus.url) as http:
        account = await http.get("/api/me", headers={"Authorization": f"Bearer {admin.key}"})
    assert listed == me["tools"] == account.json()["tools"]


async def test_each_tool_is_described_in_one_short_line_naming_its_required_arguments(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer", kind="agent")
    async with mcp_client(corpus.mcp_url, viewer.key) as client:
        listed = (await client.list_tools()).tools
    for tool in listed:
        text = tool.description or ""
        assert text == " ".join(text.split()), tool.name  # one line, no source indentation
        assert 20 <= len(text) <= 200, tool.name
        for argument in tool.input_schema.get("required", []):
            if argument != "title":  # upload_document's: what the tool adds needs no word
                assert f"`{argument}`" in text, (tool.name, argument)
    assert sum(len(tool.description or "") for tool in listed) < 2500


async def test_each_tool_says_whether_it_changes_the_corpus(corpus: Running) -> None:
    viewer = await corpus.account("viewer", kind="agent")
    async with mcp_client(corpus.mcp_url, viewer.key) as client:
        listed = (await client.list_tools()).tools
    hints = {tool.name: tool.annotations for tool in listed}
    assert all(hint is not None and hint.open_world_hint is False for hint in hints.values())
    read_only = {name for name, hint in hints.items() if hint and hint.read_only_hint}
    destructive = {name for name, hint in hints.items() if hint and hint.destructive_hint}
    assert read_only == TOOLS - WRITE_TOOLS
    assert destructive == {"delete_document"}
    assert all(tool.title for tool in listed)


async def test_an_editor_uploads_finds_lists_reads_asks_about_and_deletes_a_document(
    corpus: Running,
) -> None:
    editor = await corpus.account("editor", kind="agent")
    workspace = await _workspace(corpus)
    word, other = _word(), _word()
    content = _runbook(word)
    page = f"<html><body><h1>Guide {other}</h1><p>The {other} guide.</p></body></html>"

    async with mcp_client(corpus.mcp_url, editor.key) as client:
        created = _ok(
            await client.call_tool(
                "upload_document",
                {"title": f"Runbook {word}", "content": content, "workspace": workspace},
            )
        )
        assert created["chunk_count"] >= 3  # one per section at least
        assert (created["workspace"], created["owner_id"]) == (workspace, str(editor.user.id))
        assert (created["media_type"], created["unchanged"]) == ("text/markdown", False)
        runbook = created["id"]

        uploaded = _ok(
            await client.call_tool(
                "upload_document",
                {
                    "title": f"Guide {other}",
                    "content_base64": base64.b64encode(page.encode()).decode(),
                    "filename": "guide.html",
                    "workspace": workspace,
                    "tags": ["guides"],
                },
            )
        )
        assert uploaded["chunk_count"] >= 1
        assert (uploaded["media_type"], uploaded["source"]) == ("text/html", "guide.html")
        guide = uploaded["id"]

        found = _ok(
            await client.call_tool(
                "search_docs",
                {"query": f"roll back the {word} release", "workspaces": [workspace]},
            )
        )
        best = found["hits"][0]
        assert best["document_id"] == runbook
        assert best["heading_path"] == [f"Runbook {word}", "Rollback"]
        assert (best["vec_rank"], best["kw_rank"]) == (1, 1)
        assert {hit["document_id"] for hit in found["hits"]} <= {runbook, guide}
        in_html = _ok(await client.call_tool("search_docs", {"query": f"{other} guide"}))
        assert in_html["hits"][0]["document_id"] == guide

        listed = _ok(await client.call_tool("list_documents", {"workspace": workspace}))
        assert {d["id"] for d in listed["items"]} == {runbook, guide}
        by_title = _ok(await client.call_tool("list_documents", {"q": word}))
        assert [d["id"] for d in by_title["items"]] == [runbook]
        by_tag = _ok(
            await client.call_tool("list_documents", {"workspace": workspace, "tag": "guides"})
        )
        assert [d["id"] for d in by_tag["items"]] == [guide]

        whole = _ok(await client.call_tool("read_document", {"document_id": runbook}))
        assert whole["text"] == content
        assert whole["chunk_count"] == created["chunk_count"]
        async with httpx.AsyncClient(base_url=corpus.url, headers=editor.bearer) as http:
            chunks = (await http.get(f"/api/documents/{runbook}/chunks")).json()
        part = _ok(
            await client.call_tool(
                "read_document", {"document_id": runbook, "chunk_start": 1, "chunk_end": 2}
            )
        )
        assert part["text"] == content[chunks[1]["start"] : chunks[2]["end"]]
        assert (part["chunk_start"], part["chunk_end"]) == (1, 2)

        question = f"How do I roll back the {word} release?"
        for tool, arguments, mode in [
            ("ask_docs", {"question": question}, "fast"),
            ("deep_research", {"question": question}, "deep"),
        ]:
            answer = _ok(await client.call_tool(tool, arguments))
            assert (answer["extractive"], answer["mode"]) == (True, mode)
            assert answer["citations"][0]["document_id"] == runbook
            assert answer["citations"][0]["key"] == "[1]"
            assert "[1]" in answer["answer"]

        no_job = await client.call_tool("research_result", {"job_id": str(uuid.uuid4())})
        assert _code(no_job) == "not_found"

        deleted = _ok(await client.call_tool("delete_document", {"document_id": runbook}))
        assert deleted == {"deleted": runbook}
        gone = await client.call_tool("read_document", {"document_id": runbook})
        assert _code(gone) == "not_found"
        after = _ok(await client.call_tool("search_docs", {"query": f"{word} release"}))
        assert runbook not in {hit["document_id"] for hit in after["hits"]}


async def test_questions_asked_through_mcp_are_recorded_as_the_mcp_door(
    corpus: Running,
) -> None:
    viewer = await corpus.account("viewer", kind="agent")
    async with mcp_client(corpus.mcp_url, viewer.key) as client:
        _ok(await client.call_tool("search_docs", {"query": f"where is {_word()}"}))
        _ok(await client.call_tool("ask_docs", {"question": f"who owns {_word()}"}))
    assert await _questions(corpus, viewer) == ["mcp", "mcp"]


@pytest.mark.parametrize(
    ("role", "kind"), [("viewer", "human"), ("editor", "agent"), ("admin", "human")]
)
async def test_whoami_reports_the_account_and_the_tools_its_role_allows(
    corpus: Running, role: str, kind: str
) -> None:
    account = await corpus.account(role, kind=kind)
    async with mcp_client(corpus.mcp_url, account.key) as client:
        me = _ok(await client.call_tool("whoami", {}))
    assert (me["email"], me["role"], me["kind"]) == (account.user.email, role, kind)
    expected = {
        "viewer": TOOLS - WRITE_TOOLS - ADMIN_TOOLS,
        "editor": TOOLS - ADMIN_TOOLS,
        "admin": TOOLS,
    }[role]
    assert sorted(me["tools"]) == sorted(expected)


async def test_a_temporary_password_must_be_changed_before_any_tool_but_whoami(
    corpus: Running,
) -> None:
    account = await corpus.account("editor")
    async with corpus.db.write() as conn:
        await people_service.reset_password(conn, HASHER, LOCAL_ADMIN, account.user.id)
    async with mcp_client(corpus.mcp_url, account.key) as client:
        me = _ok(await client.call_tool("whoami", {}))
        refused = await client.call_tool("search_docs", {"query": "anything"})
        upload = await client.call_tool("upload_document", {"title": "T", "content": "Body."})
    assert me["email"] == account.user.email
    assert _code(refused) == "forbidden"
    assert "temporary password" in _error_text(refused)
    assert _code(upload) == "forbidden"
    assert await _owned_documents(corpus, account) == 0


async def test_whoami_tells_an_account_with_a_temporary_password_to_change_it(
    corpus: Running,
) -> None:
    account = await corpus.account("viewer")
    async with mcp_client(corpus.mcp_url, account.key) as client:
        before = _ok(await client.call_tool("whoami", {}))
    async with corpus.db.write() as conn:
        await people_service.reset_password(conn, HASHER, LOCAL_ADMIN, account.user.id)
    async with mcp_client(corpus.mcp_url, account.key) as client:
        after = _ok(await client.call_tool("whoami", {}))
    assert (before["must_change_password"], after["must_change_password"]) == (False, True)


# --- roles and visibility ---------------------------------------------------------------------


async def test_a_viewer_cannot_upload_and_nothing_is_stored(corpus: Running) -> None:
    viewer = await corpus.account("viewer", kind="agent")
    title = f"Notes {_word()}"
    async with mcp_client(corpus.mcp_url, viewer.key) as client:
        refused = await client.call_tool("upload_document", {"title": title, "content": "Body."})
        assert _code(refused) == "forbidden"
        listed = _ok(await client.call_tool("list_documents", {"q": title}))
    assert listed["items"] == []
    assert await _owned_documents(corpus, viewer) == 0


async def test_an_editor_cannot_delete_another_editors_document_but_an_admin_can(
    corpus: Running,
) -> None:
    author = await corpus.account("editor", kind="agent")
    other = await corpus.account("editor", kind="agent")
    admin = await corpus.account("admin", kind="agent")
    word = _word()
    async with mcp_client(corpus.mcp_url, author.key) as client:
        created = _ok(
            await client.call_tool(
                "upload_document", {"title": f"Shared {word}", "content": _runbook(word)}
            )
        )
    document = {"document_id": created["id"]}

    async with mcp_client(corpus.mcp_url, other.key) as client:
        assert _code(await client.call_tool("delete_document", document)) == "forbidden"
        still = _ok(await client.call_tool("read_document", document))
        assert still["document"]["id"] == created["id"]

    async with mcp_client(corpus.mcp_url, admin.key) as client:
        assert _ok(await client.call_tool("delete_document", document)) == {
            "deleted": created["id"]
        }
    async with mcp_client(corpus.mcp_url, author.key) as client:
        assert _code(await client.call_tool("read_document", document)) == "not_found"


async def test_a_private_document_is_its_owners_alone(corpus: Running) -> None:
    owner = await corpus.account("editor", kind="agent")
    word = _word()
    title = f"Diary {word}"
    query = {"query": f"roll back the {word} release"}
    async with mcp_client(corpus.mcp_url, owner.key) as client:
        created = _ok(
            await client.call_tool(
                "upload_document",
                {"title": title, "content": _runbook(word), "visibility": "private"},
            )
        )
        assert created["visibility"] == "private"
        document = {"document_id": created["id"]}
        # The owner finds it every way, so the others' empty answers below mean something.
        _ok(await client.call_tool("read_document", document))
        mine = _ok(await client.call_tool("list_documents", {"q": title}))
        assert [d["id"] for d in mine["items"]] == [created["id"]]
        hits = _ok(await client.call_tool("search_docs", query))["hits"]
        assert hits[0]["document_id"] == created["id"]

    for role in ("viewer", "editor", "admin"):
        someone = await corpus.account(role, kind="agent")
        async with mcp_client(corpus.mcp_url, someone.key) as client:
            assert _code(await client.call_tool("read_document", document)) == "not_found", role
            listed = _ok(await client.call_tool("list_documents", {"q": title}))
            assert listed["items"] == [], role
            hits = _ok(await client.call_tool("search_docs", query))["hits"]
            assert created["id"] not in {hit["document_id"] for hit in hits}, role


# --- bad arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("upload_document", {"title": "Both", "content": "Body.", "content_base64": "Qm9keS4="}),
        ("upload_document", {"title": "Neither"}),
        ("upload_document", {"title": "Bad", "content_base64": "not base64!", "filename": "a.md"}),
        ("upload_document", {"title": "Lost", "content": "Body.", "workspace": "no-such-space"}),
        ("upload_document", {"title": "Empty", "content": "   "}),
        ("search_docs", {"query": "anything", "workspaces": ["no-such-space"]}),
        ("upload_document", {"title": "Nul", "content": "a\x00b"}),
        ("upload_document", {"title": "Nul\x00", "content": "Body."}),
        ("upload_document", {"title": "Nul", "content": "Body.", "tags": ["a\x00"]}),
        ("search_docs", {"query": "nul\x00query"}),
        ("list_documents", {"q": "nul\x00"}),
    ],
    ids=[
        "both-contents",
        "no-content",
        "bad-base64",
        "unknown-workspace",
        "blank",
        "search-ws",
        "nul-content",
        "nul-title",
        "nul-tag",
        "nul-query",
        "nul-filter",
    ],
)
async def test_bad_arguments_are_a_validation_error_and_change_nothing(
    corpus: Running, tool: str, arguments: dict[str, Any]
) -> None:
    editor = await corpus.account("editor", kind="agent")
    async with mcp_client(corpus.mcp_url, editor.key) as client:
        assert _code(await client.call_tool(tool, arguments)) == "validation_error"
    assert await _owned_documents(corpus, editor) == 0
    assert await _questions(corpus, editor) == []
    async with corpus.db.read() as conn:
        created = await conn.execute(
            text("SELECT count(*) FROM workspaces WHERE slug = 'no-such-space'")
        )
        assert created.scalar_one() == 0


@pytest.mark.parametrize(
    ("tool", "arguments", "error_type"),
    [
        ("read_document", {"document_id": "not-a-uuid"}, "uuid_parsing"),
        ("delete_document", {"document_id": "42"}, "uuid_parsing"),
        ("search_docs", {"query": "anything", "top_k": 0}, "greater_than_equal"),
        ("search_docs", {"query": "anything", "mode": "psychic"}, "literal_error"),
    ],
)
async def test_arguments_outside_the_input_schema_are_refused_before_the_tool_runs(
    corpus: Running, tool: str, arguments: dict[str, Any], error_type: str
) -> None:
    editor = await corpus.account("editor", kind="agent")
    async with mcp_client(corpus.mcp_url, editor.key) as client:
        assert _schema_error(await client.call_tool(tool, arguments)) == error_type
    assert await _questions(corpus, editor) == []


# --- refused before any tool runs -------------------------------------------------------------


def _challenge(reply: httpx.Response, corpus: Running) -> None:
    """A 401 that tells an OAuth client where to start (RFC 9728)."""
    assert reply.status_code == 401
    challenge = reply.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{corpus.url}{RESOURCE_METADATA_PATH}"' in challenge


async def test_a_revoked_key_is_refused_at_once(corpus: Running) -> None:
    agent = await corpus.account("editor", kind="agent")
    async with mcp_client(corpus.mcp_url, agent.key) as client:
        _ok(await client.call_tool("whoami", {}))

    async with corpus.db.write() as conn:
        keys = await auth_service.list_keys(conn, LOCAL_ADMIN)
        [key_id] = [key.id for key in keys if key.user_id == agent.user.id]
        await auth_service.revoke_key(conn, LOCAL_ADMIN, key_id)

    # A new connection fails at its first request; the SDK's client reports it as an error
    # response, so the status it got is taken from the wire.
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    http = create_mcp_http_client(headers=agent.bearer)
    http.event_hooks["response"].append(record)
    with pytest.RaisesGroup(MCPError, flatten_subgroups=True):
        async with http, Client(streamable_http_client(corpus.mcp_url, http_client=http)):
            pass
    assert statuses
    assert set(statuses) == {401}  # every request it made
    _challenge(await _post_mcp(corpus.mcp_url, agent.bearer), corpus)


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer garbage", f"Bearer ck_{'x' * 40}", "Basic dXNlcjpwYXNz"],
    ids=["none", "garbage", "unknown-key", "basic"],
)
async def test_a_request_without_a_valid_credential_gets_a_401_pointing_at_the_metadata(
    corpus: Running, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    _challenge(await _post_mcp(corpus.mcp_url, headers), corpus)


async def test_the_protected_resource_metadata_names_this_resource_and_its_server(
    corpus: Running,
) -> None:
    async with httpx.AsyncClient() as http:
        reply = await http.get(f"{corpus.url}{RESOURCE_METADATA_PATH}")
        assert reply.status_code == 200
        metadata = reply.json()
        assert metadata["resource"] == corpus.mcp_url
        [issuer] = metadata["authorization_servers"]
        server = await http.get(f"{issuer.rstrip('/')}/.well-known/oauth-authorization-server")
    assert server.json()["issuer"] == issuer
    assert metadata["bearer_methods_supported"] == ["header"]


async def test_a_foreign_host_header_is_refused_even_with_a_valid_key(corpus: Running) -> None:
    editor = await corpus.account("editor", kind="agent")
    # The SDK's DNS-rebinding protection answers 421 Misdirected Request: the request reached
    # a server that does not serve that host name. Authentication runs first, so the key is
    # valid and the Host header alone is what is refused.
    refused = await _post_mcp(corpus.mcp_url, {**editor.bearer, "Host": "evil.example"})
    assert refused.status_code == 421
    accepted = await _post_mcp(corpus.mcp_url, editor.bearer)
    assert accepted.status_code == 200


async def test_the_allowed_hosts_come_from_the_settings(corpus: Running) -> None:
    editor = await corpus.account("editor", kind="agent")
    settings = make_settings(
        corpus.settings.data_dir,
        database_url=corpus.settings.database_url,
        public_url="https://kb.example",
        allowed_hosts=["kb.example"],
    )
    app = create_app(settings)

    async def post(host: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"https://{host}") as http:
            return await http.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                headers={"Accept": "application/json, text/event-stream", **editor.bearer},
            )

    async with lifespan(app):
        assert (await post("kb.example")).status_code == 200
        # 127.0.0.1 is among the SDK's own defaults, but not among these settings' hosts.
        assert (await post("127.0.0.1")).status_code == 421
