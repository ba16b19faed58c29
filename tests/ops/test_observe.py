"""What operators see: `/metrics` behind its token, every family present and moving when its
work happens, and JSON log lines (one per request, one per agent run) that carry no secret."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGenerationChunk
from prometheus_client.parser import text_string_to_metric_families

from app.observe.metrics import REGISTRY
from tests.accounts import PASSWORD
from tests.agents.scripted import ScriptedChatModel, ScriptedModels, calling, in_order, tool_call
from tests.mcp.conftest import mcp_client
from tests.running import Running, run_fresh_corpus
from tests.support import PROJECT_ROOT, captured_log, eventually

TOKEN = "metrics-token-" + "m" * 32
DOCUMENT = "Deploys roll back with make rollback from the release branch, in four minutes."


@pytest.fixture(scope="module")
async def corpus(server_url: str, data_dir: Path) -> AsyncIterator[Running]:
    async with run_fresh_corpus(
        server_url,
        data_dir,
        "corpus_observe",
        metrics_token=TOKEN,
        # Two connections at most, so that a test can hold them all; a sign-in throttle a
        # test can trip.
        db_max_connections=2,
        signin_rate_per_address="4/minute",
    ) as running:
        yield running


def _scrape_text(corpus: Running) -> str:
    reply = httpx.get(f"{corpus.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("text/plain")
    return reply.text


async def _scrape(corpus: Running) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of the scrape, by name and labels."""
    body = await asyncio.to_thread(_scrape_text, corpus)
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    }


