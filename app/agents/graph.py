"""The graphs, wired (docs/DEEP_AGENT_RAG.md draws them):

loop of model and tools (the fast agent; the scout and each researcher, with their own
prompts, tools and caps):   START → model ⇄ tools → END

deep:   START → plan → scout → dispatch ─┬→ researcher ─┐
                                         └→ researcher ─┴→ draft → verify ─→ END
                                                             ↑        │ REVISE (at most N)
                                                             └────────┘
"""

from __future__ import annotations

from functools import lru_cache

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from app.agents import nodes
from app.agents.state import DeepState, ReactState


@lru_cache(maxsize=1)
def react_graph() -> CompiledStateGraph[ReactState, None, ReactState, ReactState]:
    graph = StateGraph(ReactState)
    graph.add_node("model", nodes.agent_model)
    graph.add_node("tools", nodes.agent_tools)
    graph.add_edge(START, "model")
    return graph.compile()


@lru_cache(maxsize=1)
def deep_graph() -> CompiledStateGraph[DeepState, None, DeepState, DeepState]:
    graph = StateGraph(DeepState)
    graph.add_node("plan", nodes.plan)
    graph.add_node("scout", nodes.scout)
    graph.add_node("dispatch", lambda _state: {})
    graph.add_node("researcher", nodes.researcher)
    graph.add_node("draft", nodes.draft)
    graph.add_node("verify", nodes.verify)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("dispatch", nodes.dispatch, ["researcher"])
    graph.add_edge("researcher", "draft")
    return graph.compile()
