"""SQL of documents and their chunks. Every read that returns documents takes the caller's id and
applies visibility (`org`, or private and owned by the caller) in the statement itself."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ColumnElement,
    Select,
    and_,
    case,
    delete,
    exists,
    func,
    not_,
    or_,
    select,
    text,
    true,
    update,
)
from sqlalchemy.sql.elements import TextClause

from app.db.engine import ReadConnection, WriteConnection
from app.db.tables import (
    chunks,
    document_links,
    document_originals,
    documents,
    source_documents,
    workspaces,
)
from app.documents.links import Link
from app.documents.schemas import (
    Chunk,
    ChunkPreview,
    Document,
    DocumentFilters,
    DocumentWithContent,
    LinkingDocument,
    OutgoingLink,
    RelatedDocument,
    TagCount,
    Visibility,
)


def visible_to(caller_id: UUID | None, scope: str | None = None) -> ColumnElement[bool]:
    """`org` documents, and private ones owned by the caller; with a `scope` (an API key bound
    to one workspace), only that workspace's. Statements using it join `workspaces`."""
    visible = (
        documents.c.visibility == "org"
        if caller_id is None
        else or_(
            documents.c.visibility == "org",
            and_(documents.c.visibility == "private", documents.c.owner_id == caller_id),
        )
    )
    return visible if scope is None else and_(visible, workspaces.c.slug == scope)


def _chunk_count() -> Any:
    return (
        select(func.count())
        .select_from(chunks)
        .where(chunks.c.document_id == documents.c.id)
        .scalar_subquery()
        .label("chunk_count")
    )


_DOCUMENT_COLUMNS = (
    documents.c.id,
    documents.c.title,
    workspaces.c.slug.label("workspace"),
    documents.c.owner_id,
    documents.c.visibility,
    documents.c.tags,
    documents.c.source,
    documents.c.media_type,
    documents.c.version,
    documents.c.created_at,
    documents.c.updated_at,
)


def _select_documents(*extra: Any) -> Select[Any]:
    return select(*_DOCUMENT_COLUMNS, _chunk_count(), *extra).join_from(
        documents, workspaces, workspaces.c.id == documents.c.workspace_id
    )


async def get_document(
    conn: ReadConnection, caller_id: UUID | None, document_id: UUID, *, scope: str | None = None
) -> DocumentWithContent | None:
    has_original = (
        exists().where(document_originals.c.document_id == documents.c.id).label("has_original")
    )
    statement = _select_documents(
        documents.c.content, documents.c.derived_from, has_original
    ).where(documents.c.id == document_id, visible_to(caller_id, scope))
    row = (await conn.execute(statement)).mappings().first()
    return DocumentWithContent.model_validate(dict(row)) if row else None


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """What an edit is checked against and builds on, whoever owns the document."""

    id: UUID
    workspace_id: UUID
    owner_id: UUID | None
    visibility: Visibility
    title: str
    content_sha256: str
    version: int
    source: str | None


async def document_row(
    conn: ReadConnection, document_id: UUID, *, scope: str | None = None
) -> DocumentRow | None:
    """The row, whoever owns it (within `scope`'s workspace, when set): for the service's
    permission checks only."""
    statement = select(
        documents.c.id,
        documents.c.workspace_id,
        documents.c.owner_id,
        documents.c.visibility,
        documents.c.title,
        documents.c.content_sha256,
        documents.c.version,
        documents.c.source,
    ).where(documents.c.id == document_id)
    if scope is not None:
        statement = statement.join(workspaces, workspaces.c.id == documents.c.workspace_id).where(
            workspaces.c.slug == scope
        )
    row = (await conn.execute(statement)).mappings().first()
    return None if row is None else DocumentRow(**row)


def _owned_by(owner_id: UUID | None) -> ColumnElement[bool]:
    return documents.c.owner_id.is_(None) if owner_id is None else documents.c.owner_id == owner_id


async def find_same_content(
    conn: ReadConnection, *, workspace_id: UUID, owner_id: UUID | None, content_sha256: str
) -> UUID | None:
    statement = select(documents.c.id).where(
        documents.c.workspace_id == workspace_id,
        _owned_by(owner_id),
        documents.c.content_sha256 == content_sha256,
    )
    return (await conn.execute(statement.limit(1))).scalar()


async def analyze_documents(conn: WriteConnection) -> None:
    """Fresh planner statistics of `documents`."""
    await conn.execute(text("ANALYZE documents"))


