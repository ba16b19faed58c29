"""Documents: create (from text or a file), read, list, edit, delete.

Every write is one transaction (the caller's): chunks, embeddings, lexemes, postings and the
BM25 statistics change together, so a failure half-way leaves the previous version intact and
searchable. Rules of who may do what live here, and visibility lives in the queries."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, Literal
from uuid import UUID

import numpy as np
from pydantic import ValidationError

from app.access.principal import LOCAL_ADMIN, Principal
from app.audit import service as audit
from app.config import Settings
from app.db.engine import ReadConnection, ShortTransaction, WriteConnection
from app.documents import links, queries
from app.documents.convert import PDF, clean_title
from app.documents.files import SAMPLE_TAGS, SAMPLE_WORKSPACE
from app.documents.schemas import (
    Chunk,
    ChunkPreview,
    ChunkRange,
    Document,
    DocumentCreate,
    DocumentCreated,
    DocumentFilters,
    DocumentText,
    DocumentUpdate,
    DocumentWithContent,
    LinkingDocument,
    OutgoingLink,
    RelatedDocument,
    SampleLoaded,
    TagCount,
    Visibility,
)
from app.documents.worker import Converter
from app.errors import NotFound, TooLarge, ValidationFailed
from app.kit.paging import decode_cursor, keyset_page
from app.kit.updates import changes
from app.observe import tracing
from app.rag import index
from app.rag.chunking import ChunkPiece
from app.rag.embeddings.base import Embedder
from app.schemas import Page
from app.workspaces import service as workspaces_service

MARKDOWN = "text/markdown"


def _sha256(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def _require_editor(principal: Principal) -> None:
    principal.require("documents.write", "your role may not add, edit or delete documents")


def _check_length(settings: Settings, content: str) -> None:
    if len(content) > settings.max_document_chars:
        raise TooLarge(
            f"the document has {len(content):,} characters; the limit is "
            f"{settings.max_document_chars:,} (CORPUS_MAX_DOCUMENT_CHARS)"
        )
    if not content.strip():
        raise ValidationFailed("content: the document is empty")


@dataclass(frozen=True, slots=True)
class Indexed:
    """A document's chunks with their vectors, computed before anything is written."""

    pieces: list[ChunkPiece]
    vectors: np.ndarray


@dataclass(frozen=True, slots=True)
class Chunked:
    """A document's chunks and the text the model reads of each, before embedding."""

    title: str
    pieces: list[ChunkPiece]
    texts: list[str]


async def chunked(embedder: Embedder, title: str, content: str) -> Chunked:
    """The document's chunks and their embedding texts.

    Raises:
        ValidationFailed: the document has no text to index.
    """
    # Off the event loop: the local model's tokenizer measures every block (tens of
    # milliseconds for a long document).
    with tracing.span("ingest.chunk", {"corpus.ingest.chars": len(content)}) as current:
        pieces = await asyncio.to_thread(index.chunk, content, title=title, embedder=embedder)
        current.set_attribute("corpus.ingest.chunks", len(pieces))
    if not pieces:
        raise ValidationFailed("content: the document has no text to index")
    texts = [
        index.embedding_text(title, piece.heading_path, piece.text, embedder) for piece in pieces
    ]
    return Chunked(title, pieces, texts)


async def _embed(embedder: Embedder, title: str, content: str) -> Indexed:
    # Chunking and embedding come first, so the slow part holds no row locks and a provider
    # failure leaves nothing to undo.
    cut = await chunked(embedder, title, content)
    with tracing.span("ingest.embed", {"corpus.ingest.chunks": len(cut.pieces)}):
        vectors = await embedder.embed_passages(cut.texts)
    return Indexed(cut.pieces, vectors)


async def _write_chunks(
    conn: WriteConnection,
    indexed: Indexed,
    *,
    document_id: UUID,
    workspace_id: UUID,
    private_owner_id: UUID | None,
    title: str,
    visibility: Visibility,
    page_starts: Sequence[int] | None,
) -> None:
    """Write the chunks with their postings; an `org` document's count in the BM25 statistics
    in the same statement."""
    await _index(
        conn,
        [
            index.DocumentChunks(
                document_id=document_id,
                workspace_id=workspace_id,
                private_owner_id=private_owner_id,
                title=title,
                pieces=indexed.pieces,
                vectors=indexed.vectors,
                counted=visibility == "org",
                page_starts=page_starts,
            )
        ],
    )


async def _index(conn: WriteConnection, documents: Sequence[index.DocumentChunks]) -> None:
    chunks = sum(len(document.pieces) for document in documents)
    with tracing.span("ingest.index", {"corpus.ingest.chunks": chunks}):
        await index.insert_chunks(conn, documents)


