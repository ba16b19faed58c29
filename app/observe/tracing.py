"""OpenTelemetry traces, off unless an OTLP endpoint is configured (the standard
`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, OTLP over HTTP with
protobuf; docs/OPERATIONS.md).

Spans: one per request (`RequestIdMiddleware`), per search and each of its parts (opened by
`metrics.search_part`, beside the part's histogram), per answering run and per model call, and
per ingest (embedding and index writes apart). Their attributes are chosen by their callers to
be ids, counts, names of routes, modes and outcomes: never a secret, a question or a document's
text, as in the JSON log lines (app/logs.py).

Off, `span` costs a check of a module variable. The provider is this module's own, not only the
global one: a process sets the global provider once, and tests build many apps.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Span, Status, StatusCode, Tracer

logger = logging.getLogger(__name__)

# An attribute's value: what OpenTelemetry accepts, and what we give (no nested structures).
Value = str | bool | int | float

_NOOP: Tracer = trace.NoOpTracer()
_tracer: Tracer = _NOOP
_provider: TracerProvider | None = None


def configure(
    endpoint: str,
    *,
    service_name: str = "corpus",
    exporter: SpanExporter | None = None,
) -> None:
    """Export spans to `endpoint` (OTLP/HTTP, protobuf) from now on; an empty endpoint and no
    `exporter` leaves tracing off. `exporter` is for a test that brings its own."""
    global _tracer, _provider
    if not endpoint and exporter is None:
        return
    if exporter is None:
        # Imported here: the exporter's protobuf modules cost start-up time when tracing is off.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # Headers (OTEL_EXPORTER_OTLP_HEADERS: a collector's token), timeout and compression are
        # read by the exporter itself from the standard variables.
        exporter = OTLPSpanExporter(endpoint=endpoint)
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    shutdown()
    _provider = provider
    _tracer = provider.get_tracer("corpus")
    logger.info("tracing: spans exported to %s", endpoint or type(exporter).__name__)


def flush(timeout_ms: int = 30_000) -> bool:
    """Export the spans ended so far now, rather than at the next batch."""
    return _provider.force_flush(timeout_ms) if _provider is not None else True


def shutdown() -> None:
    """Export what is left and stop (the lifespan's end); tracing is off afterwards."""
    global _tracer, _provider
    if _provider is not None:
        _provider.shutdown()
    _provider, _tracer = None, _NOOP


def enabled() -> bool:
    return _provider is not None


@contextmanager
def span(name: str, attributes: Mapping[str, Value | None] | None = None) -> Iterator[Span]:
    """A span for the block, a child of the current one; an exception marks it failed (with
    the exception's type only: its message may quote what a caller sent). Off, a span that
    records nothing, and the context is left alone."""
    if _provider is None:
        yield trace.INVALID_SPAN
        return
    with _tracer.start_as_current_span(
        name, record_exception=False, set_status_on_exception=False
    ) as current:
        set_attributes(current, attributes or {})
        try:
            yield current
        except BaseException as exc:
            current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            current.set_attribute("error.type", type(exc).__name__)
            raise


def set_attributes(current: Span, attributes: Mapping[str, Value | None]) -> None:
    for key, value in attributes.items():
        if value is not None:
            current.set_attribute(key, value)


def current_span() -> Span:
    return trace.get_current_span()


@contextmanager
def incoming(headers: Iterable[tuple[bytes, bytes]]) -> Iterator[None]:
    """For the block: the trace a caller's `traceparent` header (ASGI's raw headers)
    continues, if any."""
    if not enabled():
        yield
        return
    carrier = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers}
    token = otel_context.attach(propagate.extract(carrier))
    try:
        yield
    finally:
        otel_context.detach(token)
