"""The graphs' nodes. Each reads the run and its agent's spec from the config (so tests inject a
scripted model through the run's `models`), and returns a typed `Command`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_chunk_to_message,
)
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Send
from pydantic import ValidationError

from app.agents import prompts, tools
from app.agents.citations import keys_in
from app.agents.models import ModelRole
from app.agents.observed import model_called
from app.agents.run import BudgetSpent, Run, fit_context
from app.agents.schemas import TokenEvent
from app.agents.state import DeepState, Finding, ReactState, ResearcherInput, Todos, Verdict
from app.observe import tracing

SEARCH = "search_corpus"
# langgraph's END, typed as the literal its `Command` expects.
DONE: Literal["__end__"] = "__end__"


@dataclass(frozen=True)
class AgentSpec:
    """One agent of a loop of model and tools: its prompt, tools and caps."""

    name: str
    prompt: str
    tools: list[str] | None  # None: every tool the caller's role grants
    max_searches: int
    # Whether its text streams to the caller as tokens (the answer's writer only).
    stream: bool = False
    model_role: ModelRole = "fast"


def run_of(config: RunnableConfig) -> Run:
    return cast(Run, config["configurable"]["run"])


def spec_of(config: RunnableConfig) -> AgentSpec:
    return cast(AgentSpec, config["configurable"]["agent"])


class NoModel(Exception):
    """The run has no model (checked before a graph starts; a wiring fault here)."""


def _model(run: Run, role: ModelRole) -> BaseChatModel:
    model = run.models.chat(role)
    if model is None:
        raise NoModel("no answer model is configured")
    return model


async def ask_model(
    run: Run,
    model: BaseChatModel,
    messages: list[BaseMessage],
    *,
    tool_schemas: list[dict[str, Any]] | None = None,
    stream: bool = False,
) -> AIMessage:
    """One model call within the run's budgets, from the model's own stream: its text is
    streamed as tokens when `stream`, before the model has finished. The one place the agents
    call a model: it waits for one of the process's model-call slots.

    Raises:
        BudgetSpent: no model calls or time left.
    """
    run.budget.model_call()
    fitted, clipped = fit_context(messages, run.budget.max_context_chars)
    if clipped:
        run.step("budget", f"context budget: {clipped} earlier results clipped")
    bound = model.bind_tools(tool_schemas) if tool_schemas else model
    full: AIMessageChunk | None = None
    traced = tracing.span(
        "agent.model_call",
        {
            "gen_ai.provider.name": run.models.provider,
            "corpus.agent.tools": len(tool_schemas or []),
        },
    )
    # The process's model calls at once are bounded and shared fairly between people: the
    # slot is held until the reply has streamed in full.
    with traced as span:
        async with run.model_calls.call(run.principal.user_id):
            async for chunk in bound.astream(fitted):
                if not isinstance(chunk, AIMessageChunk):
                    continue
                if stream and chunk.text:
                    run.emit(TokenEvent(text=chunk.text))
                full = chunk if full is None else full + chunk
        usage = full.usage_metadata if full is not None else None
        if usage:
            span.set_attribute("gen_ai.usage.input_tokens", int(usage.get("input_tokens") or 0))
            span.set_attribute("gen_ai.usage.output_tokens", int(usage.get("output_tokens") or 0))
    model_called(usage)
    if full is None:
        return AIMessage(content="")
    message = message_chunk_to_message(full)
    assert isinstance(message, AIMessage)
    return message


# --- the loop of model and tools ----------------------------------------------------------------


async def agent_model(
    state: ReactState, config: RunnableConfig
) -> Command[Literal["tools", "__end__"]]:
    run, spec = run_of(config), spec_of(config)
    capped = state.get("searches", 0) >= spec.max_searches
    offered = [] if capped else tools.for_caller(run, spec.tools)
    messages: list[BaseMessage] = [SystemMessage(spec.prompt), *state.get("messages", [])]
    update: dict[str, Any] = {}
    if capped:
        if not state.get("capped"):
            run.step("budget", f"{spec.name}: search cap reached ({spec.max_searches})")
            update["capped"] = True
        messages.append(HumanMessage(prompts.SEARCH_CAP.format(cap=spec.max_searches)))
    try:
        reply = await ask_model(
            run,
            _model(run, spec.model_role),
            messages,
            tool_schemas=[t.schema() for t in offered],
            stream=spec.stream,
        )
    except BudgetSpent as spent:
        run.budget_hit(spent.what)
        return Command(goto=DONE, update={**update, "answer": ""})
    if reply.tool_calls and not capped:
        return Command(goto="tools", update={**update, "messages": [reply]})
    return Command(goto=DONE, update={**update, "messages": [reply], "answer": reply.text})


async def agent_tools(state: ReactState, config: RunnableConfig) -> Command[Literal["model"]]:
    run, spec = run_of(config), spec_of(config)
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    offered = tools.for_caller(run, spec.tools)
    searches = state.get("searches", 0)
    results: list[ToolMessage] = []
    for call in last.tool_calls:
        if call["name"] == SEARCH and searches >= spec.max_searches:
            content = "error budget: the search cap is reached; answer from what you have"
        else:
            if call["name"] == SEARCH:
                searches += 1
            content = await tools.execute(run, offered, call["name"], call["args"])
        results.append(
            ToolMessage(content=content, tool_call_id=call["id"] or "", name=call["name"])
        )
    return Command(goto="model", update={"messages": results, "searches": searches})


# --- the deep orchestrator -----------------------------------------------------------------------

WRITE_TODOS = {
    "type": "function",
    "function": {
        "name": "write_todos",
        "description": "Write the research plan: the sub-questions to research.",
        "parameters": {
            "type": "object",
            "properties": {"todos": {"type": "array", "items": {"type": "string"}}},
            "required": ["todos"],
        },
    },
}

_VERDICT_SCHEMA = Verdict.model_json_schema()
VERDICT = {
    "type": "function",
    "function": {
        "name": "verdict",
        "description": "The verdict on the draft: one check per claim, then PASS or REVISE.",
        "parameters": {k: v for k, v in _VERDICT_SCHEMA.items() if k != "title"},
    },
}


class DeepRunFailed(Exception):
    """The deep run cannot go on (a plan or verdict the model would not give, a budget)."""


def _history(run: Run) -> str:
    if not run.history:
        return ""
    turns = "\n".join(f"{role}: {text}" for role, text in run.history)
    return f"The conversation so far:\n{turns}\n\n"


def _todo_lines(text: str) -> list[str]:
    lines = [line.strip().lstrip("-*0123456789.) ").strip() for line in text.splitlines()]
    return [line for line in lines if line]


async def plan(state: DeepState, config: RunnableConfig) -> Command[Literal["scout"]]:
    run = run_of(config)
    limit = run.settings.deep_max_researchers
    prompt = prompts.PLANNER.format(max_todos=limit)
    try:
        reply = await ask_model(
            run,
            _model(run, "deep"),
            [SystemMessage(prompt), HumanMessage(_history(run) + state["question"])],
            tool_schemas=[WRITE_TODOS],
        )
    except BudgetSpent as spent:
        run.budget_hit(spent.what)
        raise DeepRunFailed(f"budget reached while planning: {spent.what}") from None
    todos: list[str] = []
    for call in reply.tool_calls:
        if call["name"] == "write_todos":
            try:
                todos = Todos.model_validate(call["args"]).todos
            except ValidationError:
                todos = []
    if not todos:
        todos = _todo_lines(reply.text) or [state["question"]]
    todos = [t.strip() for t in todos if t.strip()][:limit] or [state["question"]]
    run.step("plan", f"plan: {len(todos)} sub-questions", "\n".join(f"- {t}" for t in todos))
    return Command(goto="scout", update={"todos": todos})


def _scout_spec() -> AgentSpec:
    # The scout's survey is cheap work: the fast agent's model (ANSWER_MODEL) does it.
    return AgentSpec(
        name="scout",
        prompt=prompts.SCOUT,
        tools=["list_corpus_documents", "search_corpus"],
        max_searches=1,
        model_role="fast",
    )


def _researcher_spec(todo: str) -> AgentSpec:
    return AgentSpec(
        name="researcher",
        prompt=prompts.RESEARCHER.format(todo=todo),
        tools=["search_corpus", "read_document", "think"],
        max_searches=3,
        model_role="deep",
    )


async def _subagent(run: Run, spec: AgentSpec, task: str) -> str:
    """Run a subagent: the loop of model and tools (compiled once, handed down in the config)
    with the subagent's own prompt, tools and caps."""
    result = await run.react.ainvoke(
        {"messages": [HumanMessage(task)], "searches": 0},
        config={
            "configurable": {"run": run, "agent": spec},
            "recursion_limit": 4 * run.settings.answer_max_model_calls,
        },
    )
    return str(result.get("answer") or "")


