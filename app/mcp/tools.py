"""The MCP tools (API.md, "MCP tools"): each parses its arguments, makes one service call in one
transaction, and returns the service's reply, as the HTTP routes do with the same `Principal`.
Every tool is listed to every caller, in `McpTool`'s order; the service refuses what the
caller's role does not allow, and that refusal comes back as a tool error `<code>: <message>`.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, ParamSpec, TypeVar, get_args
from uuid import UUID

from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from app.access.capabilities import McpTool
from app.access.principal import Principal, require_password_changed
from app.asking import service as asking_service
from app.asking.schemas import Answer, AskMode
from app.auth import service as auth_service
from app.auth.schemas import Me
from app.db.availability import DATABASE_UNREACHABLE, unreachable
from app.db.engine import ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.documents.schemas import (
    DocumentCreate,
    DocumentCreated,
    DocumentFilters,
    Visibility,
)
from app.errors import AppError, ValidationFailed
from app.mcp.provider import CallerToken
from app.rag.schemas import SearchMode
from app.resources import Resources
from app.routing import admin as routing_admin
from app.routing import service as routing_service
from app.routing.schemas import (
    MAX_TOKEN_BUDGET,
    CacheStats,
    ContextBlock,
    ContextRequest,
    KnowledgeResults,
    Policy,
    RoutedWorkspaces,
)
from app.schemas import JsonInt, Page
from app.search import service as search_service
from app.search.schemas import Door, SearchRequest, SearchResult
from app.sources import service as sources_service
from app.sources.schemas import SyncedDocument, SyncedDocumentText

P = ParamSpec("P")
R = TypeVar("R")

# Recorded with every question asked here, so that gaps and usage can be told apart by door.
DOOR: Door = "mcp"


class Deleted(BaseModel):
    deleted: UUID


def caller(*, temporary_password_ok: bool = False) -> Principal:
    """The person or agent behind the call's credential.

    Raises:
        ToolError: no credential reached the tool. Forbidden: a temporary password.
    """
    token = get_access_token()
    if not isinstance(token, CallerToken):
        # /mcp is behind the SDK's bearer middleware, so this means a wiring fault.
        raise ToolError("unauthenticated: no credential reached this tool")
    if temporary_password_ok:
        return token.principal
    return require_password_changed(token.principal)


def _tool_errors(tool: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Service errors become tool errors with their code. The SDK reads the tool's arguments
    from the signature `functools.wraps` hands on."""

    @functools.wraps(tool)
    async def calling(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await tool(*args, **kwargs)
        except AppError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from None
        except ValidationError as exc:
            failed = ValidationFailed.from_pydantic(exc)
            raise ToolError(f"{failed.code}: {failed.message}") from None
        except Exception as exc:
            # The HTTP doors' 503: the call may succeed once PostgreSQL is back.
            if unreachable(exc):
                raise ToolError(f"unavailable: {DATABASE_UNREACHABLE}") from None
            raise

    return calling


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

_LISTING = "corpus_listing"
F = TypeVar("F", bound=Callable[..., Awaitable[BaseModel]])


def _listed(title: str, annotations: ToolAnnotations) -> Callable[[F], F]:
    """The tool's title and annotations, as `register` lists it."""

    def listing(method: F) -> F:
        setattr(method, _LISTING, (title, annotations))
        return method

    return listing


class Tools:
    """The tools, over the process's resources. `resources` is read per call: the lifespan
    opens them after the app is built."""

    def __init__(self, resources: Callable[[], Resources]) -> None:
        self._resources = resources

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[tuple[ReadConnection, Resources]]:
        """One read-only transaction for the call."""
        current = self._resources()
        async with current.db.read() as conn:
            yield conn, current

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[tuple[WriteConnection, Resources]]:
        """One transaction for the call, committed when it returns."""
        current = self._resources()
        async with current.db.write() as conn:
            yield conn, current

    @_listed("Who am I", READS)
    async def whoami(self) -> Me:
        """Who you are to Corpus: your account, role, persona, and the tools your role allows."""
        return auth_service.me(caller(temporary_password_ok=True))

    @_listed("Search the docs", READS)
    async def search_docs(
        self,
        query: Annotated[str, Field(min_length=1, description="what to look for")],
        workspaces: list[str] | None = None,
        tags: list[str] | None = None,
        top_k: Annotated[JsonInt, Field(ge=1, le=100)] = 10,
        mode: SearchMode = "hybrid",
        stale: bool | None = None,
    ) -> SearchResult:
        """Search the corpus for `query` by meaning and keywords (`mode`); narrow with
        `workspaces`, `tags`, `stale`, `top_k`. Each hit says why it ranked."""
        principal = caller()
        request = SearchRequest(
            query=query, workspaces=workspaces, tags=tags, top_k=top_k, mode=mode, stale=stale
        )
        async with self._writing() as (conn, current), current.db.replica_read() as replica:
            # Ranked on the replica when one may serve the caller (docs/adr/0032).
            side = current.db.side_reads if replica is None else current.db.replica_side_reads
            return await search_service.search(
                conn,
                principal,
                current.embedder,
                current.settings,
                request,
                door=DOOR,
                side=side,
                reads=replica,
            )

    @_listed("Upload a document", ADDS)
    async def upload_document(
        self,
        title: Annotated[str, Field(min_length=1, max_length=500)],
        content: str | None = None,
        content_base64: str | None = None,
        filename: str | None = None,
        workspace: str | None = None,
        tags: list[str] | None = None,
        visibility: Visibility = "org",
    ) -> DocumentCreated:
        """Add a document: Markdown in `content`, or a file (PDF, DOCX, HTML) in `content_base64`
        with its `filename`; optional `workspace`, `tags`, `visibility`. Same content: unchanged."""
        principal = caller()
        if (content is None) == (content_base64 is None):
            raise ValidationFailed("send either content or content_base64")
        document: DocumentCreate | documents_service.FileUpload
        if content is not None:
            document = DocumentCreate(
                title=title,
                content=content,
                workspace=workspace,
                visibility=visibility,
                tags=tags or [],
            )
        else:
            try:
                raw = base64.b64decode(content_base64 or "", validate=True)
            except (binascii.Error, ValueError):
                raise ValidationFailed("content_base64 is not base64") from None
            document = documents_service.FileUpload(
                data=raw,
                filename=filename,
                content_type=None,
                title=title,
                workspace=workspace,
                visibility=visibility,
                tags=tags or [],
            )
        current = self._resources()
        return await documents_service.upload(
            current.db.write,
            principal,
            current.embedder,
            current.settings,
            current.converter,
            document,
        )

    @_listed("List documents", READS)
    async def list_documents(
        self,
        workspace: str | None = None,
        tag: str | None = None,
        q: Annotated[str | None, Field(max_length=500)] = None,
        limit: Annotated[JsonInt, Field(ge=1, le=200)] = 50,
        stale: bool | None = None,
    ) -> Page[SyncedDocument]:
        """List the documents you may see, newest first; filter by `workspace`, `tag`, title
        words `q`, or `stale`. Synced ones carry source_path, commit, commit_date, stale."""
        principal = caller()
        async with self._reading() as (conn, _current):
            return await sources_service.list_documents(
                conn,
                principal,
                DocumentFilters(workspace=workspace, tag=tag, q=q, stale=stale),
                limit=limit,
                cursor=None,
            )

    @_listed("Read a document", READS)
    async def read_document(
        self,
        document_id: UUID,
        chunk_start: Annotated[JsonInt | None, Field(ge=0)] = None,
        chunk_end: Annotated[JsonInt | None, Field(ge=0)] = None,
    ) -> SyncedDocumentText:
        """Read a document by `document_id`: all of it, or chunks `chunk_start` to `chunk_end`
        (inclusive, as search hits number them); a synced one carries its provenance."""
        principal = caller()
        async with self._reading() as (conn, _current):
            read = await documents_service.read(
                conn, principal, document_id, chunk_start=chunk_start, chunk_end=chunk_end
            )
            [document] = await sources_service.with_provenance(conn, principal, [read.document])
        return SyncedDocumentText.model_validate(read.model_dump() | {"document": document})

    @_listed("Delete a document", DELETES)
    async def delete_document(self, document_id: UUID) -> Deleted:
        """Delete a document by `document_id` (editors: their own; admins: any shared one)."""
        principal = caller()
        async with self._writing() as (conn, _current):
            await documents_service.delete(conn, principal, document_id)
        return Deleted(deleted=document_id)

    @_listed("Ask the docs", READS)
    async def ask_docs(
        self, question: Annotated[str, Field(min_length=1)], mode: AskMode = "auto"
    ) -> Answer:
        """Answer a `question` from the corpus, citing its passages; `mode` auto, fast or
        deep."""
        principal = caller()
        # MCP keeps no chats: each question runs on its own, read-only (annotated so).
        current = self._resources()
        answer = await asking_service.ask_once(
            current.asking(), principal, question, mode=mode, door=DOOR
        )
        return answer.linked(current.settings.public_url)

    @_listed("Research a question", READS)
    async def deep_research(self, question: Annotated[str, Field(min_length=1)]) -> Answer:
        """Research a `question` in depth: the answer within about 45 s, else a `job_id` for
        research_result (or a task, for clients with the tasks extension)."""
        principal = caller()
        current = self._resources()
        answer = await asking_service.research(current.asking(), current.jobs, principal, question)
        return answer.linked(current.settings.public_url)

    @_listed("Get a research result", READS)
    async def research_result(self, job_id: str) -> Answer:
        """The answer of a deep_research `job_id`, or that it is still running, or why it
        failed."""
        principal = caller()
        current = self._resources()
        answer = await asking_service.research_result(current.asking(), principal, job_id)
        return answer.linked(current.settings.public_url)

    # --- multi-corpus routing (API.md, "Multi-corpus") ---------------------------------------
    # These open no request transaction: the routing service reads the policy in a short one
    # and searches each workspace in one of its own (docs/adr/0011).

    @_listed("Search by persona", READS)
    async def rag_search(
        self,
        query: Annotated[str, Field(min_length=1, description="what to look for")],
        workspaces: list[str] | None = None,
        top_k: Annotated[JsonInt, Field(ge=1, le=50)] = 5,
        persona: str | None = None,
    ) -> KnowledgeResults:
        """Search for `query` in the workspaces your `persona` routes to (or the `workspaces`
        named), each result with its license; workspaces that failed are listed."""
        principal = caller()
        return await routing_service.routed_search(
            self._resources().routing,
            principal,
            query,
            workspaces=workspaces,
            top_k=top_k,
            persona=persona,
        )

    @_listed("List workspaces and licenses", READS)
    async def rag_workspaces(self) -> RoutedWorkspaces:
        """The workspaces you may search, with each one's license, tier and description."""
        principal = caller()
        async with self._reading() as (conn, current):
            return await routing_service.routed_workspaces(conn, current.routing, principal)

    @_listed("Show the routing policy", READS)
    async def rag_policy(self, persona: str | None = None) -> Policy:
        """The routing policy (or one `persona`'s): each persona's workspaces and the layer it
        comes from (builtin, file, admin)."""
        principal = caller()
        async with self._reading() as (conn, current):
            return await routing_admin.effective_policy(
                conn, current.routing, principal, persona=persona
            )

    @_listed("Search cache figures", READS)
    async def rag_cache_stats(self) -> CacheStats:
        """The search cache's size, hits, misses and hit rate (admins)."""
        principal = caller()
        return routing_service.cache_stats(self._resources().routing, principal)

    @_listed("Build a context block", READS)
    async def rag_context(
        self,
        query: Annotated[str, Field(min_length=1)],
        persona: str | None = None,
        token_budget: Annotated[JsonInt | None, Field(ge=1, le=MAX_TOKEN_BUDGET)] = None,
    ) -> ContextBlock:
        """A context block for a system prompt: cited passages for `query` from your
        `persona`'s workspaces within `token_budget`, with a license footnote."""
        principal = caller()
        request = ContextRequest(query=query, persona=persona, token_budget=token_budget)
        return await routing_service.context_block(self._resources().routing, principal, request)


def description(method: Callable[..., object]) -> str:
    """A tool's description: its docstring on one line. The SDK would list the docstring as
    written, its source indentation included, and every client reads it into its prompt."""
    return " ".join((method.__doc__ or "").split())


def register(server: MCPServer, resources: Callable[[], Resources]) -> None:
    """Add every tool `McpTool` names to `server`, in its order."""
    tools = Tools(resources)
    for name in get_args(McpTool):
        method = getattr(tools, name)
        title, annotations = getattr(method, _LISTING)
        server.tool(title=title, description=description(method), annotations=annotations)(
            _tool_errors(method)
        )
