"""The graphs are wired as docs/DEEP_AGENT_RAG.md draws them."""

from __future__ import annotations

from typing import Any

from app.agents.graph import deep_graph, react_graph


def _edges(graph: Any) -> set[tuple[str, str]]:
    return {(edge.source, edge.target) for edge in graph.get_graph().edges}


def test_the_deep_graph_is_wired_as_drawn() -> None:
    assert _edges(deep_graph()) == {
        ("__start__", "plan"),
        ("plan", "scout"),
        ("scout", "dispatch"),
        ("dispatch", "researcher"),
        ("researcher", "draft"),
        ("draft", "verify"),
        ("verify", "draft"),
        ("verify", "__end__"),
    }


def test_the_loop_of_model_and_tools_is_wired_as_drawn() -> None:
    assert _edges(react_graph()) == {
        ("__start__", "model"),
        ("model", "tools"),
        ("tools", "model"),
        ("model", "__end__"),
    }