async def scout(state: DeepState, config: RunnableConfig) -> Command[Literal["dispatch"]]:
    run = run_of(config)
    run.step("delegate", f"delegate → scout: {state['question'][:200]}")
    report = await _subagent(run, _scout_spec(), state["question"])
    return Command(goto="dispatch", update={"notes": [f"Scout: {report}"]})


def dispatch(state: DeepState) -> list[Send]:
    """One researcher per todo, all at once."""
    return [
        Send("researcher", ResearcherInput(question=state["question"], todo=todo))
        for todo in state["todos"]
    ]


async def researcher(state: ResearcherInput, config: RunnableConfig) -> dict[str, Any]:
    run = run_of(config)
    run.step("delegate", f"delegate → researcher: {state['todo'][:200]}")
    report = await _subagent(run, _researcher_spec(state["todo"]), state["todo"])
    run.step("report", f"researcher done: {state['todo'][:200]}", report)
    finding = Finding(todo=state["todo"], report=report)
    return {"findings": [finding], "notes": [f"Researcher on {state['todo']!r}: {report}"]}


def _scratchpad(state: DeepState) -> str:
    return "\n\n".join(state.get("notes", []))


async def draft(state: DeepState, config: RunnableConfig) -> Command[Literal["verify"]]:
    run = run_of(config)
    revisions = state.get("revisions", 0)
    run.step("draft", "draft" if revisions == 0 else f"revision {revisions}")
    task = f"{_history(run)}Question: {state['question']}\n\nNotes:\n{_scratchpad(state)}"
    if revisions:
        task += "\n\n" + prompts.REVISE.format(draft=state["draft"], feedback=state["feedback"])
    try:
        reply = await ask_model(
            run,
            _model(run, "deep"),
            [SystemMessage(prompts.DRAFT), HumanMessage(task)],
            stream=True,
        )
    except BudgetSpent as spent:
        run.budget_hit(spent.what)
        raise DeepRunFailed(f"budget reached while drafting: {spent.what}") from None
    return Command(goto="verify", update={"draft": reply.text})