async def find_by_source(
    conn: ReadConnection, *, workspace_id: UUID, owner_id: UUID | None, source: str
) -> UUID | None:
    statement = select(documents.c.id).where(
        documents.c.workspace_id == workspace_id, _owned_by(owner_id), documents.c.source == source
    )
    return (await conn.execute(statement.order_by(documents.c.created_at).limit(1))).scalar()


@dataclass(frozen=True, slots=True)
class Located:
    """Where a file of a folder walk stands: its workspace (None: there is no such workspace),
    the document its source became (`find_by_source`'s), and one of the same owner there that
    holds its very content (`find_same_content`'s)."""

    workspace_id: UUID | None
    by_source: UUID | None
    by_content: UUID | None


@functools.cache
def _locate_statement(owned: bool) -> TextClause:
    # Written for each kind of owner: `IS NOT DISTINCT FROM` would serve both, but no index
    # serves it.
    mine = "d.workspace_id = w.id AND " + (
        "d.owner_id = CAST(:owner_id AS uuid)" if owned else "d.owner_id IS NULL"
    )
    return text(
        f"""
SELECT w.id,
       (SELECT d.id FROM documents d WHERE {mine} AND d.source = f.source
        ORDER BY d.created_at LIMIT 1),
       (SELECT d.id FROM documents d WHERE {mine} AND d.content_sha256 = f.content_sha256
        LIMIT 1)
FROM workspaces w
CROSS JOIN unnest(CAST(:sources AS text[]), CAST(:digests AS text[]))
     WITH ORDINALITY AS f(source, content_sha256, n)
WHERE w.slug = :workspace
ORDER BY f.n"""
    )


async def locate_files(
    conn: ReadConnection,
    *,
    workspace: str,
    owner_id: UUID | None,
    files: Sequence[tuple[str, str]],
) -> list[Located]:
    """Where each (source, content digest) of a folder walk's files stands, in one statement: a
    statement for each file, and one for each of its documents, cost the walk round trips that
    each took a share of the cores the model needs (issue #33)."""
    params: dict[str, Any] = {
        "workspace": workspace,
        "sources": [source for source, _ in files],
        "digests": [digest for _, digest in files],
    }
    if owner_id is not None:
        params["owner_id"] = owner_id
    rows = (await conn.execute(_locate_statement(owner_id is not None), params)).all()
    if not rows:  # no such workspace
        return [Located(None, None, None) for _ in files]
    return [Located(row[0], row[1], row[2]) for row in rows]


async def source_digests(
    conn: ReadConnection, *, workspace_id: UUID, owner_id: UUID | None, sources: Sequence[str]
) -> dict[str, str]:
    """The content digest of the document each of `sources` became (the first, as
    `find_by_source` finds it), for the sources that have one."""
    statement = (
        select(documents.c.source, documents.c.content_sha256)
        .where(
            documents.c.workspace_id == workspace_id,
            _owned_by(owner_id),
            documents.c.source.in_(list(sources)),
        )
        # Newest first, so that the first of a source's documents is the one the dict keeps.
        .order_by(documents.c.created_at.desc())
    )
    return {row.source: row.content_sha256 for row in await conn.execute(statement)}


@dataclass(frozen=True, slots=True)
class NewDocument:
    """A document's row, to insert (`insert_documents`)."""

    workspace_id: UUID
    owner_id: UUID | None
    title: str
    source: str | None
    media_type: str
    visibility: Visibility
    tags: Sequence[str]
    content: str
    content_sha256: str
    derived_from: Sequence[UUID] | None = None
    agent_key_id: UUID | None = None
    agent_client_id: str | None = None


