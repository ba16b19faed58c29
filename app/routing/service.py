"""Multi-corpus retrieval routed by persona (DESIGN.md §5, API.md "Multi-corpus"), as the doors
call it: the context block, `rag_search` and the Anvil contract's two searches (one reply
builder for the three), the workspaces with their licenses (`rag_workspaces`), the local scope
of a question asked as a persona, the session messages and the cache's figures.

The plan comes from `plan`, the passages from `gather`, the policy's own views and edits from
`admin`; the process's state is `state.RoutingState`.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.access.principal import Principal
from app.db.engine import ReadConnection
from app.errors import BadRequest, ValidationFailed
from app.routing import context, policy
from app.routing.gather import Gathered, gather
from app.routing.plan import planned, read_layers
from app.routing.schemas import (
    CacheStats,
    ContextBlock,
    ContextRequest,
    Failure,
    KnowledgeResult,
    KnowledgeResults,
    KnowledgeSearch,
    KnowledgeSearchMulti,
    RoutedWorkspace,
    RoutedWorkspaces,
    Source,
)
from app.routing.state import RoutingState
from app.search import service as search_service
from app.workspaces import service as workspaces_service


async def context_block(
    state: RoutingState, principal: Principal, request: ContextRequest
) -> ContextBlock:
    """A context block for a system prompt, from the persona's workspaces.

    Raises:
        Forbidden: the role may not search. ValidationFailed: no query (and no stored message
        for the session), a blank or too long one, or an unknown persona.
    """
    principal.require("search", "your role may not search")
    text = request.query
    if text is None and request.session_id is not None:
        text = state.messages.get(principal.user_id, request.session_id)
    if text is None:
        raise ValidationFailed(
            "query: send a query, or a session_id whose last user message was stored",
            details=[{"loc": ["body", "query"]}],
        )
    query = search_service.checked_query(state.settings, text)
    plan = await planned(state, principal, request.persona)
    gathered = await gather(state, principal, plan, plan.route.workspaces, query, request.top_k)
    block = context.build(gathered.passages, request.token_budget or state.settings.token_budget)
    return ContextBlock(
        block=block.text,
        persona=plan.persona,
        workspaces=plan.route.workspaces,
        sources=[
            Source(
                key=f"[{i}]",
                workspace=p.workspace,
                license=p.license,
                document_id=p.document_id,
                chunk_id=p.chunk_id,
                title=p.title,
                score=p.score,
                stale=p.stale,
            )
            for i, p in enumerate(block.passages, start=1)
        ],
        failures=gathered.failures,
        cache_hit=gathered.cache_hit,
        tokens=block.tokens,
        missing_workspaces=plan.route.missing,
    )


def remember_message(state: RoutingState, principal: Principal, session_id: str, text: str) -> None:
    """Keep a session's last user message, so its context block can be asked for by session:
    checked now as it will be checked then, so that the store holds only what could be used.

    Raises:
        Forbidden: the role may not search. ValidationFailed: a blank message, or one over
        CORPUS_MAX_QUERY_CHARS (nothing is stored).
    """
    principal.require("search", "your role may not search")
    text = search_service.checked_query(state.settings, text, name="text")
    state.messages.put(principal.user_id, session_id, text)


async def routed_search(
    state: RoutingState,
    principal: Principal,
    query: str,
    *,
    workspaces: list[str] | None = None,
    top_k: int = 5,
    persona: str | None = None,
) -> KnowledgeResults:
    """`rag_search`: the persona's workspaces (narrowed to `workspaces` when given), fanned out.

    Raises:
        Forbidden: the role may not search. ValidationFailed: a blank or too long query, or an
        unknown persona.
    """
    principal.require("search", "your role may not search")
    return await _knowledge(
        state, principal, query, top_k, within=workspaces, routed=True, persona=persona
    )


async def knowledge_search(
    state: RoutingState, principal: Principal, request: KnowledgeSearch
) -> KnowledgeResults:
    """The Anvil contract's single-workspace call: the workspace is the key's.

    Raises:
        BadRequest: the credential is not bound to a workspace. Forbidden: the role may not
        search. ValidationFailed: a blank or too long query.
    """
    principal.require("search", "your role may not search")
    if principal.workspace_scope is None:
        raise BadRequest(
            "this call searches the API key's workspace: use a key bound to one workspace, "
            "or POST /v1/knowledge/search-multi"
        )
    return await _knowledge(
        state,
        principal,
        request.query,
        request.top_k,
        within=[principal.workspace_scope],
        routed=False,
    )


async def knowledge_search_multi(
    state: RoutingState, principal: Principal, request: KnowledgeSearchMulti
) -> KnowledgeResults:
    """The Anvil contract's multi call: one key and an allowlist of workspaces, searched in
    the allowlist's order; one the caller may not search is reported as a failure.

    Raises:
        Forbidden: the role may not search. ValidationFailed: a blank or too long query.
    """
    principal.require("search", "your role may not search")
    return await _knowledge(
        state,
        principal,
        request.query,
        request.top_k,
        within=list(dict.fromkeys(request.workspaces)),
        routed=False,
        report_refused=True,
    )


async def _knowledge(
    state: RoutingState,
    principal: Principal,
    text: str,
    top_k: int,
    *,
    within: Sequence[str] | None,
    routed: bool,
    persona: str | None = None,
    report_refused: bool = False,
) -> KnowledgeResults:
    """The Anvil-shaped reply. `routed`: the persona's route, narrowed to `within` when given
    (`rag_search`, which names the persona it routed by); else `within` itself in its order,
    as far as the caller may search it, and with `report_refused` the rest as failures.

    Raises:
        ValidationFailed: a blank or too long query, or an unknown persona.
    """
    query = search_service.checked_query(state.settings, text)
    plan = await planned(state, principal, persona, named=within or ())
    if routed:
        chosen = plan.route.workspaces
        if within is not None:
            wanted = set(within)
            chosen = [w for w in chosen if w in wanted]
    else:
        chosen = [w for w in within or () if w in plan.targets]
    refused: list[Failure] = []
    if routed:
        # A persona routed to workspaces this server does not have says so, rather than
        # answering nothing with no word why (the policy lists them for anyone to read).
        refused = [
            Failure(
                workspace=w,
                reason=f"not_found: persona {plan.persona!r} routes to workspace {w!r}, which "
                "does not exist on this server",
            )
            for w in plan.route.missing
            if within is None or w in within
        ]
    if report_refused:
        refused = [
            Failure(workspace=w, reason=f"not_found: no workspace named {w!r} that you may search")
            for w in within or ()
            if w not in plan.targets
        ]
    gathered = await gather(state, principal, plan, chosen, query, top_k)
    return KnowledgeResults(
        results=_results(gathered),
        failures=[*refused, *gathered.failures],
        cache_hit=gathered.cache_hit,
        persona=plan.persona if routed else None,
        workspaces=chosen,
    )


def _results(gathered: Gathered) -> list[KnowledgeResult]:
    return [
        KnowledgeResult(
            workspace=p.workspace,
            document_id=p.document_id,
            chunk_id=p.chunk_id,
            title=p.title,
            text=p.text,
            score=p.score,
            license=p.license,
            heading_path=list(p.heading_path),
        )
        for p in gathered.passages
    ]


async def routed_workspaces(
    conn: ReadConnection, state: RoutingState, principal: Principal
) -> RoutedWorkspaces:
    """`rag_workspaces`: the workspaces the caller may search, with their effective licenses.

    Raises:
        Forbidden: the role may not search.
    """
    principal.require("search", "your role may not search")
    layers = await read_layers(conn, state)
    targets = {t.slug: t for t in await workspaces_service.workspace_targets(conn, principal)}
    items = []
    for workspace in await workspaces_service.list_workspaces(conn, principal):
        entry = policy.license_of(layers, workspace.slug)
        items.append(
            RoutedWorkspace(
                slug=workspace.slug,
                title=workspace.title,
                description=workspace.description,
                tier=workspace.tier,
                license=entry.license,
                license_source=entry.source,
                remote=targets[workspace.slug].remote_url is not None,
                document_count=workspace.document_count,
            )
        )
    return RoutedWorkspaces(items=items)


async def persona_scope(state: RoutingState, principal: Principal, persona: str) -> list[str]:
    """The local workspaces a question asked as `persona` searches, in the persona's order,
    within what the caller may see (the answering agents search through `search`, which knows
    no remote workspace).

    Raises:
        ValidationFailed: no layer of the policy knows the persona.
    """
    plan = await planned(state, principal, persona)
    return [slug for slug in plan.route.workspaces if plan.targets[slug].remote_url is None]


def cache_stats(state: RoutingState, principal: Principal) -> CacheStats:
    """The cache's figures in this process.

    Raises:
        Forbidden: not an admin.
    """
    principal.require("cache.read", "only admins read the cache's figures")
    return state.cache.stats()
