"""Chats and research jobs keep the scope they were made under. A key bound to one workspace
sees and continues only the chats and jobs made under its own binding, and a follow-up in a
chat is re-checked under the caller's rights of the moment: a turn that rests on a passage the
caller may no longer read is left out of what the model sees, and its citations out of the
chat. Over real HTTP (the web app's door) and the MCP SDK's real client, with a scripted model
at the model's edge."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from app.access.principal import LOCAL_ADMIN
from app.auth import service as auth_service
from app.auth.schemas import ApiKeyCreate
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceCreate
from tests.accounts import Account
from tests.agents.conftest import World
from tests.agents.scripted import Call, Reply, calling, scripted, tool_call
from tests.agents.test_ask_api import _events
from tests.mcp.conftest import mcp_client
from tests.mcp.test_tools import _code, _ok

Swap = Callable[..., None]


@dataclass
class Person:
    """One person with two keys: one for every workspace, one bound to a workspace."""

    account: Account
    bound_key: str
    workspace: str
    secret: str

    @property
    def everywhere(self) -> dict[str, str]:
        return self.account.bearer

    @property
    def bound(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.bound_key}"}


async def _person(world: World) -> Person:
    """An editor with a private document in `default`, and a key bound to a new workspace."""
    corpus = world.corpus
    account = await corpus.account("editor")
    workspace = f"alpha-{uuid.uuid4().hex[:8]}"
    secret = f"staging root password {uuid.uuid4().hex[:12]}"
    async with corpus.db.write() as conn:
        await workspaces_service.create_workspace(
            conn, LOCAL_ADMIN, WorkspaceCreate(slug=workspace, title="Alpha")
        )
        bound = await auth_service.create_key(
            conn, LOCAL_ADMIN, ApiKeyCreate(user_id=account.user.id, name="ci", workspace=workspace)
        )
    async with httpx.AsyncClient(base_url=corpus.url, headers=account.bearer) as client:
        created = await client.post(
            "/api/documents",
            json={"title": "Staging", "content": f"The {secret}.", "visibility": "private"},
        )
    assert created.status_code == 201
    return Person(account, bound.key, workspace, secret)


def _cites_the_first_search(query: str, answer: str) -> Callable[[Call], Reply]:
    def respond(call: Call) -> Reply:
        if not call.tool_results:
            return calling(tool_call("search_corpus", query=query))
        return calling(text=answer)

    return respond


async def _ask(
    world: World, headers: dict[str, str], body: dict[str, Any]
) -> list[tuple[str, Any]]:
    async with (
        httpx.AsyncClient(base_url=world.corpus.url, headers=headers, timeout=30) as client,
        client.stream("POST", "/api/ask", json=body) as response,
    ):
        assert response.status_code == 200
        events = [event async for event in _events(response)]
    assert events[-1][0] == "done", events[-1]
    return events


async def test_a_bound_key_neither_lists_reads_nor_continues_a_chat_made_elsewhere(
    world: World, swap_models: Swap
) -> None:
    person = await _person(world)
    swap_models(scripted(_cites_the_first_search(person.secret, "It is in Staging [1].")))
    done = (await _ask(world, person.everywhere, {"question": "staging password?"}))[-1][1]
    chat_id = done["chat_id"]
    assert person.secret in done["citations"][0]["snippet"]

    async with httpx.AsyncClient(base_url=world.corpus.url, headers=person.bound) as client:
        listed = await client.get("/api/chats")
        read = await client.get(f"/api/chats/{chat_id}")
        continued = await client.post(
            "/api/ask", json={"question": "say it again", "chat_id": chat_id}
        )
        deleted = await client.delete(f"/api/chats/{chat_id}")
    assert listed.status_code == 200
    assert chat_id not in [c["id"] for c in listed.json()["items"]]
    assert (read.status_code, read.json()["error"]["code"]) == (404, "not_found")
    assert (continued.status_code, continued.json()["error"]["code"]) == (404, "not_found")
    assert deleted.status_code == 404

    # The person's unbound door still has it, marked as made with no binding; a chat the bound
    # key makes is marked with its workspace.
    own = (await _ask(world, person.bound, {"question": "anything in alpha?"}))[-1][1]
    async with httpx.AsyncClient(base_url=world.corpus.url, headers=person.everywhere) as client:
        everything = {c["id"]: c for c in (await client.get("/api/chats")).json()["items"]}
    assert everything[chat_id]["workspace_scope"] is None
    assert everything[str(own["chat_id"])]["workspace_scope"] == person.workspace


def _deep_run(secret: str) -> Callable[[Call], Reply]:
    def respond(call: Call) -> Reply:
        if call.system.startswith("You are the orchestrator of a deep research"):
            return calling(tool_call("write_todos", todos=["Where is the password?"]))
        if call.system.startswith("You are the scout"):
            return calling(text="- Staging holds it.")
        if call.system.startswith("You are a researcher"):
            if not call.tool_results:
                return calling(tool_call("search_corpus", query=secret))
            return calling(text=f"- {secret} [1]")
        if call.system.startswith("You are the orchestrator. Write"):
            return calling(text=f"The {secret} [1].")
        return calling(
            tool_call(
                "verdict",
                claims=[{"claim": secret, "citations": ["[1]"], "status": "SUPPORTED"}],
                verdict="PASS",
            )
        )

    return respond


async def test_a_research_job_is_answered_only_under_the_binding_it_was_made_under(
    world: World, swap_models: Swap
) -> None:
    person = await _person(world)
    swap_models(scripted(_deep_run(person.secret)))
    async with mcp_client(world.corpus.mcp_url, person.account.key) as client:
        started = _ok(await client.call_tool("deep_research", {"question": "Where is it?"}))
    job_id = started["job_id"]
    assert person.secret in started["answer"]

    async with mcp_client(world.corpus.mcp_url, person.bound_key) as client:
        refused = await client.call_tool("research_result", {"job_id": job_id})
    assert _code(refused) == "not_found"
    async with mcp_client(world.corpus.mcp_url, person.account.key) as client:
        answered = _ok(await client.call_tool("research_result", {"job_id": job_id}))
    assert answered["status"] == "done"
    assert person.secret in answered["answer"]


async def test_a_follow_up_leaves_out_turns_resting_on_what_the_caller_may_no_longer_read(
    world: World, swap_models: Swap
) -> None:
    author, reader = await world.corpus.account("editor"), await world.corpus.account("viewer")
    marker = uuid.uuid4().hex[:12]
    fading = f"feature flags live in the flagd service {marker}"
    async with httpx.AsyncClient(base_url=world.corpus.url, headers=author.bearer) as client:
        created = await client.post(
            "/api/documents", json={"title": "Flags", "content": f"Our {fading}."}
        )
    assert created.status_code == 201
    document_id = created.json()["id"]

    swap_models(scripted(_cites_the_first_search(marker, f"Answer one: {fading} [1].")))
    first = (await _ask(world, reader.bearer, {"question": "where do flags live?"}))[-1][1]
    chat_id = first["chat_id"]
    swap_models(scripted(_cites_the_first_search("retries back off", "Answer two: backoff [1].")))
    await _ask(world, reader.bearer, {"question": "and retries?", "chat_id": chat_id})

    # The author makes the document private: the reader may no longer read what turn one
    # rests on.
    async with httpx.AsyncClient(base_url=world.corpus.url, headers=author.bearer) as client:
        hidden = await client.patch(
            f"/api/documents/{document_id}",
            json={"visibility": "private"},
            headers={"Origin": world.corpus.url},
        )
    assert hidden.status_code == 200

    models = scripted(lambda _call: calling(text="Answer three."))
    swap_models(models)
    await _ask(world, reader.bearer, {"question": "anything else?", "chat_id": chat_id})
    seen = "\n".join(str(m.content) for m in models.model.calls[0].messages)
    assert "Answer two" in seen
    assert "Answer one" not in seen
    assert marker not in seen

    async with httpx.AsyncClient(base_url=world.corpus.url, headers=reader.bearer) as client:
        chat = (await client.get(f"/api/chats/{chat_id}")).json()
    answers = [m for m in chat["messages"] if m["role"] == "assistant"]
    assert answers[0]["citations"] == []
    assert [c["title"] for c in answers[1]["citations"]] == ["Retry policy"]