async def _keep_original(
    conn: WriteConnection, document_id: UUID, original: FileUpload | None
) -> None:
    """Keep the file a document was converted from (a PDF's), in place of the one kept before.
    Without one, the file kept before stays: an edit by hand does not make it less the
    document's original."""
    if original is not None:
        await queries.put_original(
            conn,
            document_id=document_id,
            media_type=PDF,
            filename=original.filename,
            data=original.data,
        )


def _meta(document: DocumentWithContent) -> Document:
    return Document.model_validate(document.model_dump(exclude={"content"}))


async def _reread(conn: ReadConnection, principal: Principal, document_id: UUID) -> Document:
    document = await queries.get_document(
        conn, principal.user_id, document_id, scope=principal.workspace_scope
    )
    assert document is not None
    return _meta(document)


async def create(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    data: DocumentCreate,
    *,
    media_type: str = MARKDOWN,
    derived_from: Sequence[UUID] | None = None,
    indexed: Indexed | None = None,
    dedupe: bool = True,
    page_starts: Sequence[int] | None = None,
    original: FileUpload | None = None,
    workspace_id: UUID | None = None,
) -> DocumentCreated:
    """Add a document: chunk, embed and index it in the caller's transaction. `derived_from`
    records the chunks an agent's note was drawn from; `indexed`, its chunks and vectors when
    the caller embedded them already (a folder walk embeds several files' chunks at once);
    `workspace_id`, the workspace the caller resolved for `data.workspace` in this transaction
    (`workspaces_service.write_target` or `ensure_workspace`).

    Identical content from the same owner in the same workspace is not added twice: the reply
    names the existing document with `unchanged: true` (unless `dedupe` is off: two files of a
    source that hold the same text are two documents, each kept in step with its file).

    Raises:
        Forbidden: the role may not add documents. ValidationFailed: unknown workspace, empty
        content, or a private document without an owner. TooLarge: over the length limit.
    """
    with tracing.span("ingest", {"corpus.ingest.media_type": media_type}) as current:
        created = await _create(
            conn,
            principal,
            embedder,
            settings,
            data,
            media_type=media_type,
            derived_from=derived_from,
            indexed=indexed,
            dedupe=dedupe,
            page_starts=page_starts,
            original=original,
            workspace_id=workspace_id,
        )
        current.set_attribute("corpus.document_id", str(created.id))
        current.set_attribute("corpus.ingest.unchanged", created.unchanged)
        current.set_attribute("corpus.ingest.chunks", created.chunk_count)
        return created


async def _create(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    data: DocumentCreate,
    *,
    media_type: str,
    derived_from: Sequence[UUID] | None,
    indexed: Indexed | None,
    dedupe: bool,
    page_starts: Sequence[int] | None,
    original: FileUpload | None,
    workspace_id: UUID | None,
) -> DocumentCreated:
    _require_editor(principal)
    _check_length(settings, data.content)
    if data.visibility == "private" and principal.user_id is None:
        raise ValidationFailed("visibility: a private document needs an owner; sign in first")
    if workspace_id is None:
        workspace_id = await workspaces_service.write_target(conn, principal, data.workspace)
    digest = _sha256(data.content)
    existing = None
    if dedupe:
        existing = await queries.find_same_content(
            conn, workspace_id=workspace_id, owner_id=principal.user_id, content_sha256=digest
        )
    if existing is not None:
        document = await _reread(conn, principal, existing)
        return DocumentCreated(**document.model_dump(), unchanged=True)

    if indexed is None:
        indexed = await _embed(embedder, data.title, data.content)
    (document,) = await _insert_new(
        conn,
        principal,
        workspace_id,
        [
            _New(
                data,
                digest,
                indexed,
                media_type,
                page_starts=page_starts,
                original=original,
                derived_from=derived_from,
            )
        ],
    )
    return DocumentCreated(**document.model_dump(), unchanged=False)


@dataclass(frozen=True, slots=True)
class _New:
    """A new document, checked, with its chunks embedded: what `_insert_new` writes."""

    data: DocumentCreate
    content_sha256: str
    indexed: Indexed
    media_type: str
    page_starts: Sequence[int] | None = None
    original: FileUpload | None = None
    derived_from: Sequence[UUID] | None = None


