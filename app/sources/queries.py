"""SQL of sources, their runs, and the link from each synced file to its document. Documents
themselves are written by the documents service; these statements read them in joins only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import and_, case, false, func, null, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import documents, source_documents, source_runs, sources, workspaces
from app.sources.schemas import SourceRun


@dataclass(frozen=True, slots=True)
class SourceRow:
    id: UUID
    workspace_id: UUID
    workspace: str
    kind: str
    location: str
    branch: str | None
    include: list[str]
    exclude: list[str]
    secret_encrypted: bytes | None
    webhook_secret_encrypted: bytes
    paused: bool
    schedule_minutes: int | None
    last_commit: str | None
    last_synced_at: datetime | None
    syncing: bool
    document_count: int
    created_at: datetime
    updated_at: datetime


def _select_sources() -> Any:
    count = (
        select(func.count())
        .select_from(source_documents)
        .where(source_documents.c.source_id == sources.c.id)
        .scalar_subquery()
    )
    syncing = and_(sources.c.lease_expires_at.is_not(None), sources.c.lease_expires_at > func.now())
    return select(
        sources.c.id,
        sources.c.workspace_id,
        workspaces.c.slug.label("workspace"),
        sources.c.kind,
        sources.c.location,
        sources.c.branch,
        sources.c.include,
        sources.c.exclude,
        sources.c.secret_encrypted,
        sources.c.webhook_secret_encrypted,
        sources.c.paused,
        sources.c.schedule_minutes,
        sources.c.last_commit,
        sources.c.last_synced_at,
        syncing.label("syncing"),
        count.label("document_count"),
        sources.c.created_at,
        sources.c.updated_at,
    ).join_from(sources, workspaces, workspaces.c.id == sources.c.workspace_id)


async def get_source(conn: ReadConnection, source_id: UUID) -> SourceRow | None:
    row = (await conn.execute(_select_sources().where(sources.c.id == source_id))).mappings()
    found = row.first()
    return None if found is None else SourceRow(**found)


async def list_sources(conn: ReadConnection, workspace_id: UUID) -> list[SourceRow]:
    statement = (
        _select_sources()
        .where(sources.c.workspace_id == workspace_id)
        .order_by(sources.c.created_at, sources.c.id)
    )
    return [SourceRow(**row) for row in (await conn.execute(statement)).mappings()]


async def insert_source(conn: WriteConnection, **values: Any) -> UUID | None:
    """The new source's id; None when the workspace already has a source at that location."""
    statement = (
        insert(sources)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["workspace_id", "location"])
        .returning(sources.c.id)
    )
    source_id: UUID | None = (await conn.execute(statement)).scalar()
    return source_id


async def update_source(conn: WriteConnection, source_id: UUID, **values: Any) -> bool:
    """False when another source of the workspace has that location already."""
    if "location" in values:
        clash = select(sources.c.id).where(
            sources.c.location == values["location"],
            sources.c.id != source_id,
            sources.c.workspace_id
            == select(sources.c.workspace_id).where(sources.c.id == source_id).scalar_subquery(),
        )
        if (await conn.execute(clash)).first() is not None:
            return False
    await conn.execute(
        update(sources).where(sources.c.id == source_id).values(**values, updated_at=func.now())
    )
    return True


async def delete_source(conn: WriteConnection, source_id: UUID) -> None:
    await conn.execute(sources.delete().where(sources.c.id == source_id))


def _lease_free() -> Any:
    return or_(sources.c.lease_expires_at.is_(None), sources.c.lease_expires_at <= func.now())


def _lease_for(seconds: float) -> Any:
    return func.now() + text(f"interval '{float(seconds)} seconds'")


async def take_lease(
    conn: WriteConnection, source_id: UUID, owner: str, seconds: float, *, request: bool = False
) -> bool:
    """Take the source's lease when no one holds it (or its holder stopped renewing): the one
    statement that decides which of two processes syncs. With `request`, a lease found held
    records instead that a sync is wanted, in the same statement, so its holder (which reads
    the request when it ends) cannot have ended in between. A sync that starts covers every
    request before it, so taking the lease clears them."""
    free = _lease_free()
    values: dict[str, Any] = {
        "lease_owner": case((free, owner), else_=sources.c.lease_owner),
        "lease_expires_at": case((free, _lease_for(seconds)), else_=sources.c.lease_expires_at),
        "sync_requested_at": case(
            (free, null()), else_=func.now() if request else sources.c.sync_requested_at
        ),
    }
    statement = (
        update(sources)
        .where(sources.c.id == source_id)
        .values(**values)
        .returning(sources.c.lease_owner)
    )
    holder: str | None = (await conn.execute(statement)).scalar()
    return holder == owner