# Written as text, once: a statement built for each document (its columns, the returned row,
# the workspace's slug joined on) cost more of a folder walk's CPU than the insert itself. The
# documents come as arrays, one per column; tags and sources as JSON (an array of arrays must be
# rectangular). Each is given its id, by which the caller finds its row among those returned.
_RETURNED = [column.name for column in _DOCUMENT_COLUMNS if column.table is documents]
_INSERT_DOCUMENTS = text(
    f"""
WITH inserted AS (
  INSERT INTO documents (id, workspace_id, owner_id, title, source, media_type, visibility,
                         tags, content, content_sha256, derived_from, agent_key_id,
                         agent_client_id)
  SELECT r.id, r.workspace_id, r.owner_id, r.title, r.source, r.media_type, r.visibility,
         ARRAY(SELECT jsonb_array_elements_text(CAST(r.tags AS jsonb))), r.content,
         r.content_sha256,
         CASE WHEN r.derived_from IS NOT NULL THEN
           ARRAY(SELECT CAST(jsonb_array_elements_text(CAST(r.derived_from AS jsonb)) AS uuid))
         END,
         r.agent_key_id, r.agent_client_id
  FROM unnest(CAST(:ids AS uuid[]), CAST(:workspace_ids AS uuid[]),
              CAST(:owner_ids AS uuid[]), CAST(:titles AS text[]), CAST(:sources AS text[]),
              CAST(:media_types AS text[]), CAST(:visibilities AS text[]),
              CAST(:tags AS text[]), CAST(:contents AS text[]), CAST(:digests AS text[]),
              CAST(:derived_from AS text[]), CAST(:agent_key_ids AS uuid[]),
              CAST(:agent_client_ids AS text[]))
       AS r(id, workspace_id, owner_id, title, source, media_type, visibility, tags, content,
            content_sha256, derived_from, agent_key_id, agent_client_id)
  RETURNING workspace_id, {", ".join(_RETURNED)}
)
SELECT {", ".join(f"i.{name}" for name in _RETURNED)}, w.slug AS workspace, 0 AS chunk_count
FROM inserted i JOIN workspaces w ON w.id = i.workspace_id"""
)


async def insert_documents(conn: WriteConnection, new: Sequence[NewDocument]) -> list[Document]:
    """The new rows as a reply shows them, in the order given, before their chunks are written
    (none counted yet): read back from the insert itself, rather than by reading the documents,
    content and all, again."""
    ids = [uuid4() for _ in new]
    result = await conn.execute(
        _INSERT_DOCUMENTS,
        {
            "ids": ids,
            "workspace_ids": [row.workspace_id for row in new],
            "owner_ids": [row.owner_id for row in new],
            "titles": [row.title for row in new],
            "sources": [row.source for row in new],
            "media_types": [row.media_type for row in new],
            "visibilities": [row.visibility for row in new],
            "tags": [json.dumps(list(row.tags)) for row in new],
            "contents": [row.content for row in new],
            "digests": [row.content_sha256 for row in new],
            "derived_from": [
                None if row.derived_from is None else json.dumps([str(i) for i in row.derived_from])
                for row in new
            ],
            "agent_key_ids": [row.agent_key_id for row in new],
            "agent_client_ids": [row.agent_client_id for row in new],
        },
    )
    inserted = {row["id"]: Document.model_validate(dict(row)) for row in result.mappings()}
    return [inserted[document_id] for document_id in ids]


@dataclass(frozen=True, slots=True)
class NewVersion:
    """New content for a document, written together."""

    content: str
    content_sha256: str
    version: int


async def update_document(
    conn: WriteConnection,
    document_id: UUID,
    *,
    title: str,
    visibility: Visibility,
    tags: list[str] | None = None,
    new_version: NewVersion | None = None,
) -> None:
    """Write the title and visibility, and the tags and content when given (None keeps them)."""
    statement = (
        update(documents)
        .where(documents.c.id == document_id)
        .values(title=title, visibility=visibility, updated_at=func.now())
    )
    if tags is not None:
        statement = statement.values(tags=tags)
    if new_version is not None:
        statement = statement.values(
            content=new_version.content,
            content_sha256=new_version.content_sha256,
            version=new_version.version,
        )
    await conn.execute(statement)


async def set_source(
    conn: WriteConnection, document_id: UUID, *, source: str | None, bump_version: bool
) -> None:
    """Write where the document came from; a new version when its content did not change."""
    statement = update(documents).where(documents.c.id == document_id).values(source=source)
    if bump_version:
        statement = statement.values(version=documents.c.version + 1, updated_at=func.now())
    await conn.execute(statement)


async def delete_document(conn: WriteConnection, document_id: UUID) -> None:
    await conn.execute(documents.delete().where(documents.c.id == document_id))


def _may_be_stale() -> ColumnElement[bool]:
    """The document came from a source and a later commit changed code it names. Sources sit
    above documents; like a workspace's count of its documents, this reads their table in a
    subquery and never writes it (docs/adr/0035)."""
    return (
        select(source_documents.c.document_id)
        .where(
            source_documents.c.document_id == documents.c.id,
            func.jsonb_array_length(source_documents.c.stale) > 0,
        )
        .exists()
    )


