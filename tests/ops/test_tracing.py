"""OpenTelemetry traces, exported over OTLP/HTTP to a real receiver on 127.0.0.1: a tiny HTTP
server in the test that decodes the protobuf export the SDK posts, as a collector would.

Spans per request (continuing a caller's `traceparent`), per search and its parts, per ingest,
per answering run and per model call; none carries a secret or a document's or question's
text; and with no endpoint set nothing is exported."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import create_async_engine

from app.main import create_app
from app.observe import tracing
from tests.accounts import Account, make_account
from tests.agents.scripted import ScriptedModels, calling, in_order, scripted, tool_call
from tests.support import (
    CHEAP_ARGON2,
    app_client,
    eventually,
    lifespan,
    make_settings,
    migrated_database,
)

SECRET_WORD = "zanzibarquokka"  # in the document's text and the questions: never in a span
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


@dataclass
class Received:
    """The spans a receiver was sent, each as (name, span id, parent id, trace id, attributes)."""

    spans: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def named(self, name: str) -> list[dict[str, Any]]:
        with self.lock:
            return [span for span in self.spans if span["name"] == name]


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


@pytest.fixture(scope="module")
def receiver() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            export = ExportTraceServiceRequest.FromString(body)
            with received.lock:
                received.paths.append(self.path)
                for resource in export.resource_spans:
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            received.spans.append(
                                {
                                    "name": span.name,
                                    "id": span.span_id.hex(),
                                    "parent": span.parent_span_id.hex(),
                                    "trace": span.trace_id.hex(),
                                    "attributes": {a.key: _value(a.value) for a in span.attributes},
                                }
                            )
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the test reads what was received

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
async def traced(
    server_url: str, receiver: tuple[str, Received]
) -> AsyncIterator[tuple[FastAPI, Account]]:
    data_dir = Path(tempfile.mkdtemp(prefix="corpus-tracing-", dir="/tmp"))
    url = await migrated_database(server_url, data_dir, "corpus_tracing")
    settings = make_settings(data_dir, database_url=url, otel_exporter_otlp_endpoint=receiver[0])
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        editor = await make_account(conn, "editor")
    await engine.dispose()
    app = create_app(settings, argon2=CHEAP_ARGON2)
    try:
        async with lifespan(app):
            yield app, editor
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


async def test_requests_searches_ingests_runs_and_model_calls_are_traced_without_text(
    traced: tuple[FastAPI, Account], receiver: tuple[str, Received]
) -> None:
    app, editor = traced
    _, received = receiver
    content = f"Deploys roll back with make rollback; the {SECRET_WORD} flag pins a release."
    async with app_client(app) as http:
        http.headers.update(editor.bearer)
        made = await http.post("/api/documents", json={"title": "Rollback", "content": content})
        assert made.status_code == 201, made.text
        # More than six words: the hybrid search's halves run apart (vector walk, keyword,
        # fusion), each a span.
        long_query = f"how do deploys roll back when the {SECRET_WORD} flag pins a release"
        parent = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
        searched = await http.post(
            "/api/search", json={"query": long_query}, headers={"traceparent": parent}
        )
        assert searched.status_code == 200
        assert searched.json()["hits"]
        resources = app.state.resources
        model = scripted(
            in_order(
                calling(tool_call("search_corpus", query=SECRET_WORD)),
                calling(text="Run make rollback [1]."),
            )
        ).model
        app.state.resources = dataclasses.replace(resources, models=ScriptedModels(model))
        try:
            asked = await http.post(
                "/api/ask", json={"question": f"What is {SECRET_WORD}?", "mode": "fast"}
            )
            assert asked.status_code == 200
        finally:
            app.state.resources = resources

    assert tracing.flush()

    async def exported() -> bool:
        return bool(received.named("agent.model_call")) and bool(received.named("ingest.index"))

    await eventually(exported, "the spans reach the receiver")
    assert received.paths
    assert set(received.paths) == {"/v1/traces"}

    request = next(s for s in received.named("POST /api/search") if s["trace"] == TRACE_ID)
    assert request["parent"] == "00f067aa0ba902b7"  # continues the caller's trace
    assert request["attributes"]["http.route"] == "/api/search"
    assert request["attributes"]["http.response.status_code"] == 200
    assert request["attributes"]["corpus.principal_id"] == str(editor.user.id)
    search = next(s for s in received.named("search") if s["trace"] == TRACE_ID)
    assert search["attributes"]["corpus.search.mode"] == "hybrid"
    parts = {s["name"] for s in received.spans if s["parent"] == search["id"]}
    assert {"search.query_embedding", "search.vector_walk", "search.keyword"} <= parts
    assert "search.fusion" in parts

    ingest = received.named("ingest")[0]
    assert ingest["attributes"]["corpus.ingest.chunks"] >= 1
    children = {s["name"] for s in received.spans if s["parent"] == ingest["id"]}
    assert {"ingest.chunk", "ingest.embed", "ingest.index"} <= children

    run = next(s for s in received.named("agent.run") if s["attributes"]["corpus.door"] == "chat")
    assert run["attributes"]["corpus.agent.model_calls"] == 2
    calls = [s for s in received.named("agent.model_call") if s["trace"] == run["trace"]]
    assert len(calls) == 2
    assert all(call["attributes"]["gen_ai.provider.name"] == "scripted" for call in calls)
    # The run's own search is a span of its trace too.
    assert any(s["trace"] == run["trace"] for s in received.named("search"))

    every_value = [str(v) for s in received.spans for v in s["attributes"].values()]
    assert every_value
    for value in every_value:
        assert SECRET_WORD not in value
        assert editor.key not in value
        assert "rollback" not in value.lower()


def test_tracing_is_off_unless_an_endpoint_is_set_and_follows_the_standard_variables(
    tmp_path: Path,
) -> None:
    assert make_settings(tmp_path).traces_url == ""
    base = make_settings(tmp_path, otel_exporter_otlp_endpoint="http://collector:4318/")
    assert base.traces_url == "http://collector:4318/v1/traces"
    own = make_settings(
        tmp_path,
        otel_exporter_otlp_endpoint="http://collector:4318",
        otel_exporter_otlp_traces_endpoint="http://traces:4318/custom",
    )
    assert own.traces_url == "http://traces:4318/custom"
    endpoint = "http://collector:4318"
    disabled = make_settings(tmp_path, otel_exporter_otlp_endpoint=endpoint, otel_sdk_disabled=True)
    assert disabled.traces_url == ""
    none = make_settings(
        tmp_path, otel_exporter_otlp_endpoint=endpoint, otel_traces_exporter="none"
    )
    assert none.traces_url == ""
    with pytest.raises(ValidationError, match="otel_exporter_otlp_protocol"):
        make_settings(tmp_path, otel_exporter_otlp_protocol="grpc")
    with pytest.raises(ValidationError, match="otel_exporter_otlp_endpoint"):
        make_settings(tmp_path, otel_exporter_otlp_endpoint="collector:4318")
