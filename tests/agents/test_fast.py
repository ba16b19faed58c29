"""The fast agent, driven by a scripted model over the real services and database."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from app.agents import tools
from app.asking.schemas import DoneEvent, ModeEvent, Step, TokenEvent
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate, DocumentFilters
from tests.agents.conftest import World, run
from tests.agents.scripted import Call, Reply, calling, in_order, scripted, tool_call


def _done(events: Sequence[object]) -> DoneEvent:
    assert isinstance(events[-1], DoneEvent), events[-1]
    return events[-1]


def _steps(events: Sequence[object]) -> list[Step]:
    return [e for e in events if isinstance(e, Step)]


async def test_the_fast_agent_searches_then_answers_with_citations_that_link_to_chunks(
    world: World,
) -> None:
    models = scripted(
        in_order(
            calling(tool_call("search_corpus", query="roll back a deploy")),
            calling(text="Run `make rollback` from the release branch [1]."),
        )
    )
    viewer = await world.principal(world.viewer)
    events = await run(world, world.services(models), viewer, "How do I roll back a deploy?")
    assert isinstance(events[0], ModeEvent)
    assert events[0].mode == "fast"
    assert [s.label for s in _steps(events)] == ['search: "roll back a deploy"']
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)).startswith("Run")
    done = _done(events)
    assert done.extractive is False
    assert [c.key for c in done.citations] == ["[1]"]
    cited = done.citations[0]
    assert cited.title == "Deploy rollback"
    assert cited.url == f"/documents/{cited.document_id}#chunk-{cited.chunk_id}"
    # The preview names where the passage lives.
    assert cited.workspace == "default"


async def test_the_step_cap_holds_and_the_agent_answers_from_what_it_has(world: World) -> None:
    def respond(call: Call) -> Reply:
        if "search_corpus" in call.tools:
            return calling(tool_call("search_corpus", query=f"retries {len(call.tool_results)}"))
        return calling(text=f"Transient errors are retried three times {call.keys()[0:1]}.")

    models = scripted(respond)
    viewer = await world.principal(world.viewer)
    events = await run(world, world.services(models), viewer, "What is the retry policy?")
    searches = [s for s in _steps(events) if s.kind == "search"]
    assert len(searches) == world.settings.fast_max_searches == 5
    assert any(s.label == "fast: search cap reached (5)" for s in _steps(events))
    # The call after the cap offered no tools, and its answer is the answer.
    assert models.model.calls[-1].tools == []
    assert len(models.model.calls) == 6
    done = _done(events)
    assert done.citations
    assert "search cap (5 searches) was reached" in done.answer


async def test_budgets_stop_a_model_that_loops(world: World) -> None:
    models = scripted(in_order(calling(tool_call("think", thought="and again"))))
    viewer = await world.principal(world.viewer)
    services = world.services(models, answer_max_model_calls=4)
    events = await run(world, services, viewer, "What is the retry policy?")
    assert len(models.model.calls) == 4
    assert any(s.kind == "budget" and "model calls (4)" in s.label for s in _steps(events))
    assert _done(events).answer.startswith("Stopped early")


async def test_a_viewers_run_cannot_save_a_note_even_when_the_model_calls_save_note(
    world: World,
) -> None:
    models = scripted(
        in_order(
            calling(tool_call("save_note", title="Rollback summary", content="Use make rollback.")),
            calling(text="Done."),
        )
    )
    viewer = await world.principal(world.viewer)
    events = await run(world, world.services(models), viewer, "Save a note on rollbacks")
    assert "save_note" not in models.model.calls[0].tools
    assert any(s.kind == "refused" and s.label.startswith("save_note") for s in _steps(events))
    # Offered anyway, the service refuses it again.
    forced = await tools.execute(
        world.run_for(viewer),
        [tools.TOOLS["save_note"]],
        "save_note",
        {"title": "Forced", "content": "Forced note."},
    )
    assert forced.startswith("error forbidden")
    async with world.corpus.db.read() as conn:
        notes = await documents_service.list_documents(
            conn, viewer, DocumentFilters(tag="agent-note"), limit=10, cursor=None
        )
    assert notes.items == []


async def test_an_editors_run_saves_a_note_tagged_agent_note_with_its_sources(
    world: World,
) -> None:
    def respond(call: Call) -> Reply:
        if not call.tool_results:
            return calling(tool_call("search_corpus", query="cache entries"))
        if len(call.tool_results) == 1:
            return calling(
                tool_call(
                    "save_note", title="Cache summary", content="Ten minutes.", sources=["[1]"]
                )
            )
        return calling(text="Saved [1].")

    editor = await world.principal(world.editor)
    events = await run(
        world, world.services(scripted(respond)), editor, "Summarise caching", writes="org"
    )
    assert any(s.kind == "save_note" for s in _steps(events))
    async with world.corpus.db.read() as conn:
        notes = await documents_service.list_documents(
            conn,
            editor,
            DocumentFilters(tag="agent-note", q="Cache summary"),
            limit=10,
            cursor=None,
        )
        assert [n.title for n in notes.items] == ["Cache summary"]
        saved = await documents_service.get(conn, editor, notes.items[0].id)
    assert saved is not None
    assert "/documents/" in saved.content  # its source, linked to the chunk
    # Every passage the run read is the organisation's, and the asker allowed publishing.
    assert saved.visibility == "org"
    assert saved.derived_from


async def test_a_citation_of_a_chunk_never_retrieved_or_no_longer_readable_is_removed(
    world: World,
) -> None:
    editor = await world.principal(world.editor)
    resources = world.corpus.app.state.resources
    async with world.corpus.db.write() as conn:
        doomed = await documents_service.create(
            conn,
            editor,
            resources.embedder,
            world.settings,
            DocumentCreate(title="Zebra crossings", content="Zebra crossings are striped."),
        )

    async def respond(call: Call) -> Reply:
        if not call.tool_results:
            return calling(tool_call("search_corpus", query="zebra crossings striped"))
        # The document's owner deletes it while the run goes on.
        async with world.corpus.db.write() as conn:
            await documents_service.delete(conn, editor, doomed.id)
        return calling(text="Zebra crossings are striped [1]. Also see [7].")

    viewer = await world.principal(world.viewer)
    events = await run(world, world.services(scripted(respond)), viewer, "Zebra crossings?")
    done = _done(events)
    assert done.citations == []
    assert "[1]" not in done.answer
    assert "[7]" not in done.answer
    removed = sorted(s.label for s in _steps(events) if s.kind == "citation")
    assert removed == [
        "citation removed: [1]: not readable by you",
        "citation removed: [7]: not retrieved in this run",
    ]


async def test_ask_about_this_doc_searches_only_that_document(world: World) -> None:
    models = scripted(
        in_order(
            calling(tool_call("search_corpus", query="retries rollback cache")),
            calling(text="See [1]."),
        )
    )
    viewer = await world.principal(world.viewer)
    only = world.documents["Caching"]
    events = await run(
        world, world.services(models), viewer, "What does this say?", document_ids=[only]
    )
    assert [str(c.document_id) for c in _done(events).citations] == [only]
    assert "document " + only in models.model.calls[1].tool_results[0]
    assert world.documents["Retry policy"] not in models.model.calls[1].tool_results[0]


async def test_the_deadline_stops_a_model_that_does_not_answer(world: World) -> None:
    async def never(_call: Call) -> Reply:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    viewer = await world.principal(world.viewer)
    services = world.services(scripted(never), fast_deadline_s=0.3)
    events = await run(world, services, viewer, "What is the retry policy?")
    assert any(s.kind == "budget" and s.label == "budget reached: deadline" for s in _steps(events))
    assert _done(events).answer.startswith("Stopped early (deadline)")


async def test_the_context_budget_clips_earlier_results_and_says_so(world: World) -> None:
    def respond(call: Call) -> Reply:
        if len(call.tool_results) < 3:
            return calling(tool_call("search_corpus", query="rollback retries cache", top_k=10))
        return calling(text="Done [1].")

    viewer = await world.principal(world.viewer)
    services = world.services(scripted(respond), answer_max_context_chars=2000)
    events = await run(world, services, viewer, "Everything about operations")
    clipped = [s for s in _steps(events) if s.label.startswith("context budget:")]
    assert clipped
    assert _done(events).citations


async def test_a_run_stopped_before_the_model_answered_quotes_what_it_found_as_answers_do(
    world: World,
) -> None:
    def respond(call: Call) -> Reply:
        return calling(tool_call("search_corpus", query="retry policy"))

    viewer = await world.principal(world.viewer)
    services = world.services(scripted(respond), answer_max_model_calls=1)
    events = await run(world, services, viewer, "What is the retry policy?")
    done = _done(events)
    assert done.answer.startswith("Stopped early")
    # Each passage as the extractive answer shows it: key, title in bold, a quote of whole
    # sentences, not the chunk's first characters.
    assert "[1] **Retry policy**" in done.answer
    assert "> The HTTP client retries transient 5xx errors" in done.answer
