"""`corpus ingest`: a folder walk into the corpus, each file written whole or not at all, skipping
files whose content is unchanged; conversion, embedding and writing overlap."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.db.engine import Database
from app.documents import service as documents_service
from app.documents.schemas import Visibility
from app.documents.service import PreparedFile
from app.documents.worker import Converter
from app.errors import AppError
from app.rag.embeddings.base import Embedder, Vectors
from app.workspaces import service as workspaces_service


@dataclass
class IngestReport:
    counts: Counter[str] = field(default_factory=Counter)
    chunks: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    # Set when the walk created its workspace, which the command then says.
    created_workspace: str | None = None


# Texts per embedding call, gathered across files: a SciFact abstract is two or three chunks, and
# a call per file left the model idle between them while the next file was converted, lexed
# and written (issue #33: the product ran at 0.6 of the model's rate).
EMBED_BATCH = 16
# Embedding calls in flight: while one call's last text runs, the model's other thread takes
# the next call's first. With one call at a time, a core stood idle for each call's last text,
# 0.8 s of a 12 s walk (issue #33).
EMBED_CALLS = 2
# Files converted and chunked ahead of the model, and embedded ahead of the writer: enough to
# keep the model fed while a large file converts, few enough to bound the memory they hold.
AHEAD = 32
# Files written in one transaction: the writer waits for WRITE_AT_LEAST (or the walk's last),
# and takes whatever else is ready, up to WRITE_GROUP. A SciFact abstract is two or three
# chunks, so an embedding call is about six files; a group of two calls' files upserts its
# lexemes and counts its statistics once where two groups did: PostgreSQL's CPU for 1,000
# abstracts fell from 5.0-5.6 to 4.6-4.7 core-seconds (issue #33). The other stages go on
# meanwhile.
WRITE_GROUP = 16
WRITE_AT_LEAST = 12
# The planner's statistics of `documents` are refreshed when a walk has written this many files,
# then each time the count doubles (`documents_service.refresh_statistics`), after the group of
# files that reached it.
ANALYZE_AFTER = 256


async def ingest_paths(
    db: Database,
    embedder: Embedder,
    settings: Settings,
    converter: Converter,
    files: Sequence[Path],
    *,
    workspace: str,
    visibility: Visibility,
    tags: list[str],
    advance: Callable[[str], None],
) -> IngestReport:
    """Ingest `files` as a pipeline of three stages that overlap: conversion and chunking (as
    many files at once as there are conversion workers), embedding (the chunks of several files
    in one call, `EMBED_CALLS` calls at once), and writing (the files embedded together in one
    transaction, each file written whole or not at all, and a file that fails fails alone)."""
    report = IngestReport()
    async with db.write() as conn:
        _id, created = await workspaces_service.ensure_workspace(conn, LOCAL_ADMIN, workspace)
        digests = await documents_service.stored_digests(
            conn, LOCAL_ADMIN, workspace, [str(path.resolve()) for path in files]
        )
    if created:
        report.created_workspace = workspace
    pending = iter(files)
    converted: asyncio.Queue[PreparedFile | None] = asyncio.Queue(AHEAD)
    embedded: asyncio.Queue[tuple[PreparedFile, Vectors | None] | None] = asyncio.Queue(AHEAD)
    preparers = max(1, settings.convert_workers)
    finished = embedding = 0

    def failed(name: str, source: str, exc: AppError | OSError) -> None:
        report.counts["failed"] += 1
        report.failures.append((source, getattr(exc, "message", str(exc))))
        advance(f"failed: {name}")

    async def prepare() -> None:
        nonlocal finished
        for path in pending:
            try:
                data = await asyncio.to_thread(path.read_bytes)  # a large file, off the loop
                prepared = await documents_service.prepare_file(
                    LOCAL_ADMIN,
                    embedder,
                    settings,
                    converter=converter,
                    data=data,
                    source=str(path.resolve()),
                    workspace=workspace,
                    visibility=visibility,
                    tags=tags,
                )
            except (AppError, OSError) as exc:
                failed(path.name, str(path), exc)
                continue
            if documents_service.unchanged(prepared, digests):  # neither embedded nor written
                report.counts["unchanged"] += 1
                advance(f"unchanged: {path.name}")
            else:
                await converted.put(prepared)
        finished += 1
        if finished == preparers:
            await converted.put(None)

    async def embed() -> None:
        nonlocal embedding
        done = False
        held: PreparedFile | None = None  # the file that would have overfilled the last call
        while not done:
            first = held if held is not None else await converted.get()
            held = None
            if first is None:
                await converted.put(None)  # for the other embedding stages
                break
            batch, texts = [first], len(first.chunks.texts)
            # Whatever else is ready joins the call, up to a batch: the model never waits for
            # company, as a query does not (LocalEmbedder.embed_query). A file that would take
            # the call past a batch waits for the next: the model's passes are a batch each, and
            # a call of 17 texts made a second pass of one, which one thread ran while the other
            # stood idle (192 passes for SciFact's 2,346 chunks, where 147 hold them).
            while texts < EMBED_BATCH and not converted.empty():
                following = converted.get_nowait()
                if following is None:
                    await converted.put(None)
                    done = True
                    break
                if texts + len(following.chunks.texts) > EMBED_BATCH:
                    held = following
                    break
                batch.append(following)
                texts += len(following.chunks.texts)
            try:
                vectors = await embedder.embed_passages(
                    [text for prepared in batch for text in prepared.chunks.texts]
                )
            except AppError:
                # Each file then tries alone when written, so that one that fails fails alone.
                for prepared in batch:
                    await embedded.put((prepared, None))
                continue
            start = 0
            for prepared in batch:
                count = len(prepared.chunks.texts)
                await embedded.put((prepared, vectors[start : start + count]))
                start += count
        embedding += 1
        if embedding == EMBED_CALLS:
            await embedded.put(None)

    async def write_group(group: list[tuple[PreparedFile, Vectors | None]]) -> None:
        # The files ready together are written in one transaction, the new ones in two
        # statements (`ingest_prepared`): a file's own BEGIN, lookup, document, chunks and
        # COMMIT were five round trips (issue #33). A file still lands whole or not at all:
        # when one fails, the group's transaction rolls back and each file is written again
        # alone, so the one that fails fails alone.
        try:
            async with db.write() as conn:
                outcomes = await documents_service.ingest_prepared(
                    conn, LOCAL_ADMIN, embedder, settings, group
                )
        except AppError as exc:
            if len(group) == 1:
                prepared = group[0][0]
                failed(Path(prepared.source).name, prepared.source, exc)
                return
            for item in group:
                await write_group([item])
            return
        for (prepared, _vectors), (outcome, document) in zip(group, outcomes, strict=True):
            report.counts[outcome] += 1
            report.chunks += document.chunk_count if outcome != "unchanged" else 0
            advance(f"{outcome}: {Path(prepared.source).name}")

    async def write() -> None:
        analyze_at = ANALYZE_AFTER
        done = False
        while not done and (item := await embedded.get()) is not None:
            group = [item]
            while len(group) < WRITE_GROUP and (
                len(group) < WRITE_AT_LEAST or not embedded.empty()
            ):
                following = await embedded.get()
                if following is None:
                    done = True
                    break
                group.append(following)
            await write_group(group)
            written = report.counts["added"] + report.counts["updated"]
            if written >= analyze_at:
                async with db.write() as conn:
                    await documents_service.refresh_statistics(conn)
                while analyze_at <= written:  # a group may pass more than one
                    analyze_at *= 2

    await _all_or_none(
        [prepare() for _ in range(preparers)] + [embed() for _ in range(EMBED_CALLS)] + [write()]
    )
    return report


async def _all_or_none(stages: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run the stages together; when one raises, cancel the others (which would wait forever on
    its queue) and raise its exception."""
    tasks = [asyncio.create_task(stage) for stage in stages]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