async def renew_lease(conn: WriteConnection, source_id: UUID, owner: str, seconds: float) -> bool:
    statement = (
        update(sources)
        .where(sources.c.id == source_id, sources.c.lease_owner == owner)
        .values(lease_expires_at=_lease_for(seconds))
        .returning(sources.c.id)
    )
    return (await conn.execute(statement)).first() is not None


async def end_sync(
    conn: WriteConnection,
    source_id: UUID,
    owner: str,
    *,
    seconds: float,
    succeeded: bool,
    last_commit: str | None,
    keep: bool = True,
) -> bool:
    """End the owner's sync: a sync that succeeded records where the documents now stand. The
    lease is released unless a sync was requested while this one ran; then the owner keeps it
    (renewed, the request cleared) and True says to sync again. SET reads the row as it was,
    RETURNING as it is."""
    wanted = sources.c.sync_requested_at.is_not(None) if keep else false()
    values: dict[str, Any] = {
        "lease_owner": case((wanted, sources.c.lease_owner), else_=null()),
        "lease_expires_at": case((wanted, _lease_for(seconds)), else_=null()),
        "sync_requested_at": null() if keep else sources.c.sync_requested_at,
    }
    if succeeded:
        values["last_synced_at"] = func.now()
        if last_commit is not None:
            values["last_commit"] = last_commit
    statement = (
        update(sources)
        .where(sources.c.id == source_id, sources.c.lease_owner == owner)
        .values(**values)
        .returning(sources.c.lease_owner)
    )
    holder: str | None = (await conn.execute(statement)).scalar()
    return holder == owner


async def due_sources(conn: ReadConnection) -> list[UUID]:
    """Sources whose schedule says a sync is due, not paused, and not syncing now."""
    interval = func.make_interval(0, 0, 0, 0, 0, sources.c.schedule_minutes)
    statement = select(sources.c.id).where(
        sources.c.paused.is_(False),
        sources.c.schedule_minutes.is_not(None),
        _lease_free(),
        or_(
            sources.c.last_synced_at.is_(None),
            sources.c.last_synced_at + interval <= func.now(),
        ),
    )
    return [row.id for row in await conn.execute(statement)]


async def fail_abandoned_runs(conn: WriteConnection) -> int:
    """Mark failed the runs still `running` whose source's lease is free or expired: the
    process running them died (a live sync renews its lease after every file)."""
    lease_free = (
        select(sources.c.id)
        .where(
            sources.c.id == source_runs.c.source_id,
            _lease_free(),
        )
        .exists()
    )
    result = await conn.execute(
        update(source_runs)
        .where(source_runs.c.status == "running", lease_free)
        .values(
            status="failed",
            finished_at=func.now(),
            error="the process running the sync stopped before it ended",
        )
    )
    return result.rowcount or 0


async def insert_run(conn: WriteConnection, source_id: UUID, trigger: str) -> UUID:
    statement = (
        source_runs.insert()
        .values(source_id=source_id, trigger=trigger)
        .returning(source_runs.c.id)
    )
    run_id: UUID = (await conn.execute(statement)).scalar_one()
    return run_id


async def finish_run(
    conn: WriteConnection,
    run_id: UUID,
    *,
    status: str,
    commit: str | None,
    counts: dict[str, int],
    failures: list[dict[str, str]],
    error: str | None,
) -> None:
    await conn.execute(
        update(source_runs)
        .where(source_runs.c.id == run_id)
        .values(
            status=status,
            finished_at=func.now(),
            commit=commit,
            failures=failures,
            error=error,
            **counts,
        )
    )


_RUN_COLUMNS = (
    source_runs.c.id,
    source_runs.c.source_id,
    source_runs.c.trigger,
    source_runs.c.status,
    source_runs.c.started_at,
    source_runs.c.finished_at,
    source_runs.c.commit,
    source_runs.c.added,
    source_runs.c.updated,
    source_runs.c.removed,
    source_runs.c.unchanged,
    source_runs.c.failed,
    source_runs.c.failures,
    source_runs.c.error,
)


async def get_run(conn: ReadConnection, run_id: UUID) -> SourceRun | None:
    row = (
        (await conn.execute(select(*_RUN_COLUMNS).where(source_runs.c.id == run_id)))
        .mappings()
        .first()
    )
    return None if row is None else SourceRun.model_validate(dict(row))


async def list_runs(conn: ReadConnection, source_id: UUID, *, limit: int) -> list[SourceRun]:
    statement = (
        select(*_RUN_COLUMNS)
        .where(source_runs.c.source_id == source_id)
        .order_by(source_runs.c.started_at.desc(), source_runs.c.id.desc())
        .limit(limit)
    )
    return [
        SourceRun.model_validate(dict(row)) for row in (await conn.execute(statement)).mappings()
    ]


