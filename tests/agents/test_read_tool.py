"""The agents' read_document tool over the real documents service: the chunks it puts in front
of the model are the document's own, each in the run's ledger under its chunk id."""

from __future__ import annotations

from uuid import UUID

from app.agents import tools
from app.agents.run import Run
from app.documents import service as documents_service
from app.documents.schemas import Chunk, DocumentCreate
from tests.agents.conftest import World

SECTIONS = 12


async def _long_document(world: World, title: str, *, visibility: str = "org") -> UUID:
    """A document of one chunk a section (a heading starts a chunk)."""
    editor = await world.principal(world.editor)
    content = "\n\n".join(
        f"## Step {n}\n\nStep {n} of the {title.lower()} checks one more thing."
        for n in range(SECTIONS)
    )
    async with world.corpus.db.write() as conn:
        created = await documents_service.create(
            conn,
            editor,
            world.corpus.app.state.resources.embedder,
            world.settings,
            DocumentCreate.model_validate(
                {"title": title, "content": content, "visibility": visibility}
            ),
        )
    return created.id


async def _chunks(world: World, document_id: UUID) -> list[Chunk]:
    editor = await world.principal(world.editor)
    async with world.corpus.db.read() as conn:
        return await documents_service.chunks(conn, editor, document_id)


async def _read(run: Run, **arguments: object) -> str:
    return await tools.execute(
        run,
        [tools.TOOLS["read_document"]],
        "read_document",
        {k: str(v) if isinstance(v, UUID) else v for k, v in arguments.items()},
    )


async def test_reading_puts_the_documents_chunks_in_the_ledger_under_their_ids(
    world: World,
) -> None:
    document_id = await _long_document(world, "Release checklist")
    every = await _chunks(world, document_id)
    count = len(every)
    assert count >= SECTIONS
    run = world.run_for(await world.principal(world.viewer))

    # Left open, a read takes READ_CHUNKS chunks from the first one asked for.
    first = await _read(run, document_id=document_id)
    assert first.startswith(f"Release checklist — chunks 0..{tools.READ_CHUNKS - 1} of {count}")
    assert list(run.ledger.by_chunk) == [c.id for c in every[: tools.READ_CHUNKS]]
    assert all(e.document_id == document_id for e in run.ledger.by_chunk.values())
    assert [e.text for e in run.ledger.by_chunk.values()] == [
        c.text for c in every[: tools.READ_CHUNKS]
    ]

    # A range runs to its last ordinal (or the document's end); keys already given stay.
    rest = await _read(run, document_id=document_id, chunk_start=tools.READ_CHUNKS - 1)
    assert rest.startswith(f"Release checklist — chunks {tools.READ_CHUNKS - 1}..{count - 1}")
    assert f"[{tools.READ_CHUNKS}] (chunk {tools.READ_CHUNKS - 1})" in rest
    assert list(run.ledger.by_chunk) == [c.id for c in every]


async def test_a_range_past_the_end_says_how_many_chunks_there_are(world: World) -> None:
    document_id = await _long_document(world, "Rotation runbook")
    count = len(await _chunks(world, document_id))
    run = world.run_for(await world.principal(world.viewer))
    said = await _read(run, document_id=document_id, chunk_start=count, chunk_end=count + 3)
    assert said == f"No chunks {count}..{count + 3}: the document has {count} (0..{count - 1})."
    assert run.ledger.by_chunk == {}


async def test_a_document_the_caller_may_not_see_is_not_found(world: World) -> None:
    document_id = await _long_document(world, "Private plan", visibility="private")
    run = world.run_for(await world.principal(world.viewer))
    said = await _read(run, document_id=document_id)
    assert said.startswith("error not_found")
    assert run.ledger.by_chunk == {}