async def list_documents(
    conn: ReadConnection,
    caller_id: UUID | None,
    filters: DocumentFilters,
    *,
    limit: int,
    after: tuple[datetime, UUID] | None,
    scope: str | None = None,
) -> list[Document]:
    """Up to `limit + 1` visible documents after `after`, newest change first (the one more
    says another page follows)."""
    conditions: list[ColumnElement[bool]] = [visible_to(caller_id, scope)]
    if filters.workspace is not None:
        conditions.append(workspaces.c.slug == filters.workspace)
    if filters.tag is not None:
        conditions.append(documents.c.tags.contains([filters.tag]))
    if filters.owner is not None:
        conditions.append(documents.c.owner_id == filters.owner)
    if filters.visibility is not None:
        conditions.append(documents.c.visibility == filters.visibility)
    if filters.stale is not None:
        condition = _may_be_stale()
        conditions.append(condition if filters.stale else not_(condition))
    if filters.q:
        # Trigram match on the title (GIN index), or a plain substring.
        conditions.append(
            or_(documents.c.title.op("%")(filters.q), documents.c.title.icontains(filters.q))
        )
    if after is not None:
        when, ident = after
        conditions.append(
            or_(
                documents.c.updated_at < when,
                and_(documents.c.updated_at == when, documents.c.id < ident),
            )
        )
    statement = (
        _select_documents()
        .where(and_(true(), *conditions))
        .order_by(documents.c.updated_at.desc(), documents.c.id.desc())
        .limit(limit + 1)
    )
    return [
        Document.model_validate(dict(row)) for row in (await conn.execute(statement)).mappings()
    ]


async def document_chunks(conn: ReadConnection, document_id: UUID) -> list[Chunk]:
    rows = await conn.execute(
        select(
            chunks.c.id,
            chunks.c.ordinal,
            chunks.c.heading_path,
            chunks.c.text,
            chunks.c.start_offset.label("start"),
            chunks.c.end_offset.label("end"),
            chunks.c.page,
        )
        .where(chunks.c.document_id == document_id)
        .order_by(chunks.c.ordinal)
    )
    return [Chunk.model_validate(dict(row)) for row in rows.mappings()]


async def visible_chunks(
    conn: ReadConnection, caller_id: UUID | None, chunk_ids: Sequence[UUID], *, scope: str | None
) -> set[UUID]:
    """Which of `chunk_ids` are chunks of documents the caller may see."""
    if not chunk_ids:
        return set()
    statement = (
        select(chunks.c.id)
        .join_from(chunks, documents, documents.c.id == chunks.c.document_id)
        .join(workspaces, workspaces.c.id == documents.c.workspace_id)
        .where(chunks.c.id.in_(list(chunk_ids)), visible_to(caller_id, scope))
    )
    return {row.id for row in await conn.execute(statement)}


@dataclass(frozen=True, slots=True)
class ChunkReach:
    """Who may see a chunk: its document's visibility and workspace."""

    chunk_id: UUID
    visibility: Visibility
    workspace: str


async def chunk_reach(
    conn: ReadConnection, caller_id: UUID | None, chunk_ids: Sequence[UUID], *, scope: str | None
) -> list[ChunkReach]:
    """The reach of each of `chunk_ids` the caller may see now (the others are left out)."""
    if not chunk_ids:
        return []
    statement = (
        select(chunks.c.id, documents.c.visibility, workspaces.c.slug)
        .join_from(chunks, documents, documents.c.id == chunks.c.document_id)
        .join(workspaces, workspaces.c.id == documents.c.workspace_id)
        .where(chunks.c.id.in_(list(chunk_ids)), visible_to(caller_id, scope))
    )
    return [ChunkReach(row.id, row.visibility, row.slug) for row in await conn.execute(statement)]


async def visible_documents(
    conn: ReadConnection, caller_id: UUID | None, document_ids: Sequence[UUID], *, scope: str | None
) -> set[UUID]:
    """Which of `document_ids` are documents the caller may see."""
    if not document_ids:
        return set()
    statement = (
        select(documents.c.id)
        .join_from(documents, workspaces, workspaces.c.id == documents.c.workspace_id)
        .where(documents.c.id.in_(list(document_ids)), visible_to(caller_id, scope))
    )
    return {row.id for row in await conn.execute(statement)}