async def _insert_new(
    conn: WriteConnection, principal: Principal, workspace_id: UUID, new: Sequence[_New]
) -> list[Document]:
    """Write new documents of `principal`'s into a workspace: their rows in one statement and
    all their chunks in another, then what some have beside them (a PDF's file, links, an
    agent's audit entry). Returns what a reply says of each, without reading it back."""
    inserted = await queries.insert_documents(
        conn,
        [
            queries.NewDocument(
                workspace_id=workspace_id,
                owner_id=principal.user_id,
                title=item.data.title,
                source=item.data.source,
                media_type=item.media_type,
                visibility=item.data.visibility,
                tags=item.data.tags,
                content=item.data.content,
                content_sha256=item.content_sha256,
                derived_from=item.derived_from,
                agent_key_id=principal.key_id,
                agent_client_id=principal.client_id,
            )
            for item in new
        ],
    )
    await _index(
        conn,
        [
            index.DocumentChunks(
                document_id=document.id,
                workspace_id=workspace_id,
                private_owner_id=principal.user_id if item.data.visibility == "private" else None,
                title=item.data.title,
                pieces=item.indexed.pieces,
                vectors=item.indexed.vectors,
                counted=item.data.visibility == "org",
                page_starts=item.page_starts,
            )
            for document, item in zip(inserted, new, strict=True)
        ],
    )
    for document, item in zip(inserted, new, strict=True):
        await _keep_original(conn, document.id, item.original)
        await queries.write_links(
            conn,
            document_id=document.id,
            workspace_id=workspace_id,
            links=links.extract(item.data.content, item.data.source),
            first=True,
        )
        await _audit_agent(
            conn, principal, "document.create", document.id, {"title": item.data.title}
        )
    # Every field came back from the insert, and the chunks were just written.
    return [
        document.model_copy(update={"chunk_count": len(item.indexed.pieces)})
        for document, item in zip(inserted, new, strict=True)
    ]


async def _audit_agent(
    conn: WriteConnection,
    principal: Principal,
    action: str,
    document_id: UUID,
    values: dict[str, Any],
) -> None:
    """Audit a document written or deleted through an agent's credential (an API key or an
    OAuth client): a person's own edits are the history of their documents, but what an agent
    did on their behalf is what an admin must be able to trace."""
    if principal.key_id is None and principal.client_id is None:
        return
    after = values if action != "document.delete" else None
    before = values if action == "document.delete" else None
    await audit.record(
        conn,
        principal,
        action,
        target_type="document",
        target_id=document_id,
        before=before,
        after=after,
    )


@dataclass(frozen=True, slots=True)
class FileUpload:
    """A file as a door received it, with the fields that came with it (a missing title comes
    from the file, a missing source is its name)."""

    data: bytes
    filename: str | None
    content_type: str | None
    title: str | None = None
    workspace: str | None = None
    visibility: Visibility = "org"
    tags: list[str] = field(default_factory=list)
    source: str | None = None
    # A document of the caller's already uploaded from the same source (in the workspace)
    # takes this file's content as its new version, rather than a second document beside it.
    replace: bool = False


@dataclass(frozen=True, slots=True)
class Converted:
    """An uploaded file converted to the document it adds."""

    document: DocumentCreate
    media_type: str
    # A PDF's: where each page starts in the content, and the file as sent (kept to download).
    page_starts: tuple[int, ...] | None = None
    original: FileUpload | None = None


async def convert(
    principal: Principal, settings: Settings, converter: Converter, file: FileUpload
) -> Converted:
    """Convert an uploaded file to Markdown (in a worker process, within the conversion
    bounds).

    Raises:
        Forbidden: the role may not add documents. TooLarge: over the upload limit or a
        conversion bound. UnsupportedMediaType: not a format we read. ValidationFailed: the
        file cannot be read, or nests too deep.
    """
    _require_editor(principal)
    if len(file.data) > settings.max_upload_bytes:
        raise TooLarge(f"the file is over the upload limit of {settings.max_upload_mb} MB")
    converted = await converter.to_markdown(
        file.data, filename=file.filename, content_type=file.content_type
    )
    # The file's name may carry anything a client sends: clean it as a converted title is.
    fallback = clean_title(PurePath(file.filename).stem) if file.filename else None
    try:
        document = DocumentCreate(
            title=file.title or converted.title or fallback or "Untitled",
            content=converted.markdown,
            workspace=file.workspace,
            visibility=file.visibility,
            tags=file.tags,
            source=file.source or file.filename,
        )
    except ValidationError as exc:
        raise ValidationFailed.from_pydantic(exc) from None
    return Converted(
        document=document,
        media_type=converted.media_type,
        page_starts=converted.page_starts,
        original=file if converted.page_starts is not None else None,
    )


