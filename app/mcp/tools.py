"""The MCP tools (API.md, "MCP tools"): thin wrappers over the same services the HTTP routes
call, with the same `Principal`. Every tool is listed to every caller; the service refuses what
the caller's role does not allow, and that refusal comes back as a tool error.

`ask_docs` and `deep_research` answer extractively (the passages that answer best, cited) until
the answering agents land, and say so in the reply.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar
from uuid import UUID

from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from app.auth import capabilities
from app.auth.principal import Principal
from app.auth.provider import CallerToken
from app.documents import service as documents_service
from app.documents.schemas import (
    Document,
    DocumentCreate,
    DocumentCreated,
    DocumentFilters,
    Visibility,
)
from app.errors import AppError, NotFound, ValidationFailed
from app.rag import retrieval
from app.rag.schemas import SearchRequest, SearchResult
from app.resources import Resources
from app.schemas import JsonInt

T = TypeVar("T")

# Recorded with every question asked here, so that gaps and usage can be told apart by door.
DOOR = "mcp"
SearchMode = Literal["hybrid", "dense", "keyword"]
AskMode = Literal["auto", "fast", "deep"]
EXTRACTIVE_NOTE = (
    "Extractive answer: the answering agent is not set up on this server yet, so these are "
    "the passages that answer the question best, cited."
)


class Whoami(BaseModel):
    email: str
    role: capabilities.Role
    kind: str
    persona: str | None
    tools: list[capabilities.McpTool]


class DocumentList(BaseModel):
    items: list[Document]
    next_cursor: str | None


class DocumentText(BaseModel):
    document: Document
    chunk_start: int | None
    chunk_end: int | None
    chunk_count: int
    text: str


class Citation(BaseModel):
    key: str
    document_id: UUID
    chunk_id: UUID
    title: str
    heading_path: list[str]
    snippet: str


class Answer(BaseModel):
    answer: str
    citations: list[Citation]
    mode: str
    extractive: bool
    job_id: str | None = None


class Deleted(BaseModel):
    deleted: UUID


def _caller(*, temporary_password_ok: bool = False) -> Principal:
    token = get_access_token()
    if not isinstance(token, CallerToken):
        # /mcp is behind the SDK's bearer middleware, so this means a wiring fault.
        raise ToolError("unauthenticated: no credential reached this tool")
    if token.principal.must_change_password and not temporary_password_ok:
        # As on /api, where only the account routes answer: a temporary password must be
        # changed before anything else.
        raise ToolError(
            "forbidden: this account still has its temporary password; sign in to the web app "
            "and change it first"
        )
    return token.principal


# What each tool does to the corpus, for clients that decide by it (some approve read-only
# tools without asking). Every tool acts on this corpus only: none reaches the open world.
# Searching and asking record the question (for documentation gaps), which changes nothing a
# caller can see, so they count as reads.
READS = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
# Uploading the same content again changes nothing (the reply says `unchanged`).
ADDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DELETES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


def register(server: MCPServer, resources: Callable[[], Resources]) -> None:
    """Add the tools to `server`."""

    @asynccontextmanager
    async def tool_errors() -> AsyncIterator[None]:
        """Service errors become tool errors with their code."""
        try:
            yield
        except AppError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from None
        except ValidationError as exc:
            failed = ValidationFailed.from_pydantic(exc)
            raise ToolError(f"{failed.code}: {failed.message}") from None

    @asynccontextmanager
    async def calling(write: bool) -> AsyncIterator[tuple[Any, Resources]]:
        """One transaction per tool call."""
        current = resources()
        async with tool_errors():
            if write:
                async with current.db.write() as conn:
                    yield conn, current
            else:
                async with current.db.read() as conn:
                    yield conn, current

    async def run(write: bool, work: Callable[[Any, Resources], Awaitable[T]]) -> T:
        async with calling(write) as (conn, current):
            return await work(conn, current)

    @server.tool(title="Who am I", annotations=READS)
    async def whoami() -> Whoami:
        """Who you are to Corpus: your account, role, persona, and the tools your role allows."""
        principal = _caller(temporary_password_ok=True)
        return Whoami(
            email=principal.email,
            role=principal.role,
            kind=principal.kind,
            persona=principal.persona,
            tools=capabilities.mcp_tools(principal.role),
        )

    @server.tool(title="Search the docs", annotations=READS)
    async def search_docs(
        query: Annotated[str, Field(min_length=1, description="what to look for")],
        workspaces: list[str] | None = None,
        tags: list[str] | None = None,
        top_k: Annotated[JsonInt, Field(ge=1, le=100)] = 10,
        mode: SearchMode = "hybrid",
    ) -> SearchResult:
        """Search the corpus (hybrid: meaning and keywords). Each hit says why it ranked."""
        principal = _caller()

        async def work(conn: Any, current: Resources) -> SearchResult:
            request = SearchRequest(
                query=query, workspaces=workspaces, tags=tags, top_k=top_k, mode=mode
            )
            return await retrieval.search(
                conn, principal, current.embedder, current.settings, request, door=DOOR
            )

        return await run(True, work)

    @server.tool(title="Upload a document", annotations=ADDS)
    async def upload_document(
        title: Annotated[str, Field(min_length=1, max_length=500)],
        content: str | None = None,
        content_base64: str | None = None,
        filename: str | None = None,
        workspace: str | None = None,
        tags: list[str] | None = None,
        visibility: Visibility = "org",
    ) -> DocumentCreated:
        """Add a document: Markdown or text in `content`, or a file (PDF, DOCX, HTML, ...) in
        `content_base64` with its `filename`."""
        principal = _caller()
        if (content is None) == (content_base64 is None):
            raise ToolError("validation_error: send either content or content_base64")

        current = resources()
        if content is not None:
            async with tool_errors():
                data = DocumentCreate(
                    title=title,
                    content=content,
                    workspace=workspace,
                    visibility=visibility,
                    tags=tags or [],
                )
            media_type = documents_service.MARKDOWN
        else:
            try:
                raw = base64.b64decode(content_base64 or "", validate=True)
            except (binascii.Error, ValueError):
                raise ToolError("validation_error: content_base64 is not base64") from None
            # Converted before the transaction opens: a file may wait for a worker, and must
            # not hold a pooled connection meanwhile.
            async with tool_errors():
                upload = await documents_service.convert_upload(
                    principal,
                    current.settings,
                    converter=current.converter,
                    data=raw,
                    filename=filename,
                    content_type=None,
                    title=title,
                    workspace=workspace,
                    visibility=visibility,
                    tags=tags or [],
                    source=filename,
                )
            data, media_type = upload.document, upload.media_type

        async def work(conn: Any, current: Resources) -> DocumentCreated:
            return await documents_service.create(
                conn, principal, current.embedder, current.settings, data, media_type=media_type
            )

        return await run(True, work)

    @server.tool(title="List documents", annotations=READS)
    async def list_documents(
        workspace: str | None = None,
        tag: str | None = None,
        q: Annotated[str | None, Field(max_length=500)] = None,
        limit: Annotated[JsonInt, Field(ge=1, le=200)] = 50,
    ) -> DocumentList:
        """List the documents you may see, newest change first; filter by workspace, tag, or
        words of the title."""
        principal = _caller()

        async def work(conn: Any, _current: Resources) -> DocumentList:
            page = await documents_service.list_documents(
                conn,
                principal,
                DocumentFilters(workspace=workspace, tag=tag, q=q),
                limit=limit,
                cursor=None,
            )
            return DocumentList(items=page.items, next_cursor=page.next_cursor)

        return await run(False, work)

    @server.tool(title="Read a document", annotations=READS)
    async def read_document(
        document_id: UUID,
        chunk_start: Annotated[JsonInt | None, Field(ge=0)] = None,
        chunk_end: Annotated[JsonInt | None, Field(ge=0)] = None,
    ) -> DocumentText:
        """Read a document: all of it, or its chunks from `chunk_start` to `chunk_end`
        (inclusive ordinals, as search hits give them)."""
        principal = _caller()

        async def work(conn: Any, _current: Resources) -> DocumentText:
            document = await documents_service.get(conn, principal, document_id)
            if document is None:
                raise NotFound("document not found")
            meta = Document.model_validate(document.model_dump(exclude={"content"}))
            if chunk_start is None and chunk_end is None:
                return DocumentText(
                    document=meta,
                    chunk_start=None,
                    chunk_end=None,
                    chunk_count=document.chunk_count,
                    text=document.content,
                )
            chunks = await documents_service.chunks(conn, principal, document_id)
            first = chunk_start or 0
            last = chunk_end if chunk_end is not None else len(chunks) - 1
            chosen = [c for c in chunks if first <= c.ordinal <= last]
            if not chosen:
                raise NotFound(f"no chunks {first}..{last}: the document has {len(chunks)}")
            return DocumentText(
                document=meta,
                chunk_start=first,
                chunk_end=chosen[-1].ordinal,
                chunk_count=len(chunks),
                text=document.content[chosen[0].start : chosen[-1].end],
            )

        return await run(False, work)

    @server.tool(title="Delete a document", annotations=DELETES)
    async def delete_document(document_id: UUID) -> Deleted:
        """Delete a document (editors: their own; admins: any `org` document)."""
        principal = _caller()

        async def work(conn: Any, _current: Resources) -> Deleted:
            await documents_service.delete(conn, principal, document_id)
            return Deleted(deleted=document_id)

        return await run(True, work)

    async def extractive(question: str, mode: str) -> Answer:
        principal = _caller()

        async def work(conn: Any, current: Resources) -> Answer:
            request = SearchRequest(query=question, top_k=5)
            result = await retrieval.search(
                conn, principal, current.embedder, current.settings, request, door=DOOR
            )
            citations = [
                Citation(
                    key=f"[{i}]",
                    document_id=hit.document_id,
                    chunk_id=hit.chunk_id,
                    title=hit.title,
                    heading_path=hit.heading_path,
                    snippet=hit.text[:500],
                )
                for i, hit in enumerate(result.hits, start=1)
            ]
            if citations:
                passages = "\n\n".join(f"{c.key} {c.title}: {c.snippet}" for c in citations)
                answer = f"{EXTRACTIVE_NOTE}\n\n{passages}"
            else:
                answer = (
                    "The corpus has nothing that answers this question; it was recorded as a "
                    "documentation gap."
                )
            return Answer(answer=answer, citations=citations, mode=mode, extractive=True)

        return await run(True, work)

    @server.tool(title="Ask the docs", annotations=READS)
    async def ask_docs(
        question: Annotated[str, Field(min_length=1)], mode: AskMode = "auto"
    ) -> Answer:
        """Ask a question of the corpus; the answer cites the passages it rests on."""
        return await extractive(question, "fast" if mode == "auto" else mode)

    @server.tool(title="Research a question", annotations=READS)
    async def deep_research(question: Annotated[str, Field(min_length=1)]) -> Answer:
        """Research a question across the corpus (within about 45 s, or a job id to poll)."""
        return await extractive(question, "deep")

    @server.tool(title="Get a research result", annotations=READS)
    async def research_result(job_id: str) -> Answer:
        """The result of a deep_research job that outlived its call."""
        _caller()
        raise ToolError(
            f"not_found: no research job {job_id!r}: deep_research answers within its call on "
            "this server, so there are no jobs to poll"
        )
