"""`POST /api/ask` over real HTTP (uvicorn on 127.0.0.1): the event stream, a disconnect,
the extractive answer with no model, chats and the documentation gaps."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from app.access.principal import LOCAL_ADMIN
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceCreate
from tests.accounts import Account
from tests.agents.conftest import World
from tests.agents.scripted import Call, Reply, calling, in_order, scripted, tool_call

Swap = Callable[..., None]


async def _events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """The stream's events as (name, data), pings skipped."""
    name, data = "message", ""
    async for line in response.aiter_lines():
        if line.startswith(":"):
            continue
        if line.startswith("event:"):
            name = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data += line.removeprefix("data:").strip()
        elif line == "" and data:
            yield name, json.loads(data)
            name, data = "message", ""


def _client(world: World, account: Account) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=world.corpus.url, headers=account.bearer, timeout=30)


async def _ask(world: World, account: Account, body: dict[str, Any]) -> list[tuple[str, Any]]:
    async with (
        _client(world, account) as client,
        client.stream("POST", "/api/ask", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return [event async for event in _events(response)]


async def test_the_stream_is_mode_then_steps_and_tokens_then_done_with_citations(
    world: World, swap_models: Swap
) -> None:
    seen_token = asyncio.Event()

    async def hold_until_the_client_has_a_token() -> None:
        await asyncio.wait_for(seen_token.wait(), timeout=10)

    models = scripted(
        in_order(
            calling(tool_call("search_corpus", query="roll back a deploy")),
            calling(text="Run make rollback from the release branch [1]."),
        ),
        after_first_token=hold_until_the_client_has_a_token,
    )
    swap_models(models)
    events: list[tuple[str, Any]] = []
    async with (
        _client(world, world.viewer) as client,
        client.stream(
            "POST", "/api/ask", json={"question": "How do I roll back?", "mode": "fast"}
        ) as response,
    ):
        assert response.status_code == 200
        async for name, data in _events(response):
            events.append((name, data))
            if name == "token":
                # The model is held after its first token until the client has it.
                seen_token.set()
    names = [name for name, _ in events]
    assert names[0] == "mode"
    assert names[-1] == "done"
    assert set(names[1:-1]) == {"step", "token"}
    # A fast run is the stream's own: no run to cancel apart from it.
    assert events[0][1] == {
        "mode": "fast",
        "reason": "fast mode was asked for",
        "run_id": None,
        "chat_id": None,
    }
    assert [d["label"] for n, d in events if n == "step"] == ['search: "roll back a deploy"']
    text = "".join(d["text"] for n, d in events if n == "token")
    done = events[-1][1]
    assert text == done["answer"] == "Run make rollback from the release branch [1]."
    assert [c["key"] for c in done["citations"]] == ["[1]"]
    assert done["citations"][0]["url"].startswith(
        f"/documents/{done['citations'][0]['document_id']}#chunk-"
    )
    assert done["chat_id"] is not None
    assert (done["mode"], done["fell_back"], done["extractive"]) == ("fast", False, False)


async def test_pings_keep_the_stream_alive_and_a_client_that_disconnects_cancels_the_run(
    world: World, swap_models: Swap
) -> None:
    asked = asyncio.Event()
    cancelled = asyncio.Event()

    async def respond(_call: Call) -> Reply:
        asked.set()
        try:
            await asyncio.Event().wait()  # the model thinks until cancelled
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    swap_models(scripted(respond), sse_ping_s=0.2)
    seen: list[str] = []
    async with (
        _client(world, world.viewer) as client,
        client.stream("POST", "/api/ask", json={"question": "How do I roll back?"}) as response,
    ):
        async for line in response.aiter_lines():
            seen.append(line)
            if line.startswith(": ping"):
                break  # the model is still thinking, and the stream is kept alive
        await asyncio.wait_for(asked.wait(), timeout=10)
    assert seen[0] == "event: mode"
    await asyncio.wait_for(cancelled.wait(), timeout=10)


async def test_with_no_model_the_answer_is_extractive_with_citations(world: World) -> None:
    events = await _ask(world, world.viewer, {"question": "how do retries back off?"})
    assert [name for name, _ in events] == ["mode", "step", "done"]
    done = events[-1][1]
    assert done["extractive"] is True
    assert done["answer"].count("no answer model is configured") == 1
    assert done["citations"]
    assert done["citations"][0]["title"] == "Retry policy"


async def test_a_question_searches_only_the_documents_carrying_its_tags(world: World) -> None:
    content = "Blue-green switchover flips the quokka router to the idle pool."
    async with _client(world, world.editor) as client:
        for title, extra in (("Switchover, tagged", ["switchover"]), ("Switchover", [])):
            body = {"title": title, "content": f"{content} {title}.", "tags": extra}
            assert (await client.post("/api/documents", json=body)).status_code == 201

    async def cited(**scope: object) -> tuple[set[str], str]:
        body = {"question": "blue-green quokka router switchover", **scope}
        events = await _ask(world, world.viewer, body)
        mode, done = events[0][1], events[-1][1]
        return {c["title"] for c in done["citations"]} & {"Switchover, tagged", "Switchover"}, (
            mode["reason"]
        )

    assert (await cited())[0] == {"Switchover, tagged", "Switchover"}
    titles, reason = await cited(tags=["switchover"])
    assert titles == {"Switchover, tagged"}
    assert reason.endswith("; tagged switchover")
    assert (await cited(tags=["nosuchtag"]))[0] == set()
    async with _client(world, world.viewer) as client:
        bad = await client.post("/api/ask", json={"question": "q", "tags": ["Not A Tag!"]})
    assert (bad.status_code, bad.json()["error"]["code"]) == (422, "validation_error")


async def test_bad_questions_are_refused_before_the_stream_starts(world: World) -> None:
    async with _client(world, world.viewer) as client:
        blank = await client.post("/api/ask", json={"question": "   "})
        unknown_chat = await client.post(
            "/api/ask", json={"question": "hi", "chat_id": str(uuid.uuid4())}
        )
        unknown_document = await client.post(
            "/api/ask", json={"question": "hi", "document_ids": [str(uuid.uuid4())]}
        )
        bad_mode = await client.post("/api/ask", json={"question": "hi", "mode": "slow"})
    assert (blank.status_code, blank.json()["error"]["code"]) == (422, "validation_error")
    assert (unknown_chat.status_code, unknown_chat.json()["error"]["code"]) == (404, "not_found")
    assert unknown_document.status_code == 404
    assert bad_mode.status_code == 422


async def test_chats_keep_the_history_that_follow_ups_see_and_belong_to_their_owner(
    world: World, swap_models: Swap
) -> None:
    models = scripted(
        in_order(
            calling(tool_call("search_corpus", query="cache")),
            calling(text="Ten minutes [1]."),
            calling(text="Yes, a write invalidates them."),
        )
    )
    swap_models(models)
    first = await _ask(world, world.editor, {"question": "How long are results cached?"})
    chat_id = first[-1][1]["chat_id"]
    second = await _ask(
        world, world.editor, {"question": "And are they invalidated?", "chat_id": chat_id}
    )
    assert second[-1][1]["chat_id"] == chat_id
    seen = [str(m.content) for m in models.model.calls[-1].messages]
    assert "How long are results cached?" in seen
    assert "Ten minutes [1]." in seen

    async with _client(world, world.editor) as client:
        listed = (await client.get("/api/chats")).json()
        assert chat_id in [c["id"] for c in listed["items"]]
        chat = (await client.get(f"/api/chats/{chat_id}")).json()
        assert [m["role"] for m in chat["messages"]] == ["user", "assistant"] * 2
        assert chat["messages"][1]["citations"][0]["key"] == "[1]"
        assert chat["messages"][1]["trace"][0]["kind"] == "search"
        async with _client(world, world.viewer) as stranger:
            assert (await stranger.get(f"/api/chats/{chat_id}")).status_code == 404
            assert (await stranger.delete(f"/api/chats/{chat_id}")).status_code == 404
        assert (await client.delete(f"/api/chats/{chat_id}")).status_code == 204
        assert (await client.get(f"/api/chats/{chat_id}")).status_code == 404


async def test_chats_are_listed_latest_first_a_page_at_a_time(
    world: World, swap_models: Swap
) -> None:
    asker = await world.corpus.account("viewer")
    swap_models(scripted(in_order(calling(text="An answer."))))
    for question in ("First question", "Second question", "Third question"):
        await _ask(world, asker, {"question": question})
    titles: list[str] = []
    cursor = None
    async with _client(world, asker) as client:
        while True:
            params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
            page = (await client.get("/api/chats", params=params)).json()
            titles += [chat["title"] for chat in page["items"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
    assert titles == ["Third question", "Second question", "First question"]


async def test_gaps_group_unanswered_questions_from_every_door_by_similar_wording(
    world: World,
) -> None:
    async with _client(world, world.viewer) as viewer, _client(world, world.editor) as editor:
        await viewer.post("/api/search", json={"query": "kubernetes ingress certificate renewal"})
        await editor.post("/api/search", json={"query": "Kubernetes ingress certificate renewal?"})
        await _ask(
            world, world.editor, {"question": "kubernetes ingress certificate renewal steps"}
        )
        refused = await viewer.get("/api/gaps")
    assert refused.status_code == 403
    async with _client(world, world.admin) as admin:
        gaps = (await admin.get("/api/gaps")).json()["items"]
    kubernetes = [g for g in gaps if "kubernetes" in g["question"].lower()]
    assert len(kubernetes) == 1
    assert (kubernetes[0]["count"], kubernetes[0]["people"]) == (3, 2)
    assert len(kubernetes[0]["examples"]) >= 2


async def test_a_question_its_tags_emptied_is_a_gap_only_when_the_corpus_has_nothing_either(
    world: World, swap_models: Swap
) -> None:
    swap_models(
        scripted(
            in_order(
                calling(tool_call("search_corpus", query="cache")),
                calling(text="Nothing under that tag."),
                calling(tool_call("search_corpus", query="quokka")),
                calling(text="Nothing at all."),
            )
        )
    )
    answerable = "How long are search results cached in the LRU?"
    unanswerable = "zygomorphic quokka xylograph plinth"
    for question in (answerable, unanswerable):
        events = await _ask(
            world, world.viewer, {"question": question, "mode": "fast", "tags": ["nosuchtag"]}
        )
        assert events[-1][0] == "done"
        assert events[-1][1]["citations"] == []
    async with _client(world, world.admin) as admin:
        gaps = [g["question"].lower() for g in (await admin.get("/api/gaps")).json()["items"]]
    assert unanswerable in gaps
    assert answerable.lower() not in gaps


async def test_a_persona_scopes_the_question_to_its_workspaces_and_an_unknown_one_is_refused(
    world: World,
) -> None:
    editor = await world.principal(world.editor)
    resources = world.corpus.app.state.resources
    written = {}
    async with world.corpus.db.write() as conn:
        await workspaces_service.create_workspace(
            conn, LOCAL_ADMIN, WorkspaceCreate(slug="ops", title="Operations")
        )
        for workspace in ("ops", "default"):
            created = await documents_service.create(
                conn,
                editor,
                resources.embedder,
                world.settings,
                DocumentCreate(
                    title=f"Flux capacitor ({workspace})",
                    content=f"Recalibrate the flux capacitor from the {workspace} console.",
                    workspace=workspace,
                ),
            )
            written[workspace] = str(created.id)
    async with _client(world, world.admin) as admin:
        set_persona = await admin.put("/api/policy/personas/ops-team", json={"workspaces": ["ops"]})
        assert set_persona.status_code == 200
    question = "recalibrate the flux capacitor"
    routed = await _ask(world, world.viewer, {"question": question, "persona": "ops-team"})
    assert routed[0][1]["reason"].endswith("; persona 'ops-team': ops")
    assert {c["document_id"] for c in routed[-1][1]["citations"]} == {written["ops"]}
    async with _client(world, world.viewer) as client:
        unknown = await client.post("/api/ask", json={"question": question, "persona": "nobody"})
    assert unknown.status_code == 422
    assert unknown.json()["error"]["code"] == "validation_error"


async def test_an_ask_or_search_limited_to_no_workspace_the_caller_may_search_is_refused(
    world: World,
) -> None:
    async with world.corpus.db.write() as conn:
        await workspaces_service.create_workspace(
            conn, LOCAL_ADMIN, WorkspaceCreate(slug="bound-ask", title="Bound ask")
        )
    async with _client(world, world.admin) as admin:
        minted = await admin.post(
            "/api/keys",
            json={"user_id": str(world.viewer.user.id), "name": "bound", "workspace": "bound-ask"},
        )
        assert minted.status_code == 201
    bound = Account(user=world.viewer.user, key=minted.json()["key"], password=None)
    question = {"question": "How do I roll back?", "mode": "fast"}
    refused = []
    async with _client(world, world.viewer) as viewer, _client(world, bound) as key:
        for client, workspaces in ((viewer, []), (key, []), (key, ["default"])):
            for path, body in (("/api/ask", question), ("/api/search", {"query": "roll back"})):
                refused.append(await client.post(path, json={**body, "workspaces": workspaces}))
        # The key's own workspace, named or not, is searched as before.
        own = await key.post(
            "/api/search", json={"query": "roll back", "workspaces": ["bound-ask"]}
        )
        unnamed = await key.post("/api/search", json={"query": "roll back"})
    for reply in refused:
        assert reply.status_code == 422, (reply.request.url.path, reply.text)
        assert reply.headers["content-type"].startswith("application/json")
        assert reply.json()["error"]["code"] == "validation_error"
    assert (own.status_code, unnamed.status_code) == (200, 200)