async def upload(
    transaction: ShortTransaction,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    converter: Converter,
    document: DocumentCreate | FileUpload,
) -> DocumentCreated:
    """Add a document sent as text, or as a file converted to Markdown first, at either door;
    a file sent with `replace` updates the caller's document from the same source instead.

    The conversion takes no connection: a file may wait for a worker as long as a deadline, and
    the pool is everyone's, so `transaction` opens only once the document is ready, and the
    document is written there whole or not at all.

    Raises:
        As `create`; for a file also TooLarge (the upload limit, a conversion bound),
        UnsupportedMediaType, and ValidationFailed (a file that cannot be read).
    """
    if not isinstance(document, FileUpload):
        async with transaction() as conn:
            return await create(conn, principal, embedder, settings, document)
    converted = await convert(principal, settings, converter, document)
    async with transaction() as conn:
        if not document.replace:
            return await create(
                conn,
                principal,
                embedder,
                settings,
                converted.document,
                media_type=converted.media_type,
                page_starts=converted.page_starts,
                original=converted.original,
            )
        workspace_id = await workspaces_service.write_target(conn, principal, document.workspace)
        outcome, written = await _add_or_replace(
            conn, principal, embedder, settings, converted, workspace_id=workspace_id
        )
    return DocumentCreated(
        **written.model_dump(), unchanged=outcome == "unchanged", replaced=outcome == "updated"
    )


async def get(
    conn: ReadConnection, principal: Principal, document_id: UUID
) -> DocumentWithContent | None:
    """One document the caller may see, with its content; None otherwise."""
    return await queries.get_document(
        conn, principal.user_id, document_id, scope=principal.workspace_scope
    )


async def original(
    conn: ReadConnection, principal: Principal, document_id: UUID
) -> queries.Original:
    """The file a document the caller may see was converted from, as it was sent.

    Raises:
        NotFound: no such document, not visible to the caller, or it keeps no original.
    """
    found = await queries.get_original(
        conn, principal.user_id, document_id, scope=principal.workspace_scope
    )
    if found is None:
        raise NotFound("no original file for this document")
    return found


async def readable_chunks(
    conn: ReadConnection, principal: Principal, chunk_ids: Sequence[UUID]
) -> set[UUID]:
    """Which of the chunks the caller may read now (a citation is checked against this)."""
    return await queries.visible_chunks(
        conn, principal.user_id, chunk_ids, scope=principal.workspace_scope
    )


async def chunk_reach(
    conn: ReadConnection, principal: Principal, chunk_ids: Sequence[UUID]
) -> list[queries.ChunkReach]:
    """The visibility and workspace of each of the chunks the caller may read now; a chunk
    deleted or hidden since is left out."""
    return await queries.chunk_reach(
        conn, principal.user_id, chunk_ids, scope=principal.workspace_scope
    )


async def require_visible(
    conn: ReadConnection, principal: Principal, document_ids: Sequence[UUID]
) -> None:
    """Raises:
    NotFound: one of the documents does not exist, or the caller may not see it.
    """
    seen = await queries.visible_documents(
        conn, principal.user_id, document_ids, scope=principal.workspace_scope
    )
    if set(document_ids) - seen:
        raise NotFound("document not found")


async def list_documents(
    conn: ReadConnection,
    principal: Principal,
    filters: DocumentFilters,
    *,
    limit: int,
    cursor: str | None,
) -> Page[Document]:
    """A page of the documents the caller may see, newest change first."""
    after = decode_cursor(cursor) if cursor else None
    rows = await queries.list_documents(
        conn, principal.user_id, filters, limit=limit, after=after, scope=principal.workspace_scope
    )
    return keyset_page(rows, limit, lambda row: (row.updated_at, row.id))


async def tags(
    conn: ReadConnection, principal: Principal, *, limit: int, q: str | None = None
) -> list[TagCount]:
    """The tags of the documents the caller may see, the most used first; with `q`, those
    that hold it. A tag only on documents hidden from the caller is not shown to them."""
    return await queries.tags_in_use(
        conn,
        principal.user_id,
        scope=principal.workspace_scope,
        limit=limit,
        contains=q.strip() if q else None,
    )


async def chunks(conn: ReadConnection, principal: Principal, document_id: UUID) -> list[Chunk]:
    """The chunks of a document the caller may see, in order.

    Raises:
        NotFound: no such document, or not visible to the caller.
    """
    await require_visible(conn, principal, [document_id])
    return await queries.document_chunks(conn, document_id)


async def related(
    conn: ReadConnection, principal: Principal, document_id: UUID, *, limit: int
) -> list[RelatedDocument]:
    """The documents nearest to this one by the centroid of their chunks, among those the
    caller may see.

    Raises:
        NotFound: no such document, or not visible to the caller.
    """
    await require_visible(conn, principal, [document_id])
    return await queries.related_documents(
        conn, principal.user_id, document_id, limit=limit, scope=principal.workspace_scope
    )