async def related_documents(
    conn: ReadConnection,
    caller_id: UUID | None,
    document_id: UUID,
    *,
    limit: int,
    scope: str | None = None,
) -> list[RelatedDocument]:
    """The visible documents whose chunks' centroid lies nearest to this document's, nearest
    first. Cosine ignores length, so a plain average of the (normalised) vectors serves."""
    target = (
        select(func.avg(chunks.c.embedding, type_=Vector()).label("centroid"))
        .where(chunks.c.document_id == document_id)
        .scalar_subquery()
    )
    centroid = func.avg(chunks.c.embedding, type_=Vector())
    distance = centroid.cosine_distance(target)
    statement = (
        select(
            documents.c.id,
            documents.c.title,
            workspaces.c.slug.label("workspace"),
            (1 - distance).label("similarity"),
        )
        .select_from(
            chunks.join(documents, documents.c.id == chunks.c.document_id).join(
                workspaces, workspaces.c.id == documents.c.workspace_id
            )
        )
        .where(documents.c.id != document_id, visible_to(caller_id, scope))
        .group_by(documents.c.id, documents.c.title, workspaces.c.slug)
        .having(target.is_not(None))
        .order_by(distance, documents.c.id)
        .limit(limit)
    )
    rows = await conn.execute(statement)
    return [RelatedDocument.model_validate(dict(row)) for row in rows.mappings()]


def source_path(source: Any) -> ColumnElement[str]:
    """A document's path within its workspace, as `links.path_of` reads its source."""
    return func.regexp_replace(source, r"^(\./|/)+", "")


def source_name(source: Any) -> ColumnElement[str]:
    """The file name of a document's source (its path's last part)."""
    return func.regexp_replace(source, r"^.*/", "")


async def write_links(
    conn: WriteConnection,
    *,
    document_id: UUID,
    workspace_id: UUID,
    links: Sequence[Link],
    first: bool = False,
) -> None:
    """Replace the links a document's content holds (its new version's), or write its `first`
    (a document just added has none to delete)."""
    if not first:
        await conn.execute(
            document_links.delete().where(document_links.c.document_id == document_id)
        )
    if links:
        await conn.execute(
            document_links.insert(),
            [
                {
                    "document_id": document_id,
                    "workspace_id": workspace_id,
                    "href": link.href,
                    "target_id": link.target_id,
                    "target_path": link.target_path,
                    "target_name": link.target_name,
                }
                for link in links
            ],
        )


async def linking_documents(
    conn: ReadConnection,
    caller_id: UUID | None,
    document_id: UUID,
    *,
    limit: int,
    scope: str | None = None,
) -> list[LinkingDocument]:
    """The visible documents that link to this one, most recently changed first: by its address
    (`/documents/<id>`), by its path in the same workspace, or by its file's name when no
    document of the workspace has the path the link names (`links` says why)."""
    target = documents.alias("target")
    other = documents.alias("other")
    link = document_links
    same_workspace = link.c.workspace_id == target.c.workspace_id
    no_exact = ~exists().where(
        other.c.workspace_id == link.c.workspace_id,
        source_path(other.c.source) == link.c.target_path,
    )
    points_here = or_(
        link.c.target_id == target.c.id,
        and_(same_workspace, link.c.target_path == source_path(target.c.source)),
        and_(same_workspace, link.c.target_name == source_name(target.c.source), no_exact),
    )
    statement = (
        select(
            documents.c.id,
            documents.c.title,
            workspaces.c.slug.label("workspace"),
            documents.c.updated_at,
        )
        .distinct()
        .select_from(
            link.join(documents, documents.c.id == link.c.document_id)
            .join(workspaces, workspaces.c.id == documents.c.workspace_id)
            .join(target, target.c.id == document_id)
        )
        .where(documents.c.id != document_id, points_here, visible_to(caller_id, scope))
        .order_by(documents.c.updated_at.desc(), documents.c.id)
        .limit(limit)
    )
    rows = await conn.execute(statement)
    return [LinkingDocument.model_validate(dict(row)) for row in rows.mappings()]


