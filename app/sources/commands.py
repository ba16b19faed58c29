"""`corpus sources add|list|sync|remove`: the operator's door to sources, on the configured
database (migrated first), as the local admin. `app.cli` parses; these do the work and print."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.db import embedded, migrate
from app.db.engine import Database
from app.kit.secrets import SecretBox
from app.sources import git
from app.sources import service as sources_service
from app.sources.schemas import KnowledgeSource, SourceCreate, SourceRun


@asynccontextmanager
async def _database(url: str) -> AsyncIterator[Database]:
    db = Database(url)
    try:
        yield db
    finally:
        await db.dispose()


def _attached(settings: Settings, work: Any) -> Any:
    with embedded.attached(settings) as url:
        migrate.upgrade(settings, url)
        return asyncio.run(work(url))


def _line(source: KnowledgeSource) -> str:
    state = "paused" if source.paused else "active"
    branch = f" @{source.branch}" if source.branch else ""
    synced = source.last_synced_at.isoformat() if source.last_synced_at else "never"
    return (
        f"{source.id}  {source.kind:6}  {source.location}{branch}  {state}  "
        f"{source.document_count} documents  last sync {synced}"
    )


def add(settings: Settings, workspace: str, data: SourceCreate) -> int:
    box = SecretBox(settings.resolved_secret_key())

    async def work(url: str) -> KnowledgeSource:
        async with _database(url) as db, db.write() as conn:
            return await sources_service.create_source(
                conn, LOCAL_ADMIN, workspace, data, settings=settings, box=box
            )

    source = _attached(settings, work)
    print(f"added source {source.id} to workspace {source.workspace}")
    print(f"sync it: corpus sources sync {source.id}")
    return 0


def list_(settings: Settings, workspace: str) -> int:
    box = SecretBox(settings.resolved_secret_key())

    async def work(url: str) -> list[KnowledgeSource]:
        async with _database(url) as db, db.read() as conn:
            return await sources_service.list_sources(
                conn, LOCAL_ADMIN, workspace, settings=settings, box=box
            )

    for source in _attached(settings, work):
        print(_line(source))
    return 0


def _report(run: SourceRun) -> int:
    commit = f" at {run.commit[:12]}" if run.commit else ""
    print(
        f"sync {run.status}{commit}: {run.added} added, {run.updated} updated, "
        f"{run.removed} removed, {run.unchanged} unchanged, {run.failed} failed"
    )
    for failure in run.failures:
        print(f"  failed {failure.path}: {failure.reason}", file=sys.stderr)
    if run.error:
        print(f"corpus: {run.error}", file=sys.stderr)
    return 0 if run.status == "succeeded" and not run.failed else 1


def sync(settings: Settings, source_id: UUID) -> int:
    from tqdm import tqdm

    from app.documents.worker import Converter
    from app.rag.embeddings import make_embedder
    from app.sources.sync import Syncer
    from app.system import service as system_service

    async def work(url: str) -> SourceRun:
        embedder = make_embedder(settings)
        converter = Converter(settings)
        try:
            async with _database(url) as db:
                await system_service.ensure_embedding_model(db, settings)
                syncer = Syncer(
                    db=db,
                    embedder=embedder,
                    settings=settings,
                    converter=converter,
                    box=SecretBox(settings.resolved_secret_key()),
                )
                with tqdm(unit="file", file=sys.stderr) as bar:

                    def progress(done: int, total: int, label: str) -> None:
                        bar.total = total
                        bar.set_postfix_str(label[-40:], refresh=False)
                        bar.update(done - bar.n)

                    return await syncer.sync(source_id, "cli", progress)
        finally:
            await converter.aclose()
            await embedder.aclose()

    return _report(_attached(settings, work))


def remove(settings: Settings, source_id: UUID) -> int:
    async def work(url: str) -> int:
        async with _database(url) as db, db.write() as conn:
            return await sources_service.delete_source(conn, LOCAL_ADMIN, source_id)

    count = _attached(settings, work)
    git.remove_mirror(settings.data_dir, source_id)
    print(f"removed source {source_id} and its {count} documents")
    return 0