@dataclass(frozen=True, slots=True)
class SyncedFile:
    """A file of the source as the last sync left it."""

    document_id: UUID
    path: str
    file_hash: str
    commit: str | None
    commit_date: datetime | None
    names: list[str]
    stale: list[dict[str, Any]]


_LINK_COLUMNS = (
    source_documents.c.document_id,
    source_documents.c.path,
    source_documents.c.file_hash,
    source_documents.c.commit,
    source_documents.c.commit_date,
    source_documents.c.names,
    source_documents.c.stale,
)


async def synced_files(conn: ReadConnection, source_id: UUID) -> list[SyncedFile]:
    statement = select(*_LINK_COLUMNS).where(source_documents.c.source_id == source_id)
    return [SyncedFile(**row) for row in (await conn.execute(statement)).mappings()]


async def write_link(
    conn: WriteConnection,
    *,
    document_id: UUID,
    source_id: UUID,
    path: str,
    file_hash: str,
    commit: str | None,
    commit_date: datetime | None,
    names: Sequence[str],
    stale: list[dict[str, Any]],
) -> None:
    values = {
        "path": path,
        "file_hash": file_hash,
        "commit": commit,
        "commit_date": commit_date,
        "names": list(names),
        "stale": stale,
    }
    statement = insert(source_documents).values(
        document_id=document_id, source_id=source_id, **values
    )
    await conn.execute(statement.on_conflict_do_update(index_elements=["document_id"], set_=values))


async def candidates_naming(
    conn: ReadConnection, source_id: UUID, names: Sequence[str]
) -> list[SyncedFile]:
    """The source's documents that name any of `names`."""
    statement = select(*_LINK_COLUMNS).where(
        source_documents.c.source_id == source_id,
        source_documents.c.names.overlap(list(names)),
    )
    return [SyncedFile(**row) for row in (await conn.execute(statement)).mappings()]


async def set_stale(conn: WriteConnection, document_id: UUID, stale: list[dict[str, Any]]) -> None:
    await conn.execute(
        update(source_documents)
        .where(source_documents.c.document_id == document_id)
        .values(stale=stale)
    )


@dataclass(frozen=True, slots=True)
class ProvenanceRow:
    document_id: UUID
    source_id: UUID
    kind: str
    location: str
    branch: str | None
    path: str
    commit: str | None
    commit_date: datetime | None
    stale: list[dict[str, Any]]


def _visible(scope: str | None) -> Any:
    # Synced documents are owned by no one and `org`; a key bound to one workspace sees its own.
    visible = documents.c.visibility == "org"
    return visible if scope is None else and_(visible, workspaces.c.slug == scope)


async def provenance(
    conn: ReadConnection, document_ids: Sequence[UUID], *, scope: str | None
) -> list[ProvenanceRow]:
    if not document_ids:
        return []
    statement = (
        select(
            source_documents.c.document_id,
            source_documents.c.source_id,
            sources.c.kind,
            sources.c.location,
            sources.c.branch,
            source_documents.c.path,
            source_documents.c.commit,
            source_documents.c.commit_date,
            source_documents.c.stale,
        )
        .join_from(source_documents, sources, sources.c.id == source_documents.c.source_id)
        .join(documents, documents.c.id == source_documents.c.document_id)
        .join(workspaces, workspaces.c.id == documents.c.workspace_id)
        .where(source_documents.c.document_id.in_(list(document_ids)), _visible(scope))
    )
    return [ProvenanceRow(**row) for row in (await conn.execute(statement)).mappings()]


@dataclass(frozen=True, slots=True)
class StaleRow:
    document_id: UUID
    title: str
    workspace: str
    path: str
    commit_date: datetime | None
    stale: list[dict[str, Any]]


async def stale_documents(
    conn: ReadConnection, *, workspace: str | None, scope: str | None, limit: int
) -> list[StaleRow]:
    """Documents that may be stale, by workspace and path."""
    conditions = [func.jsonb_array_length(source_documents.c.stale) > 0, _visible(scope)]
    if workspace is not None:
        conditions.append(workspaces.c.slug == workspace)
    statement = (
        select(
            source_documents.c.document_id,
            documents.c.title,
            workspaces.c.slug.label("workspace"),
            source_documents.c.path,
            source_documents.c.commit_date,
            source_documents.c.stale,
        )
        .join_from(source_documents, documents, documents.c.id == source_documents.c.document_id)
        .join(workspaces, workspaces.c.id == documents.c.workspace_id)
        .where(*conditions)
        .order_by(workspaces.c.slug, source_documents.c.path)
        .limit(limit)
    )
    return [StaleRow(**row) for row in (await conn.execute(statement)).mappings()]