async def backlinks(
    conn: ReadConnection, principal: Principal, document_id: UUID, *, limit: int
) -> list[LinkingDocument]:
    """The documents the caller may see that link to this one (by its address, or by the path
    it was uploaded from: `app.documents.links`).

    Raises:
        NotFound: no such document, or not visible to the caller.
    """
    await require_visible(conn, principal, [document_id])
    return await queries.linking_documents(
        conn, principal.user_id, document_id, limit=limit, scope=principal.workspace_scope
    )


async def outgoing_links(
    conn: ReadConnection, principal: Principal, document_id: UUID
) -> list[OutgoingLink]:
    """The links in a document's content to other documents, each with the document it reaches
    among those the caller may see (none: not in the corpus, for this caller).

    Raises:
        NotFound: no such document, or not visible to the caller.
    """
    await require_visible(conn, principal, [document_id])
    return await queries.outgoing_links(
        conn, principal.user_id, document_id, scope=principal.workspace_scope
    )


async def chunk_preview(
    conn: ReadConnection, principal: Principal, chunk_id: UUID
) -> ChunkPreview | None:
    """One chunk of a document the caller may see, with its document's title; None otherwise."""
    return await queries.chunk_preview(
        conn, principal.user_id, chunk_id, scope=principal.workspace_scope
    )


async def _visible(
    conn: ReadConnection, principal: Principal, document_id: UUID
) -> DocumentWithContent:
    document = await get(conn, principal, document_id)
    if document is None:
        raise NotFound("document not found")
    return document


async def read_chunks(
    conn: ReadConnection,
    principal: Principal,
    document_id: UUID,
    *,
    chunk_start: int | None = None,
    chunk_end: int | None = None,
) -> ChunkRange:
    """A document with its chunks from `chunk_start` to `chunk_end` (inclusive ordinals, as
    search hits give them; either end may be left open), none when the range holds none.

    Raises:
        NotFound: no such document, or not visible to the caller.
    """
    document = await _visible(conn, principal, document_id)
    every = await queries.document_chunks(conn, document_id)
    first = chunk_start or 0
    last = chunk_end if chunk_end is not None else len(every) - 1
    return ChunkRange(
        document=document,
        chunk_start=first,
        chunk_end=last,
        chunks=[c for c in every if first <= c.ordinal <= last],
        chunk_count=len(every),
    )


async def read(
    conn: ReadConnection,
    principal: Principal,
    document_id: UUID,
    *,
    chunk_start: int | None = None,
    chunk_end: int | None = None,
) -> DocumentText:
    """A document's text: all of it, or its chunks from `chunk_start` to `chunk_end`
    (inclusive ordinals, as search hits give them; either end may be left open).

    Raises:
        NotFound: no such document, or not visible to the caller; or no chunk in the range.
    """
    if chunk_start is None and chunk_end is None:
        document = await _visible(conn, principal, document_id)
        return DocumentText(
            document=_meta(document),
            chunk_start=None,
            chunk_end=None,
            chunk_count=document.chunk_count,
            text=document.content,
        )
    part = await read_chunks(
        conn, principal, document_id, chunk_start=chunk_start, chunk_end=chunk_end
    )
    if not part.chunks:
        raise NotFound(
            f"no chunks {part.chunk_start}..{part.chunk_end}: the document has {part.chunk_count}"
        )
    return DocumentText(
        document=_meta(part.document),
        chunk_start=part.chunk_start,
        chunk_end=part.chunks[-1].ordinal,
        chunk_count=part.chunk_count,
        text=part.document.content[part.chunks[0].start : part.chunks[-1].end],
    )


async def _editable(
    conn: ReadConnection, principal: Principal, document_id: UUID
) -> queries.DocumentRow:
    """The document's row when the caller may change it.

    Editors change their own documents; admins change any `org` document; a private document
    stays its owner's alone (to anyone else it does not exist).
    """
    _require_editor(principal)
    row = await queries.document_row(conn, document_id, scope=principal.workspace_scope)
    mine = row is not None and row.owner_id is not None and row.owner_id == principal.user_id
    if row is None or (row.visibility == "private" and not mine):
        raise NotFound("document not found")
    if not mine:
        principal.require("documents.manage", "editors may change only their own documents")
    return row


