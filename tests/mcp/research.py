"""A Corpus to research in, and scripted answering runs over it, for the tests of asking over
MCP: the model is the only fake."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from tests import support
from tests.agents.scripted import Call, Reply, calling, in_order, scripted, tool_call
from tests.running import Running

RUNBOOK = (
    "# Rollback\n\nTo roll back a deploy, run `make rollback` from the release branch. "
    "Rollbacks take about four minutes."
)


async def add_runbook(running: Running) -> None:
    """The runbook every scripted run finds, added by an editor."""
    editor = await running.account("editor")
    async with running.db.write() as conn:
        principal = await support.key_principal(conn, editor.key)
        assert principal is not None
        await documents_service.create(
            conn,
            principal,
            running.app.state.resources.embedder,
            running.settings,
            DocumentCreate(title="Deploy rollback", content=RUNBOOK),
        )


def swap(corpus: Running, models: object) -> Any:
    """Swap the running app's chat models; returns the resources to put back."""
    original = corpus.app.state.resources
    corpus.app.state.resources = dataclasses.replace(original, models=models)
    return original


def fast_run() -> Any:
    """A fast run: one search, then the answer citing it."""
    return scripted(
        in_order(
            calling(tool_call("search_corpus", query="roll back a deploy")),
            calling(text="Run make rollback [1]."),
        )
    )


def deep_run(release: asyncio.Event, reached: asyncio.Event | None = None) -> Any:
    """A deep run held at its first model call until `release` (`reached` set once there):
    it outlasts deep_research's wait."""

    async def respond(call: Call) -> Reply:
        if call.system.startswith("You are the orchestrator of a deep research"):
            if reached is not None:
                reached.set()
            await release.wait()
            return calling(tool_call("write_todos", todos=["How does a rollback work?"]))
        if call.system.startswith("You are the scout"):
            return calling(text="- Deploy rollback covers it.")
        if call.system.startswith("You are a researcher"):
            if not call.tool_results:
                return calling(tool_call("search_corpus", query="roll back a deploy"))
            return calling(text="- run make rollback [1]")
        if call.system.startswith("You are the orchestrator. Write"):
            return calling(text="Roll back with make rollback [1].")
        return calling(
            tool_call(
                "verdict",
                claims=[
                    {
                        "claim": "Roll back with make rollback",
                        "citations": ["[1]"],
                        "status": "SUPPORTED",
                    }
                ],
                verdict="PASS",
            )
        )

    return scripted(respond)
