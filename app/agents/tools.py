"""The agents' tools (API.md, "Asking"). Which ones a model is offered follows the caller's role
(the capability table's `agent_tools`) and what the asker allowed the run to write; every call
runs as the caller, through the domain services, in a short transaction of its own, so the
services refuse again whatever a model asks beyond its role. A refusal or a bad argument comes
back to the model as the tool's result, and is a step of the trace.

Everything a tool returns is text from documents: untrusted input that may ask the model for
anything. A model that obeys it must not be able to widen who sees anything, so what a write
may reach is decided here from what the run has read, never from the model's arguments
(docs/SECURITY.md, "The agents' trust model")."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.access.capabilities import AgentTool, agent_tools
from app.agents.run import BudgetSpent, Run
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate, DocumentFilters, Visibility
from app.errors import AppError, Forbidden, ValidationFailed
from app.kit.types import Slug, Tag
from app.search import service as search_service
from app.search.schemas import SearchRequest, chunk_url

# What one tool result may put in front of the model.
RESULT_CHARS = 12_000
PASSAGE_CHARS = 1_500
READ_CHUNKS = 8
LISTED_DOCUMENTS = 25


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchArgs(_Args):
    query: str = Field(min_length=1, max_length=2000, description="what to look for")
    workspaces: list[Slug] | None = Field(default=None, description="limit to these workspaces")
    top_k: int = Field(default=6, ge=1, le=20, description="how many passages")


class ReadArgs(_Args):
    document_id: UUID
    chunk_start: int | None = Field(default=None, ge=0, description="first chunk ordinal")
    chunk_end: int | None = Field(default=None, ge=0, description="last chunk ordinal")


class ListArgs(_Args):
    workspace: Slug | None = None
    tag: Tag | None = None
    q: str | None = Field(default=None, max_length=500, description="words of the title")


class ThinkArgs(_Args):
    thought: str = Field(min_length=1, max_length=4000)


class NoteArgs(_Args):
    title: str = Field(min_length=1, max_length=300)
    content: str = Field(min_length=1, max_length=50_000)
    sources: list[str] = Field(
        default_factory=list, description='citation keys of this run, like "[1]"'
    )


class NoArgs(_Args):
    pass


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where(title: str, heading_path: list[str]) -> str:
    return " › ".join([title, *heading_path])


def _in_scope(run: Run, document_id: UUID) -> None:
    if run.document_ids is not None and document_id not in run.document_ids:
        raise Forbidden("this question is about other documents; stay within them")


async def search_corpus(run: Run, args: SearchArgs) -> str:
    run.step("search", f'search: "{_clip(args.query, 200)}"')
    request = SearchRequest(
        query=args.query,
        workspaces=args.workspaces or run.workspaces,
        tags=run.tags,
        top_k=args.top_k,
    )
    async with run.transaction() as conn:
        hits = await search_service.rank(
            conn,
            run.principal,
            run.embedder,
            run.settings,
            request,
            document_ids=run.document_ids,
        )
    if not hits:
        return "No passages found. Try other words, or answer that the corpus has nothing."
    lines = []
    for hit in hits:
        run.ledger.note_similarity(hit.similarity)
        entry = run.ledger.add(
            chunk_id=hit.chunk_id,
            document_id=hit.document_id,
            title=hit.title,
            heading_path=hit.heading_path,
            text=hit.text,
            workspace=hit.workspace,
            page=hit.page,
        )
        lines.append(
            f"[{entry.key}] {_where(hit.title, hit.heading_path)}"
            f"{f', p. {hit.page}' if hit.page else ''} "
            f"(document {hit.document_id})\n{_clip(hit.text, PASSAGE_CHARS)}"
        )
    return _clip("\n\n".join(lines), RESULT_CHARS)


async def read_document(run: Run, args: ReadArgs) -> str:
    _in_scope(run, args.document_id)
    run.step("read", f"read: document {args.document_id}")
    first = args.chunk_start or 0
    last = args.chunk_end if args.chunk_end is not None else first + READ_CHUNKS - 1
    async with run.transaction() as conn:
        part = await documents_service.read_chunks(
            conn, run.principal, args.document_id, chunk_start=first, chunk_end=last
        )
    document, count = part.document, part.chunk_count
    chosen = part.chunks[: READ_CHUNKS * 2]
    if not chosen:
        return f"No chunks {first}..{last}: the document has {count} (0..{count - 1})."
    parts = [f"{document.title} — chunks {chosen[0].ordinal}..{chosen[-1].ordinal} of {count}"]
    for chunk in chosen:
        entry = run.ledger.add(
            chunk_id=chunk.id,
            document_id=document.id,
            title=document.title,
            heading_path=chunk.heading_path,
            text=chunk.text,
            workspace=document.workspace,
        )
        parts.append(f"[{entry.key}] (chunk {chunk.ordinal}) {_clip(chunk.text, PASSAGE_CHARS)}")
    return _clip("\n\n".join(parts), RESULT_CHARS)


async def list_corpus_documents(run: Run, args: ListArgs) -> str:
    run.step("list", "list documents", args.model_dump_json(exclude_none=True))
    async with run.transaction() as conn:
        page = await documents_service.list_documents(
            conn,
            run.principal,
            DocumentFilters(workspace=args.workspace, tag=args.tag, q=args.q),
            limit=LISTED_DOCUMENTS,
            cursor=None,
        )
    items = [d for d in page.items if run.document_ids is None or d.id in run.document_ids]
    if not items:
        return "No documents match."
    if any(d.visibility != "org" for d in items):
        run.restricted.add("the run listed a private document")
    return "\n".join(
        f"- {d.title} (document {d.id}; workspace {d.workspace}; {d.chunk_count} chunks"
        + (f"; tags {', '.join(d.tags)}" if d.tags else "")
        + ")"
        for d in items
    )


async def think(run: Run, args: ThinkArgs) -> str:
    run.step("think", "think", args.thought)
    return "Noted."


_KEY = re.compile(r"\d+")


@dataclass(frozen=True)
class Placement:
    """Where a note goes and who may see it."""

    visibility: Visibility
    workspace: str | None
    why: str


async def placement(run: Run) -> Placement:
    """The narrowest reach of everything the run has read: a note is visible to the
    organisation only when the asker allowed it (`writes="org"`) and every chunk the run read
    is an `org` chunk of one workspace, which the note then joins; else it is private to the
    asker. A chunk deleted or hidden since it was read counts as private."""
    read = run.read()
    async with run.transaction() as conn:
        reach = await documents_service.chunk_reach(conn, run.principal, list(read))
    workspaces = sorted({r.workspace for r in reach})
    # A bound key writes into its own workspace; else the one workspace of the sources, if
    # they share one (the default workspace when there are none).
    home = run.principal.workspace_scope or (workspaces[0] if len(workspaces) == 1 else None)
    if run.writes != "org":
        return Placement("private", home, "this run may save private notes only")
    if len(reach) < len(read) or any(r.visibility != "org" for r in reach):
        return Placement("private", home, "the run read a passage that is not for everyone")
    if run.restricted:
        return Placement("private", home, "; ".join(sorted(run.restricted)))
    if len(workspaces) > 1:
        return Placement("private", home, "the run read passages of several workspaces")
    return Placement("org", home, "every passage the run read is visible to the organisation")


async def save_note(run: Run, args: NoteArgs) -> str:
    where = await placement(run)
    run.step(
        "save_note",
        f'save note: "{_clip(args.title, 200)}" ({where.visibility})',
        where.why,
    )
    by_key = run.ledger.by_key()
    sources = []
    for source in args.sources:
        found = _KEY.search(source)
        entry = by_key.get(int(found.group())) if found else None
        if entry is not None:
            sources.append(
                f"- [{entry.key}] {_where(entry.title, entry.heading_path)}: "
                f"{chunk_url(entry.document_id, entry.chunk_id)}"
            )
    content = args.content
    if sources:
        content += "\n\n## Sources\n\n" + "\n".join(sources)
    try:
        data = DocumentCreate(
            title=args.title,
            content=content,
            workspace=where.workspace,
            visibility=where.visibility,
            tags=["agent-note"],
            source=f"agent-note (run {run.trace_id})",
        )
    except ValidationError as exc:
        raise ValidationFailed.from_pydantic(exc) from None
    async with run.transaction() as conn:
        created = await documents_service.create(
            conn,
            run.principal,
            run.embedder,
            run.settings,
            data,
            derived_from=sorted(run.read()),
        )
    return (
        f"Saved as document {created.id} ({created.chunk_count} chunks, {created.visibility}), "
        "tagged agent-note."
    )


async def documentation_gaps(run: Run, _args: NoArgs) -> str:
    run.step("gaps", "documentation gaps")
    async with run.transaction() as conn:
        gaps = await search_service.documentation_gaps(conn, run.principal, run.embedder)
    # Everyone's unanswered questions are the admins' to read, not the organisation's.
    run.restricted.add("the run read the documentation gaps")
    if not gaps.items:
        return "No documentation gaps: every recent question found something."
    return "\n".join(
        f"- {g.question!r}: asked {g.count} times by {g.people} people" for g in gaps.items
    )


@dataclass(frozen=True)
class Tool:
    name: AgentTool
    description: str
    args: type[_Args]
    call: Callable[[Run, Any], Awaitable[str]]

    def schema(self) -> dict[str, Any]:
        """The tool as the chat models' APIs describe one (OpenAI's function format, which
        every LangChain chat model binds)."""
        parameters = self.args.model_json_schema()
        parameters.pop("title", None)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "search_corpus",
            "Search the corpus (meaning and keywords). Passages come back under keys like [3]: "
            "cite them by those keys.",
            SearchArgs,
            search_corpus,
        ),
        Tool(
            "read_document",
            "Read a document's chunks (ordinals chunk_start..chunk_end, at most 8 at a time), "
            "each under a key to cite.",
            ReadArgs,
            read_document,
        ),
        Tool(
            "list_corpus_documents",
            "List the documents you may see, filtered by workspace, tag or words of the title.",
            ListArgs,
            list_corpus_documents,
        ),
        Tool("think", "Think out loud: plan, or weigh what you found.", ThinkArgs, think),
        Tool(
            "save_note",
            "Save a synthesis back into the corpus as a document tagged agent-note, with the "
            "keys of its sources.",
            NoteArgs,
            save_note,
        ),
        Tool(
            "documentation_gaps",
            "The questions people asked that the corpus could not answer, grouped.",
            NoArgs,
            documentation_gaps,
        ),
    )
}


# The tools that change the corpus.
WRITES = frozenset({"save_note"})


def for_caller(run: Run, wanted: list[str] | None = None) -> list[Tool]:
    """The tools the caller's role grants (among `wanted`, when given); none that writes unless
    the asker turned writes on for this run."""
    granted = agent_tools(run.principal.role, bound=run.principal.workspace_scope is not None)
    return [
        TOOLS[name]
        for name in granted
        if (wanted is None or name in wanted) and (run.writes != "off" or name not in WRITES)
    ]


async def execute(run: Run, offered: list[Tool], name: str, arguments: dict[str, Any]) -> str:
    """Run one tool call of the model's; what went wrong is the result the model reads."""
    tool = next((t for t in offered if t.name == name), None)
    if tool is None:
        run.step("refused", f"{name}: not a tool of this agent or of your role")
        return f"error forbidden: there is no tool {name!r} for you; use only the tools offered"
    try:
        run.budget.tool_call()
    except BudgetSpent as spent:
        run.budget_hit(spent.what)
        return "error budget: no more tool calls in this run; answer from what you have"
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as exc:
        failed = ValidationFailed.from_pydantic(exc)
        run.step("refused", f"{name}: bad arguments", failed.message)
        return f"error {failed.code}: {failed.message}"
    try:
        return await tool.call(run, args)
    except AppError as exc:
        run.step("refused", f"{name}: {exc.code}", exc.message)
        return f"error {exc.code}: {exc.message}"