async def update(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    document_id: UUID,
    data: DocumentUpdate,
    *,
    chunked_as: Indexed | None = None,
    page_starts: Sequence[int] | None = None,
    original: FileUpload | None = None,
) -> Document:
    """Edit a document. New content is re-chunked and re-embedded (a new version), unless
    `chunked_as` holds its chunks and vectors already, cut under the document's title; a new
    title rewrites lexemes only; tags touch neither.

    Raises:
        NotFound, Forbidden, ValidationFailed, TooLarge.
    """
    row = await _editable(conn, principal, document_id)
    # Null is refused for every field here, so None below means "left out".
    changes(data, required=("title", "tags", "visibility", "content"))
    title = data.title if data.title is not None else row.title
    visibility = data.visibility if data.visibility is not None else row.visibility
    content = data.content
    if visibility == "private" and row.owner_id is None:
        raise ValidationFailed("visibility: a document without an owner cannot be private")

    new_content = content is not None and _sha256(content) != row.content_sha256
    indexed = None
    if new_content:
        assert content is not None
        _check_length(settings, content)
        indexed = chunked_as or await _embed(embedder, title, content)
    reindex = new_content or title != row.title or visibility != row.visibility
    if reindex and row.visibility == "org":
        await index.count_in_statistics(conn, document_id, sign=-1)
    private_owner = row.owner_id if visibility == "private" else None
    new_version = None
    if indexed is not None:
        assert content is not None
        new_version = queries.NewVersion(
            content=content, content_sha256=_sha256(content), version=row.version + 1
        )
        await index.delete_chunks(conn, document_id)
        await _write_chunks(
            conn,
            indexed,
            document_id=document_id,
            workspace_id=row.workspace_id,
            private_owner_id=private_owner,
            title=title,
            visibility=visibility,
            page_starts=page_starts,
        )
        await _keep_original(conn, document_id, original)
        await queries.write_links(
            conn,
            document_id=document_id,
            workspace_id=row.workspace_id,
            links=links.extract(content, row.source),
        )
    else:
        if title != row.title:
            await index.rewrite_lexemes(conn, document_id, title)
        if visibility != row.visibility:
            await index.set_private_owner(conn, document_id, private_owner)
    # New chunks were counted as they were written; lexemes rewritten in place count now.
    if reindex and visibility == "org" and indexed is None:
        await index.count_in_statistics(conn, document_id)
    await queries.update_document(
        conn,
        document_id,
        title=title,
        visibility=visibility,
        tags=data.tags,
        new_version=new_version,
    )
    return await _reread(conn, principal, document_id)


async def delete(conn: WriteConnection, principal: Principal, document_id: UUID) -> None:
    """Delete a document with its chunks.

    Raises:
        NotFound, Forbidden.
    """
    row = await _editable(conn, principal, document_id)
    if row.visibility == "org":
        await index.count_in_statistics(conn, document_id, sign=-1)
    await queries.delete_document(conn, document_id)
    await _audit_agent(conn, principal, "document.delete", document_id, {"title": row.title})


IngestOutcome = Literal["added", "updated", "unchanged"]


@dataclass(frozen=True, slots=True)
class PreparedFile:
    """A file of a folder walk converted and cut into chunks, holding no connection: what is
    left is to embed `chunks.texts` and write it (`ingest_prepared`)."""

    source: str
    document: DocumentCreate
    media_type: str
    chunks: Chunked
    # The content's digest, taken once: the walk checks it against the stored one, and then
    # looks the file's documents up by it.
    content_sha256: str
    # A PDF's pages and file, as `Converted` holds them.
    page_starts: tuple[int, ...] | None = None
    original: FileUpload | None = None


async def prepare_file(
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    *,
    converter: Converter,
    data: bytes,
    source: str,
    workspace: str,
    visibility: Visibility,
    tags: list[str],
) -> PreparedFile:
    """Convert a file of a folder walk and cut it into chunks, without a connection.

    Raises:
        UnsupportedMediaType, ValidationFailed, TooLarge: as `upload` for a file.
    """
    file = FileUpload(
        data=data,
        filename=PurePath(source).name,
        content_type=None,
        workspace=workspace,
        visibility=visibility,
        tags=tags,
        source=source,
    )
    converted = await convert(principal, settings, converter, file)
    _check_length(settings, converted.document.content)
    cut = await chunked(embedder, converted.document.title, converted.document.content)
    return PreparedFile(
        source,
        converted.document,
        converted.media_type,
        cut,
        _sha256(converted.document.content),
        page_starts=converted.page_starts,
        original=converted.original,
    )


async def stored_digests(
    conn: ReadConnection, principal: Principal, workspace: str, sources: Sequence[str]
) -> dict[str, str]:
    """The content digest stored for each of a folder walk's `sources` that has a document in
    `workspace` already: read once for the walk, so that each file is checked without a
    statement of its own (`unchanged`)."""
    workspace_id = await workspaces_service.workspace_id(conn, workspace)
    if workspace_id is None or not sources:
        return {}
    return await queries.source_digests(
        conn, workspace_id=workspace_id, owner_id=principal.user_id, sources=sources
    )


