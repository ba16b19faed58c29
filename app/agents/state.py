"""The graphs' typed state."""

from __future__ import annotations

import operator
from typing import Annotated, Literal, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, Field


class ReactState(TypedDict, total=False):
    """One agent's loop of model and tools (the fast agent, the scout, a researcher)."""

    messages: Annotated[list[AnyMessage], add_messages]
    searches: int
    capped: bool
    answer: str


class Finding(TypedDict):
    todo: str
    report: str


class DeepState(TypedDict, total=False):
    """The orchestrator's: the todo list, the notes scratchpad, the drafts and verdicts."""

    question: str
    todos: list[str]
    # The scratchpad: the scout's report and what each researcher found.
    notes: Annotated[list[str], operator.add]
    findings: Annotated[list[Finding], operator.add]
    draft: str
    feedback: str
    revisions: int
    verdict: str


class ResearcherInput(TypedDict):
    """What the orchestrator hands one researcher."""

    question: str
    todo: str


ClaimStatus = Literal["SUPPORTED", "UNSUPPORTED", "CONTRADICTED", "OVERSTATED"]


class ClaimCheck(BaseModel):
    claim: str
    citations: list[str] = Field(default_factory=list, description='keys like "[3]"')
    status: ClaimStatus
    note: str = ""


class Verdict(BaseModel):
    """The verifier's structured verdict: one check per claim of the draft."""

    claims: list[ClaimCheck]
    verdict: Literal["PASS", "REVISE"]
    feedback: str = ""


class Todos(BaseModel):
    """The orchestrator's plan."""

    todos: list[str] = Field(min_length=1)
