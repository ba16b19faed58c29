"""What each role may do: one table, read by the services (which enforce it), by `GET /api/me`
and `whoami` (which report it), and by nothing else. A leaf: every layer may import it.

Roles are ordered viewer < editor < admin and each grants everything the one below does.
A key bound to one workspace keeps only the actions that stay inside a workspace, whatever its
role: it reads and writes there, and administers nothing (ADR 0005).
"""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["viewer", "editor", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "editor", "admin")

Action = Literal[
    "search",  # search, ask, read and list what the caller may see
    "documents.write",  # add documents; edit and delete one's own
    "documents.manage",  # edit and delete anyone's `org` documents (private ones stay the owner's)
    "workspaces.manage",
    "people.manage",  # people, roles, passwords, enable and disable, unlock
    "keys.manage",  # mint and revoke agents' API keys
    "audit.read",
    "gaps.read",  # the documentation gaps: what everyone asked that found nothing
    "policy.manage",  # set and drop the admins' layer of the routing policy
    "cache.read",  # the search cache's figures
]

# The tools of the answering agents (DESIGN.md §6).
AgentTool = Literal[
    "search_corpus",
    "read_document",
    "list_corpus_documents",
    "think",
    "save_note",
    "documentation_gaps",
]

# The MCP tools (API.md, "MCP tools"), in the order they are listed.
McpTool = Literal[
    "upload_document",
    "search_docs",
    "ask_docs",
    "deep_research",
    "research_result",
    "list_documents",
    "read_document",
    "delete_document",
    "whoami",
    "rag_search",
    "rag_workspaces",
    "rag_policy",
    "rag_cache_stats",
    "rag_context",
]


class _Grant:
    def __init__(
        self, actions: set[Action], agent_tools: list[AgentTool], mcp_tools: list[McpTool]
    ) -> None:
        self.actions = frozenset(actions)
        self.agent_tools = tuple(agent_tools)
        self.mcp_tools = tuple(mcp_tools)


_VIEWER_MCP: list[McpTool] = [
    "search_docs",
    "ask_docs",
    "deep_research",
    "research_result",
    "list_documents",
    "read_document",
    "whoami",
    "rag_search",
    "rag_workspaces",
    "rag_policy",
    "rag_context",
]
_VIEWER = _Grant(
    {"search"},
    ["search_corpus", "read_document", "list_corpus_documents", "think"],
    _VIEWER_MCP,
)
_EDITOR = _Grant(
    {*_VIEWER.actions, "documents.write"},
    [*_VIEWER.agent_tools, "save_note"],
    [*_VIEWER_MCP, "upload_document", "delete_document"],
)
_ADMIN = _Grant(
    {
        *_EDITOR.actions,
        "documents.manage",
        "workspaces.manage",
        "people.manage",
        "keys.manage",
        "audit.read",
        "gaps.read",
        "policy.manage",
        "cache.read",
    },
    [*_EDITOR.agent_tools, "documentation_gaps"],
    [*_EDITOR.mcp_tools, "rag_cache_stats"],
)

CAPABILITIES: dict[Role, _Grant] = {"viewer": _VIEWER, "editor": _EDITOR, "admin": _ADMIN}

# What a key bound to one workspace may still do (within it: the queries filter by the scope).
# Everything else reaches across workspaces: people, keys (a bound key could otherwise mint an
# unbound one), the audit log, workspaces themselves, and the figures of every workspace.
WORKSPACE_ACTIONS: frozenset[Action] = frozenset({"search", "documents.write", "documents.manage"})

ALL_ACTIONS: tuple[Action, ...] = get_args(Action)
ALL_MCP_TOOLS: tuple[McpTool, ...] = get_args(McpTool)


def allows(role: Role, action: Action, *, bound: bool = False) -> bool:
    """Whether the role may take the action; `bound` for a caller held to one workspace."""
    if bound and action not in WORKSPACE_ACTIONS:
        return False
    return action in CAPABILITIES[role].actions


def mcp_tools(role: Role) -> list[McpTool]:
    """The MCP tools the role may call, in listing order."""
    granted = set(CAPABILITIES[role].mcp_tools)
    return [tool for tool in ALL_MCP_TOOLS if tool in granted]


def agent_tools(role: Role, *, bound: bool = False) -> list[AgentTool]:
    """The answering agents' tools for the role; a bound caller's agents do not get the
    documentation gaps, which span every workspace."""
    tools = list(CAPABILITIES[role].agent_tools)
    return [tool for tool in tools if not (bound and tool == "documentation_gaps")]