async def outgoing_links(
    conn: ReadConnection, caller_id: UUID | None, document_id: UUID, *, scope: str | None = None
) -> list[OutgoingLink]:
    """Each link of a document with the visible document it reaches, if any: the one of that
    address; else in the same workspace the one uploaded from that path, else the newest whose
    file has that name."""
    link = document_links
    path = source_path(documents.c.source)
    reached = (
        select(documents.c.id, documents.c.title, workspaces.c.slug.label("workspace"))
        .join_from(documents, workspaces, workspaces.c.id == documents.c.workspace_id)
        .where(
            visible_to(caller_id, scope),
            or_(
                documents.c.id == link.c.target_id,
                and_(
                    documents.c.workspace_id == link.c.workspace_id,
                    or_(
                        path == link.c.target_path,
                        source_name(documents.c.source) == link.c.target_name,
                    ),
                ),
            ),
        )
        .order_by(case((path == link.c.target_path, 0), else_=1), documents.c.updated_at.desc())
        .limit(1)
        .lateral("reached")
    )
    statement = (
        select(
            link.c.href,
            reached.c.id.label("document_id"),
            reached.c.title,
            reached.c.workspace,
        )
        .select_from(link.outerjoin(reached, true()))
        .where(link.c.document_id == document_id)
        .order_by(link.c.href)
    )
    rows = await conn.execute(statement)
    return [OutgoingLink.model_validate(dict(row)) for row in rows.mappings()]


async def chunk_preview(
    conn: ReadConnection, caller_id: UUID | None, chunk_id: UUID, *, scope: str | None = None
) -> ChunkPreview | None:
    """One chunk of a visible document, with the document's title and workspace."""
    statement = (
        select(
            chunks.c.id,
            chunks.c.document_id,
            documents.c.title,
            workspaces.c.slug.label("workspace"),
            chunks.c.ordinal,
            chunks.c.heading_path,
            chunks.c.text,
            chunks.c.start_offset.label("start"),
            chunks.c.end_offset.label("end"),
            chunks.c.page,
        )
        .select_from(
            chunks.join(documents, documents.c.id == chunks.c.document_id).join(
                workspaces, workspaces.c.id == documents.c.workspace_id
            )
        )
        .where(chunks.c.id == chunk_id, visible_to(caller_id, scope))
    )
    row = (await conn.execute(statement)).mappings().first()
    return ChunkPreview.model_validate(dict(row)) if row else None


async def tags_in_use(
    conn: ReadConnection,
    caller_id: UUID | None,
    *,
    scope: str | None,
    limit: int,
    contains: str | None = None,
) -> list[TagCount]:
    """The tags of the documents the caller may see, with how many carry each, the most used
    first; with `contains`, those that hold it (in any case; `%` and `_` are literal)."""
    tagged = (
        select(func.unnest(documents.c.tags).label("tag"))
        .select_from(documents.join(workspaces, workspaces.c.id == documents.c.workspace_id))
        .where(visible_to(caller_id, scope))
        .subquery()
    )
    statement = select(tagged.c.tag, func.count()).group_by(tagged.c.tag)
    if contains:
        statement = statement.where(tagged.c.tag.icontains(contains, autoescape=True))
    rows = await conn.execute(statement.order_by(func.count().desc(), tagged.c.tag).limit(limit))
    return [TagCount(tag=row[0], documents=row[1]) for row in rows]


@dataclass(frozen=True, slots=True)
class Original:
    """The file a document was converted from, as it was sent."""

    media_type: str
    filename: str | None
    data: bytes


async def put_original(
    conn: WriteConnection, *, document_id: UUID, media_type: str, filename: str | None, data: bytes
) -> None:
    """Keep `data` as the document's original file, in place of any kept before."""
    await conn.execute(
        delete(document_originals).where(document_originals.c.document_id == document_id)
    )
    await conn.execute(
        document_originals.insert().values(
            document_id=document_id, media_type=media_type, filename=filename, data=data
        )
    )


async def get_original(
    conn: ReadConnection, caller_id: UUID | None, document_id: UUID, *, scope: str | None
) -> Original | None:
    """The original file of a document the caller may see; None when the document is not
    visible to the caller or has no original."""
    statement = (
        select(
            document_originals.c.media_type,
            document_originals.c.filename,
            document_originals.c.data,
        )
        .join_from(documents, workspaces, workspaces.c.id == documents.c.workspace_id)
        .join(document_originals, document_originals.c.document_id == documents.c.id)
        .where(documents.c.id == document_id, visible_to(caller_id, scope))
    )
    row = (await conn.execute(statement)).one_or_none()
    return None if row is None else Original(row.media_type, row.filename, bytes(row.data))