def _total(
    scrape: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """The sum of `name`'s samples whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in scrape.items() if n == name and wanted <= ls)


async def test_metrics_answer_only_to_the_token(corpus: Running) -> None:
    async with httpx.AsyncClient(base_url=corpus.url) as http:
        assert (await http.get("/metrics")).status_code == 401
        wrong = await http.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
        assert wrong.status_code == 401
        assert wrong.json()["error"]["code"] == "unauthenticated"
        assert wrong.headers["www-authenticate"] == "Bearer"
        right = await http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200
        assert "corpus_http_request_duration_seconds" in right.text


async def test_without_a_token_set_there_is_no_metrics_route(client: httpx.AsyncClient) -> None:
    reply = await client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "not_found"


class _Counting(ScriptedChatModel):
    """The scripted model, its stream ending with the usage a provider reports."""

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        async for chunk in super()._astream(messages, *args, **kwargs):
            yield chunk
        usage = UsageMetadata(input_tokens=120, output_tokens=30, total_tokens=150)
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=usage))


FAMILIES = {
    "corpus_http_request_duration_seconds_count",
    "corpus_search_duration_seconds_count",
    "corpus_search_part_duration_seconds_count",
    "corpus_ingest_documents_total",
    "corpus_ingest_chunks_total",
    "corpus_conversion_failures_total",
    "corpus_embedding_duration_seconds_count",
    "corpus_embedding_batch_size_sum",
    "corpus_agent_runs_total",
    "corpus_agent_model_calls_total",
    "corpus_agent_tokens_total",
    "corpus_cache_lookups_total",
    "corpus_db_pool_connections",
    "corpus_db_pool_waits_total",
    "corpus_throttle_refusals_total",
    "corpus_research_jobs_in_state",
    "corpus_research_job_transitions_total",
}


async def test_every_family_is_scraped_and_moves_when_its_work_happens(corpus: Running) -> None:
    editor = await corpus.account("editor")
    before = await _scrape(corpus)
    async with httpx.AsyncClient(base_url=corpus.url, headers=editor.bearer, timeout=30) as http:
        made = await http.post("/api/documents", json={"title": "Rollback", "content": DOCUMENT})
        assert made.status_code == 201
        broken = await http.post(
            "/api/documents",
            files={"file": ("report.pdf", b"%PDF-1.7 not really a pdf", "application/pdf")},
        )
        assert broken.status_code >= 400
        searched = await http.post("/api/search", json={"query": "roll back", "mode": "hybrid"})
        assert searched.status_code == 200
        for _ in range(2):  # a miss, then a hit
            context = await http.post("/api/context", json={"query": "roll back a deploy"})
            assert context.status_code == 200, context.text
        asked = await http.post("/api/ask", json={"question": "How do I roll back?"})
        assert asked.status_code == 200
        resources = corpus.app.state.resources
        model = _Counting(
            respond=in_order(
                calling(tool_call("search_corpus", query="roll back")),
                calling(text="Run make rollback [1]."),
            )
        )
        corpus.app.state.resources = dataclasses.replace(resources, models=ScriptedModels(model))
        try:
            asked = await http.post(
                "/api/ask", json={"question": "How do I roll back?", "mode": "fast"}
            )
            assert asked.status_code == 200
            assert '"extractive": false' in asked.text or '"extractive":false' in asked.text
        finally:
            corpus.app.state.resources = resources
    async with mcp_client(corpus.mcp_url, editor.key) as client:
        started = await client.call_tool("deep_research", {"question": "How do I roll back?"})
        assert started.is_error is False, started.content
    async with httpx.AsyncClient(base_url=corpus.url) as anonymous:
        statuses = [
            (
                await anonymous.post(
                    "/api/auth/login", json={"email": editor.user.email, "password": "wrong" * 4}
                )
            ).status_code
            for _ in range(5)
        ]
        assert statuses[-1] == 429
    # Every connection of the write pool held: the next request waits for one.
    async with httpx.AsyncClient(base_url=corpus.url, headers=editor.bearer, timeout=30) as http:
        async with AsyncExitStack() as held:
            for _ in range(2):
                await held.enter_async_context(corpus.app.state.resources.db.write())
            waiting = asyncio.create_task(http.get("/api/me"))

            async def counted_a_wait() -> bool:
                scrape = await _scrape(corpus)
                return _total(scrape, "corpus_db_pool_waits_total", engine="write") > _total(
                    before, "corpus_db_pool_waits_total", engine="write"
                )

            await eventually(counted_a_wait, "a wait for a connection counted")
            during = await _scrape(corpus)
        assert (await waiting).status_code == 200
    after = await _scrape(corpus)

    present = {name for name, _ in after}
    assert present >= FAMILIES

    def moved(name: str, **labels: str) -> bool:
        return _total(after, name, **labels) > _total(before, name, **labels)

    assert moved("corpus_http_request_duration_seconds_count", route="/api/search", status="200")
    assert moved("corpus_search_duration_seconds_count", mode="hybrid")
    assert moved("corpus_search_part_duration_seconds_count", mode="hybrid", part="query_embedding")
    assert moved("corpus_search_part_duration_seconds_count", mode="hybrid", part="ranking")
    assert moved("corpus_ingest_documents_total")
    assert moved("corpus_ingest_chunks_total")
    assert moved("corpus_conversion_failures_total")
    assert moved("corpus_embedding_duration_seconds_count", kind="passages")
    assert moved("corpus_embedding_batch_size_count", kind="query")
    assert moved("corpus_agent_runs_total", mode="fast", outcome="extractive")
    assert moved("corpus_agent_runs_total", mode="fast", outcome="answered")
    assert moved("corpus_agent_model_calls_total", mode="fast")
    assert (
        _total(after, "corpus_agent_tokens_total", direction="input")
        - _total(before, "corpus_agent_tokens_total", direction="input")
        == 240
    )  # two model calls of 120
    assert moved("corpus_cache_lookups_total", result="miss")
    assert moved("corpus_cache_lookups_total", result="hit")
    assert _total(during, "corpus_db_pool_connections", engine="write", state="in_use") >= 2
    assert moved("corpus_db_pool_waits_total", engine="write")
    assert moved("corpus_throttle_refusals_total", reason="address")
    for state in ("queued", "running", "done"):
        assert moved("corpus_research_job_transitions_total", state=state)


# --- JSON logs ---------------------------------------------------------------------------------


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """What the server writes to its log with CORPUS_LOG_FORMAT=json."""
    with captured_log("json") as out:
        yield out


async def test_json_logs_have_a_line_per_request_and_per_run_and_no_secret(
    corpus: Running, json_log: io.StringIO
) -> None:
    editor = await corpus.account("editor")
    secret_text = "The vault combination is kept in the ops drawer, zebra-7731."
    question = "Where is the vault combination kept, zebra?"
    async with httpx.AsyncClient(base_url=corpus.url, timeout=30) as http:
        login = await http.post(
            "/api/auth/login", json={"email": editor.user.email, "password": PASSWORD}
        )
        assert login.status_code in (200, 429)  # the throttle test may have spent the window
        made = await http.post(
            "/api/documents",
            json={"title": "Vault", "content": secret_text},
            headers=editor.bearer,
        )
        assert made.status_code == 201
        asked = await http.post("/api/ask", json={"question": question}, headers=editor.bearer)
        assert asked.status_code == 200
        metrics = await http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert metrics.status_code == 200

    async def run_logged() -> bool:
        return '"kind": "agent_run"' in json_log.getvalue()

    await eventually(run_logged, "the agent run's line")
    text = json_log.getvalue()
    lines = [json.loads(line) for line in text.splitlines()]
    for secret in (
        editor.key,
        PASSWORD,
        TOKEN,
        "zebra-7731",
        "vault combination",
        corpus.settings.resolved_secret_key(),
    ):
        assert secret not in text, secret

    requests = [line for line in lines if line["logger"] == "corpus.access"]
    upload = next(line for line in requests if line["route"] == "/api/documents")
    assert upload["method"] == "POST"
    assert upload["status"] == 201
    assert upload["principal_id"] == str(editor.user.id)
    assert upload["principal_kind"] == "human"
    assert upload["credential"] == "api_key"
    assert isinstance(upload["duration_ms"], float)
    assert re.fullmatch(r"[0-9a-f]{32}", upload["request_id"])
    ask = next(line for line in requests if line["route"] == "/api/ask")
    assert ask["status"] == 200

    [run] = [line for line in lines if line.get("kind") == "agent_run"]
    assert run["mode"] == "fast"
    assert run["outcome"] == "extractive"
    assert run["model_calls"] == 0
    assert run["input_tokens"] == run["output_tokens"] == 0
    assert run["steps"] >= 1
    assert run["request_id"] == ask["request_id"]


def test_the_grafana_dashboard_charts_only_families_the_process_exports() -> None:
    dashboard = json.loads((PROJECT_ROOT / "docs" / "ops" / "grafana-dashboard.json").read_text())
    charted = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\bcorpus_[a-z_]+", target["expr"])
    }
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}
    exported = {
        family.name + suffix
        for family in REGISTRY.collect()
        for suffix in suffixes.get(family.type, ("",))
    }
    assert charted
    assert charted <= exported