def _cited_passages(run: Run, text: str) -> str:
    by_key = run.ledger.by_key()
    passages = [
        f"[{key}] {by_key[key].title}: {by_key[key].text}" for key in keys_in(text) if key in by_key
    ]
    return "\n\n".join(passages) or "(the draft cites no passage this run retrieved)"


async def verify(state: DeepState, config: RunnableConfig) -> Command[Literal["draft", "__end__"]]:
    run = run_of(config)
    run.step("delegate", "delegate → verifier: check every claim against its passages")
    task = f"Draft:\n{state['draft']}\n\nCited passages:\n{_cited_passages(run, state['draft'])}"
    try:
        reply = await ask_model(
            run,
            _model(run, "deep"),
            [SystemMessage(prompts.VERIFIER), HumanMessage(task)],
            tool_schemas=[VERDICT],
        )
    except BudgetSpent as spent:
        run.budget_hit(spent.what)
        run.step("verify", "not verified: the budget is spent; the draft stands")
        return Command(goto=DONE, update={"verdict": "UNVERIFIED"})
    verdict = _verdict(reply)
    if verdict is None:
        run.step("verify", "the verifier gave no structured verdict; the draft stands")
        return Command(goto=DONE, update={"verdict": "UNVERIFIED"})
    for check in verdict.claims:
        run.step(
            "verify",
            f"{check.status}: {check.claim[:160]}",
            json.dumps({"citations": check.citations, "note": check.note}),
        )
    revisions = state.get("revisions", 0)
    run.step("verdict", f"verdict: {verdict.verdict}", verdict.feedback)
    if verdict.verdict == "PASS":
        return Command(goto=DONE, update={"verdict": "PASS"})
    if revisions >= run.settings.deep_max_revisions:
        run.step(
            "budget", f"revision cap reached ({run.settings.deep_max_revisions}): the draft stands"
        )
        return Command(goto=DONE, update={"verdict": "REVISE"})
    flagged = [c for c in verdict.claims if c.status != "SUPPORTED"]
    feedback = verdict.feedback + "".join(
        f"\n- {c.status}: {c.claim} {c.note}".rstrip() for c in flagged
    )
    return Command(
        goto="draft",
        update={"feedback": feedback, "revisions": revisions + 1, "verdict": "REVISE"},
    )


def _verdict(reply: AIMessage) -> Verdict | None:
    for call in reply.tool_calls:
        if call["name"] == "verdict":
            try:
                return Verdict.model_validate(call["args"])
            except ValidationError:
                return None
    try:
        return Verdict.model_validate_json(reply.text)
    except ValidationError:
        return None