def unchanged(prepared: PreparedFile, digests: dict[str, str]) -> bool:
    """Whether the file's source holds this very content already (`stored_digests`): its
    chunks need no vectors, and `ingest_prepared` would write nothing."""
    return digests.get(prepared.source) == prepared.content_sha256


async def refresh_statistics(conn: WriteConnection) -> None:
    """Let the planner see the documents a long walk has written so far. Until autovacuum
    analyzes them (a minute or more into a first walk), a table that grew from nothing looks
    empty, and a file's two lookups (by source, by content) cannot tell their indexes apart:
    each read every document of the workspace (SciFact's 1,000 abstracts: 0.3 s of the
    walk's database time, growing with every file)."""
    await queries.analyze_documents(conn)


async def ingest_prepared(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    files: Sequence[tuple[PreparedFile, np.ndarray | None]],
) -> list[tuple[IngestOutcome, Document]]:
    """Add each prepared file of one workspace, or update the document that came from the same
    source, with its chunks' vectors (None: embedded here), in order, as one after the other
    would. The workspace is created when missing (its license then comes from policy).
    Unchanged content writes nothing.

    The files are looked up in one statement, and the new ones written together (`_insert_new`):
    a folder walk writes the files ready at once, and a few statements for each cost it round
    trips that took a share of the cores the model needs (issue #33).

    Raises:
        ValidationFailed, TooLarge: as `create`.
    """
    _require_editor(principal)
    if not files:
        return []
    slug = files[0][0].document.workspace
    assert slug is not None
    assert all(prepared.document.workspace == slug for prepared, _ in files)
    where = await queries.locate_files(
        conn,
        workspace=slug,
        owner_id=principal.user_id,
        files=[(prepared.source, prepared.content_sha256) for prepared, _ in files],
    )
    workspace_id = where[0].workspace_id
    if workspace_id is None:  # created now, as `ensure_workspace` does: it holds nothing yet
        workspace_id, _created = await workspaces_service.ensure_workspace(conn, principal, slug)
        where = [queries.Located(workspace_id, None, None) for _ in files]
    # A file is looked up again when one before it has its source or its content: writing that
    # one may change what the lookup found. A file that has neither a document nor an earlier
    # file's source or content is new: it is written with the other new ones, first.
    sources: set[str] = set()
    digests: set[str] = set()
    fresh: list[bool] = []
    new: list[int] = []
    for i, (prepared, vectors) in enumerate(files):
        fresh.append(prepared.source not in sources and prepared.content_sha256 not in digests)
        sources.add(prepared.source)
        digests.add(prepared.content_sha256)
        found = where[i].by_source is not None or where[i].by_content is not None
        # A file `create` would refuse (private, with no one to own it) goes there to be refused.
        ownerless = prepared.document.visibility == "private" and principal.user_id is None
        if fresh[i] and not found and not ownerless and vectors is not None:
            new.append(i)
    outcomes: dict[int, tuple[IngestOutcome, Document]] = {}
    if new:
        added = await _insert_new(conn, principal, workspace_id, [_new(*files[i]) for i in new])
        outcomes |= {i: ("added", document) for i, document in zip(new, added, strict=True)}
    for i, (prepared, vectors) in enumerate(files):
        if i in outcomes:
            continue
        located = where[i]
        if not fresh[i]:
            (located,) = await queries.locate_files(
                conn,
                workspace=slug,
                owner_id=principal.user_id,
                files=[(prepared.source, prepared.content_sha256)],
            )
        outcomes[i] = await _add_or_replace(
            conn,
            principal,
            embedder,
            settings,
            Converted(
                document=prepared.document,
                media_type=prepared.media_type,
                page_starts=prepared.page_starts,
                original=prepared.original,
            ),
            workspace_id=workspace_id,
            chunks=prepared.chunks,
            indexed=None if vectors is None else Indexed(prepared.chunks.pieces, vectors),
            located=located,
        )
    return [outcomes[i] for i in range(len(files))]


def _new(prepared: PreparedFile, vectors: np.ndarray | None) -> _New:
    assert vectors is not None
    return _New(
        prepared.document,
        prepared.content_sha256,
        Indexed(prepared.chunks.pieces, vectors),
        prepared.media_type,
        page_starts=prepared.page_starts,
        original=prepared.original,
    )


async def _add_or_replace(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    converted: Converted,
    *,
    workspace_id: UUID,
    chunks: Chunked | None = None,
    indexed: Indexed | None = None,
    located: queries.Located | None = None,
) -> tuple[IngestOutcome, Document]:
    """Add a converted file, or update the caller's document from the same source in the
    workspace (a new version; identical content writes nothing). `chunks` and `indexed`: the
    file's chunks cut and embedded already (a folder walk's), used where they still fit;
    `located`, the documents its source and its content are found in, looked up already."""
    source = converted.document.source
    if located is not None:
        existing = located.by_source
    elif source is not None:
        existing = await queries.find_by_source(
            conn, workspace_id=workspace_id, owner_id=principal.user_id, source=source
        )
    else:
        existing = None
    if existing is None:
        if located is not None and located.by_content is not None:
            return "unchanged", await _reread(conn, principal, located.by_content)
        created = await create(
            conn,
            principal,
            embedder,
            settings,
            converted.document,
            media_type=converted.media_type,
            indexed=indexed,
            page_starts=converted.page_starts,
            original=converted.original,
            workspace_id=workspace_id,
            dedupe=located is None,  # `located` found no document with this content
        )
        outcome: IngestOutcome = "unchanged" if created.unchanged else "added"
        return outcome, Document.model_validate(
            created.model_dump(exclude={"unchanged", "replaced"})
        )
    content = converted.document.content
    row = await queries.document_row(conn, existing)
    assert row is not None
    if row.content_sha256 == _sha256(content):
        return "unchanged", await _reread(conn, principal, existing)
    # An update keeps the document's title, which its chunks' texts begin with: chunks cut
    # under the file's title are cut again.
    same_title = chunks is not None and row.title == chunks.title
    updated = await update(
        conn,
        principal,
        embedder,
        settings,
        existing,
        DocumentUpdate(content=content, tags=converted.document.tags),
        chunked_as=indexed if same_title else None,
        page_starts=converted.page_starts,
        original=converted.original,
    )
    return "updated", updated


async def load_sample(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    converter: Converter,
    files: Sequence[Path],
) -> SampleLoaded:
    """Load the sample documents (`corpus seed`'s) into their workspace, as the operator's
    command does: owned by no one, for everyone, so that the command and the web app's button
    find each other's documents unchanged. All in the caller's transaction: a file that fails
    leaves nothing loaded.

    Raises:
        Forbidden: the caller is not an admin (it creates a workspace and writes for no owner).
        As `prepare_file` and `ingest_prepared` for a file that cannot be loaded.
    """
    principal.require("workspaces.manage", "only admins load the sample documents")
    _id, created = await workspaces_service.ensure_workspace(conn, principal, SAMPLE_WORKSPACE)
    counts: dict[IngestOutcome, int] = {"added": 0, "updated": 0, "unchanged": 0}
    chunks = 0
    prepared: list[tuple[PreparedFile, np.ndarray | None]] = []
    for path in files:
        data = await asyncio.to_thread(path.read_bytes)
        prepared.append(
            (
                await prepare_file(
                    LOCAL_ADMIN,
                    embedder,
                    settings,
                    converter=converter,
                    data=data,
                    source=str(path.resolve()),
                    workspace=SAMPLE_WORKSPACE,
                    visibility="org",
                    tags=SAMPLE_TAGS,
                ),
                None,
            )
        )
    for outcome, document in await ingest_prepared(conn, LOCAL_ADMIN, embedder, settings, prepared):
        counts[outcome] += 1
        chunks += document.chunk_count if outcome != "unchanged" else 0
    return SampleLoaded(
        workspace=SAMPLE_WORKSPACE, created_workspace=created, chunks=chunks, **counts
    )


async def write_synced(
    conn: WriteConnection,
    principal: Principal,
    embedder: Embedder,
    settings: Settings,
    *,
    document_id: UUID | None,
    converted: Converted,
) -> Document:
    """Write a file a source synced: a new document, or a new version of the one the file
    became before (its title, content and `source`, the file's path, which a rename changes:
    a renamed file keeps its document and gains a version even when its text is the same).

    Raises:
        As `create` and `update`; NotFound when `document_id` is gone.
    """
    data = converted.document
    if document_id is None:
        # A synced PDF's pages, but not its file: the source keeps that.
        created = await create(
            conn,
            principal,
            embedder,
            settings,
            data,
            media_type=converted.media_type,
            dedupe=False,
            page_starts=converted.page_starts,
        )
        return Document.model_validate(created.model_dump(exclude={"unchanged"}))
    before = await _editable(conn, principal, document_id)
    updated = await update(
        conn,
        principal,
        embedder,
        settings,
        document_id,
        DocumentUpdate(title=data.title, content=data.content),
        page_starts=converted.page_starts,
    )
    await queries.set_source(
        conn, document_id, source=data.source, bump_version=updated.version == before.version
    )
    return await _reread(conn, principal, document_id)
